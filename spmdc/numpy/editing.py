"""Inserting, deleting, selecting and placing elements, as JAX writes them: ``insert``,
``delete``, ``compress``, ``extract``, ``place``, ``put``, ``choose``, ``mask_indices``,
``take_along_axis``, ``put_along_axis``, ``piecewise``, ``trim_zeros``. (The partial sorts
are in partitioning.py, packbits/unpackbits in bit_packing.py, gcd/lcm in
integer_divisors.py, unwrap in phase_unwrapping.py.)

Those whose result size depends on the values (``delete`` with an index array,
``compress``/``extract`` without ``size=``) read them outside ``jit`` and are a clear error
on a traced one (Note [static result shapes]); ``place`` and ``put`` need
``inplace=False``, since arrays are immutable (as in JAX).
"""
from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import Tracer
from ..core.tracing import where as _where
from .array_creation import full, ones, zeros
from .comparisons import where
from .core import _iota, asarray, broadcast_to, result_type
from .index_tricks import unravel_index
from .reductions import sum as jnp_sum
from .searching import nonzero
from .shape_ops import _axis as _shape_axis
from .shape_ops import (
    broadcast_arrays,
    concatenate,
    expand_dims,
    moveaxis,
    ravel,
    reshape,
)
from .sorting import argsort, sort
from .ufuncs import clip

__all__ = ["insert", "delete", "compress", "extract", "place", "put", "choose",
           "mask_indices", "take_along_axis", "put_along_axis", "piecewise", "trim_zeros"]


