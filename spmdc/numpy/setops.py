"""Set operations on arrays, as JAX writes them: ``unique`` (and the ``unique_*`` forms of
the array API), ``intersect1d``, ``union1d``, ``setdiff1d``, ``setxor1d``.

Their results' sizes depend on the values, so outside ``jit`` they read their inputs
(a traced input is a clear error), and with ``size=`` they give exactly ``size`` results,
padded with ``fill_value`` (by default: ``unique`` repeats its first value's slot as JAX
does, the others pad with the smallest result), which works under every transformation
(Note [static result shapes]). The algorithms are JAX's (sort, mark the first of each run,
gather), so ties, indices and padding agree with it.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, NamedTuple

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.tracing import Tracer
from ..core.tracing import where as _where
from .array_creation import full, zeros
from .comparisons import where
from .core import _iota, asarray, result_type
from .reductions import any as jnp_any
from .reductions import cumsum
from .reductions import sum as jnp_sum
from .searching import lexsort, nonzero
from .shape_ops import concatenate, expand_dims, moveaxis, ravel, reshape
from .sorting import sort
from .ufuncs import isnan

__all__ = ["unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
           "intersect1d", "union1d", "setdiff1d", "setxor1d"]

_SIZE_HINT = ("to use it under jit and the other transformations, pass size= (the number "
              "of results to return) and, if you like, fill_value=")


def _concrete(op: str, *xs: Any) -> None:
    for x in xs:
        if isinstance(x, Tracer):
            raise TypeError(f"{op}: the result's size depends on the values of a traced "
                            f"array{_where()}; {_SIZE_HINT} (Note [static result shapes])")


def _size(op: str, size: Any) -> int | None:
    if size is None:
        return None
    if isinstance(size, Tracer):
        raise TypeError(f"{op}: size must be a concrete int, not a traced value{_where()}")
    try:
        return operator.index(size)
    except TypeError:
        raise TypeError(f"{op}: size must be an int, got {size!r}{_where()}") from None


def _int() -> np.dtype:
    return np.dtype(dtypes.default_int())


def _arange(n: int) -> Any:
    return asarray(_iota(_int(), (n,), 0))


def _sorted_together(*operands: Any, num_keys: int) -> tuple[Any, ...]:
    """The 1-d ``operands`` sorted (stably) by the first ``num_keys`` of them."""
    return lax.sort(operands, dimension=0, is_stable=True, num_keys=num_keys)


def _promoted(*xs: Any) -> list[Any]:
    xs = [asarray(x) for x in xs]
    dtype = result_type(*xs)
    return [x.astype(dtype) if x.dtype != dtype else x for x in xs]


def _take_fill(x: Any, indices: Any, fill: Any) -> Any:
    return x.at[indices].get(mode="fill", fill_value=fill)


def _dynamic_update_slice(x: Any, update: Any, start: Any) -> Any:
    """``x`` with the 1-d ``update`` written from index ``start`` (clamped to fit)."""
    return lax.dynamic_update_slice(x, update.astype(x.dtype), [asarray(start).astype(np.int32)],
                                    allow_negative_indices=False)


# --- unique -----------------------------------------------------------------------------------

def _sorted_mask(ar: Any, axis: int, equal_nan: bool) -> tuple[Any, Any, Any]:
    """The slices of ``ar`` along ``axis`` sorted (moved to the front), whether each is the
    first of its run of equal ones, and the sorting permutation."""
    aux = moveaxis(ar, axis, 0)
    if aux.dtype.kind == "c":
        aux = where(isnan(aux), asarray(np.nan, aux.dtype), aux)
    size, *rest = aux.shape
    inner = int(np.prod(rest, dtype=np.int64))
    if inner == 0:
        size, perm = 1, zeros(1, _int())
    else:
        perm = lexsort(reshape(aux, (size, inner)).T[::-1])
    aux = aux[perm]
    if aux.size:
        x, y = aux[1:], aux[:-1]
        neq = x != y
        if dtypes.is_inexact(aux.dtype) and equal_nan:
            neq = neq & ~(isnan(x) & isnan(y))
        if aux.ndim > 1:
            neq = jnp_any(neq, axis=tuple(range(1, aux.ndim)))
        mask = concatenate([full((1,), True), neq])
    else:
        mask = zeros(size, bool)
    return aux, mask, perm


def _unique(ar: Any, axis: int, return_index: bool = False, return_inverse: bool = False,
            return_counts: bool = False, equal_nan: bool = True, size: int | None = None,
            fill_value: Any = None, return_true_size: bool = False) -> Any:
    if ar.shape[axis] == 0 and size and fill_value is None:
        raise ValueError("unique: for an empty input and a nonzero size, give fill_value"
                         f"{_where()}")
    aux, mask, perm = _sorted_mask(ar, axis, equal_nan)
    if size is None:
        ind = asarray(np.nonzero(np.asarray(mask))[0].astype(_int()))
    else:
        ind = nonzero(mask, size=size)[0]
    result = aux[ind] if aux.size else aux
    if size is not None and fill_value is not None:
        fill = asarray(fill_value).astype(result.dtype)
        if result.shape[0]:
            valid = _arange(size) < jnp_sum(mask)
            valid = expand_dims(valid, tuple(range(1, result.ndim))) if result.ndim > 1 \
                else valid
            result = where(valid, result, fill)
        else:
            result = full((size, *result.shape[1:]), fill, result.dtype)
    out: list[Any] = [moveaxis(result, 0, axis)]
    if return_index:
        out.append(perm[ind] if aux.size else perm)
    if return_inverse:
        if aux.size:
            out.append(zeros(mask.shape, _int()).at[perm].set(cumsum(mask) - 1))
        else:
            out.append(zeros(ar.shape[axis], _int()))
    if return_counts:
        if aux.size:
            if size is None:
                idx = concatenate([ind, full((1,), mask.shape[0], _int())])
            else:
                idx = nonzero(mask, size=size + 1)[0]
                idx = idx.at[1:].set(where(idx[1:] != 0, idx[1:], mask.shape[0]))
            out.append(idx[1:] - idx[:-1])
        elif ar.shape[axis]:
            out.append(full((1,), ar.shape[axis], _int()))
        else:
            out.append(zeros(0, _int()))
    if return_true_size:
        out.append(jnp_sum(mask))
    return out[0] if len(out) == 1 else tuple(out)


def unique(ar: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, *, equal_nan: bool = True,
           size: int | None = None, fill_value: Any = None, sorted: bool = True) -> Any:
    """The sorted unique elements of ``ar`` (or unique slices along ``axis``), with the
    index of each one's first occurrence, the inverse indices and the counts if asked.
    ``sorted`` is accepted as in JAX: the results are always sorted."""
    arr = asarray(ar)
    size = _size("unique", size)
    if size is None:
        _concrete("unique", arr)
    shape = arr.shape
    if axis is None:
        arr, axis_int = ravel(arr), 0
    else:
        axis_int = operator.index(axis)
        if not -arr.ndim <= axis_int < builtins.max(arr.ndim, 1):
            raise ValueError(f"unique: axis {axis} is out of bounds for an array of "
                             f"dimension {arr.ndim}{_where()}")
        axis_int %= builtins.max(arr.ndim, 1)
    result = _unique(arr, axis_int, return_index, return_inverse, return_counts,
                     equal_nan=equal_nan, size=size, fill_value=fill_value)
    if return_inverse and axis is None:
        k = 2 if return_index else 1
        result = (*result[:k], reshape(result[k], shape), *result[k + 1:])
    return result


class UniqueAllResult(NamedTuple):
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    values: Any
    inverse_indices: Any


def unique_all(x: Any, /, *, size: int | None = None, fill_value: Any = None
               ) -> UniqueAllResult:
    """The array API's unique_all: values, first indices, inverse indices, counts."""
    return UniqueAllResult(*unique(x, return_index=True, return_inverse=True,
                                   return_counts=True, equal_nan=False, size=size,
                                   fill_value=fill_value))


