"""NumPy's index tricks, as JAX has them: ``mgrid``, ``ogrid`` (grids from slices; a
complex step ``5j`` means that many points, end included), ``r_`` and ``c_``
(concatenation along rows / columns, with NumPy's string directives such as ``'0,2'`` or
``'c'``), ``s_`` and ``index_exp`` (NumPy's own). Slices' bounds are read at trace time,
so they must be Python numbers."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core.tracing import Tracer
from ..core.tracing import where as _where
from .array_creation import arange, linspace
from .arrays_extra import meshgrid
from .core import asarray, result_type
from .shape_ops import concatenate, expand_dims, reshape, stack, transpose

__all__ = ["c_", "index_exp", "mgrid", "ogrid", "r_", "s_"]


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
