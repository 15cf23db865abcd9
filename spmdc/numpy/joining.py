"""Joining and splitting arrays beyond concatenate/stack/split: array_split, h/v/dsplit,
dstack, column_stack, append, unstack, block, concat.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.tracing import where as _where
from .core import asarray
from .shape_ops import _axis, _slice_axis, concatenate, ravel, reshape


def _block(xs: Any) -> tuple[Any, int]:
    if isinstance(xs, tuple):
        raise ValueError(f"block: tuples are not allowed, use lists, got {xs!r}{_where()}")
    if isinstance(xs, list):
        if not xs:
            raise ValueError(f"block: empty lists are not allowed{_where()}")
        parts, depths = zip(*[_block(x) for x in xs], strict=True)
        if any(d != depths[0] for d in depths[1:]):
            raise ValueError(f"block: mismatched list depths{_where()}")
        rank = builtins.max(depths[0], builtins.max(p.ndim for p in parts))
        parts = [reshape(p, (1,) * (rank - p.ndim) + p.shape) for p in parts]
        return concatenate(parts, axis=-depths[0]), depths[0] + 1
    return asarray(xs), 1


def block(arrays: Any) -> Any:
    """An array assembled from nested lists of blocks (the innermost lists along the
    last axis)."""
    out, _ = _block(arrays)
    return out


def array_split(ary: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    """split that also allows sections that do not divide the axis: the first
    ``n % sections`` pieces are one longer."""
    x = asarray(ary)
    axis = _axis(axis, x.ndim, "array_split")
    n = x.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("array_split: number of sections must be larger than 0")
        size, extra = divmod(n, sections)
        bounds = [0]
        for i in range(sections):
            bounds.append(bounds[-1] + size + (1 if i < extra else 0))
    else:
        bounds = [0, *[builtins.min(builtins.max(int(i) + (n if i < 0 else 0), 0), n)
                       for i in indices_or_sections], n]
    return [_slice_axis(x, axis, a, builtins.max(a, b))
            for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _split_on(op: str, axis: int, min_ndim: int) -> Any:
    def fn(ary: Any, indices_or_sections: Any) -> list[Any]:
        from .shape_ops import split
        x = asarray(ary)
        if x.ndim < min_ndim:
            raise ValueError(f"{op}: needs an array of at least {min_ndim} dimensions, got "
                             f"shape {x.shape}")
        return split(x, indices_or_sections, 0 if x.ndim == 1 and op == "hsplit" else axis)
    fn.__name__ = op
    return fn


hsplit, vsplit, dsplit = _split_on("hsplit", 1, 1), _split_on("vsplit", 0, 2), \
    _split_on("dsplit", 2, 3)


def dstack(tup: Sequence[Any], dtype: Any = None) -> Any:
    """Stack along a third axis (1-d (n,) -> (1, n, 1), 2-d (m, n) -> (m, n, 1))."""
    from .shape_ops import atleast_3d
    out = concatenate([atleast_3d(a) for a in tup], axis=2)
    return out if dtype is None else out.astype(dtype)


def column_stack(tup: Sequence[Any]) -> Any:
    """1-d arrays become columns of a 2-d array; others are concatenated on axis 1."""
    arrays = [asarray(a) for a in tup]
    arrays = [reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrays]
    return concatenate(arrays, axis=1)


def append(arr: Any, values: Any, axis: int | None = None) -> Any:
    """``values`` appended to ``arr`` (both flattened if ``axis`` is None)."""
    if axis is None:
        return concatenate([ravel(asarray(arr)), ravel(asarray(values))])
    return concatenate([asarray(arr), asarray(values)], axis=axis)


def unstack(x: Any, /, *, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis``, as a tuple."""
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError("unstack: needs an array of at least one dimension")
    axis = _axis(axis, x.ndim, "unstack")
    from .shape_ops import squeeze
    return tuple(squeeze(_slice_axis(x, axis, i, i + 1), axis) for i in range(x.shape[axis]))


def concat(arrays: Sequence[Any], /, *, axis: int | None = 0) -> Any:
    return concatenate(arrays, axis=axis)
