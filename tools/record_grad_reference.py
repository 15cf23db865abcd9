"""Record JAX's gradients for tests/grad_cases.py into tests/data/grad_reference.json.

Run with a Python that has JAX 0.10.2 (not spmdc's environment):
    /path/to/jax/python tools/record_grad_reference.py
The test (tests/test_grad_reference.py) needs only the JSON file.
"""
from __future__ import annotations

import json
import pathlib
import sys

import jax
import jax.numpy as jnp
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import grad_cases  # noqa: E402


def _encode(value):
    a = np.asarray(value, np.float64)
    return {"shape": list(a.shape),
            "values": [None if np.isnan(v) else float(v) for v in a.ravel()]}


def main() -> None:
    def cumprod(x, axis, reverse):
        return jax.lax.cumprod(x, axis=axis, reverse=reverse)

    out = {"jax": jax.__version__, "cases": {}}
    for name, (fun, args) in grad_cases.cases(jax, jnp, cumprod).items():
        leaves = jax.tree_util.tree_leaves(fun(*args))
        out["cases"][name] = [_encode(leaf) for leaf in leaves]
    path = ROOT / "tests" / "data" / "grad_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(out['cases'])} cases to {path}")


if __name__ == "__main__":
    main()
