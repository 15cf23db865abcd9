"""sort and argsort for spmdc.numpy, over the ``sort`` primitive
(compiler/primitives/sorting.py; Note [sort order] there: NaNs last, -0.0 equal to 0.0).

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from .core import _error, _iota, asarray
from .shape_ops import _axis, flip, ravel

__all__ = ["sort", "argsort"]


def _unsupported(op: str, kind: Any, order: Any) -> None:
    if kind is not None:
        raise _error(op, "the kind= argument is not supported; use stable=True or "
                     "stable=False to choose the sort's stability")
    if order is not None:
        raise _error(op, "the order= argument (structured arrays) is not supported")


def _prepare(op: str, a: Any, axis: Any) -> tuple[Any, int]:
    a = asarray(a)
    if axis is None:
        return ravel(a), 0
    if a.ndim == 0:
        raise ValueError(f"{op}: axis {axis} is out of bounds for an array of dimension 0")
    return a, _axis(axis, a.ndim, op)


def sort(a: Any, axis: int | None = -1, *, kind: Any = None, order: Any = None,
         stable: bool = True, descending: bool = False) -> Any:
    """``a`` sorted along ``axis`` (flattened first if None); descending reverses the
    ascending result, as in JAX."""
    _unsupported("sort", kind, order)
    a, dimension = _prepare("sort", a, axis)
    out = lax.sort(a, dimension=dimension, is_stable=bool(stable))
    return flip(out, dimension) if descending else out


def argsort(a: Any, axis: int | None = -1, *, kind: Any = None, order: Any = None,
            stable: bool = True, descending: bool = False, dtype: Any = None) -> Any:
    """The indices that sort ``a`` along ``axis``; with ``stable`` equal elements keep
    their order, also when ``descending``."""
    _unsupported("argsort", kind, order)
    a, dimension = _prepare("argsort", a, axis)
    index_dtype = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_int()
    if np.dtype(index_dtype).kind not in "iu":
        raise _error("argsort", f"dtype must be an integer type, got {np.dtype(index_dtype)}")
    iota = _iota(np.dtype(index_dtype), a.shape, dimension)
    if descending and stable:       # reversed in, reversed out: ties keep their order
        a, iota = flip(a, dimension), flip(iota, dimension)
    _, indices = lax.sort((a, asarray(iota)), dimension=dimension, is_stable=bool(stable),
                          num_keys=1)
    return flip(indices, dimension) if descending else indices
