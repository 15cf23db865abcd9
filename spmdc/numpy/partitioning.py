"""Partial sorts, as JAX writes them (in its sorting module): ``partition`` and
``argpartition`` (by two top-k selections, so the parts come out sorted as JAX's do), and
``sort_complex``.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import where as _where
from .comparisons import where
from .core import _iota, asarray
from .editing import normalized_axis, take_along_axis
from .reductions import any as jnp_any
from .shape_ops import concatenate, expand_dims, swapaxes
from .sorting import argsort, sort

__all__ = ["partition", "argpartition", "sort_complex"]


def _largest(x: Any, k: int) -> tuple[Any, Any]:
    """``lax.top_k``: the ``k`` largest along the last axis, descending, and their indices
    (the lower index first among equal entries)."""
    idx = argsort(x, axis=-1, descending=True, stable=True, dtype=np.int32)[..., :k]
    return take_along_axis(x, idx, -1), idx


def _partition_prep(op: str, a: Any, kth: Any, axis: Any) -> tuple[Any, int, int]:
    arr = asarray(a)
    if arr.dtype.kind == "c":
        raise TypeError(f"{op}: complex arrays are not supported (as in JAX){_where()}")
    axis = normalized_axis(op, axis, arr.ndim)
    kth = operator.index(kth)
    n = arr.shape[axis]
    if not -n <= kth < n:
        raise ValueError(f"{op}: kth={kth} is out of bounds for an axis of size {n}"
                         f"{_where()}")
    return swapaxes(arr, axis, -1), kth % n, axis


def _negated(arr: Any) -> Any:
    # the smallest first, as JAX: -(x + 1) for unsigned integers
    return -(arr + 1) if arr.dtype.kind == "u" else -arr


def partition(a: Any, kth: int, axis: int = -1) -> Any:
    """``a`` with the ``kth`` smallest element (along ``axis``) in its sorted place, the
    smaller ones before it (sorted, as JAX gives them) and the others after."""
    arr, kth, axis = _partition_prep("partition", a, kth, axis)
    low, _ = _largest(_negated(arr), kth + 1)
    bottom = -low - 1 if arr.dtype.kind == "u" else -low
    top, _ = _largest(arr, arr.shape[-1] - kth - 1)
    return swapaxes(concatenate([bottom, top], axis=-1), -1, axis)


def argpartition(a: Any, kth: int, axis: int = -1) -> Any:
    """The indices that ``partition`` would arrange ``a`` by."""
    arr, kth, axis = _partition_prep("argpartition", a, kth, axis)
    _, bottom = _largest(_negated(arr), kth + 1)
    n = arr.shape[-1]
    taken = jnp_any(expand_dims(bottom, -1) == _iota(np.dtype(np.int32), (n,), 0), axis=-2)
    _, top = _largest(where(taken, 0.0, 1.0), n - kth - 1)
    return swapaxes(concatenate([bottom, top], axis=-1), -1, axis)


def sort_complex(a: Any) -> Any:
    """``a`` sorted (along the last axis), as a complex array."""
    out = sort(asarray(a))
    if out.dtype.kind == "c":
        return out
    return out.astype(np.complex128 if out.dtype == np.float64 else
                      np.complex64 if dtypes.is_float(out.dtype) else
                      dtypes.default_complex())
