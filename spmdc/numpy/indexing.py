"""NumPy-style advanced indexing (``x[idx]``) and ``x.at[idx].set/add/mul/min/max``.

Both turn the index into ONE gather (retrieval) or ONE scatter (update) whose dimension
numbers produce NumPy's result layout directly, so neither needs a transpose; see
Note [index plan]. Basic indexing without arrays is array_methods.py's job (slice, rev,
dynamic_slice); updates with only basic indices come here too and become a scatter.

Semantics follow NumPy and JAX: negative indices wrap, out-of-bounds array indices are
clamped when reading and dropped when updating (Note [out-of-bounds windows] in
compiler/primitives/indexing.py) unless a ``mode`` says otherwise (Note [index modes]),
out-of-bounds Python ints are an IndexError in ``x[...]``, and a boolean mask must be
concrete (its number of True entries is the result's size).
"""
from __future__ import annotations

import math
import operator
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.tracing import Tracer, user_source
from ..errors import NonConcreteBooleanIndexError, at_line
from ..runtime.array import Array
from .core import asarray
from .shape_ops import _axis, ravel, stack

__all__ = ["advanced_getitem", "scatter_update", "normalize_index", "take", "check_mode",
           "check_hints", "default_fill_value"]

# Note [index plan]
# ~~~~~~~~~~~~~~~~~
# After the Ellipsis is expanded, every index entry is one of
#
#   integer array, int  an *advanced* entry: its values (negatives wrapped) are one entry
#                       of the index vector, and the operand dimension is collapsed;
#   slice, step 1       a window of the slice's length, starting at the slice's start
#                       (an index-vector entry holding that constant, unless it is 0);
#   slice, other step   a dimension of its own in the indices, holding start + step * iota
#                       (collapsed in the operand, like an advanced entry);
#   None                a size-1 result dimension, which only a reshape adds or removes.
#
# NumPy orders the result's dimensions by the index entries, except that the broadcast
# shape B of all advanced entries (ints included) is one block: in place of the first
# advanced entry when they are all adjacent, at the front otherwise. The indices' batch
# dimensions are the B block and the strided slices, in the order the result has them,
# and the windows are the result's other dimensions, in operand order. So the gather's
# output IS the result (less its None dimensions), and the scatter's updates are the
# values in that same layout, with offset_dims / update_window_dims = the windows'
# positions. Concrete index components are built on the host into one NumPy block;
# traced ones are appended to the index vector after it (its order is free: the
# start_index_map says which operand dimension each entry starts).
#
# Boolean masks must be concrete: np.nonzero turns a k-d mask into k adjacent integer
# arrays. A 0-d boolean (``x[True]``) indexes a new size-1 operand axis with [0] or [].


def _jnp() -> Any:
    """The spmdc.numpy namespace, complete by the time anything is indexed (the functions
    of the modules this one may not import: reductions, the rest of core ...)."""
    return sys.modules[__package__]


def _index_error(message: str) -> IndexError:
    source = user_source()
    return IndexError(message + (f" (at {source})" if source else ""))


def _is_array(x: Any) -> bool:
    return isinstance(x, (Tracer, Array))


def _consumed(i: Any) -> int:
    """How many dimensions of the array the index entry ``i`` indexes: a boolean mask its
    rank (0 for a scalar boolean), None and Ellipsis none, anything else one."""
    if i is None or i is Ellipsis or isinstance(i, (bool, np.bool_)):
        return 0
    if isinstance(i, list):
        try:
            i = np.asarray(i)
        except (TypeError, ValueError):     # holds traced values: an integer index array
            return 1
    if (isinstance(i, np.ndarray) or _is_array(i)) and i.dtype == np.bool_:
        return i.ndim
    return 1


def normalize_index(ndim: int, index: Any) -> tuple[Any, ...]:
    """``index`` as a tuple with the Ellipsis expanded into full slices."""
    index = index if isinstance(index, tuple) else (index,)
    ellipses = [k for k, i in enumerate(index) if i is Ellipsis]
    if len(ellipses) > 1:
        raise _index_error("an index can only have a single ellipsis ('...')")
    consumed = sum(_consumed(i) for i in index)
    if consumed > ndim:
        raise _index_error(f"too many indices for array: array is {ndim}-dimensional, but "
                           f"{consumed} were indexed")
    fill = (slice(None),) * (ndim - consumed)
    if ellipses:
        k = ellipses[0]
        return index[:k] + fill + index[k + 1:]
    return index + fill


@dataclass(frozen=True)
class _Advanced:
    """An integer index array (or int) for one operand dimension: a NumPy array, not yet
    normalised, or a traced integer value."""
    value: Any


