"""Differences and integrals along an axis: diff, ediff1d, gradient, trapezoid.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from .array_creation import zeros
from .core import _static_int, asarray, result_type
from .shape_ops import _axes, _axis, concatenate, reshape


def _slice_along(a: Any, axis: int, start: int | None, stop: int | None) -> Any:
    index = [slice(None)] * a.ndim
    index[axis] = slice(start, stop)
    return a[tuple(index)]


def diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None) -> Any:
    """The ``n``-th discrete difference along ``axis``; booleans differ by ``!=``."""
    a = asarray(a)
    n = _static_int("diff", "n", n)
    if n < 0:
        raise ValueError(f"diff: order n must be non-negative, got {n}")
    if a.ndim == 0:
        raise ValueError("diff: needs an array of at least 1 dimension")
    axis = _axis(axis, a.ndim, "diff")
    pieces = [a] if prepend is None else [_edge(prepend, a, axis), a]
    if append is not None:
        pieces.append(_edge(append, a, axis))
    if len(pieces) > 1:
        a = concatenate(pieces, axis=axis)
    for _ in range(n):
        hi, lo = _slice_along(a, axis, 1, None), _slice_along(a, axis, None, -1)
        a = hi != lo if a.dtype == np.bool_ else hi - lo
    return a


def _edge(value: Any, a: Any, axis: int) -> Any:
    value = asarray(value)
    if value.ndim == 0:
        shape = list(a.shape)
        shape[axis] = 1
        return value + zeros(tuple(shape), value.dtype)
    return value


def ediff1d(ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """Differences of consecutive elements of the flattened array, with ``to_begin`` and
    ``to_end`` attached (cast to the array's dtype)."""
    flat = reshape(asarray(ary), (-1,))
    out = flat[1:] - flat[:-1]
    pieces = [out]
    if to_begin is not None:
        pieces.insert(0, reshape(asarray(to_begin).astype(flat.dtype), (-1,)))
    if to_end is not None:
        pieces.append(reshape(asarray(to_end).astype(flat.dtype), (-1,)))
    return concatenate(pieces) if len(pieces) > 1 else out


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """Integral of ``y`` along ``axis`` by the trapezoid rule, at points ``x`` or with
    spacing ``dx``."""
    from .reductions import sum as jnp_sum
    y = asarray(y)
    axis = _axis(axis, y.ndim, "trapezoid")
    dtype = result_type(y, x if x is not None else dx)
    dtype = dtypes.default_float() if dtype.kind in "biu" else dtype
    y = y.astype(dtype)
    if x is None:
        spacing = asarray(dx)
    else:
        x = asarray(x).astype(dtype)
        if x.ndim == 1:
            spacing = diff(x)
            view = [1] * y.ndim
            view[axis] = spacing.shape[0]
            spacing = reshape(spacing, tuple(view))
        else:
            spacing = diff(x, axis=axis)
    mids = (_slice_along(y, axis, 1, None) + _slice_along(y, axis, None, -1)) * 0.5
    return jnp_sum(spacing * mids, axis=axis)


def _along(a: Any, axis: int, start: int | None, stop: int | None) -> Any:
    index = [slice(None)] * a.ndim
    index[axis] = slice(start, stop)
    return a[tuple(index)]


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: Any = None) -> Any:
    """Central differences inside, one-sided differences at the two ends, along each axis
    (a list of arrays for several axes). Spacings are scalars (uniform grids);
    ``edge_order`` (second-order ends) and coordinate arrays are not supported."""
    if edge_order is not None:
        raise NotImplementedError("gradient: edge_order is not supported (as in JAX)")
    f = asarray(f)
    if f.dtype.kind in "biu":
        f = f.astype(dtypes.default_float())
    axes = _axes(axis, f.ndim, "gradient") if axis is not None else tuple(range(f.ndim))
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"gradient: {len(varargs)} spacings for {len(axes)} axes")
    for h in spacing:
        if np.ndim(h) != 0:
            raise NotImplementedError("gradient: only scalar spacings are supported; pass "
                                      "one number per axis")
    out = []
    for ax, h in zip(axes, spacing, strict=True):
        if f.shape[ax] < 2:
            raise ValueError(f"gradient: axis {ax} has {f.shape[ax]} element(s); it needs "
                             "at least 2")
        inner = (_along(f, ax, 2, None) - _along(f, ax, None, -2)) / (2.0 * h)
        first = (_along(f, ax, 1, 2) - _along(f, ax, 0, 1)) / h
        last = (_along(f, ax, -1, None) - _along(f, ax, -2, -1)) / h
        out.append(concatenate([first, inner, last], axis=ax))
    return out[0] if len(out) == 1 else out
