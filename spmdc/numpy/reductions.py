"""Reductions for spmdc.numpy: sum, mean, max, min, prod, var, std, argmax, argmin, all,
any, cumulative ops and logsumexp-style helpers.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import builtins
import math
from typing import Any

import numpy as np

from ..compiler.primitives.core import registry as _prims
from ..core import dtypes
from ..core.tracing import bind
from .core import (
    _error,
    abs,
    add,
    asarray,
    broadcast_to,
    equal,
    exp,
    isfinite,
    less_equal,
    log,
    maximum,
    minimum,
    multiply,
    sqrt,
    where,
)
from .shape_ops import _axes, _axis, expand_dims, ravel, reshape, squeeze


def _reduce(op: str, prim: str, x: Any, axis: Any, keepdims: bool, dtype: Any = None,
            initial: Any = None) -> Any:
    x = asarray(x)
    if dtype is not None:
        x = x.astype(dtype)
    elif prim in ("reduce_sum", "reduce_prod") and x.dtype.kind in "bu" \
            or (prim in ("reduce_sum", "reduce_prod") and x.dtype == np.bool_):
        x = x.astype(dtypes.default_int())
    axes = _axes(axis, x.ndim, op)
    if prim in ("reduce_max", "reduce_min") and builtins.any(x.shape[a] == 0 for a in axes) \
            and initial is None:
        raise _error(op, "zero-size array to reduction operation which has no identity")
    out = bind(_prims[prim], x, axes=axes, weak=x.weak)
    if initial is not None:
        out = (maximum if prim == "reduce_max" else minimum if prim == "reduce_min"
               else add if prim == "reduce_sum" else multiply)(out, initial)
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return out


def sum(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    if where is not None:
        x = _where_for_reduce(x, where, 0)
    return _reduce("sum", "reduce_sum", x, axis, keepdims, dtype, initial)


def prod(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
         initial: Any = None, where: Any = None) -> Any:
    if where is not None:
        x = _where_for_reduce(x, where, 1)
    return _reduce("prod", "reduce_prod", x, axis, keepdims, dtype, initial)


def max(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None,
        where: Any = None) -> Any:
    return _reduce("max", "reduce_max", x, axis, keepdims, None, initial)


def min(x: Any, axis: Any = None, keepdims: bool = False, initial: Any = None,
        where: Any = None) -> Any:
    return _reduce("min", "reduce_min", x, axis, keepdims, None, initial)


amax, amin = max, min


def _where_for_reduce(x: Any, mask: Any, identity: Any) -> Any:
    return where(mask, x, identity)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _reduce("all", "reduce_and", asarray(x).astype(bool), axis, keepdims)


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _reduce("any", "reduce_or", asarray(x).astype(bool), axis, keepdims)


def mean(x: Any, axis: Any = None, dtype: Any = None, keepdims: bool = False,
         where: Any = None) -> Any:
    x = asarray(x)
    if x.dtype.kind in "biu" and dtype is None:
        x = x.astype(dtypes.default_float())
    axes = _axes(axis, x.ndim, "mean")
    if where is not None:
        count = sum(broadcast_to(asarray(where), x.shape).astype(x.dtype), axis=axes,
                    keepdims=keepdims)
        return sum(x, axis=axes, dtype=dtype, keepdims=keepdims, where=where) / count
    n = math.prod(x.shape[a] for a in axes)
    total = sum(x, axis=axes, dtype=dtype, keepdims=keepdims)
    return total / np.asarray(n, total.dtype) if n else total * np.asarray(np.nan, total.dtype)


def var(x: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
        keepdims: bool = False) -> Any:
    x = asarray(x)
    if x.dtype.kind in "biu":
        x = x.astype(dtypes.default_float())
    axes = _axes(axis, x.ndim, "var")
    centered = x - mean(x, axis=axes, keepdims=True)
    n = math.prod(x.shape[a] for a in axes) - ddof
    return sum(centered * centered, axis=axes, keepdims=keepdims) / np.asarray(n, x.dtype)


def std(x: Any, axis: Any = None, dtype: Any = None, ddof: int = 0,
        keepdims: bool = False) -> Any:
    return sqrt(var(x, axis, dtype, ddof, keepdims))


def _arg_reduce(op: str, prim: str, x: Any, axis: Any, keepdims: bool) -> Any:
    x = asarray(x)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _axis(axis, x.ndim, op)
    if x.shape[axis] == 0:
        raise _error(op, "attempt to get argmax/argmin of an empty sequence")
    out = bind(_prims[prim], x, axis=axis, index_dtype=dtypes.default_int())
    if keepdims:
        out = expand_dims(out, axis)
    return out


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _arg_reduce("argmax", "argmax", x, axis, keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _arg_reduce("argmin", "argmin", x, axis, keepdims)


def cumsum(x: Any, axis: Any = None, dtype: Any = None) -> Any:
    x = asarray(x) if dtype is None else asarray(x).astype(dtype)
    if axis is None:
        x, axis = ravel(x), 0
    return bind(_prims["cumsum"], x, axis=_axis(axis, x.ndim, "cumsum"), reverse=False,
                weak=x.weak)


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    x = asarray(x)
    m = stop_gradient(max(x, axis=axis, keepdims=True))
    m = where(isfinite(m), m, 0)
    out = log(sum(exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else squeeze(out, axis=_axes(axis, x.ndim, "logsumexp"))


def stop_gradient(x: Any) -> Any:
    x = asarray(x)
    return bind(_prims["stop_gradient"], x, weak=x.weak)


def allclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8) -> Any:
    return all(less_equal(abs(asarray(a) - b), atol + rtol * abs(asarray(b))))


def isclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8) -> Any:
    return less_equal(abs(asarray(a) - b), atol + rtol * abs(asarray(b)))


def array_equal(a: Any, b: Any) -> Any:
    a, b = asarray(a), asarray(b)
    return a.shape == b.shape and bool(all(equal(a, b)))