@dataclass(frozen=True)
class _Plan:
    """One gather / scatter standing for an index. See Note [index plan]."""
    operand_shape: tuple[int, ...]     # the operand's shape, with 0-d boolean axes added
    result_shape: tuple[int, ...]      # x[index].shape, as NumPy has it
    core_shape: tuple[int, ...]        # result_shape less the None dimensions
    indices: Any                       # NumPy or traced, shape batch + (len(index_map),)
    index_map: tuple[int, ...]         # start_index_map / scatter_dims_to_operand_dims
    collapsed: tuple[int, ...]         # collapsed_slice_dims / inserted_window_dims
    slice_sizes: tuple[int, ...]
    window_positions: tuple[int, ...]  # offset_dims / update_window_dims

    @property
    def empty(self) -> bool:
        """Nothing to read or write: an empty result, or an indexed axis of size 0."""
        return (math.prod(self.result_shape) == 0
                or any(self.operand_shape[d] == 0 for d in self.collapsed))


# --- index entries ------------------------------------------------------------------------------

def _as_index_value(i: Any) -> Any:
    """An index entry as a NumPy array or a Tracer (ints, lists and spmdc.Arrays included)."""
    if isinstance(i, Tracer):
        return i
    if isinstance(i, Array):                     # concrete: read it once, index on the host
        return np.asarray(i)
    if isinstance(i, (list, tuple)):
        if any(isinstance(v, Tracer) for v in _flat(i)):
            return _stacked(i)
        value = np.asarray(i)
        return value.astype(np.int64) if value.size == 0 else value   # [] means no indices
    if isinstance(i, (np.ndarray, np.generic, bool, int)):
        return np.asarray(i)
    try:
        return np.asarray(operator.index(i))
    except TypeError:
        raise _index_error(f"only integers, slices (`:`), ellipsis (`...`), None and integer "
                           f"or boolean arrays are valid indices, got {type(i).__name__}") from None


def _stacked(values: Any) -> Any:
    """A (nested) list holding traced values as one array."""
    return stack([_stacked(v) if isinstance(v, (list, tuple)) else asarray(v)
                      for v in values])


def _flat(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flat(v)]
    return [x]


def _entries(shape: tuple[int, ...], index: tuple[Any, ...], check_ints: bool = True
             ) -> tuple[list[Any], tuple[int, ...]]:
    """The index (Ellipsis expanded) as None / slice / _Advanced entries, one per operand
    dimension except None, and the operand shape they index (0-d booleans add axes).
    ``check_ints``: an out-of-bounds Python int is an IndexError (``x[i]``); ``.at[...]``
    passes False, so that its ``mode`` decides (as in JAX)."""
    entries: list[Any] = []
    operand_shape: list[int] = []
    dim = 0
    for i in index:
        if i is None or isinstance(i, slice):
            entries.append(i)
            if i is not None:
                operand_shape.append(shape[dim])
                dim += 1
            continue
        value = _as_index_value(i)
        if value.dtype == np.bool_:
            if isinstance(value, Tracer):
                raise NonConcreteBooleanIndexError(
                    f"a traced boolean mask ({value.type}) cannot be used as an index: the "
                    "result's shape would depend on the data. Use spmdc.numpy.where(mask, x, "
                    f"other) instead, or pass a concrete (NumPy) mask{at_line(user_source())}")
            if value.ndim == 0:               # a new size-1 axis, indexed by [0] or []
                entries.append(_Advanced(np.zeros(int(value), np.int64)))
                operand_shape.append(1)
                continue
            if value.shape != shape[dim:dim + value.ndim]:
                raise _index_error(f"boolean index of shape {value.shape} does not match the "
                                   f"indexed dimensions {shape[dim:dim + value.ndim]} of an "
                                   f"array of shape {shape} (starting at axis {dim})")
            for nonzero in np.nonzero(value):
                entries.append(_Advanced(nonzero))
                operand_shape.append(shape[dim])
                dim += 1
            continue
        if value.dtype.kind not in "iu":
            raise _index_error(f"indices must be integers or booleans, got dtype {value.dtype}")
        if check_ints and isinstance(value, np.ndarray) and value.ndim == 0:  # a concrete int
            n = shape[dim]
            if not -n <= int(value) < n:
                raise _index_error(f"index {int(value)} is out of bounds for axis {dim} with "
                                   f"size {n}")
        entries.append(_Advanced(value))
        operand_shape.append(shape[dim])
        dim += 1
    if dim != len(shape):
        raise _index_error(f"too many indices for array of shape {shape}")
    return entries, tuple(operand_shape)


def _normalised(value: Any, n: int, wrap: bool = True) -> Any:
    """Integer indices into an axis of size ``n`` with negatives wrapped (unless ``wrap``
    is False), in the default int type. Out-of-range values stay out of range (gather
    clamps them, scatter drops them, or the mode says otherwise)."""
    int_type = dtypes.default_int()
    if isinstance(value, np.ndarray):
        # Clip first, so that the conversion to a narrower int cannot wrap a huge index
        # back into range; -n-1 and n are still out of bounds.
        value = np.clip(value.astype(np.int64), -n - 1, n)
        return (np.where(value < 0, value + n, value) if wrap else value).astype(int_type)
    jnp = _jnp()
    signed = value.dtype.kind == "i"
    if value.dtype.kind == "u" and value.dtype.itemsize >= int_type.itemsize:
        value = jnp.minimum(value, np.asarray(n, value.dtype))   # no wrap to negative
    value = value.astype(int_type) if value.dtype != int_type else value
    return jnp.where(value < 0, value + n, value) if signed and wrap else value


