"""Record JAX's complex derivatives for tests/complex_cases.py into
tests/data/complex_grad_reference.json.

Run with a Python that has JAX 0.10.2 (not spmdc's environment):
    /path/to/jax/python tools/record_complex_reference.py
The test (tests/test_grad_float0_complex.py) needs only the JSON file.
"""
from __future__ import annotations

import json
import pathlib
import sys

import jax
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import complex_cases  # noqa: E402


def main() -> None:
    out = {"jax": jax.__version__, "cases": {}}
    for name, thunk in complex_cases.cases(jax).items():
        leaves = [np.asarray(v) for v in jax.tree_util.tree_leaves(thunk())]
        out["cases"][name] = [{"shape": list(v.shape), "dtype": v.dtype.name,
                               "real": np.real(v).astype(np.float64).ravel().tolist(),
                               "imag": np.imag(v).astype(np.float64).ravel().tolist()}
                              for v in leaves]
    path = ROOT / "tests" / "data" / "complex_grad_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(out['cases'])} cases to {path}")


if __name__ == "__main__":
    main()
