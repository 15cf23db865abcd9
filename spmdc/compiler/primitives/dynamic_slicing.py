"""Slices whose start indices are run-time values: dynamic_slice, dynamic_update_slice.

Start indices are rank-0 integer operands, one per dimension, clamped (as in XLA) so the
window stays inside the operand: ``start = clip(start, 0, size - window)``.
"""
from __future__ import annotations

import numpy as np

from ..builder import lit
from ..ir import Atom, TensorType
from ..passes.autodiff import vjp_rules, zeros
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import batch_rules, batch_to_front
from ..stablehlo import hlo, ir, lower_rules, mlir_type
from .core import ShapeError, declare

# Note [batched start indices]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Under vmap, a start index that differs across the batch cannot stay a dynamic_slice
# operand (those are scalars). Dimensions whose start is the same for the whole batch keep
# an ordinary dynamic_slice; for each dimension d with a batched start s, the window is
# selected with a one-hot mask instead of a loop over the batch:
#
#     hit[b, j, i] = (i == clamp(s[b]) + j)            j < window, i < size of d
#     out[b, .., j, ..] = sum_i select(hit[b, j, i], x[b, .., i, ..], 0)
#
# Exactly one i is hit per j, so the sum returns that element unchanged (except that a
# -0.0 comes back as +0.0); select, not multiplication, keeps inf and nan where they are.
# dynamic_update_slice places the update with the same mask (summing over j instead) and
# selects it where i lies inside the window. The cost is size x window per batched
# dimension; a gather would be cheaper once primitives/indexing.py provides one.


def _index_check(name: str, x: TensorType, starts: tuple[TensorType, ...]) -> None:
    if len(starts) != x.ndim:
        raise ShapeError(f"{name}: operand {x} needs {x.ndim} start indices, got {len(starts)}")
    for s in starts:
        if s.shape != () or s.dtype.kind not in "iu":
            raise ShapeError(f"{name}: start indices must be rank-0 integers, got "
                             f"{', '.join(map(str, starts))}")


def _dynamic_slice_rule(x: TensorType, *starts: TensorType, slice_sizes: tuple[int, ...]):
    _index_check("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim or any(not 0 <= k <= n for k, n in
                                         zip(slice_sizes, x.shape, strict=True)):
        raise ShapeError(f"dynamic_slice: slice_sizes={slice_sizes} do not fit operand {x}")
    return TensorType(tuple(slice_sizes), x.dtype)


def _dynamic_update_slice_rule(x: TensorType, update: TensorType, *starts: TensorType):
    _index_check("dynamic_update_slice", x, starts)
    if update.dtype != x.dtype or update.ndim != x.ndim or any(
            k > n for k, n in zip(update.shape, x.shape, strict=True)):
        raise ShapeError(f"dynamic_update_slice: update {update} does not fit inside "
                         f"operand {x} (same dtype and rank, no larger in any dimension)")
    return x


def _window(x, starts, sizes) -> tuple[slice, ...]:
    clamped = (min(max(int(s), 0), n - k) for s, n, k in zip(starts, x.shape, sizes,
                                                            strict=True))
    return tuple(slice(s, s + k) for s, k in zip(clamped, sizes, strict=True))


def _dynamic_slice_impl(x, *starts, slice_sizes):
    return np.asarray(x)[_window(x, starts, slice_sizes)].copy()


def _dynamic_update_slice_impl(x, update, *starts):
    out = np.array(x, copy=True)
    out[_window(out, starts, update.shape)] = update
    return out


# --- batching --------------------------------------------------------------------------------

def _zero_index(starts: list[Atom]) -> Atom:
    return lit(0, starts[0].type.dtype if starts else np.int32)


def _clamped(b, start: Atom, size: int, window: int) -> Atom:
    """A batched start index as int32/int64 clamped to [0, size - window]."""
    dtype = np.int64 if start.type.dtype.itemsize == 8 else np.int32
    s = b.convert(start, new_dtype=np.dtype(dtype)) if start.type.dtype != dtype else start
    return b.max(b.min(s, lit(size - window, dtype)), lit(0, dtype))


