"""The exports case set: each program of tests/export_cases.py exported by JAX 0.10.2
(with its VJP, ``vjp_order=1``), its serialized bytes (base64) and JAX's values (the
call's output leaves and, for differentiable cases, the gradient of the sum of the
first output leaf with respect to the first argument), written to
tests/data/exports_reference.json. Needs the ``flatbuffers`` package beside JAX.
"""
from __future__ import annotations

import base64
import pathlib
import types

import numpy as np

from recorders import write_cases_json


def record_exports(cases: types.ModuleType, paths: list[pathlib.Path],
                   mode: str | None) -> None:
    import jax
    import jax.numpy as jnp
    from jax import export, lax
    export.register_namedtuple_serialization(cases.Pair, serialized_name=cases.PAIR_NAME)
    out = {}
    for name, (program, args, kwargs, platforms, differentiable) in cases.CASES.items():
        f = program(jnp, lax)
        exp = export.export(jax.jit(f), platforms=platforms)(*args, **kwargs)
        blob = exp.serialize(vjp_order=1 if differentiable else 0)
        leaves = jax.tree_util.tree_leaves(exp.call(*args, **kwargs))
        case = {"bytes": base64.b64encode(bytes(blob)).decode("ascii"),
                "outputs": [np.asarray(v).tolist() for v in leaves]}
        if differentiable:
            def first_sum(a0, f=exp.call, rest=args[1:], kw=kwargs):
                return jax.tree_util.tree_leaves(f(a0, *rest, **kw))[0].sum()
            case["grad"] = np.asarray(jax.grad(first_sum)(args[0])).tolist()
        out[name] = case
    write_cases_json(paths[0], jax.__version__, out)


def export_names(cases: types.ModuleType, mode: str | None) -> list[str]:
    return list(cases.CASES)