def normalized_axis(op: str, axis: Any, ndim: int) -> int:
    """``axis`` of an array of ``ndim`` dimensions, counted from the front; out of bounds
    is ``op``'s ValueError (partitioning, bit_packing and phase_unwrapping use it too)."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: axis {axis} is out of bounds for an array of dimension "
                         f"{ndim}{_where()}")
    return axis % ndim


def _concrete(op: str, x: Any, hint: str) -> np.ndarray:
    if isinstance(x, Tracer):
        raise TypeError(f"{op}: the result's shape depends on the values of a traced array"
                        f"{_where()}; {hint} (Note [static result shapes])")
    return np.asarray(x)


def _int() -> np.dtype:
    return np.dtype(dtypes.default_int())


# --- inserting and deleting -------------------------------------------------------------------

def delete(arr: Any, obj: Any, axis: int | None = None, *,
           assume_unique_indices: bool = False) -> Any:
    """``arr`` without the entries ``obj`` (an index, a slice, indices or a boolean mask)
    along ``axis`` (of the flattened array if None)."""
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalized_axis("delete", axis, a.ndim)
    n = a.shape[axis]
    front = (slice(None),) * axis
    if not isinstance(obj, (slice, np.ndarray, list, tuple)) and not hasattr(obj, "ndim"):
        i = operator.index(obj)
        if not -n <= i < n:
            raise IndexError(f"delete: index {i} is out of bounds for an axis of size {n}"
                             f"{_where()}")
        i %= n
        return concatenate([a[front + (slice(0, i),)], a[front + (slice(i + 1, None),)]],
                           axis=axis)
    if isinstance(obj, slice):
        obj, assume_unique_indices = np.arange(n)[obj], True
    obj = obj if isinstance(obj, Tracer) else asarray(obj)
    if dtypes.is_int(obj.dtype) and assume_unique_indices:
        idx = ravel(obj)
        idx = clip(where(idx < 0, idx + n, idx), 0, n)
        idx = sort(idx)
        idx = idx - _iota(idx.dtype, (idx.shape[0],), 0)
        keep = _iota(idx.dtype, (n - idx.shape[0],), 0)
        keep = keep + jnp_sum(expand_dims(keep, 0) >= expand_dims(idx, 1), axis=0,
                              dtype=keep.dtype)
        return a[front + (keep,)]
    values = _concrete("delete", obj, "pass assume_unique_indices=True with unique "
                       "integer indices")
    if values.dtype.kind in "iu":
        mask = np.ones(n, bool)
        mask[values] = False
    elif values.dtype == np.bool_:
        if values.shape != (n,):
            raise ValueError(f"delete: a boolean obj must be 1-d with the axis's length {n},"
                             f" got shape {values.shape}{_where()}")
        mask = ~values
    else:
        raise ValueError(f"delete: obj must be integer or boolean, got {values.dtype}"
                         f"{_where()}")
    return a[front + (np.nonzero(mask)[0],)]


def insert(arr: Any, obj: Any, values: Any, axis: int | None = None) -> Any:
    """``arr`` with ``values`` inserted before the indices ``obj`` (an index, a slice or
    a 1-d index array) along ``axis`` (of the flattened array if None)."""
    a = asarray(arr)
    if axis is None:
        a, axis = ravel(a), 0
    axis = normalized_axis("insert", axis, a.ndim)
    n_input = a.shape[axis]
    indices = asarray(np.arange(*obj.indices(n_input))) if isinstance(obj, slice) \
        else asarray(obj)
    if indices.ndim > 1:
        raise ValueError(f"insert: obj must be a slice, a 1-d array or a scalar, got "
                         f"shape {indices.shape}{_where()}")
    if not dtypes.is_int(indices.dtype):
        if indices.size == 0 and not isinstance(obj, Tracer):
            indices = indices.astype(_int())
        else:
            raise ValueError(f"insert: the indices must be integers, got {indices.dtype}"
                             f"{_where()}")
    vals = asarray(values).astype(a.dtype)
    if vals.ndim < a.ndim:
        vals = reshape(vals, (1,) * (a.ndim - vals.ndim) + vals.shape)
    if indices.size == 1:
        index = ravel(indices)[0]
        if indices.ndim == 0:
            vals = moveaxis(vals, 0, axis)
        indices = full((vals.shape[axis],), index, indices.dtype)
    n_insert = np.broadcast_shapes(indices.shape, (vals.shape[axis],))[0]
    out_shape = list(a.shape)
    out_shape[axis] += n_insert
    out = zeros(tuple(out_shape), a.dtype)
    indices = clip(where(indices < 0, indices + n_input, indices), 0, n_input)
    values_ind = indices.at[argsort(indices)].add(_iota(indices.dtype, (n_insert,), 0))
    keep = ones(n_input + n_insert, bool).at[values_ind].set(False)
    arr_ind = nonzero(keep, size=n_input)[0]
    front = (slice(None),) * axis
    out = out.at[front + (values_ind,)].set(vals)
    return out.at[front + (arr_ind,)].set(a)


def compress(condition: Any, a: Any, axis: int | None = None, *, size: int | None = None,
             fill_value: Any = 0, out: Any = None) -> Any:
    """The slices of ``a`` along ``axis`` where ``condition`` is true; with ``size``,
    exactly ``size`` of them, padded with ``fill_value``."""
    if out is not None:
        raise ValueError(f"compress: out= is not supported (arrays are immutable); use the "
                         f"result{_where()}")
    cond = asarray(condition).astype(bool)
    arr = asarray(a)
    if cond.ndim != 1:
        raise ValueError(f"compress: condition must be 1-d, got shape {cond.shape}{_where()}")
    if axis is None:
        arr, axis = ravel(arr), 0
    else:
        axis = normalized_axis("compress", axis, arr.ndim)
        arr = moveaxis(arr, axis, 0)
    cond, extra = cond[:arr.shape[0]], cond[arr.shape[0]:]
    arr = arr[:cond.shape[0]]
    if size is None:
        hint = "pass size= (and fill_value=)"
        keep, extra = _concrete("compress", cond, hint), _concrete("compress", extra, hint)
        if extra.any():
            raise ValueError(f"compress: condition has true entries past the end of the "
                             f"axis{_where()}")
        result = arr[np.nonzero(keep)[0]]
    else:
        size = operator.index(size)
        if not 0 <= size <= arr.shape[0]:
            raise ValueError(f"compress: size must be between 0 and the axis's size "
                             f"{arr.shape[0]}, got {size}{_where()}")
        mask = reshape(cond, cond.shape + (1,) * (arr.ndim - 1))
        arr = where(mask, arr, asarray(fill_value).astype(arr.dtype))
        result = arr[argsort(cond, stable=True, descending=True)][:size]
    return moveaxis(result, 0, axis)


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0) -> Any:
    """The elements of ``arr`` where ``condition`` is true (both flattened)."""
    return compress(ravel(asarray(condition)), ravel(asarray(arr)), size=size,
                    fill_value=fill_value)


def _inplace(op: str, inplace: bool) -> None:
    if inplace:
        raise ValueError(f"jnp.{op} cannot modify an array in place: arrays are immutable; "
                         f"pass inplace=False to get the updated array{_where()}")


def _tiled(v: Any, n: int) -> Any:
    reps = -(-n // v.shape[0])
    return concatenate([v] * reps)[:n] if reps > 1 else v[:n]


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True) -> Any:
    """``arr`` with its entries where ``mask`` is true set to ``vals`` in turn (repeated
    as needed)."""
    _inplace("place", inplace)
    data, mask, vals = asarray(arr), asarray(mask), ravel(asarray(vals))
    if data.size != mask.size:
        raise ValueError(f"place: arr and mask must have the same size{_where()}")
    if not vals.size:
        raise ValueError(f"place: cannot place values from an empty array{_where()}")
    if not data.size:
        return data
    indices = nonzero(ravel(mask), size=mask.size, fill_value=mask.size)[0]
    return reshape(ravel(data).at[indices].set(_tiled(vals, indices.shape[0]), mode="drop"),
                   data.shape)


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True) -> Any:
    """``a`` with the entries at the flat indices ``ind`` set to ``v`` (repeated as
    needed); ``mode``: "clip", "wrap" or None, which (as JAX's, through unravel_index)
    clips out-of-bounds indices too."""
    _inplace("put", inplace)
    arr, ind, vals = asarray(a), ravel(asarray(ind)), ravel(asarray(v))
    if not arr.size or not ind.size or not vals.size:
        return arr
    vals = _tiled(vals, ind.shape[0])
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind, scatter_mode = clip(ind, 0, arr.size - 1), "promise_in_bounds"
    elif mode == "wrap":
        ind, scatter_mode = ind % arr.size, "promise_in_bounds"
    elif mode == "raise":
        raise ValueError(f"put: mode='raise' cannot check indices of traced values; use "
                         f"mode=None, 'clip' or 'wrap'{_where()}")
    else:
        raise ValueError(f"put: mode must be None, 'clip' or 'wrap', got {mode!r}"
                         f"{_where()}")
    # unravel_index clips, as JAX's: so does put with every mode
    return arr.at[unravel_index(ind, arr.shape)].set(vals.astype(arr.dtype),
                                                     mode=scatter_mode)


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
    """``choices[a]`` elementwise (all broadcast together); ``mode``: "raise" (checks the
    indices, so not under jit), "wrap" or "clip"."""
    if out is not None:
        raise ValueError(f"choose: out= is not supported (arrays are immutable){_where()}")
    a = asarray(a)
    choices = [asarray(c) for c in choices]
    if not dtypes.is_int(a.dtype):
        raise ValueError(f"choose: the index array must be integer typed, got {a.dtype}"
                         f"{_where()}")
    n = len(choices)
    if mode == "raise":
        values = _concrete("choose", a, "use mode='wrap' or mode='clip'")
        if ((values < 0) | (values >= n)).any():
            raise ValueError(f"choose: invalid entry in the choice array (must be in "
                             f"[0, {n})){_where()}")
        idx = a
    elif mode == "wrap":
        idx = a % n
    elif mode == "clip":
        idx = clip(a, 0, n - 1)
    else:
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}"
                         f"{_where()}")
    idx, *choices = broadcast_arrays(idx, *choices)
    dtype = result_type(*choices)
    stacked = concatenate([expand_dims(c.astype(dtype), 0) for c in choices])
    return take_along_axis(stacked, expand_dims(idx, 0), 0)[0]


def mask_indices(n: int, mask_func: Callable[[Any, int], Any], k: int = 0, *,
                 size: int | None = None) -> tuple[Any, Any]:
    """The indices where ``mask_func(ones((n, n)), k)`` is non-zero (e.g. triu)."""
    i, j = nonzero(mask_func(ones((n, n)), k), size=size)
    return i, j


def take_along_axis(arr: Any, indices: Any, axis: int | None, mode: Any = None,
                    fill_value: Any = None) -> Any:
    """``arr`` indexed by ``indices`` along ``axis``, matching the other dimensions (which
    broadcast). Out-of-bounds indices follow ``mode`` as in ``take`` ('fill' by default)."""
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        arr, axis = ravel(arr), 0
        indices = ravel(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take_along_axis: indices must be integers, got {indices.dtype}")
    if arr.ndim != indices.ndim:
        raise ValueError(f"take_along_axis: indices of rank {indices.ndim} for an array of "
                         f"rank {arr.ndim}; they must have the same rank")
    axis = _shape_axis(axis, arr.ndim, "take_along_axis")
    shape = tuple(builtins.max(a, i) if d != axis else i for d, (a, i) in
                  enumerate(zip(arr.shape, indices.shape, strict=True)))
    index = []
    for d in range(arr.ndim):
        if d == axis:
            index.append(broadcast_to(indices, shape))
        else:
            index.append(broadcast_to(_iota(dtypes.default_int(), shape, d), shape)
                         if arr.shape[d] != 1 else broadcast_to(
                             asarray(np.zeros((), dtypes.default_int())), shape))
    from .indexing import advanced_getitem
    return advanced_getitem(arr, tuple(index), mode="fill" if mode is None else mode,
                            fill_value=fill_value)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None,
                   inplace: bool = True, *, mode: Any = None) -> Any:
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the index counterpart
    of take_along_axis). ``inplace=False`` is required (as in JAX)."""
    if inplace:
        raise ValueError("put_along_axis: spmdc arrays are immutable; pass inplace=False and "
                         "use the returned array")
    from .core import _iota, broadcast_to
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        flat = put_along_axis(arr.reshape((-1,)), indices.reshape((-1,)), values, 0,
                              inplace=False, mode=mode)
        return flat.reshape(arr.shape)
    if arr.ndim != indices.ndim:
        raise ValueError(f"put_along_axis: indices of rank {indices.ndim} for an array of "
                         f"rank {arr.ndim}")
    axis = _shape_axis(axis, arr.ndim, "put_along_axis")
    shape = tuple(max(s, i) if d != axis else i
                  for d, (s, i) in enumerate(zip(arr.shape, indices.shape, strict=True)))
    index = tuple(broadcast_to(indices, shape) if d == axis else _iota(
        dtypes.default_int(), shape, d) for d in range(arr.ndim))
    return arr.at[index].set(broadcast_to(asarray(values).astype(arr.dtype), shape), mode=mode)


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """``funclist[i](x)`` (or the constant ``funclist[i]``) where ``condlist[i]`` holds, the
    last condition winning; one extra function is the default where none holds."""
    x = asarray(x)
    conds = [asarray(c) for c in ([condlist] if asarray(condlist).ndim == x.ndim
                                  and not isinstance(condlist, (list, tuple)) else condlist)]
    if len(funclist) not in (len(conds), len(conds) + 1):
        raise ValueError(f"piecewise: {len(funclist)} functions for {len(conds)} conditions "
                         f"(give one per condition, plus an optional default)")

    def value(f: Callable[..., Any] | Any) -> Any:
        return asarray(f(x, *args, **kw) if callable(f) else f).astype(x.dtype)
    out = value(funclist[-1]) if len(funclist) == len(conds) + 1 else zeros(x.shape, x.dtype)
    out = out + zeros(x.shape, x.dtype)
    for cond, f in zip(conds, funclist[:len(conds)], strict=True):
        out = where(cond, value(f), out)
    return out


def trim_zeros(filt: Any, trim: str = "fb") -> Any:
    """``filt`` without its leading ('f') and/or trailing ('b') zeros; the result's length
    depends on the values, so ``filt`` must be concrete (not traced)."""
    if isinstance(filt, Tracer):
        raise TypeError("trim_zeros: the result's shape depends on the values of a traced "
                        "array; call it outside jit")
    values = np.asarray(filt)
    if values.ndim != 1:
        raise ValueError(f"trim_zeros: filt must be 1-d, got shape {values.shape}")
    nonzero = np.flatnonzero(values)
    if nonzero.size == 0:
        return asarray(values[:0])
    start = nonzero[0] if "f" in trim.lower() else 0
    stop = nonzero[-1] + 1 if "b" in trim.lower() else values.shape[0]
    return asarray(filt)[int(start):int(stop)]