def _window_mask(b, start: Atom, shape: tuple[int, ...], axis: int) -> Atom:
    """bool ``shape`` (batch first, window at ``axis``, operand dim at ``axis + 1``), true
    where the operand position is ``start[b]`` plus the window position. See Note
    [batched start indices]."""
    window, size = shape[axis], shape[axis + 1]
    small = (shape[0], window, size)
    dtype = start.type.dtype
    target = b.add(b.broadcast_in_dim(start, shape=small, broadcast_dimensions=(0,)),
                   b.iota(dtype=dtype, shape=small, dimension=1))
    hit = b.eq(b.iota(dtype=dtype, shape=small, dimension=2), target)
    return b.broadcast_in_dim(hit, shape=shape, broadcast_dimensions=(0, axis, axis + 1))


def _masked_sum(b, x: Atom, mask: Atom, axis: int) -> Atom:
    picked = b.select(mask, x, zeros(b, x.type))
    if x.type.dtype == np.bool_:     # one hit per sum: "any" is the sum for booleans
        summed = b.reduce_sum(b.convert(picked, new_dtype=np.dtype(np.int32)), axes=(axis,))
        return b.convert(summed, new_dtype=x.type.dtype)
    return b.reduce_sum(picked, axes=(axis,))


def _take_window(b, x: Atom, axis: int, start: Atom, window: int) -> Atom:
    """``x[b, .., start[b] : start[b] + window, ..]`` along ``axis`` (start clamped)."""
    shape = (*x.type.shape[:axis], window, *x.type.shape[axis:])
    start = _clamped(b, start, x.type.shape[axis], window)
    expanded = b.broadcast_in_dim(x, shape=shape, broadcast_dimensions=tuple(
        d for d in range(len(shape)) if d != axis))
    return _masked_sum(b, expanded, _window_mask(b, start, shape, axis), axis + 1)


def _place_window(b, update: Atom, axis: int, start: Atom,
                  size: int) -> tuple[Atom, Atom, Atom]:
    """``update`` (window along ``axis``) moved into a dimension of ``size`` at the clamped
    ``start[b]``, with two bool (batch, size) masks: position >= start, position < end."""
    window = update.type.shape[axis]
    shape = (*update.type.shape[:axis + 1], size, *update.type.shape[axis + 1:])
    start = _clamped(b, start, size, window)
    expanded = b.broadcast_in_dim(update, shape=shape, broadcast_dimensions=tuple(
        d for d in range(len(shape)) if d != axis + 1))
    placed = _masked_sum(b, expanded, _window_mask(b, start, shape, axis), axis)
    position = b.iota(dtype=start.type.dtype, shape=(shape[0], size), dimension=1)
    lo = b.broadcast_in_dim(start, shape=(shape[0], size), broadcast_dimensions=(0,))
    hi = b.add(lo, lit(window, start.type.dtype))
    return placed, b.le(lo, position), b.lt(position, hi)


def _dynamic_slice_batch(b, axis, args, dims, *, slice_sizes):
    x, starts, dx, dstarts = args[0], args[1:], dims[0], dims[1:]
    x = batch_to_front(b, x, dx, axis.size)
    zero = _zero_index(starts)
    batched = [k for k, d in enumerate(dstarts) if d is not None]
    sizes = tuple(x.type.shape[k + 1] if k in batched else s for k, s in enumerate(slice_sizes))
    if len(batched) < len(starts) or not starts:     # some starts are shared by the batch
        x = b.dynamic_slice(x, zero, *(lit(0, s.type.dtype) if k in batched else s
                                       for k, s in enumerate(starts)),
                            slice_sizes=(axis.size, *sizes))
    for k in batched:                       # See Note [batched start indices]
        start = batch_to_front(b, starts[k], dstarts[k], axis.size)
        x = _take_window(b, x, k + 1, start, slice_sizes[k])
    return [x], [0]


