"""Case set ``jaxprs``: the jaxprs JAX prints for tests/jaxpr_cases.py, with the values
each program returns as oracle leaves (the tests run spmdc's jaxprs and compare)."""
from __future__ import annotations

import json
import types

from recorders.values import _complex_leaf


def record_jaxprs(cases: types.ModuleType, paths, mode) -> None:
    import jax
    from jax.extend.core import jaxpr_as_fun
    out = {}
    for case in cases.CASES:
        f, args, options = case(jax)
        closed = jax.make_jaxpr(f, **options)(*args)
        text = str(closed)
        values = None
        if "axis_env" not in options:       # what the jaxpr gives, run on the arguments
            outs = jaxpr_as_fun(closed)(*jax.tree_util.tree_leaves(args))
            values = [_complex_leaf(v) for v in outs]
        out[case.__name__] = {"jaxpr": text, "values": values}
    paths[0].write_text(json.dumps({"jax": jax.__version__, "cases": out}, indent=1) + "\n")
    print(f"wrote {len(out)} cases to {paths[0]}")


def jaxpr_names(cases: types.ModuleType, mode) -> list[str]:
    return [case.__name__ for case in cases.CASES]