def unique_counts(x: Any, /, *, size: int | None = None, fill_value: Any = None
                  ) -> UniqueCountsResult:
    """The array API's unique_counts: values and counts."""
    return UniqueCountsResult(*unique(x, return_counts=True, equal_nan=False, size=size,
                                      fill_value=fill_value))


def unique_inverse(x: Any, /, *, size: int | None = None, fill_value: Any = None
                   ) -> UniqueInverseResult:
    """The array API's unique_inverse: values and inverse indices."""
    return UniqueInverseResult(*unique(x, return_inverse=True, equal_nan=False, size=size,
                                       fill_value=fill_value))


def unique_values(x: Any, /, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The array API's unique_values."""
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# --- two sets ---------------------------------------------------------------------------------

def _padded(vals: Any, count: Any, fill_value: Any) -> Any:
    """``vals`` past the first ``count``: ``fill_value``, or the smallest of the kept."""
    keep = _arange(vals.shape[0]) < count
    if fill_value is None:
        vals = where(keep, vals, vals.max())
        return where(keep, vals, vals.min())
    return where(keep, vals, asarray(fill_value).astype(vals.dtype))


def _concat_unique(arr1: Any, arr2: Any) -> tuple[Any, Any]:
    """The unique values of each, one after the other, in one array of both sizes, and
    how many there are."""
    arr1, n1 = _unique(arr1, 0, size=arr1.size, return_true_size=True)
    arr2, n2 = _unique(arr2, 0, size=arr2.size, return_true_size=True)
    arr = zeros(arr1.size + arr2.size, result_type(arr1, arr2))
    arr = _dynamic_update_slice(arr, arr1, 0)
    arr = _dynamic_update_slice(arr, arr2, n1)
    return arr, n1 + n2


def union1d(ar1: Any, ar2: Any, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values that are in either array."""
    ar1, ar2 = asarray(ar1), asarray(ar2)
    size = _size("union1d", size)
    if size is None:
        _concrete("union1d", ar1, ar2)
    return unique(concatenate([ravel(ar1), ravel(ar2)]), size=size, fill_value=fill_value)


def setdiff1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
              fill_value: Any = None) -> Any:
    """The sorted unique values of ``ar1`` that are not in ``ar2``."""
    from .searching import isin
    arr1, arr2 = ravel(asarray(ar1)), ravel(asarray(ar2))
    size = _size("setdiff1d", size)
    if size is None:
        _concrete("setdiff1d", arr1, arr2)
    fill = asarray(0 if fill_value is None else fill_value).astype(arr1.dtype)
    if arr1.size == 0:
        return full((size or 0,), fill, arr1.dtype)
    if not assume_unique:
        arr1 = unique(arr1, size=size and arr1.size)
    mask = isin(arr1, arr2, invert=True)
    if size is None:
        return asarray(np.asarray(arr1)[np.asarray(mask)])
    if not assume_unique:
        n_unique = arr1.size + 1 - jnp_sum(arr1 == arr1[0])
        mask = where(_arange(arr1.size) < n_unique, mask, False)
    return where(_arange(size) < jnp_sum(mask), arr1[nonzero(mask, size=size)[0]], fill)


def setxor1d(ar1: Any, ar2: Any, assume_unique: bool = False, *, size: int | None = None,
             fill_value: Any = None) -> Any:
    """The sorted unique values that are in exactly one of the arrays."""
    arr1, arr2 = _promoted(ravel(asarray(ar1)), ravel(asarray(ar2)))
    size = _size("setxor1d", size)
    if size is not None:
        return _setxor1d_size(arr1, arr2, fill_value, assume_unique, size)
    _concrete("setxor1d", arr1, arr2)
    if not assume_unique:
        arr1, arr2 = unique(arr1), unique(arr2)
    aux = concatenate([arr1, arr2])
    if aux.size == 0:
        return aux
    aux = np.sort(np.asarray(aux))
    flag = np.concatenate(([True], aux[1:] != aux[:-1], [True]))
    return asarray(aux[flag[1:] & flag[:-1]])


def _setxor1d_size(arr1: Any, arr2: Any, fill_value: Any, assume_unique: bool,
                   size: int) -> Any:
    if assume_unique:
        aux = sort(concatenate([arr1, arr2]))
        flag = concatenate([full((1,), aux.size > 0), aux[1:] != aux[:-1], full((1,), True)])
    else:
        arr, num_unique = _concat_unique(arr1, arr2)
        mask = _arange(arr.size + 1) < num_unique + 1
        _, aux = _sorted_together(~mask[1:], arr, num_keys=2)
        flag = mask & concatenate([full((1,), aux.size > 0), aux[1:] != aux[:-1],
                                   full((1,), False)]).at[num_unique].set(True)
    aux_mask = flag[1:] & flag[:-1]
    if aux.size:
        indices = nonzero(aux_mask, size=size, fill_value=aux.shape[0])[0]
        vals = _take_fill(aux, indices, 0)
    else:
        vals = zeros(size, aux.dtype)
    return _padded(vals, jnp_sum(aux_mask), fill_value)


def intersect1d(ar1: Any, ar2: Any, assume_unique: bool = False, return_indices: bool = False,
                *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values in both arrays; with ``return_indices``, also where each
    first occurs in ``ar1`` and in ``ar2``."""
    arr1, arr2 = _promoted(ravel(asarray(ar1)), ravel(asarray(ar2)))
    size = _size("intersect1d", size)
    if size is not None:
        return _intersect1d_size(arr1, arr2, fill_value, assume_unique, size, return_indices)
    _concrete("intersect1d", arr1, arr2)
    ind1 = ind2 = _arange(0)
    if not assume_unique:
        if return_indices:
            arr1, ind1 = unique(arr1, return_index=True)
            arr2, ind2 = unique(arr2, return_index=True)
        else:
            arr1, arr2 = unique(arr1), unique(arr2)
    arr = concatenate([arr1, arr2])
    if return_indices:
        aux, order = _sorted_together(arr, _arange(arr.size), num_keys=1)
    else:
        aux, order = sort(arr), None
    mask = np.asarray(aux[1:] == aux[:-1])
    common = asarray(np.asarray(aux[:-1])[mask])
    if not return_indices:
        return common
    i1 = np.asarray(order[:-1])[mask]
    i2 = np.asarray(order[1:])[mask] - arr1.size
    if not assume_unique:
        i1, i2 = np.asarray(ind1)[i1], np.asarray(ind2)[i2]
    return common, asarray(i1.astype(_int())), asarray(i2.astype(_int()))


def _intersect1d_size(arr1: Any, arr2: Any, fill_value: Any, assume_unique: bool, size: int,
                      return_indices: bool) -> Any:
    if assume_unique:
        ind1, n1 = _arange(arr1.size), asarray(arr1.size, _int())
        ind2 = _arange(arr2.size)
        arr = concatenate([arr1, arr2])
        aux, aux_order = _sorted_together(arr, _arange(arr.size), num_keys=1)
        mask = full((arr.size,), True)
    else:
        arr1, ind1, n1 = _unique(arr1, 0, size=arr1.size, return_index=True,
                                 return_true_size=True, fill_value=0)
        arr2, ind2, n2 = _unique(arr2, 0, size=arr2.size, return_index=True,
                                 return_true_size=True, fill_value=0)
        arr = zeros(arr1.size + arr2.size, result_type(arr1, arr2))
        arr = _dynamic_update_slice(arr, arr1, 0)
        arr = _dynamic_update_slice(arr, arr2, n1)
        mask = _arange(arr.size) < n1 + n2
        _, aux, aux_order = _sorted_together(~mask, arr, _arange(arr.size), num_keys=2)
    aux_mask = (aux[1:] == aux[:-1]) & mask[1:]
    count = jnp_sum(aux_mask)
    if aux.size:
        val_indices = nonzero(aux_mask, size=size, fill_value=aux.size)[0]
        vals = _take_fill(aux, val_indices, 0)
    else:
        val_indices = _arange(0)
        vals = zeros(size, aux.dtype)
    vals = _padded(vals, count, fill_value)
    if not return_indices:
        return vals
    kept = _arange(size) < count
    i1 = where(kept, _take_fill(aux_order, val_indices, arr1.size), arr1.size)
    i2 = where(kept, _take_fill(aux_order, val_indices + 1, arr2.size) - n1, arr2.size)
    if not assume_unique:
        i1 = _take_fill(ind1, i1, ind1.size)
        i2 = _take_fill(ind2, i2, ind2.size)
    return vals, i1, i2
