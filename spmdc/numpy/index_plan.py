"""The plan of an index: ``x[index]`` and ``x.at[index]`` turned into the dimension
numbers, indices and shapes of ONE gather or scatter (Note [index plan]), with the
index normalised first (Ellipsis expanded, negative indices wrapped, booleans made
integer arrays). indexing.py applies the plan.

Part of spmdc.numpy; it defines no public name."""
from __future__ import annotations

import math
import operator
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.config import strict_indexing_enabled
from ..core.tracing import Tracer, user_source
from ..errors import NonConcreteBooleanIndexError, at_line
from ..runtime.array import Array
from .core import asarray
from .shape_ops import stack

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


def _index_error(message: str, kind: type[Exception] = IndexError) -> Exception:
    source = user_source()
    return kind(message + (f" (at {source})" if source else ""))


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
    """``index`` as a tuple with the Ellipsis expanded into full slices. A list is not a
    tuple: JAX 0.10.2 rejects ``x[[1, 2]]`` (NumPy once read it as a tuple), and so does
    spmdc, with JAX's TypeError; ``x[np.array([1, 2])]`` and ``x[[1, 2], :]`` index."""
    if isinstance(index, list):
        raise _index_error("Using a non-tuple sequence for multidimensional indexing is not "
                           "allowed; use `arr[array(seq)]` instead of `arr[seq]`", TypeError)
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
                           f"or boolean arrays are valid indices, got {type(i).__name__} "
                           f"{i!r}", TypeError) from None


def _stacked(values: Any) -> Any:
    """A (nested) list holding traced values as one array."""
    return stack([_stacked(v) if isinstance(v, (list, tuple)) else asarray(v)
                      for v in values])


def _flat(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in _flat(v)]
    return [x]


# Note [out-of-bounds ints]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# ``x[11]`` on a 10-element array reads ``x[9]``, as in JAX: a Python int index, like a
# traced one, is wrapped once if negative and then clamped into its axis (``x[-12]``
# reads ``x[0]``), the rule of gather; an update through ``x.at[i]`` drops an
# out-of-bounds index unless its ``mode`` says otherwise (Note [index modes] in
# numpy/indexing.py). Only an axis of size 0, which has nothing to clamp to, is an
# IndexError. The option ``spmdc_strict_indexing`` (``config.update(
# "spmdc_strict_indexing", True)``, off by default) makes an out-of-bounds Python int in
# ``x[...]`` an IndexError instead, NumPy's rule, for programs that want the check; it
# applies to functions traced while it is on.

def _entries(shape: tuple[int, ...], index: tuple[Any, ...], check_ints: bool = True
             ) -> tuple[list[Any], tuple[int, ...]]:
    """The index (Ellipsis expanded) as None / slice / _Advanced entries, one per operand
    dimension except None, and the operand shape they index (0-d booleans add axes).
    ``check_ints``: an out-of-bounds Python int is an IndexError under strict indexing
    (Note [out-of-bounds ints]; ``x[i]``); ``.at[...]`` passes False, so that its ``mode``
    decides (as in JAX)."""
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
            raise _index_error(f"Indexer must have integer or boolean type, got indexer with "
                               f"type {value.dtype}", TypeError)
        if check_ints and isinstance(value, np.ndarray) and value.ndim == 0:  # a concrete int
            n = shape[dim]
            if not -n <= int(value) < n and strict_indexing_enabled():   # the gather clamps
                raise _index_error(f"index {int(value)} is out of bounds for axis {dim} with "
                                   f"size {n} (spmdc_strict_indexing is on)")
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
