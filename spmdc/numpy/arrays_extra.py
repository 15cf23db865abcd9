"""More of spmdc.numpy, built from the functions of core.py, shape_ops.py, reductions.py
and indexing.py (so each vmaps, differentiates and lowers as those do): grids and
triangles (meshgrid, tri, tril/triu and their indices, diag, diagonal), rearrangements
(rot90, fliplr/flipud, roll, kron), differences and integrals (diff, ediff1d, trapezoid,
polyval), and NumPy 2's array-API aliases.
"""
from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import current_trace
from .array_creation import diagonal_mask, zeros
from .comparisons import where
from .core import _is_array, asarray, broadcast_to, check_flag, result_type
from .indexing import take
from .shape_ops import _axis, concatenate, flip, moveaxis, reshape, swapaxes, transpose

__all__ = ["meshgrid", "tri", "tril", "triu", "tril_indices", "triu_indices",
           "tril_indices_from", "triu_indices_from", "diag_indices", "diag_indices_from",
           "diagonal", "diag", "rot90", "fliplr", "flipud", "roll", "kron", "diff",
           "ediff1d", "trapezoid", "polyval", "matrix_transpose", "permute_dims", "concat"]


def _static_int(op: str, what: str, value: Any) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{op}: {what} must be a static Python integer, got "
                        f"{type(value).__name__}") from None


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"
             ) -> list[Any]:
    """Coordinate arrays from 1-d coordinate vectors; ``indexing='xy'`` (Cartesian, the
    default) swaps the first two output dimensions, 'ij' does not."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    check_flag("meshgrid", "copy", copy)          # arrays are immutable: nothing to copy
    check_flag("meshgrid", "sparse", sparse)
    xs = [asarray(x) for x in xi]
    for i, x in enumerate(xs):
        if x.ndim != 1:
            raise ValueError(f"meshgrid: argument {i} has shape {x.shape}; every argument "
                             "must be 1-d (ravel it first)")
    shape = [x.shape[0] for x in xs]
    if indexing == "xy" and len(xs) > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(xs) > 1 else i
        view = [1] * len(xs)
        view[axis] = x.shape[0]
        x = reshape(x, tuple(view))
        out.append(x if sparse else broadcast_to(x, tuple(shape)))
    return out


def _tri_mask(n: int, m: int, k: int) -> Any:
    """Ones at and below the k-th diagonal: on the host, or built in the program being
    traced (not captured as an n x m constant)."""
    if current_trace() is None:
        return np.tri(n, m, k, dtype=bool)
    return diagonal_mask((n, m), k, "ge")


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    """Ones at and below the ``k``-th diagonal of an N x M matrix."""
    N = _static_int("tri", "N", N)
    M = N if M is None else _static_int("tri", "M", M)
    dtype = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float()
    return asarray(_tri_mask(N, M, _static_int("tri", "k", k)).astype(dtype))


def _triangle(op: str, m: Any, k: int, lower: bool) -> Any:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(f"{op}: needs an array of at least 2 dimensions, got shape {m.shape}")
    k = _static_int(op, "k", k)
    n, c = m.shape[-2:]
    mask = _tri_mask(n, c, k) if lower else ~_tri_mask(n, c, k - 1)
    return where(mask, m, np.zeros((), m.dtype))


def tril(m: Any, k: int = 0) -> Any:
    """``m`` with the elements above the ``k``-th diagonal zeroed (last two axes)."""
    return _triangle("tril", m, k, True)


def triu(m: Any, k: int = 0) -> Any:
    """``m`` with the elements below the ``k``-th diagonal zeroed (last two axes)."""
    return _triangle("triu", m, k, False)


def _indices(rows: np.ndarray, cols: np.ndarray) -> tuple[Any, Any]:
    int_type = dtypes.default_int()
    return asarray(rows.astype(int_type)), asarray(cols.astype(int_type))


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    return _indices(*np.tril_indices(_static_int("tril_indices", "n", n),
                                     _static_int("tril_indices", "k", k), m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[Any, Any]:
    return _indices(*np.triu_indices(_static_int("triu_indices", "n", n),
                                     _static_int("triu_indices", "k", k), m))


def _shape_2d(op: str, arr: Any) -> tuple[int, int]:
    shape = np.shape(arr) if not _is_array(arr) else arr.shape
    if len(shape) != 2:
        raise ValueError(f"{op}: input must be 2-d, got shape {tuple(shape)}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    n, m = _shape_2d("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple[Any, Any]:
    n, m = _shape_2d("triu_indices_from", arr)
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple[Any, ...]:
    n, ndim = _static_int("diag_indices", "n", n), _static_int("diag_indices", "ndim", ndim)
    if n < 0 or ndim < 0:
        raise ValueError(f"diag_indices: n and ndim must be non-negative, got {n}, {ndim}")
    return (asarray(np.arange(n, dtype=dtypes.default_int())),) * ndim


def diag_indices_from(arr: Any) -> tuple[Any, ...]:
    shape = arr.shape if _is_array(arr) else np.shape(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from: input must be at least 2-d with all "
                         f"dimensions equal, got shape {tuple(shape)}")
    return diag_indices(shape[0], len(shape))


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The ``offset``-th diagonal over ``axis1`` and ``axis2``, as the last axis."""
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"diagonal: needs an array of at least 2 dimensions, got {a.shape}")
    offset = _static_int("diagonal", "offset", offset)
    axis1, axis2 = _axis(axis1, a.ndim, "diagonal"), _axis(axis2, a.ndim, "diagonal")
    if axis1 == axis2:
        raise ValueError("diagonal: axis1 and axis2 must be different")
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = a.shape[-2:]
    rows = np.arange(builtins.max(0, -offset), builtins.min(n, m - offset))
    if rows.size == 0:
        return zeros(a.shape[:-2] + (0,), a.dtype)
    flat = reshape(a, a.shape[:-2] + (n * m,))
    return take(flat, asarray((rows * m + rows + offset).astype(dtypes.default_int())),
                axis=-1)


