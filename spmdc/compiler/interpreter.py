"""An interpreter for the IR on NumPy, using each primitive's reference implementation.

It is the oracle for tests: lowering, batching and autodiff are all checked against it.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .ir import Atom, Func, Lit, Var

__all__ = ["evaluate"]


def evaluate(func: Func, *args: Any) -> list[np.ndarray]:
    if len(args) != len(func.inputs):
        raise TypeError(f"{func.name} takes {len(func.inputs)} inputs, got {len(args)}")
    env: dict[Var, np.ndarray] = {}
    for v, x in zip(func.inputs, args, strict=True):
        env[v] = np.asarray(x, v.type.dtype)

    def read(a: Atom) -> np.ndarray:
        return np.asarray(a.value, a.type.dtype) if isinstance(a, Lit) else env[a]

    for eqn in func.eqns:
        outs = eqn.prim.impl(*map(read, eqn.inputs), **eqn.params)
        outs = outs if eqn.prim.multiple_results else (outs,)
        for v, o in zip(eqn.outputs, outs, strict=True):
            env[v] = np.asarray(o).astype(v.type.dtype, copy=False).reshape(v.type.shape)
    return [read(a) for a in func.outputs]


def evaluate_many(func: Func, arg_sets: Sequence[Sequence[Any]]) -> list[list[np.ndarray]]:
    return [evaluate(func, *args) for args in arg_sets]
