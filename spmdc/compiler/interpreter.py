"""An interpreter for the IR on NumPy, using each primitive's reference implementation.

It is the oracle for tests: lowering, batching and autodiff are all checked against it.
``real=True`` evaluates every floating-point value in float64 instead of its own dtype
(a ``convert`` between two floating dtypes passes the value through): the real-number
function that finite differences need, without bfloat16's or float32's rounding steps.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .ir import Atom, Eqn, Func, Lit, Var

__all__ = ["evaluate", "evaluate_many", "storage_dtype", "apply_eqn"]

_FLOATING = {"bfloat16", "float16", "float32", "float64"}


def storage_dtype(dtype: np.dtype, real: bool) -> np.dtype:
    """The dtype a value of IR dtype ``dtype`` is held in (float64 for floats when real)."""
    return np.dtype(np.float64) if real and np.dtype(dtype).name in _FLOATING else dtype


def apply_eqn(eqn: Eqn, args: Sequence[np.ndarray], real: bool) -> tuple[np.ndarray, ...]:
    """``eqn``'s outputs from its input values, each in its storage dtype."""
    if real and eqn.prim.name == "convert" and (storage_dtype(eqn.inputs[0].type.dtype, True)
                                                == storage_dtype(eqn.outputs[0].type.dtype, True)):
        outs: Any = (np.asarray(args[0]),)          # float -> float: the identity on reals
    else:
        outs = _impl(eqn, args)
        outs = outs if eqn.prim.multiple_results else (outs,)
    return tuple(np.asarray(o).astype(storage_dtype(v.type.dtype, real), copy=False)
                 .reshape(v.type.shape) for v, o in zip(eqn.outputs, outs, strict=True))


def _impl(eqn: Eqn, args: Sequence[np.ndarray]) -> Any:
    try:
        return eqn.prim.impl(*args, **eqn.params)
    except TypeError:
        # NumPy has no kernel for some ops on ml_dtypes' bfloat16 (np.einsum): compute
        # those in float32, as XLA's CPU backend does, and round the result (apply_eqn
        # casts every output to its type).
        if not any(np.asarray(a).dtype.name in ("bfloat16", "float16") for a in args):
            raise
        wide = [np.asarray(a).astype(np.float32) if np.asarray(a).dtype.name in
                ("bfloat16", "float16") else a for a in args]
        return eqn.prim.impl(*wide, **eqn.params)


def evaluate(func: Func, *args: Any, real: bool = False) -> list[np.ndarray]:
    if len(args) != len(func.inputs):
        raise TypeError(f"{func.name} takes {len(func.inputs)} inputs, got {len(args)}")
    env: dict[Var, np.ndarray] = {}
    for v, x in zip(func.inputs, args, strict=True):
        env[v] = np.asarray(x, storage_dtype(v.type.dtype, real))

    def read(a: Atom) -> np.ndarray:
        if isinstance(a, Lit):
            return np.asarray(a.value, storage_dtype(a.type.dtype, real))
        return env[a]

    for eqn in func.eqns:
        outs = apply_eqn(eqn, [read(a) for a in eqn.inputs], real)
        for v, o in zip(eqn.outputs, outs, strict=True):
            env[v] = o
    return [read(a) for a in func.outputs]


def evaluate_many(func: Func, arg_sets: Sequence[Sequence[Any]]) -> list[list[np.ndarray]]:
    return [evaluate(func, *args) for args in arg_sets]
