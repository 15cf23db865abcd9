"""spmdc.lax's shape operations: broadcast_in_dim, broadcast, reshape, transpose,
expand_dims, squeeze, collapse, concatenate, stack/unstack, split, tile, pad, rev, and the
arrays made from a shape (iota, broadcasted_iota, full, full_like, empty).

On the CPU backend ``empty`` is zeros, as JAX's is there.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.primitives.structural import (
    broadcast_in_dim_p,
    concatenate_p,
    pad_p,
    reshape_p,
    rev_p,
    transpose_p,
)
from ..core import dtypes, operands
from ..core.operands import (
    all_weak,
    asarray,
    broadcast_to,
    literal,
    promote,
    shape_arg,
)
from ..core.tracing import bind

__all__ = ["broadcast_in_dim", "iota", "concatenate", "pad", "rev", "expand_dims", "squeeze",
           "reshape", "transpose", "collapse", "full", "full_like", "broadcasted_iota", "broadcast",
           "broadcast_shapes", "tile", "broadcast_to_rank", "stack", "empty",
           "broadcast_like"]


def broadcast_in_dim(x: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    """``x`` placed in an array of ``shape``, its dimension i at ``broadcast_dimensions[i]``
    (a NumPy or Python value stays a constant of the program: Note [weak literals] in
    core/operands.py)."""
    x = literal(x)
    return bind(broadcast_in_dim_p, x, shape=shape_arg(shape, "broadcast_in_dim"),
                broadcast_dimensions=tuple(broadcast_dimensions), weak=all_weak(x))


def iota(dtype: Any, size: int) -> Any:
    return operands.iota(dtypes.canonicalize(dtype), (size,), 0)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    xs = [asarray(x) for x in operands]
    return bind(concatenate_p, *xs, dimension=dimension, weak=all_weak(*xs))


def _broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` broadcast to ``shape`` by NumPy's rules, as jnp.broadcast_to emits it."""
    x = asarray(x)
    operands.broadcast_shapes(x.shape, shape, op="broadcast_to")
    if x.shape == shape:
        return x
    if x.ndim == 0:
        return bind(broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=(), weak=x.weak)
    return broadcast_to(x, shape)


def _concatenate(xs: list[Any], dimension: int) -> Any:
    """Arrays joined along ``dimension``, promoted to one dtype (weak if all are), as
    jnp.concatenate emits them."""
    if len(xs) == 1:
        return xs[0]
    xs, _, weak = promote("concatenate", *xs)
    return bind(concatenate_p, *xs, dimension=dimension, weak=weak)


