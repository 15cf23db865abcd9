"""NumPy's index tricks, as JAX has them: ``mgrid``, ``ogrid`` (grids from slices; a
complex step ``5j`` means that many points, end included), ``r_`` and ``c_``
(concatenation along rows / columns, with NumPy's string directives such as ``'0,2'`` or
``'c'``), ``s_`` and ``index_exp`` (NumPy's own). Slices' bounds are read at trace time,
so they must be Python numbers. Also ix_, unravel_index, ravel_multi_index and
fill_diagonal (NumPy's index_tricks module holds them too)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import Tracer
from ..core.tracing import where as _where
from .array_creation import arange, linspace, meshgrid
from .comparisons import where
from .core import asarray, result_type
from .shape_ops import concatenate, expand_dims, reshape, stack, transpose

__all__ = ["c_", "index_exp", "mgrid", "ogrid", "r_", "s_", "ix_", "unravel_index",
           "ravel_multi_index", "fill_diagonal"]


def _bound(value: Any, what: str, op: str) -> Any:
    if isinstance(value, Tracer):
        raise TypeError(f"jnp.{op}: the slice {what} must be a concrete number, not a traced "
                        f"value{_where()}")
    return value


def _grid_1d(s: slice, op: str) -> Any:
    start = _bound(s.start, "start", op) or 0
    stop = _bound(s.stop, "stop", op)
    step = _bound(s.step, "step", op) or 1
    if np.iscomplex(step):
        return linspace(start, stop, int(abs(step)))
    return arange(start, stop, step)


def _promoted(arrays: list[Any]) -> list[Any]:
    if not arrays:
        return arrays
    dtype = result_type(*arrays)
    return [a.astype(dtype) for a in arrays]


class _Mgrid:
    """``mgrid[0:3, 0:4]``: a dense grid, stacked on a new first axis."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_1d(key, "mgrid")
        grids = _promoted([_grid_1d(k, "mgrid") for k in key])
        if not grids:
            return arange(0)
        return stack(meshgrid(*grids, indexing="ij", sparse=False), 0)


class _Ogrid:
    """``ogrid[0:3, 0:4]``: an open grid, one array per axis with the others of size 1."""

    def __getitem__(self, key: slice | tuple[slice, ...]) -> Any:
        if isinstance(key, slice):
            return _grid_1d(key, "ogrid")
        grids = _promoted([_grid_1d(k, "ogrid") for k in key])
        return list(meshgrid(*grids, indexing="ij", sparse=True))


def _ndmin(x: Any, n: int) -> Any:
    return reshape(x, (1,) * (n - x.ndim) + x.shape) if x.ndim < n else x


class _AxisConcat:
    axis: int
    ndmin: int
    trans1d: int
    op_name: str

    def __getitem__(self, key: Any) -> Any:
        items = key if isinstance(key, tuple) else (key,)
        params = [self.axis, self.ndmin, self.trans1d, -1]
        directive = items[0]
        if isinstance(directive, str):
            items = items[1:]
            if directive == "r":
                params[-1] = 0
            elif directive == "c":
                params[-1] = 1
            else:
                vec: list[Any] = directive.split(",")
                vec = vec + params[len(vec):] if len(vec) < 4 else vec[:3] + [params[-1]]
                try:
                    params = [int(v) for v in vec]
                except ValueError:
                    raise ValueError(f"jnp.{self.op_name}: could not understand the directive "
                                     f"{directive!r}{_where()}") from None
        axis, ndmin, trans1d, matrix = params
        out = []
        for item in items:
            if isinstance(item, slice):
                obj, item_ndim = _grid_1d(item, self.op_name), 0
            elif isinstance(item, str):
                raise ValueError(f"jnp.{self.op_name}: a string directive must come first"
                                 f"{_where()}")
            else:
                obj = asarray(item)
                item_ndim = obj.ndim
            obj = _ndmin(obj, ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                order = tuple(range(ndmin))
                shifts = ndmin - abs(ndmin + trans1d + 1) % ndmin
                obj = transpose(obj, order[shifts:] + order[:shifts])
            out.append(obj)
        res = concatenate(out, axis=axis)
        if matrix != -1 and res.ndim == 1:
            res = expand_dims(res, matrix)
        return res

    def __len__(self) -> int:
        return 0


class RClass(_AxisConcat):
    """``r_[...]``: concatenate along the first axis (slices become ranges)."""
    axis, ndmin, trans1d, op_name = 0, 1, -1, "r_"


class CClass(_AxisConcat):
    """``c_[...]``: 1-d items become columns, concatenated along the last axis."""
    axis, ndmin, trans1d, op_name = -1, 2, 0, "c_"


mgrid = _Mgrid()
ogrid = _Ogrid()
r_ = RClass()
c_ = CClass()
s_ = np.s_
index_exp = np.index_exp


def ix_(*args: Any) -> tuple[Any, ...]:
    """Open-mesh index arrays from 1-d sequences (for ``x[ix_(rows, cols)]``)."""
    out = []
    for k, a in enumerate(args):
        a = asarray(a)
        if a.ndim != 1:
            raise ValueError(f"ix_: argument {k} has shape {a.shape}; each must be 1-d")
        out.append(reshape(a, tuple(-1 if j == k else 1 for j in range(len(args)))))
    return tuple(out)


def unravel_index(indices: Any, shape: Sequence[int]) -> tuple[Any, ...]:
    """The coordinates in an array of ``shape`` of flat ``indices``; out-of-range indices
    are clamped into the array (JAX's choice; NumPy raises)."""
    idx = asarray(indices)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"unravel_index: indices must be integers, got {idx.dtype}")
    shape = tuple(int(s) for s in shape)
    total = int(np.prod(shape, dtype=np.int64))
    idx = where(idx < 0, idx + total, idx)
    idx = where(idx < 0, 0, where(idx > total - 1, total - 1, idx))
    out = []
    for s in reversed(shape):
        out.append(idx % s)
        idx = idx // s
    return tuple(reversed(out))