def _dynamic_update_slice_batch(b, axis, args, dims):
    (x, update), starts = args[:2], args[2:]
    (dx, dupdate), dstarts = dims[:2], dims[2:]
    x = batch_to_front(b, x, dx, axis.size)
    update = batch_to_front(b, update, dupdate, axis.size)
    batched = [k for k, d in enumerate(dstarts) if d is not None]
    if not batched:
        return [b.dynamic_update_slice(x, update, _zero_index(starts), *starts)], [0]
    # The region the update may touch: batched dimensions in full, the others at their
    # (shared) start; within it, place the update by mask. See Note [batched start indices]
    region_starts = [_zero_index(starts)] + [lit(0, s.type.dtype) if k in batched else s
                                             for k, s in enumerate(starts)]
    region = x
    if len(batched) < len(starts):
        region = b.dynamic_slice(x, *region_starts, slice_sizes=(axis.size, *(
            x.type.shape[k + 1] if k in batched else n for k, n in enumerate(
                update.type.shape[1:]))))
    placed, masks = update, []
    for k in batched:
        start = batch_to_front(b, starts[k], dstarts[k], axis.size)
        placed, inside_lo, inside_hi = _place_window(b, placed, k + 1, start,
                                                     x.type.shape[k + 1])
        masks += [(k + 1, inside_lo), (k + 1, inside_hi)]
    new = placed
    for dim, inside in masks:         # nested selects: inside every window takes the update
        inside = b.broadcast_in_dim(inside, shape=region.type.shape,
                                    broadcast_dimensions=(0, dim))
        new = b.select(inside, new, region)
    if region is not x:
        new = b.dynamic_update_slice(x, new, *region_starts)
    return [new], [0]


# --- lowering --------------------------------------------------------------------------------

def _common_indices(ctx, eqn, starts, first: int) -> list[ir.Value]:
    # StableHLO wants one index type for all start indices.
    types = [a.type for a in eqn.inputs[first:]]
    if len({t.dtype for t in types}) <= 1:
        return list(starts)
    want = TensorType((), np.dtype(np.int64))
    return [s if t.dtype == want.dtype else hlo.ConvertOp(mlir_type(want), s).result
            for s, t in zip(starts, types, strict=True)]


# A rank-0 operand has no start indices, and the text form of a dynamic_slice with none
# does not parse back in jaxlib's StableHLO (``%x, , sizes = []``); the op is the identity
# there (and dynamic_update_slice returns its update), so emit no op at all.

def _dynamic_slice_lowering(ctx, eqn, x, *starts):
    if not starts:
        return x
    return hlo.DynamicSliceOp(x, _common_indices(ctx, eqn, starts, 1),
                              ir.DenseI64ArrayAttr.get(list(eqn.params["slice_sizes"]))).result


def _dynamic_update_slice_lowering(ctx, eqn, x, update, *starts):
    if not starts:
        return update
    return hlo.DynamicUpdateSliceOp(x, update, _common_indices(ctx, eqn, starts, 2)).result


dynamic_slice_p = declare("dynamic_slice", _dynamic_slice_rule, _dynamic_slice_impl)
batch_rules[dynamic_slice_p] = _dynamic_slice_batch
jvp_rules[dynamic_slice_p] = linear_jvp(dynamic_slice_p, 0)
vjp_rules[dynamic_slice_p] = lambda b, ct, x, *starts, slice_sizes: [
    b.dynamic_update_slice(zeros(b, x.type), ct, *starts), *(None for _ in starts)]
lower_rules[dynamic_slice_p] = _dynamic_slice_lowering

dynamic_update_slice_p = declare("dynamic_update_slice", _dynamic_update_slice_rule,
                                 _dynamic_update_slice_impl)
batch_rules[dynamic_update_slice_p] = _dynamic_update_slice_batch
jvp_rules[dynamic_update_slice_p] = linear_jvp(dynamic_update_slice_p, 0, 1)
vjp_rules[dynamic_update_slice_p] = lambda b, ct, x, update, *starts: [
    b.dynamic_update_slice(ct, zeros(b, update.type), *starts),     # the window is overwritten
    b.dynamic_slice(ct, *starts, slice_sizes=update.type.shape), *(None for _ in starts)]
lower_rules[dynamic_update_slice_p] = _dynamic_update_slice_lowering
