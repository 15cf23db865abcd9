"""spmdc.ops: JAX's ``jax.ops``, the segment reductions ``segment_sum``, ``segment_prod``,
``segment_max`` and ``segment_min``.

Each is one scatter into an array of ``num_segments`` rows filled with the reduction's
identity: row ``s`` of the result combines the rows ``data[i]`` whose ``segment_ids[i]``
is ``s``. A segment no row names keeps the identity (0, 1, the dtype's lowest or highest
value, as JAX). Being a scatter, each differentiates, batches and compiles as
``x.at[...].add`` and its siblings do.

See Note [segment reductions].
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from . import numpy as jnp
from .core.tracing import Tracer
from .errors import user_source
from .numpy.indexing import check_hints, check_mode

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]

# Note [segment reductions]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# As in JAX, a segment reduction is ``full((num_segments,) + data.shape[1:], identity)
# .at[segment_ids].<op>(data, mode=mode)``, with two JAX conventions kept:
# - ids are not wrapped: a negative id is out of bounds like one >= num_segments, and
#   the default mode ('fill', JAX's FILL_OR_DROP) drops its row; mode='clip' clamps it.
# - ``bucket_size`` splits the rows into consecutive buckets of that many rows, reduces
#   each bucket into a row block of its own, and reduces the blocks last (JAX's remedy
#   for the rounding of long sums and products); the result is the same reduction, in
#   another order.
# ``num_segments`` fixes the result's shape, so it must be a concrete int; left out, it
# is ``max(segment_ids) + 1``, read from the ids, which therefore must be concrete (a
# traced count raises ConcretizationTypeError, as JAX's concrete_dim_or_error does).
# ``indices_are_sorted`` / ``unique_indices`` are promises that do not change results;
# spmdc's scatter needs neither, so they are checked as bools (numpy/indexing.py's
# check_hints). JAX's ``out_sharding=`` is not taken: spmdc's scatter has no output
# sharding to give.


def _identity(op: str, dtype: np.dtype) -> Any:
    """The value a segment that no row names keeps (JAX's _get_identity)."""
    if op == "add":
        return 0
    if op == "mul":
        return 1
    if dtype == np.bool_:
        return op == "min"
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if op == "min" else info.min
    return np.inf if op == "min" else -np.inf


def _check_arraylike(name: str, *args: Any) -> None:
    for position, arg in enumerate(args):
        if not (np.isscalar(arg) or hasattr(arg, "shape") and hasattr(arg, "dtype")):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got "
                            f"{type(arg)} at position {position}.")


def _num_segments(name: str, segment_ids: Any, num_segments: Any) -> int:
    if num_segments is None:
        if segment_ids.size == 0:
            raise ValueError(f"{name}: pass num_segments when segment_ids is empty")
        num_segments = jnp.max(segment_ids) + 1     # traced ids: a traced count
    if isinstance(num_segments, Tracer):
        # The result's shape cannot depend on a traced count: ConcretizationTypeError.
        num_segments = int(num_segments)
    try:
        count = operator.index(num_segments)
    except TypeError:
        raise TypeError(f"{name}: num_segments must be an int, got {num_segments!r}; "
                        "it is the length of the result") from None
    if count < 0:
        where = user_source()
        raise ValueError("num_segments must be non-negative." + (f" (at {where})" if where else ""))
    return count


def _segment_reduce(name: str, op: str, data: Any, segment_ids: Any, num_segments: Any,
                    indices_are_sorted: bool, unique_indices: bool, bucket_size: Any,
                    mode: Any) -> Any:
    """See Note [segment reductions]."""
    _check_arraylike(name, data, segment_ids)
    check_hints(indices_are_sorted, unique_indices)
    mode = check_mode("fill" if mode is None else mode,
                      (None, "clip", "promise_in_bounds", "fill", "drop"), name)
    data, segment_ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if data.dtype == np.bool_ and op in ("add", "mul"):
        raise TypeError(f"{name} does not accept dtype bool (data): cast it to an integer "
                        "type first, e.g. data.astype(int)")
    if segment_ids.dtype.kind not in "iu":
        raise TypeError(f"{name}: segment_ids must have an integer dtype, got "
                        f"{segment_ids.dtype}")
    count = _num_segments(name, segment_ids, num_segments)
    dtype = data.dtype
    identity = _identity(op, dtype)
    if dtype == np.bool_:           # max is any, min is all: the scatter runs on uint8
        out = _segment_reduce(name, op, data.astype(np.uint8), segment_ids, count,
                              indices_are_sorted, unique_indices, bucket_size, mode)
        return out.astype(np.bool_)
    update = {"add": "add", "mul": "multiply", "min": "min", "max": "max"}[op]
    if bucket_size is None:
        out = jnp.full((count,) + data.shape[1:], identity, dtype)
        return getattr(out.at[segment_ids], update)(data, mode=mode,
                                                    wrap_negative_indices=False)
    bucket_size = int(bucket_size)
    if bucket_size <= 0:
        raise ValueError(f"{name}: bucket_size must be positive, got {bucket_size}")
    buckets = math.ceil(segment_ids.size / bucket_size)
    out = jnp.full((buckets, count) + data.shape[1:], identity, dtype)
    bucket_of_row = jnp.arange(segment_ids.shape[0]) // bucket_size
    out = getattr(out.at[bucket_of_row, segment_ids], update)(
        data, mode=mode, wrap_negative_indices=False)
    reduce = {"add": jnp.sum, "mul": jnp.prod, "min": jnp.min, "max": jnp.max}[op]
    return reduce(out, axis=0).astype(dtype)


def segment_sum(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The sum of the rows of ``data`` in each segment: row ``s`` of the result sums the
    ``data[i]`` with ``segment_ids[i] == s`` (0 for an empty segment). Ids outside
    ``[0, num_segments)`` are dropped by default (``mode``). See Note [segment reductions]."""
    return _segment_reduce("segment_sum", "add", data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode)


def segment_prod(data: Any, segment_ids: Any, num_segments: int | None = None,
                 indices_are_sorted: bool = False, unique_indices: bool = False,
                 bucket_size: int | None = None, mode: Any = None) -> Any:
    """The product of the rows of ``data`` in each segment (1 for an empty segment). See
    Note [segment reductions]."""
    return _segment_reduce("segment_prod", "mul", data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode)


def segment_max(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The maximum of the rows of ``data`` in each segment (-inf, or the integer type's
    lowest value, for an empty segment). See Note [segment reductions]."""
    return _segment_reduce("segment_max", "max", data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode)


def segment_min(data: Any, segment_ids: Any, num_segments: int | None = None,
                indices_are_sorted: bool = False, unique_indices: bool = False,
                bucket_size: int | None = None, mode: Any = None) -> Any:
    """The minimum of the rows of ``data`` in each segment (inf, or the integer type's
    highest value, for an empty segment). See Note [segment reductions]."""
    return _segment_reduce("segment_min", "min", data, segment_ids, num_segments,
                           indices_are_sorted, unique_indices, bucket_size, mode)