# --- the plan -----------------------------------------------------------------------------------

def _plan(shape: tuple[int, ...], index: tuple[Any, ...], check_ints: bool = True,
          wrap: bool = True) -> _Plan:
    """See Note [index plan]."""
    entries, operand_shape = _entries(shape, index, check_ints)
    advanced = [k for k, e in enumerate(entries) if isinstance(e, _Advanced)]
    try:
        batch = np.broadcast_shapes(*(entries[k].value.shape for k in advanced))
    except ValueError:
        shapes = " ".join(str(tuple(entries[k].value.shape)) for k in advanced)
        raise _index_error(f"shape mismatch: indexing arrays could not be broadcast together "
                           f"with shapes {shapes}") from None
    adjacent = bool(advanced) and advanced[-1] - advanced[0] + 1 == len(advanced)
    block = [("advanced", j, n) for j, n in enumerate(batch)]

    labels: list[Any] = [] if adjacent else list(block)   # result dims; None for None entries
    components: list[tuple[int, str, Any]] = []           # (operand dim, kind, value)
    collapsed, sizes = [], []
    dim = 0
    for k, e in enumerate(entries):
        if e is None:
            labels.append(None)
            continue
        n = operand_shape[dim]
        if isinstance(e, _Advanced):
            if k == advanced[0] and adjacent:
                labels += block
            components.append((dim, "advanced", _normalised(e.value, n, wrap)))
            collapsed.append(dim)
            sizes.append(1)
        else:
            start, stop, step = e.indices(n)
            count = len(range(start, stop, step))
            if step == 1:
                labels.append(("window", dim, count))
                sizes.append(count)
                if start:
                    components.append((dim, "start", start))
            else:
                labels.append(("strided", dim, count))
                collapsed.append(dim)
                sizes.append(1)
                components.append((dim, "strided", start + step * np.arange(count)))
        dim += 1
    if not components:        # every dimension a window from 0: name one start anyway
        first = next(label[1] for label in labels if label is not None)
        components.append((first, "start", 0))

    core = [label for label in labels if label is not None]
    batch_labels = [label for label in core if label[0] != "window"]
    batch_shape = tuple(label[2] for label in batch_labels)
    # Where each component's dimensions go among the indices' batch dimensions.
    block_at = next((p for p, label in enumerate(batch_labels) if label[0] == "advanced"), 0)
    placed = []
    for d, kind, value in components:
        if kind == "advanced":
            first = block_at + len(batch) - value.ndim          # NumPy aligns shapes right
            positions = tuple(range(first, first + value.ndim))
        elif kind == "strided":
            positions = (batch_labels.index(("strided", d, len(value))),)
        else:
            value, positions = np.asarray(value), ()
        placed.append((d, value, positions))
    indices, index_map = _build_indices(placed, batch_shape)
    return _Plan(operand_shape=operand_shape,
                 result_shape=tuple(1 if label is None else label[2] for label in labels),
                 core_shape=tuple(label[2] for label in core), indices=indices,
                 index_map=index_map, collapsed=tuple(collapsed), slice_sizes=tuple(sizes),
                 window_positions=tuple(p for p, label in enumerate(core)
                                        if label[0] == "window"))


def _build_indices(placed: list[tuple[int, Any, tuple[int, ...]]],
                   batch_shape: tuple[int, ...]) -> tuple[Any, tuple[int, ...]]:
    """The index array (batch_shape + (k,)) and the operand dimension of each of its k
    entries: the concrete components as one NumPy block first, then the traced ones."""
    int_type = dtypes.default_int()
    rank = len(batch_shape)
    concrete = [(d, v, p) for d, v, p in placed if isinstance(v, np.ndarray)]
    traced = [(d, v, p) for d, v, p in placed if not isinstance(v, np.ndarray)]
    pieces: list[Any] = []
    if concrete:
        columns = []
        for _, value, positions in concrete:
            expanded = [1] * rank
            for axis, p in enumerate(positions):
                expanded[p] = value.shape[axis]
            columns.append(np.broadcast_to(value.reshape(expanded), batch_shape))
        pieces.append(np.stack(columns, axis=-1).astype(int_type))
    for _, value, positions in traced:
        # size-1 dimensions stretch; the trailing 1 is this component's index-vector entry
        pieces.append(lax.broadcast_in_dim(value, batch_shape + (1,), positions))
    index_map = tuple(d for d, _, _ in concrete + traced)
    if len(pieces) == 1:
        return pieces[0], index_map
    return lax.concatenate(pieces, rank), index_map


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
    """The largest in-bounds start of each index-vector entry (size - window)."""
    int_type = dtypes.default_int()
    return np.asarray([plan.operand_shape[d] - plan.slice_sizes[d] for d in plan.index_map],
                      int_type)


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
