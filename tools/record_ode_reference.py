"""Record JAX's odeint results for tests/ode_cases.py into tests/data/ode_reference.json.

Run with a Python that has JAX 0.10.2 (not spmdc's environment):
    /path/to/jax/python tools/record_ode_reference.py
The test (tests/test_ode.py) needs only the JSON file.
"""
from __future__ import annotations

import json
import pathlib
import sys

import jax
import numpy as np
from jax.experimental.ode import odeint

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import ode_cases  # noqa: E402


def main() -> None:
    out = {"jax": jax.__version__, "cases": {}}
    for name, (fun, args) in ode_cases.cases(jax, odeint).items():
        leaves = jax.tree_util.tree_leaves(fun(*args))
        out["cases"][name] = [{"shape": list(np.shape(v)),
                               "values": np.asarray(v, np.float64).ravel().tolist()}
                              for v in leaves]
    path = ROOT / "tests" / "data" / "ode_reference.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {len(out['cases'])} cases to {path}")


if __name__ == "__main__":
    main()
