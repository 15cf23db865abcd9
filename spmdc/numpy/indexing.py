"""NumPy-style advanced indexing (``x[idx]``) and ``x.at[idx].set/add/mul/min/max``.

Both turn the index into ONE gather (retrieval) or ONE scatter (update) whose dimension
numbers produce NumPy's result layout directly, so neither needs a transpose; see
Note [index plan]. Basic indexing without arrays is array_methods.py's job (slice, rev,
dynamic_slice); updates with only basic indices come here too and become a scatter.

Semantics follow NumPy and JAX: negative indices wrap, out-of-bounds array indices are
clamped when reading and dropped when updating (Note [out-of-bounds windows] in
compiler/primitives/indexing.py) unless a ``mode`` says otherwise (Note [index modes]),
out-of-bounds Python ints are clamped in ``x[...]`` as array indices are (an IndexError
under the ``spmdc_strict_indexing`` option: Note [out-of-bounds ints] in index_plan.py),
and a boolean mask must be concrete (its number of True entries is the result's size).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.tracing import Tracer, user_source
from ..runtime.array import Array
from .core import asarray, extended_rule
from .index_plan import _flat, _index_error, _jnp, _Plan, _plan, _stacked, normalize_index
from .shape_ops import _axis, ravel

__all__ = ["advanced_getitem", "scatter_update", "normalize_index", "take", "check_mode",
           "check_hints", "default_fill_value"]

# --- x[index] and x.at[index].<combine>(values) ---------------------------------------------

# Note [index modes]
# ~~~~~~~~~~~~~~~~~
# What happens to an index outside its axis (after negatives are wrapped once, unless
# wrap_negative_indices=False) is the ``mode`` of ``x.at[...]`` and ``jnp.take``, as in JAX:
#
#   reading  None, 'clip', 'promise_in_bounds': the window is clamped into the operand
#            (gather's own rule);  'fill', 'drop': the whole window reads ``fill_value``
#            (NaN for inexact dtypes, the minimum of a signed type, the maximum of an
#            unsigned one, True for bool).
#   writing  None, 'drop', 'fill', 'promise_in_bounds': the update is dropped (scatter's own
#            rule);  'clip': the index is clamped first, so the update lands at the edge.
#
# 'fill' is a gather with the indices clamped, and then a select: an index vector whose
# every start lies in [0, size - window] keeps the gathered window, any other reads the
# fill value. The select also stops the gradient at filled positions. ``jnp.take``
# defaults to 'fill' and also has 'wrap' (indices modulo the size) and 'clip' (NumPy's: no
# wrapping of negatives); x[...] itself is mode None.

_GET_MODES = (None, "clip", "promise_in_bounds", "fill", "drop")
_UPDATE_MODES = (None, "clip", "promise_in_bounds", "fill", "drop")


def check_mode(mode: Any, allowed: tuple[Any, ...], what: str) -> Any:
    mode = getattr(mode, "name", mode)             # an enum member: its name
    if isinstance(mode, str):
        mode = {"fill_or_drop": "fill", "clip": "clip",
                "promise_in_bounds": "promise_in_bounds"}.get(mode.lower(), mode)
    if mode not in allowed:
        names = ", ".join(repr(m) for m in allowed if m is not None)
        raise ValueError(f"{what}: unknown mode {mode!r}; use one of {names} (or None)"
                         + (f" (at {user_source()})" if user_source() else ""))
    return mode


def default_fill_value(dtype: np.dtype) -> Any:
    """What mode='fill' reads out of bounds when no fill_value is given (JAX's choice)."""
    if dtype == np.bool_:
        return True
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return np.nan


def _window_bounds(plan: _Plan) -> np.ndarray:
    """The largest in-bounds start of each index-vector entry (size - window), of the
    indices' dtype and rank: comparing them with the indices promotes neither dtype nor
    rank, which strict promotion and rank promotion 'raise' would refuse."""
    int_type = plan.indices.dtype if hasattr(plan.indices, "dtype") else dtypes.default_int()
    bounds = np.asarray([plan.operand_shape[d] - plan.slice_sizes[d] for d in plan.index_map],
                        int_type)
    return bounds.reshape((1,) * (np.ndim(plan.indices) - 1) + bounds.shape)


def _clamped_indices(plan: _Plan) -> Any:
    upper = _window_bounds(plan)
    if isinstance(plan.indices, np.ndarray):
        return np.clip(plan.indices, 0, upper)
    jnp = _jnp()
    return jnp.minimum(jnp.maximum(plan.indices, 0), upper)


def _in_bounds(plan: _Plan) -> Any:
    """bool of the indices' batch shape: every start of the index vector is in bounds."""
    upper = _window_bounds(plan)
    if isinstance(plan.indices, np.ndarray):
        return np.all((plan.indices >= 0) & (plan.indices <= upper), axis=-1)
    jnp = _jnp()
    return jnp.all(jnp.logical_and(plan.indices >= 0, plan.indices <= upper), axis=-1)


def advanced_getitem(x: Any, index: tuple[Any, ...], *, mode: Any = None,
                     fill_value: Any = None, wrap_negative_indices: bool = True,
                     check_ints: bool = True) -> Any:
    """``x[index]`` for an index (Ellipsis expanded) with at least one integer or boolean
    array: one gather that clamps out-of-bounds indices, or fills them when ``mode`` is
    'fill' / 'drop'. See Note [index modes]."""
    jnp = _jnp()
    mode = check_mode(mode, _GET_MODES, "x.at[...].get")
    if fill_value is not None:
        _fill(x.dtype, fill_value)                    # a scalar, whatever the mode
    plan = _plan(x.shape, index, check_ints, wrap_negative_indices)
    if plan.empty:
        if math.prod(plan.result_shape):
            axis = next(d for d in plan.collapsed if plan.operand_shape[d] == 0)
            if mode in ("fill", "drop"):
                return jnp.full(plan.result_shape, _fill(x.dtype, fill_value), x.dtype)
            raise _index_error(f"index is out of bounds for axis {axis} with size 0")
        return jnp.zeros(plan.result_shape, x.dtype)
    operand = jnp.reshape(x, plan.operand_shape)
    out = lax.gather(operand, plan.indices, lax.GatherDimensionNumbers(
        offset_dims=plan.window_positions, collapsed_slice_dims=plan.collapsed,
        start_index_map=plan.index_map), plan.slice_sizes, mode=lax.GatherScatterMode.CLIP)
    if mode in ("fill", "drop"):
        inside = _in_bounds(plan)
        if not (isinstance(inside, np.ndarray) and inside.all()):
            inside = jnp.expand_dims(jnp.asarray(inside), plan.window_positions) \
                if plan.window_positions else jnp.asarray(inside)
            out = jnp.where(inside, out, jnp.asarray(_fill(x.dtype, fill_value), x.dtype))
    return jnp.reshape(out, plan.result_shape)


def _fill(dtype: np.dtype, fill_value: Any) -> Any:
    if fill_value is None:
        return default_fill_value(np.dtype(dtype))
    if np.ndim(fill_value) != 0:
        raise ValueError(f"fill_value must be a scalar, got shape {np.shape(fill_value)}"
                         + (f" (at {user_source()})" if user_source() else ""))
    if isinstance(fill_value, (Tracer, Array)):
        return fill_value.astype(dtype)
    return np.asarray(fill_value).astype(dtype)


_SCATTERS = {"set": lax.scatter, "add": lax.scatter_add, "mul": lax.scatter_mul,
             "min": lax.scatter_min, "max": lax.scatter_max}


def scatter_update(x: Any, index: Any, values: Any, combine: str, *, mode: Any = None,
                   wrap_negative_indices: bool = True) -> Any:
    """``x.at[index].set(values)`` (combine='set'), or 'add', 'mul', 'min', 'max': one
    scatter; ``values`` broadcast to ``x[index].shape``, the update computed in the promoted
    dtype of both and converted to x's (_scatter_dtype), and
    updates at out-of-bounds indices are dropped (clamped with mode='clip'; see Note
    [index modes])."""
    jnp = _jnp()
    mode = check_mode(mode, _UPDATE_MODES, f"x.at[...].{combine}")
    if x.ndim == 0:                # give the scalar an axis, so that a start can name it
        index = index if isinstance(index, tuple) else (index,)
        out = scatter_update(jnp.reshape(x, (1,)), (0,) + index, values, combine, mode=mode,
                             wrap_negative_indices=wrap_negative_indices)
        return jnp.reshape(out, ())
    plan = _plan(x.shape, normalize_index(x.ndim, index), check_ints=False,
                 wrap=wrap_negative_indices)
    work = _scatter_dtype(x, values)
    updates = _broadcast_values(values, plan.result_shape, work)
    if plan.empty:
        return x
    indices = _clamped_indices(plan) if mode == "clip" else plan.indices
    updates = jnp.reshape(updates, plan.core_shape)
    operand = jnp.reshape(x if work == x.dtype else x.astype(work), plan.operand_shape)
    out = _SCATTERS[combine](operand, indices, updates, lax.ScatterDimensionNumbers(
        update_window_dims=plan.window_positions, inserted_window_dims=plan.collapsed,
        scatter_dims_to_operand_dims=plan.index_map))
    if work != x.dtype:
        out = lax.convert_element_type(out, x.dtype)
        out.weak = x.weak          # the update computed in another dtype leaves x's type
    return jnp.reshape(out, x.shape)


def _scatter_dtype(x: Any, values: Any) -> np.dtype:
    """The dtype an update is computed in, as in JAX: the promotion of ``x``'s dtype and
    the values' (a Python int within ``x``'s integer range counts as ``x``'s dtype); the
    result converts back to ``x``'s dtype. So ``uint8_x.at[i].mul(1.5)`` multiplies in
    float32 and then truncates, rather than multiplying by int(1.5)."""
    if isinstance(values, int) and x.dtype.kind in "iu" and \
            np.iinfo(x.dtype).min <= values <= np.iinfo(x.dtype).max:
        return x.dtype
    if isinstance(values, (Tracer, Array)):
        pair = (values.dtype, bool(values.weak))
    elif any(isinstance(v, Tracer) for v in _flat(values)):
        pair = (_stacked(values).dtype, False)
    else:
        pair = dtypes.dtype_and_weak(values)
    return dtypes.result_type_of_pairs(((x.dtype, bool(x.weak)), pair))[0]


def _broadcast_values(values: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """``values`` in ``dtype``, broadcast to ``shape`` as NumPy's assignment does (leading
    size-1 dimensions beyond the rank of ``shape`` are dropped)."""
    if isinstance(values, (Tracer, Array)):
        values = values.astype(dtype) if values.dtype != dtype else values
    elif any(isinstance(v, Tracer) for v in _flat(values)):
        values = _stacked(values).astype(dtype)
    else:
        values = np.asarray(values).astype(dtype)
    vshape = tuple(values.shape)
    extra = len(vshape) - len(shape)
    if extra > 0 and all(n == 1 for n in vshape[:extra]):
        values, vshape = values.reshape(vshape[extra:]), vshape[extra:]
    try:
        np.broadcast_shapes(vshape, shape)
        if len(vshape) > len(shape):
            raise ValueError
    except ValueError:
        raise ValueError(f"cannot broadcast update values of shape {vshape} to the indexed "
                         f"shape {shape}" + (f" (at {user_source()})" if user_source() else "")
                         ) from None
    if vshape == shape and not isinstance(values, np.ndarray):
        return values
    lead = len(shape) - len(vshape)
    return lax.broadcast_in_dim(values, shape, tuple(range(lead, len(shape))))


def check_hints(indices_are_sorted: Any, unique_indices: Any) -> None:
    """``indices_are_sorted`` / ``unique_indices`` are promises about the index, which JAX
    may use to pick a faster scatter or gather; results are the same whatever they say when
    the promise holds, and spmdc needs neither, so they are checked for type only."""
    for name, value in (("indices_are_sorted", indices_are_sorted),
                        ("unique_indices", unique_indices)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"x.at[...]: {name} must be a bool, got {value!r}")


def take(a: Any, indices: Any, axis: int | None = None, out: Any = None, mode: Any = None,
         unique_indices: bool = False, indices_are_sorted: bool = False,
         fill_value: Any = None) -> Any:
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened ``a`` if None).
    Out-of-bounds indices follow ``mode`` as in JAX: 'fill' (the default; negatives in
    [-n, 0) wrap, the rest read ``fill_value``, by default NaN / the integer minimum ...),
    'clip' (NumPy's: clamp into [0, n - 1], negatives included) or 'wrap' (modulo n).
    ``unique_indices`` and ``indices_are_sorted`` are hints that do not change results.
    See Note [index modes]."""
    rule = extended_rule("take", a)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(a, indices, axis, mode=mode, unique_indices=unique_indices,
                    indices_are_sorted=indices_are_sorted, fill_value=fill_value)
    if out is not None:
        raise NotImplementedError("take: the out= argument is not supported; spmdc arrays "
                                  "are immutable, use the returned value")
    check_hints(indices_are_sorted, unique_indices)
    if mode == "raise":
        raise NotImplementedError("take: mode='raise' is not supported (an index cannot be "
                                  "checked against the bounds at run time); use 'fill', "
                                  "'clip' or 'wrap'")
    if mode not in (None, "fill", "clip", "wrap"):
        raise ValueError(f"take: invalid mode {mode!r}; use 'fill' (the default), 'clip' "
                         "or 'wrap'")
    jnp = _jnp()
    a, indices = asarray(a), asarray(indices)
    if indices.dtype.kind not in "iu":
        raise ValueError(f"take: indices must have an integer type, got {indices.dtype}")
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, a.ndim, "take")
    n = a.shape[axis]
    if n == 0:
        if indices.size:
            raise IndexError("take: cannot take a non-empty selection from an empty axis")
        return a
    if mode == "clip":
        indices = jnp.clip(indices, 0, n - 1)
    elif mode == "wrap":
        indices = jnp.remainder(indices, np.asarray(n, indices.dtype))
    index = (slice(None),) * axis + (indices,) + (slice(None),) * (a.ndim - axis - 1)
    return advanced_getitem(a, index, mode="clip" if mode in ("clip", "wrap") else "fill",
                            fill_value=fill_value, check_ints=False)