def diag(v: Any, k: int = 0) -> Any:
    """The ``k``-th diagonal of a 2-d ``v``, or a 2-d array with 1-d ``v`` on it."""
    v = asarray(v)
    k = _static_int("diag", "k", k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag: input must be 1-d or 2-d, got shape {v.shape}")
    length = v.shape[0]
    n = length + builtins.abs(k)
    if length == 0:
        return zeros((n, n), v.dtype)
    on_diagonal = np.eye(n, k=k, dtype=bool)
    # element (i, i + k) is v[i] for k >= 0; element (j - k, j) is v[j] for k < 0
    source = np.broadcast_to(np.arange(n)[:, None] if k >= 0 else np.arange(n)[None, :], (n, n))
    source = np.minimum(source, length - 1).astype(dtypes.default_int())
    return where(on_diagonal, take(v, asarray(source)), np.zeros((), v.dtype))


def fliplr(m: Any) -> Any:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(f"fliplr: input must be at least 2-d, got shape {m.shape}")
    return flip(m, 1)


def flipud(m: Any) -> Any:
    m = asarray(m)
    if m.ndim < 1:
        raise ValueError("flipud: input must be at least 1-d")
    return flip(m, 0)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first axis
    towards the second)."""
    m = asarray(m)
    k = _static_int("rot90", "k", k) % 4
    if len(axes) != 2:
        raise ValueError("rot90: axes must be a pair of axes")
    a0, a1 = _axis(axes[0], m.ndim, "rot90"), _axis(axes[1], m.ndim, "rot90")
    if a0 == a1:
        raise ValueError("rot90: the two axes must be different")
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    if k == 1:
        return swapaxes(flip(m, a1), a0, a1)
    return flip(swapaxes(m, a0, a1), a1)


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Elements shifted by ``shift`` along ``axis`` (the flattened array if None),
    wrapping around; ``shift`` may be traced."""
    a = asarray(a)
    if axis is None:
        return reshape(roll(reshape(a, (-1,)), shift, 0), a.shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    shifts = asarray(shift)
    if shifts.ndim > 1:
        raise ValueError("roll: shift must be a scalar or a 1-d sequence")
    shifts = [shifts] if shifts.ndim == 0 else [shifts[i] for i in range(shifts.shape[0])]
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    for s, ax in zip(shifts, axes, strict=True):
        ax = _axis(ax, a.ndim, "roll")
        n = a.shape[ax]
        if n == 0:
            continue
        int_type = dtypes.default_int()
        positions = (asarray(np.arange(n, dtype=int_type)) - asarray(s).astype(int_type)) % n
        a = take(a, positions, axis=ax)
    return a


def kron(a: Any, b: Any) -> Any:
    """The Kronecker product: blocks ``a[i, j] * b``."""
    a, b = asarray(a), asarray(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    a_view = reshape(a, tuple(d for s in a.shape for d in (s, 1)))
    b_view = reshape(b, tuple(d for s in b.shape for d in (1, s)))
    return reshape(a_view * b_view, tuple(x * y for x, y in zip(a.shape, b.shape, strict=True)))


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


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's rule (``unroll`` is accepted for
    JAX's signature; the loop is unrolled at trace time, so it changes nothing)."""
    if isinstance(unroll, bool) or not isinstance(unroll, (int, np.integer)) or unroll < 1:
        raise TypeError(f"polyval: unroll must be a positive int, got {unroll!r}")
    p, x = asarray(p), asarray(x)
    if p.ndim != 1:
        raise ValueError(f"polyval: coefficients must be 1-d, got shape {p.shape}")
    dtype = result_type(p, x)
    p, x = p.astype(dtype), x.astype(dtype)
    out = zeros(x.shape, dtype)
    for i in range(p.shape[0]):
        out = out * x + p[i]
    return out


def matrix_transpose(x: Any) -> Any:
    """Swap the last two axes."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: needs at least 2 dimensions, got {x.shape}")
    return swapaxes(x, -1, -2)


def permute_dims(a: Any, axes: Sequence[int]) -> Any:
    return transpose(a, tuple(axes))


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    return concatenate(arrays, axis=axis)
