"""Record JAX's results for tests/fft_cases.py into tests/data/fft_reference.json.

Run with a Python that has JAX 0.10.2 (not spmdc's environment):
    /path/to/jax/python tools/record_fft_reference.py
The test (tests/test_fft.py) needs only the JSON file.
"""
from __future__ import annotations

import json
import pathlib
import sys

import jax
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import fft_cases  # noqa: E402


def main() -> None:
    out = {"jax": jax.__version__, "cases": {}}
    for name, thunk in fft_cases.cases(jax).items():
        v = np.asarray(thunk())
        out["cases"][name] = {"shape": list(v.shape), "dtype": v.dtype.name,
                              "real": np.real(v).astype(np.float64).ravel().tolist(),
                              "imag": np.imag(v).astype(np.float64).ravel().tolist()}
    path = ROOT / "tests" / "data" / "fft_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(out['cases'])} cases to {path}")


if __name__ == "__main__":
    main()
