"""Array creation: full/zeros/ones/empty and their *_like forms, arange, linspace, eye,
identity and the other constructors of new arrays from shapes, ranges or buffers.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..compiler.primitives.core import registry as _prims
from ..core import dtypes
from ..core.operands import asarray, result_type
from ..core.operands import dtype_of as _dtype_of
from ..core.operands import error as _error
from ..core.operands import full as _full
from ..core.operands import iota as _iota
from ..core.operands import shape_arg as _shape_arg
from ..core.operands import shape_of as _shape
from ..core.tracing import Tracer, bind, current_trace
from .core import broadcast_to
from .ufuncs import floor


def _dtype_or(dtype: Any, default: np.dtype) -> np.dtype:
    return dtypes.canonicalize(dtype if dtype is not None else default)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    return _full(_shape_arg(shape), fill_value, dtype)


def zeros(shape: Any, dtype: Any = None) -> Any:
    return full(shape, 0, _dtype_or(dtype, dtypes.default_float()))


def ones(shape: Any, dtype: Any = None) -> Any:
    return full(shape, 1, _dtype_or(dtype, dtypes.default_float()))


def empty(shape: Any, dtype: Any = None) -> Any:
    return zeros(shape, dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full(_shape(x) if shape is None else shape, fill_value,
                dtype if dtype is not None else _dtype_of(x))


def zeros_like(x: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(x, 0, dtype, shape)


def ones_like(x: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(x, 1, dtype, shape)


empty_like = zeros_like


def iota(dtype: Any, size: int) -> Any:
    return _iota(dtypes.canonicalize(dtype), (size,), 0)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise _error("arange", "arguments must be concrete Python numbers, not traced "
                         "values (the result's size must be known when tracing)")
    value = np.arange(start, stop, step) if dtype is None else \
        np.arange(start, stop, step, dtype=dtypes.canonicalize(dtype))
    if dtype is None and value.dtype.kind == "f":
        value = value.astype(dtypes.default_float())
    value = value.astype(dtypes.canonicalize(value.dtype))
    if stop is None and step is None and value.dtype.kind in "iu" and current_trace():
        return _iota(value.dtype, value.shape, 0)       # arange(n) in a program, as JAX
    return asarray(value)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (array bounds broadcast, the
    new axis at ``axis``), computed as JAX does: ``start * (1 - t) + stop * t`` for
    ``t = i / div``, and ``stop`` itself as the last value when ``endpoint``, so that a
    histogram's last edge is exactly the data's maximum."""
    num = operator.index(num)
    if num < 0:
        raise _error("linspace", f"num must be non-negative, got {num}")
    start, stop = asarray(start), asarray(stop)
    if dtype is None:
        dtype = result_type(start, stop)
        if not dtypes.is_inexact(dtype):
            dtype = dtypes.default_float()
    dtype = dtypes.canonicalize(dtype)
    compute = dtype if dtypes.is_inexact(dtype) else dtypes.default_float()
    start, stop = start.astype(compute), stop.astype(compute)
    bounds = list(np.broadcast_shapes(start.shape, stop.shape))
    start, stop = broadcast_to(start, tuple(bounds)), broadcast_to(stop, tuple(bounds))
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    shape = [*bounds[:axis], 1, *bounds[axis:]]
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = (stop - start) / asarray(div, compute)
        real = np.dtype(np.float64 if compute in (np.float64, np.complex128) else
                        compute if dtypes.is_float(compute) else np.float32)
        iota_shape = [1] * len(shape)
        iota_shape[axis] = div
        t = (_iota(real, (div,), 0) / asarray(div, real)).reshape(iota_shape).astype(compute)
        out = start.reshape(shape) * (1 - t) + stop.reshape(shape) * t
        if endpoint:
            from .shape_ops import concatenate
            out = concatenate([out, stop.reshape(shape)], axis=axis)
    elif num == 1:
        delta = asarray(np.nan, compute) if endpoint else stop - start
        out = start.reshape(shape)
    else:
        delta = asarray(np.nan, compute)
        out = zeros(tuple(shape[:axis] + [0] + shape[axis + 1:]), compute)
    if dtypes.is_int(dtype) and not dtypes.is_int(out.dtype):
        out = floor(out)
    out = out.astype(dtype)
    return (out, delta) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    M = N if M is None else M
    dtype = _dtype_or(dtype, dtypes.default_float())
    value = np.eye(N, M, k, dtype=dtype)                # (also checks the arguments)
    if current_trace() is None:
        return asarray(value)
    return diagonal_mask(value.shape, operator.index(k), "eq").astype(dtype)


def diagonal_mask(shape: tuple[int, int], k: int, prim: str) -> Any:
    """``row + k <prim> column`` for every element of an n x m matrix ("eq": the k-th
    diagonal, "ge": it and below), built in the program being traced from two iotas
    rather than captured as an n x m constant, as JAX builds it."""
    rows = bind(_prims["iota"], dtype=np.dtype(np.int32), shape=shape, dimension=0)
    cols = bind(_prims["iota"], dtype=np.dtype(np.int32), shape=shape, dimension=1)
    if k:
        rows = bind(_prims["add"], rows, np.int32(k))
    return bind(_prims[prim], rows, cols)


def identity(n: int, dtype: Any = None) -> Any:
    return eye(n, dtype=dtype)
