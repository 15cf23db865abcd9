"""Case set ``jaxprs``: the jaxprs JAX prints for tests/jaxpr_cases.py, with the values
each program returns (the tests run spmdc's jaxprs and compare)."""
from __future__ import annotations

import json
import types

import numpy as np


def record_jaxprs(cases: types.ModuleType, paths, mode) -> None:
    import jax
    out = {}
    for case in cases.CASES:
        f, args, options = case(jax)
        text = str(jax.make_jaxpr(f, **options)(*args))
        values = None
        if "axis_env" not in options:
            leaves = jax.tree_util.tree_leaves(f(*args))
            values = [np.asarray(v).tolist() for v in leaves]
        out[case.__name__] = {"jaxpr": text, "values": values}
    paths[0].write_text(json.dumps({"jax": jax.__version__, "cases": out}, indent=1) + "\n")
    print(f"wrote {len(out)} cases to {paths[0]}")


def jaxpr_names(cases: types.ModuleType, mode) -> list[str]:
    return [case.__name__ for case in cases.CASES]
