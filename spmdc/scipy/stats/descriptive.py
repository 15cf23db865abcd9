"""Statistics of samples (``scipy.stats.mode``, ``rankdata``, ``sem``), as JAX 0.10.2's.

``mode`` and ``rankdata`` sort the sample and read runs of equal values off the sorted
order, so the shapes stay static under ``jit``: ``nan_policy`` may only be
``'propagate'`` ('omit' and 'raise' would need to know the values; JAX raises
NotImplementedError for them too).
"""
from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core import dtypes
from spmdc.scipy.stats._common import promote
from spmdc.transforms.eager import library_jit  # See Note [library functions run as one program]

NAN_POLICIES = ("propagate", "omit", "raise")
RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


class ModeResult(NamedTuple):
    mode: Any
    count: Any


def _check_nan_policy(function: str, nan_policy: str) -> None:
    if nan_policy not in NAN_POLICIES:
        raise ValueError(f"{function}: illegal nan_policy value {nan_policy!r}; expected one "
                         f"of {{'propagate', 'omit', 'raise'}}")
    if nan_policy != "propagate":
        raise NotImplementedError(
            f"{function}: nan_policy={nan_policy!r} needs to know whether the values hold "
            f"NaNs, which a compiled program cannot; check for NaNs before calling {function} "
            f"and use nan_policy='propagate'")


def _axis(function: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"{function}: axis {axis} is out of bounds for an array of "
                         f"dimension {ndim}")
    return axis % ndim


def _run_bounds(sorted_values: Any) -> tuple[Any, Any]:
    """For each position of ``sorted_values`` (sorted along axis 0), the first and last
    position of its run of equal values."""
    n = sorted_values.shape[0]
    position = lax.broadcasted_iota(np.int32, sorted_values.shape, 0)
    differs = sorted_values[1:] != sorted_values[:-1]
    true_row = jnp.ones((1,) + sorted_values.shape[1:], bool)
    starts = jnp.concatenate([true_row, differs])
    ends = jnp.concatenate([differs, true_row])
    first = lax.cummax(jnp.where(starts, position, 0), axis=0)
    last = lax.cummin(jnp.where(ends, position, n - 1), axis=0, reverse=True)
    return first, last


@library_jit(static_argnames=("axis", "nan_policy", "keepdims"))
def mode(a: Any, axis: int | None = 0, nan_policy: str = "propagate",
         keepdims: bool = False) -> ModeResult:
    """The most frequent value along ``axis`` (the smallest among equally frequent ones)
    and how often it occurs."""
    _check_nan_policy("mode", nan_policy)
    x = jnp.atleast_1d(jnp.asarray(a))
    if axis is None:
        out_shape = (1,) * x.ndim if keepdims else ()
        x = x.ravel()
        axis = 0
    else:
        axis = _axis("mode", axis, x.ndim)
        out_shape = tuple(1 if i == axis else s for i, s in enumerate(x.shape)) if keepdims \
            else tuple(s for i, s in enumerate(x.shape) if i != axis)
    x = jnp.moveaxis(x, axis, 0)
    x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    if x.shape[0] == 0:         # JAX's answer for an empty sample: NaN, counted 0 times
        float_dtype = dtypes.default_float()
        return ModeResult(jnp.full(out_shape, np.nan, float_dtype),
                          jnp.zeros(out_shape, float_dtype))
    ordered = jnp.sort(x, axis=0)
    first, last = _run_bounds(ordered)
    counts = (last - first + 1).astype(dtypes.default_int())
    best = jnp.argmax(counts, axis=0)           # the first maximum: the smallest value
    values = jnp.take_along_axis(ordered, best[None], axis=0)[0]
    return ModeResult(values.reshape(out_shape), counts.max(axis=0).reshape(out_shape))


def _ranks(a: Any, method: str) -> Any:
    """The ranks of a one-dimensional ``a``."""
    out_dtype = dtypes.default_float()
    n = a.shape[0]
    ordered, order = lax.sort_key_val(a, jnp.arange(n))
    if method == "ordinal":
        ranks = jnp.zeros(n, out_dtype).at[order].set(jnp.arange(1, n + 1, dtype=out_dtype))
    else:
        first, last = _run_bounds(ordered)
        if method == "dense":
            starts = jnp.concatenate([jnp.ones(1, bool), ordered[1:] != ordered[:-1]])
            by_position = jnp.cumsum(starts).astype(out_dtype)
        elif method == "min":
            by_position = (first + 1).astype(out_dtype)
        elif method == "max":
            by_position = (last + 1).astype(out_dtype)
        else:
            by_position = (first + last + 2).astype(out_dtype) / 2
        ranks = jnp.zeros(n, out_dtype).at[order].set(by_position)
    return jnp.where(jnp.any(jnp.isnan(a)), jnp.full_like(ranks, np.nan), ranks)


@library_jit(static_argnames=("method", "axis", "nan_policy"))
def rankdata(a: Any, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate") -> Any:
    """The ranks of ``a``'s values, from 1, ties resolved by ``method``; all NaN where a
    NaN is among the values ranked together."""
    _check_nan_policy("rankdata", nan_policy)
    if method not in RANK_METHODS:
        raise ValueError(f"rankdata: unknown method {method!r}; expected one of "
                         f"{', '.join(repr(m) for m in RANK_METHODS)}")
    x = jnp.asarray(a)
    if axis is None:
        return _ranks(x.ravel(), method)
    axis = _axis("rankdata", axis, x.ndim)
    return jnp.apply_along_axis(lambda row: _ranks(row, method), axis, x)


def sem(a: Any, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False) -> Any:
    """The standard error of the mean: ``std(a, ddof) / sqrt(count)`` along ``axis``."""
    (b,) = promote(a)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
        return (jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims)
                / jnp.sqrt(count).astype(b.dtype))
    raise ValueError(f"sem: nan_policy={nan_policy!r} is not supported; use 'propagate' or "
                     f"'omit'")
