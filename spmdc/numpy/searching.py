"""Searching and counting for spmdc.numpy, over sort, comparisons and scatter-add:
searchsorted, digitize, nonzero/flatnonzero/argwhere (``size=`` for a static result shape
under jit), lexsort, bincount, interp, isin (histograms and quantiles are statistics.py's).

Note [static result shapes]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
nonzero, argwhere and bincount have results whose length depends on the data. As in JAX,
under tracing the caller gives that length (``size=`` / ``length=``); entries past the
real count read ``fill_value`` (0 by default), and bincount drops values outside
``[0, length)``. On concrete arrays the length is read from the values.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.tracing import Tracer
from .array_creation import zeros
from .comparisons import where
from .core import _iota, asarray, check_flag, result_type
from .reductions import any as jnp_any
from .reductions import sum as jnp_sum
from .shape_ops import concatenate, ravel, reshape, stack
from .sorting import argsort
from .ufuncs import isnan

__all__ = ["searchsorted", "digitize", "nonzero", "flatnonzero", "argwhere", "lexsort",
           "bincount", "interp", "isin"]


def _less(x: Any, y: Any) -> Any:
    """``x < y`` in sort order: NaN after every number (as the sort primitive places it),
    complex numbers by real, then imaginary part (Note [complex order] in
    spmdc/compiler/primitives/complex_order.py)."""
    if x.dtype.kind == "c":
        same_real = (x.real == y.real) | (isnan(x.real) & isnan(y.real))
        return _less(x.real, y.real) | (same_real & _less(x.imag, y.imag))
    if x.dtype.kind != "f":
        return x < y
    return (x < y) | (isnan(y) & ~isnan(x))


def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None, *,
                 method: str = "scan") -> Any:
    """Indices at which ``v`` would be inserted into the sorted 1-d ``a`` to keep it sorted
    (before equal elements for side='left', after them for 'right'). ``method`` selects
    JAX's algorithm and never the result; every method here compares each ``v`` with every
    element of ``a``."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"searchsorted: unknown method {method!r}; use 'scan', "
                         "'scan_unrolled', 'sort' or 'compare_all'")
    a, v = asarray(a), asarray(v)
    if a.ndim != 1:
        raise ValueError(f"searchsorted: a must be 1-d, got shape {a.shape}")
    if sorter is not None:
        a = a[asarray(sorter)]
    dtype = result_type(a, v)
    a, v = a.astype(dtype), v.astype(dtype)
    column = reshape(v, v.shape + (1,))
    before = _less(a, column) if side == "left" else ~_less(column, a)
    return jnp_sum(before, axis=-1, dtype=dtypes.default_int())


def digitize(x: Any, bins: Any, right: bool = False, *, method: str = "scan") -> Any:
    """The index of the bin of each ``x`` among increasing or decreasing ``bins``."""
    x, bins = asarray(x), asarray(bins)
    if bins.ndim != 1:
        raise ValueError(f"digitize: bins must be 1-d, got shape {bins.shape}")
    if bins.shape[0] == 0:
        return zeros(x.shape, dtypes.default_int())
    side = "left" if right else "right"
    increasing = searchsorted(bins, x, side, method=method)
    decreasing = bins.shape[0] - searchsorted(bins[::-1], x, side, method=method)
    return where(bins[-1] >= bins[0], increasing, decreasing)


def _concrete(op: str, x: Any, what: str) -> np.ndarray:
    if isinstance(x, Tracer):
        raise TypeError(f"{op}: the result's shape depends on the values of a traced array; "
                        f"pass {what} (see Note [static result shapes])")
    return np.asarray(x)


def nonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """The indices of the non-zero elements, one array per dimension. With ``size``, the
    first ``size`` of them, padded with ``fill_value`` (a scalar or one per dimension)."""
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("nonzero: not defined for 0-d arrays; use atleast_1d first")
    int_type = dtypes.default_int()
    if size is None:
        if fill_value is not None:
            raise ValueError("nonzero: fill_value needs size")
        return tuple(asarray(i.astype(int_type))
                     for i in np.nonzero(_concrete("nonzero", a, "size=")))
    size = int(size)
    mask = ravel(a != 0)
    n = mask.shape[0]
    order = argsort(~mask, stable=True)          # the non-zero positions first, in order
    if size > n:
        order = concatenate([order, zeros((size - n,), order.dtype)])
    order = order[:size]
    valid = _iota(np.dtype(int_type), (size,), 0) < jnp_sum(mask, dtype=int_type)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value] * a.ndim
    if len(fills) != a.ndim:
        raise ValueError(f"nonzero: {len(fills)} fill values for {a.ndim} dimensions")
    out = []
    stride = n
    for extent, fill in zip(a.shape, fills, strict=True):
        stride //= builtins.max(extent, 1)
        index = (order // builtins.max(stride, 1)) % builtins.max(extent, 1)
        fill = asarray(0 if fill is None else fill).astype(int_type)
        out.append(where(valid, index.astype(int_type), fill))
    return tuple(out)


def flatnonzero(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the non-zero elements of the flattened array."""
    return nonzero(ravel(asarray(a)), size=size, fill_value=fill_value)[0]


def argwhere(a: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the non-zero elements, one row each."""
    a = asarray(a)
    result = stack(nonzero(a if a.ndim else reshape(a, (1,)), size=size,
                           fill_value=fill_value), axis=1)
    return result[:, :0] if a.ndim == 0 else result


def lexsort(keys: Any, axis: int = -1) -> Any:
    """The indices that sort by several keys: the last key is the primary one (stable)."""
    keys = [asarray(k) for k in keys] if not hasattr(keys, "ndim") else \
        [asarray(keys)[i] for i in range(keys.shape[0])]
    if not keys:
        raise TypeError("lexsort: needs at least one key")
    shape = keys[0].shape
    if any(k.shape != shape for k in keys):
        raise ValueError(f"lexsort: all keys must have one shape, got {[k.shape for k in keys]}")
    if len(shape) == 0:
        raise ValueError("lexsort: keys must be at least 1-d")
    from .shape_ops import _axis
    axis = _axis(axis, len(shape), "lexsort")
    iota = _iota(dtypes.default_int(), shape, axis)
    *_, indices = lax.sort((*keys[::-1], iota), dimension=axis, is_stable=True,
                           num_keys=len(keys))
    return indices


def bincount(x: Any, weights: Any = None, minlength: int = 0, *,
             length: int | None = None) -> Any:
    """How many times each of 0, 1, ... occurs in the non-negative integers ``x`` (summing
    ``weights`` instead of ones if given). See Note [static result shapes]."""
    x = asarray(x)
    if x.ndim != 1 or x.dtype.kind not in "iub":
        raise TypeError(f"bincount: x must be a 1-d integer array, got {x.dtype} of shape "
                        f"{x.shape}")
    if length is None:
        values = _concrete("bincount", x, "length=")
        if values.size and values.min() < 0:
            raise ValueError("bincount: x must not be negative")
        length = builtins.max(int(minlength), int(values.max()) + 1 if values.size else 0)
    length = int(length)
    if weights is None:
        weights = np.ones((), dtypes.default_int())
    weights = asarray(weights)
    weights = weights * np.ones(x.shape, weights.dtype) if weights.ndim == 0 else weights
    index = where(x < 0, length, x.astype(dtypes.default_int()))
    return zeros((length,), weights.dtype).at[index].add(weights, mode="drop")


def interp(x: Any, xp: Any, fp: Any, left: Any = None, right: Any = None,
           period: Any = None) -> Any:
    """Piecewise-linear interpolation of the points (xp, fp) at ``x``; ``left``/``right``
    (default fp[0], fp[-1]) outside. ``period`` is not supported (an error)."""
    if period is not None:
        raise NotImplementedError("interp: period= is not supported; map x into one period "
                                  "with spmdc.numpy.mod first")
    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape or xp.shape[0] == 0:
        raise ValueError(f"interp: xp and fp must be 1-d of one non-zero length, got "
                         f"{xp.shape} and {fp.shape}")
    dtype = result_type(x, xp, fp)
    dtype = dtypes.default_float() if dtype.kind in "biu" else dtype
    x, xp, fp = x.astype(dtype), xp.astype(dtype), fp.astype(dtype)
    n = xp.shape[0]
    i = searchsorted(xp, x, "right")
    i = where(i < 1, 1, where(i > n - 1, n - 1, i)) if n > 1 else i * 0
    lo = i - 1 if n > 1 else i
    dx = xp[i] - xp[lo]
    safe = where(dx == 0, np.ones((), dtype), dx)
    f = where(dx == 0, fp[i], fp[lo] + (x - xp[lo]) / safe * (fp[i] - fp[lo]))
    f = where(x < xp[0], fp[0] if left is None else asarray(left).astype(dtype), f)
    return where(x > xp[-1], fp[-1] if right is None else asarray(right).astype(dtype), f)


def isin(element: Any, test_elements: Any, assume_unique: bool = False, invert: bool = False,
         *, method: str = "auto") -> Any:
    """Whether each element of ``element`` occurs in ``test_elements`` (``assume_unique``
    is a hint: checked, no other effect)."""
    check_flag("isin", "assume_unique", assume_unique)
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"isin: unknown method {method!r}")
    element, tests = asarray(element), ravel(asarray(test_elements))
    found = jnp_any(reshape(element, element.shape + (1,)) == tests, axis=-1)
    return ~found if invert else found