def ravel_multi_index(multi_index: Sequence[Any], dims: Sequence[int], mode: str = "raise",
                      order: str = "C") -> Any:
    """Flat indices of coordinates ``multi_index`` in an array of shape ``dims``; mode is
    'clip' or 'wrap' ('raise' works only on concrete indices)."""
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    dims = tuple(int(d) for d in dims)
    coords = [asarray(i) for i in multi_index]
    if len(coords) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(coords)} coordinates for {len(dims)} dims")
    if mode == "raise":
        from ..core.tracing import Tracer
        for c, d in zip(coords, dims, strict=True):
            if isinstance(c, Tracer):
                raise TypeError("ravel_multi_index: mode='raise' needs concrete indices; use "
                                "mode='clip' or 'wrap' under jit")
            if np.any((np.asarray(c) < 0) | (np.asarray(c) >= d)):
                raise ValueError("ravel_multi_index: invalid entry in coordinates array")
    elif mode == "clip":
        coords = [where(c < 0, 0, where(c > d - 1, d - 1, c)) for c, d in
                  zip(coords, dims, strict=True)]
    elif mode == "wrap":
        coords = [c % d for c, d in zip(coords, dims, strict=True)]
    else:
        raise ValueError(f"ravel_multi_index: mode must be 'raise', 'clip' or 'wrap', "
                         f"got {mode!r}")
    order_dims = list(range(len(dims)))[::-1] if order == "C" else list(range(len(dims)))
    out, stride = None, 1
    for d in order_dims:
        term = coords[d].astype(dtypes.default_int()) * stride
        out = term if out is None else out + term
        stride *= dims[d]
    return out


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """``a`` with its main diagonal set to ``val`` (repeated cyclically). spmdc arrays are
    immutable, so ``inplace=False`` is required (as in JAX)."""
    if inplace:
        raise ValueError("fill_diagonal: spmdc arrays are immutable; pass inplace=False and "
                         "use the returned array")
    if wrap:
        raise NotImplementedError("fill_diagonal: wrap=True is not supported")
    a = asarray(a)
    if a.ndim < 2 or (a.ndim > 2 and len(set(a.shape)) != 1):
        raise ValueError(f"fill_diagonal: array must be at least 2-d with equal dimensions "
                         f"beyond 2-d, got shape {a.shape}")
    n = min(a.shape)
    if n == 0:
        return a
    flat_positions = [sum(i * int(np.prod(a.shape[d + 1:])) for d in range(a.ndim))
                      for i in range(n)]
    values = asarray(val).astype(a.dtype).reshape((-1,))
    if values.shape[0] == 0:
        return a
    values = values[np.arange(n) % values.shape[0]]
    flat = a.reshape((-1,)).at[np.asarray(flat_positions, dtypes.default_int())].set(values)
    return flat.reshape(a.shape)
