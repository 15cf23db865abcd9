"""Record JAX's results for tests/lax_gather_cases.py into tests/data/lax_gather_reference.json.

Run with a Python that has JAX 0.10.2 (not spmdc's environment):
    /path/to/jax/python tools/record_lax_gather_reference.py
The test (tests/test_lax_gather_scatter.py) needs only the JSON file.
"""
from __future__ import annotations

import json
import pathlib
import sys

import jax
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import lax_gather_cases  # noqa: E402


def main() -> None:
    out = {"jax": jax.__version__, "cases": {}}
    for name, thunk in lax_gather_cases.cases(jax).items():
        value = thunk()
        leaves = value if isinstance(value, tuple) else (value,)
        out["cases"][name] = [{"shape": list(np.shape(v)), "dtype": np.asarray(v).dtype.name,
                               "real": np.real(np.asarray(v)).astype(np.float64).ravel().tolist(),
                               "imag": np.imag(np.asarray(v)).astype(np.float64).ravel().tolist()}
                              for v in leaves]
    path = ROOT / "tests" / "data" / "lax_gather_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(out['cases'])} cases to {path}")


if __name__ == "__main__":
    main()