def pad(x: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    x = asarray(x)
    return bind(pad_p, x, asarray(padding_value).astype(x.dtype),
                padding_config=tuple(tuple(c) for c in padding_config), weak=x.weak)


def rev(x: Any, dimensions: Sequence[int]) -> Any:
    x = asarray(x)
    return bind(rev_p, x, dimensions=tuple(dimensions), weak=x.weak)


def _reshape(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` with ``shape`` (of as many elements), as jnp.reshape emits it."""
    return x if x.shape == shape else bind(reshape_p, x, new_sizes=shape, weak=x.weak)


def _axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"lax.{op}: axis {axis} is out of bounds for an operand of rank {ndim}")
    return axis % ndim


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` with dimensions of size 1 inserted at ``dimensions`` (of the result): a
    ``broadcast_in_dim``, as JAX writes it (a jaxpr shows ``x[None]`` so)."""
    x = asarray(array)
    ndim = x.ndim + len(dimensions)
    new = {_axis("expand_dims", d, ndim) for d in dimensions}
    if len(new) != len(dimensions):
        raise ValueError(f"repeated axis in lax.expand_dims: {tuple(dimensions)}")
    if not new:
        return x
    shape = list(x.shape)
    for d in sorted(new):
        shape.insert(d, 1)
    kept = tuple(d for d in range(ndim) if d not in new)
    return bind(broadcast_in_dim_p, x, shape=tuple(shape), broadcast_dimensions=kept,
                weak=x.weak)


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` without its ``dimensions``, each of size 1."""
    x = asarray(array)
    dims = {_axis("squeeze", d, x.ndim) for d in dimensions}
    for d in sorted(dims):
        if x.shape[d] != 1:
            raise ValueError(f"lax.squeeze: dimension {d} of shape {x.shape} has size "
                             f"{x.shape[d]}, not 1")
    return _reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in dims))


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None
            ) -> Any:
    """Reshape (after transposing by ``dimensions`` when given)."""
    x = asarray(operand)
    if dimensions is not None:
        x = transpose(x, dimensions)
    shape = shape_arg(tuple(new_sizes), "reshape")
    if math.prod(shape) != x.size:
        raise TypeError(f"lax.reshape: cannot reshape an array of shape {x.shape} "
                        f"({x.size} elements) into shape {shape}")
    return _reshape(x, shape)


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """``operand`` with its dimensions in the order ``permutation``."""
    x = asarray(operand)
    perm = tuple(_axis("transpose", d, x.ndim) for d in permutation)
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"lax.transpose: {tuple(permutation)} is not a permutation of the "
                         f"{x.ndim} dimensions")
    if perm == tuple(range(x.ndim)):
        return x
    return bind(transpose_p, x, permutation=perm, weak=x.weak)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge dimensions ``start_dimension:stop_dimension`` into one."""
    x = asarray(operand)
    lo, hi, _ = builtins_slice(start_dimension, stop_dimension).indices(x.ndim)
    size = int(np.prod(x.shape[lo:hi], dtype=np.int64))
    return reshape(x, x.shape[:lo] + (size,) + x.shape[hi:])


builtins_slice = slice


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    return operands.full(shape_arg(shape), fill_value, dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    """An array of ``x``'s shape and dtype (unless given) filled with ``fill_value``;
    weakly typed as ``x`` is when it keeps ``x``'s dtype, as JAX's."""
    out = full(operands.shape_of(x) if shape is None else shape, fill_value,
               dtype if dtype is not None else operands.dtype_of(x))
    return operands.weakly_typed(out) if dtype is None and dtypes.dtype_and_weak(x)[1] \
        else out


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """An array of ``shape`` counting 0, 1, ... along ``dimension``."""
    shape = shape_arg(shape, "broadcasted_iota")
    return operands.iota(dtypes.canonicalize(dtype), shape,
                         _axis("broadcasted_iota", dimension, len(shape)))


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """Add leading dimensions of ``sizes``."""
    x = asarray(operand)
    sizes = tuple(int(s) for s in sizes)
    return broadcast_in_dim(x, sizes + x.shape, tuple(range(len(sizes), len(sizes) + x.ndim)))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    return operands.broadcast_shapes(*shapes)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along dimension i (len(reps) == rank)."""
    x = asarray(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != x.ndim:
        raise ValueError(f"lax.tile: {len(reps)} repetitions for an operand of rank {x.ndim}")
    if all(r == 1 for r in reps):
        return x
    # each dimension d becomes (reps[d], n_d), broadcast, then merged
    tiled = broadcast_in_dim(x, tuple(n for r, s in zip(reps, x.shape, strict=True)
                                      for n in (r, s)),
                             tuple(range(1, 2 * x.ndim, 2)))
    return _reshape(tiled, tuple(r * s for r, s in zip(reps, x.shape, strict=True)))


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """``x`` with leading dimensions of size 1 added up to ``rank``."""
    x = asarray(x)
    if x.ndim >= rank:
        return x
    return broadcast(x, (1,) * (rank - x.ndim))


def _index_axis(op: str, axis: int, rank: int) -> int:
    axis = operator.index(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"lax.{op}: axis {axis} is out of bounds for rank {rank}")
    return axis % rank


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Arrays of one shape and dtype stacked along a new dimension ``axis``."""
    arrays = [asarray(x) for x in operands]
    if not arrays:
        raise ValueError("lax.stack: needs at least one array")
    for a in arrays[1:]:
        if a.dtype != arrays[0].dtype:
            raise TypeError("lax.stack requires arguments to have the same dtypes, got "
                            f"{', '.join(str(x.dtype) for x in arrays)}")
        if a.shape != arrays[0].shape:
            raise TypeError("lax.stack requires arguments to have the same shapes, got "
                            f"{', '.join(str(x.shape) for x in arrays)}")
    axis = _index_axis("stack", axis, arrays[0].ndim + 1)
    return _concatenate([_reshape(a, a.shape[:axis] + (1,) + a.shape[axis:]) for a in arrays],
                        axis)


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array whose values are unspecified (zeros on the CPU backend, as JAX's), laid
    out as ``out_sharding`` if given."""
    out = operands.full(shape_arg(shape), 0, dtypes.canonicalize(dtype))
    if out_sharding is None:
        return out
    from ..transforms.partitioned import with_sharding_constraint
    return with_sharding_constraint(out, out_sharding)


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """``arr`` broadcast (NumPy's rules) to the shape of ``like_arr``."""
    like = like_arr if hasattr(like_arr, "shape") else np.asarray(like_arr)
    return _broadcast_to(arr, tuple(like.shape))


def _canonical_axis(op: str, what: str, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"{op}: {what}={axis} is out of range for rank {rank}")
    return axis % rank
