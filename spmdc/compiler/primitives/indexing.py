"""Integer-array indexing: gather and scatter, with XLA's dimension numbers.

They back NumPy-style indexing (``x[idx]``, ``x[:, idx]``, ``x[i, j]``) and
``.at[...].get/set/add/mul/min/max`` in the frontend. Conventions shared by both:

- ``indices`` has rank >= 1 and its LAST dimension is the index vector (XLA's
  ``index_vector_dim`` is always ``indices.ndim - 1``); its other dimensions are the
  "batch" (gather) or "scatter" (scatter) dimensions.
- A *window* of the operand starts at the position the index vector names (dimensions
  absent from ``start_index_map`` / ``scatter_dims_to_operand_dims`` start at 0; operand
  batching dimensions start at the position of the matching indices dimension).
- ``mode`` says what happens to a window that does not lie inside the operand; see
  Note [out-of-bounds windows].

Params follow StableHLO's names. Those with defaults may be left out of an equation.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..builder import lit
from ..ir import TensorType, dtype_kind
from ..passes.autodiff import vjp_rules, zeros
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import batch_rules, batch_to_front, move_axis
from ..stablehlo import LoweringContext, hlo, ir, lower_rules, mlir_type
from .core import ShapeError, declare

__all__ = ["gather_p", "scatter_p", "COMBINES"]

# Note [out-of-bounds windows]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A window is in bounds when, for every indexed operand dimension d,
# 0 <= start[d] <= operand.shape[d] - window[d]. What happens otherwise is ``mode``:
#
#   gather  mode='clip' (default)  each start is clamped into that range (XLA gather,
#                                  and what JAX does for ``x[idx]``);
#           mode='fill'            the whole window reads as zeros.
#   scatter mode='drop' (default)  the whole update window is skipped (XLA scatter, and
#                                  what JAX does for ``.at[...].set/add``);
#           mode='clip'            each start is clamped, as gather's 'clip'.
#
# The second mode of each exists for autodiff: the transpose of a clamping gather is a
# clamping scatter-add, and the transpose of a dropping scatter is a gather that returns
# zero cotangent for the dropped update windows. XLA has only the default behaviours, so
# the lowering rules emit the clamp (scatter 'clip') or the in-bounds mask (gather
# 'fill') around the StableHLO op. Negative indices are not wrapped here: ``-1`` clamps
# to 0 or is dropped; the frontend normalises NumPy-style negative indices first.
#
# Note [duplicate indices]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# Scatter windows may overlap (repeated indices, or windows wider than 1). 'add', 'mul',
# 'min' and 'max' combine every update that lands on an element (in an unspecified
# order, so float sums may differ in the last bits). For 'set', XLA leaves unspecified
# which update wins; the NumPy reference keeps the last one in row-major order of the
# scatter dimensions, and tests use distinct windows for 'set'. The VJP of a 'set' scatter
# gives every update the cotangent of the element it was written to, as if each of them
# had won; with overlapping windows that over-counts (JAX refuses to transpose such a
# scatter instead). 'min' and 'max' split each element's cotangent evenly among the
# operand element and the updates equal to the result, as JAX does; 'mul' gives each
# update the product of the others at its element, without dividing by a zero update
# (JAX differentiates 'mul' only when the indices are unique). That product is exact, but
# taken as 0 where two or more zero updates meet, so a second derivative there is 0.

COMBINES = ("set", "add", "mul", "min", "max")
_GATHER_MODES = ("clip", "fill")
_SCATTER_MODES = ("drop", "clip")


# --- shape rules -----------------------------------------------------------------------------

def _check_dims(name: str, what: str, dims: tuple[int, ...], rank: int,
                sorted_: bool = False) -> None:
    if any(not 0 <= d < rank for d in dims) or len(set(dims)) != len(dims):
        raise ShapeError(f"{name}: {what}={dims} must be distinct dimensions in [0, {rank})")
    if sorted_ and list(dims) != sorted(dims):
        raise ShapeError(f"{name}: {what}={dims} must be sorted")


def _check_indexing(name: str, operand: TensorType, indices: TensorType,
                    index_map: tuple[int, ...], dropped: tuple[int, ...],
                    operand_batching_dims: tuple[int, ...],
                    indices_batching_dims: tuple[int, ...],
                    names: tuple[str, str, str, str]) -> None:
    """The checks gather and scatter share. ``dropped`` are the collapsed/inserted dims;
    ``names`` are this primitive's names for (dropped, index_map, operand batching dims,
    indices batching dims)."""
    if indices.dtype.kind not in "iu":
        raise ShapeError(f"{name}: indices must be integers, got {indices}")
    if indices.ndim < 1:
        raise ShapeError(f"{name}: indices {indices} need a last dimension holding the index "
                         "vector (reshape a scalar index to shape (1,))")
    if indices.shape[-1] != len(index_map):
        raise ShapeError(f"{name}: the index vector of {indices} has {indices.shape[-1]} "
                         f"entries but {names[1]}={index_map} names {len(index_map)}")
    _check_dims(name, names[0], dropped, operand.ndim, sorted_=True)
    _check_dims(name, names[1], index_map, operand.ndim)
    _check_dims(name, names[2], operand_batching_dims, operand.ndim, sorted_=True)
    _check_dims(name, names[3], indices_batching_dims, indices.ndim - 1)
    if set(dropped) & set(operand_batching_dims) or set(index_map) & set(operand_batching_dims):
        raise ShapeError(f"{name}: {names[2]}={operand_batching_dims} overlaps "
                         f"{names[0]}={dropped} or {names[1]}={index_map}")
    if len(operand_batching_dims) != len(indices_batching_dims) or any(
            operand.shape[o] != indices.shape[i]
            for o, i in zip(operand_batching_dims, indices_batching_dims, strict=True)):
        raise ShapeError(f"{name}: {names[2]}={operand_batching_dims} and "
                         f"{names[3]}={indices_batching_dims} must pair up dimensions of "
                         f"equal size of operand {operand} and indices {indices}")


def _gather_rule(operand: TensorType, indices: TensorType, *, offset_dims, collapsed_slice_dims,
                 start_index_map, slice_sizes, operand_batching_dims=(),
                 start_indices_batching_dims=(), mode="clip") -> TensorType:
    if mode not in _GATHER_MODES:
        raise ShapeError(f"gather: mode={mode!r} is not one of {_GATHER_MODES}")
    _check_indexing("gather", operand, indices, start_index_map, collapsed_slice_dims,
                    operand_batching_dims, start_indices_batching_dims,
                    ("collapsed_slice_dims", "start_index_map", "operand_batching_dims",
                     "start_indices_batching_dims"))
    if len(slice_sizes) != operand.ndim or any(
            not 0 <= k <= n for k, n in zip(slice_sizes, operand.shape, strict=True)):
        raise ShapeError(f"gather: slice_sizes={slice_sizes} do not fit operand {operand}")
    if any(slice_sizes[d] != 1 for d in collapsed_slice_dims + operand_batching_dims):
        raise ShapeError(f"gather: slice_sizes={slice_sizes} must be 1 in collapsed and "
                         "batching dimensions")
    window = [k for d, k in enumerate(slice_sizes)
              if d not in collapsed_slice_dims and d not in operand_batching_dims]
    rank = indices.ndim - 1 + len(window)
    _check_dims("gather", "offset_dims", offset_dims, rank, sorted_=True)
    if len(offset_dims) != len(window):
        raise ShapeError(f"gather: offset_dims={offset_dims} must name one output dimension "
                         f"per window dimension of slice_sizes={slice_sizes} ({len(window)})")
    batch, win = iter(indices.shape[:-1]), iter(window)
    return TensorType(tuple(next(win) if p in offset_dims else next(batch)
                            for p in range(rank)), operand.dtype)


def _scatter_window(ndim: int, updates_shape: tuple[int, ...], update_window_dims,
                    inserted_window_dims, operand_batching_dims) -> tuple[int, ...]:
    """The update window's size in each of the operand's ``ndim`` dimensions (1 where
    inserted or batching)."""
    sizes = iter(updates_shape[d] for d in update_window_dims)
    return tuple(1 if d in inserted_window_dims or d in operand_batching_dims else next(sizes)
                 for d in range(ndim))


def _scatter_rule(operand: TensorType, indices: TensorType, updates: TensorType, *,
                  update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
                  operand_batching_dims=(), scatter_indices_batching_dims=(), combine="set",
                  mode="drop") -> TensorType:
    if combine not in COMBINES:
        raise ShapeError(f"scatter: combine={combine!r} is not one of {COMBINES}")
    if mode not in _SCATTER_MODES:
        raise ShapeError(f"scatter: mode={mode!r} is not one of {_SCATTER_MODES}")
    if updates.dtype != operand.dtype:
        raise ShapeError(f"scatter: updates {updates} and operand {operand} need one dtype")
    if combine != "set" and operand.dtype == np.bool_:
        raise ShapeError(f"scatter: combine={combine!r} does not accept dtype bool")
    _check_indexing("scatter", operand, indices, scatter_dims_to_operand_dims,
                    inserted_window_dims, operand_batching_dims, scatter_indices_batching_dims,
                    ("inserted_window_dims", "scatter_dims_to_operand_dims",
                     "operand_batching_dims", "scatter_indices_batching_dims"))
    _check_dims("scatter", "update_window_dims", update_window_dims, updates.ndim, sorted_=True)
    n_window = operand.ndim - len(inserted_window_dims) - len(operand_batching_dims)
    scatter_shape = tuple(n for d, n in enumerate(updates.shape) if d not in update_window_dims)
    if len(update_window_dims) != n_window or scatter_shape != indices.shape[:-1]:
        raise ShapeError(
            f"scatter: updates {updates} must have {n_window} window dimensions "
            f"(update_window_dims={update_window_dims}) and the others equal to the indices' "
            f"batch shape {indices.shape[:-1]} (indices {indices}, operand {operand})")
    window = _scatter_window(operand.ndim, updates.shape, update_window_dims,
                             inserted_window_dims, operand_batching_dims)
    if any(k > n for k, n in zip(window, operand.shape, strict=True)):
        raise ShapeError(f"scatter: update windows of {updates} do not fit inside {operand}")
    return operand


# --- NumPy references ------------------------------------------------------------------------

def _window_starts(operand_shape, indices, index_map, window, operand_batching_dims,
                   indices_batching_dims, clamp: bool):
    """Per operand dimension, the window start at every batch position (arrays of the
    indices' batch shape), and whether each window is in bounds."""
    batch_shape = indices.shape[:-1]
    starts = [np.zeros(batch_shape, np.int64) for _ in operand_shape]
    in_bounds = np.ones(batch_shape, bool)
    for k, d in enumerate(index_map):
        start = indices[..., k].astype(np.int64)
        upper = operand_shape[d] - window[d]
        in_bounds &= (start >= 0) & (start <= upper)
        starts[d] = np.clip(start, 0, upper) if clamp else start
    for o, i in zip(operand_batching_dims, indices_batching_dims, strict=True):
        position = [1] * len(batch_shape)
        position[i] = batch_shape[i]
        starts[o] = np.broadcast_to(np.arange(batch_shape[i]).reshape(position), batch_shape)
    return starts, in_bounds


def _window_coords(starts, window, batch_shape, operand_shape):
    """Index arrays of shape batch_shape + window: start + offset, per operand dim.
    Coordinates of out-of-bounds windows are clipped only to keep NumPy indexing valid."""
    nb, rank = len(batch_shape), len(window)
    coords = []
    for d, (start, size) in enumerate(zip(starts, window, strict=True)):
        offset = np.arange(size).reshape((1,) * nb + tuple(size if e == d else 1
                                                           for e in range(rank)))
        full = start.reshape(batch_shape + (1,) * rank) + offset
        coords.append(np.broadcast_to(np.clip(full, 0, max(operand_shape[d] - 1, 0)),
                                      batch_shape + tuple(window)))
    return coords


def _gather_impl(operand, indices, *, offset_dims, collapsed_slice_dims, start_index_map,
                 slice_sizes, operand_batching_dims=(), start_indices_batching_dims=(),
                 mode="clip"):
    operand, indices = np.asarray(operand), np.asarray(indices)
    batch_shape, nb = indices.shape[:-1], indices.ndim - 1
    starts, in_bounds = _window_starts(operand.shape, indices, start_index_map, slice_sizes,
                                       operand_batching_dims, start_indices_batching_dims,
                                       clamp=mode == "clip")
    values = operand[tuple(_window_coords(starts, slice_sizes, batch_shape, operand.shape))]
    if mode == "fill":
        mask = in_bounds.reshape(batch_shape + (1,) * operand.ndim)
        values = np.where(mask, values, np.zeros((), operand.dtype))
    # Drop the size-1 collapsed and batching dims, then interleave batch and offset dims.
    values = values.squeeze(tuple(nb + d for d in collapsed_slice_dims + operand_batching_dims))
    rank = values.ndim
    batch_axes = iter(range(nb))
    perm = [nb + offset_dims.index(p) if p in offset_dims else next(batch_axes)
            for p in range(rank)]
    return np.transpose(values, perm).copy()


_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _scatter_impl(operand, indices, updates, *, update_window_dims, inserted_window_dims,
                  scatter_dims_to_operand_dims, operand_batching_dims=(),
                  scatter_indices_batching_dims=(), combine="set", mode="drop"):
    operand, indices, updates = map(np.asarray, (operand, indices, updates))
    batch_shape = indices.shape[:-1]
    window = _scatter_window(operand.ndim, updates.shape, update_window_dims,
                             inserted_window_dims, operand_batching_dims)
    # updates as batch_shape + window (inserted and batching dims as size 1)
    scatter_axes = [d for d in range(updates.ndim) if d not in update_window_dims]
    values = np.transpose(updates, scatter_axes + list(update_window_dims))
    values = values.reshape(batch_shape + window)
    starts, in_bounds = _window_starts(operand.shape, indices, scatter_dims_to_operand_dims,
                                       window, operand_batching_dims,
                                       scatter_indices_batching_dims, clamp=mode == "clip")
    keep = in_bounds if mode == "drop" else np.ones(batch_shape, bool)
    coords = tuple(c[keep] for c in _window_coords(starts, window, batch_shape, operand.shape))
    out = operand.copy()
    if combine == "set":
        out[coords] = values[keep]          # later duplicates win; see Note [duplicate indices]
    else:
        _UFUNCS[combine].at(out, coords, values[keep])
    return out


gather_p = declare("gather", _gather_rule, _gather_impl)
scatter_p = declare("scatter", _scatter_rule, _scatter_impl)


def _with_defaults(prim: Any, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with every defaulted param spelled out."""
    defaults = {"operand_batching_dims": (), "mode": "clip" if prim is gather_p else "drop"}
    defaults["start_indices_batching_dims" if prim is gather_p
             else "scatter_indices_batching_dims"] = ()
    if prim is scatter_p:
        defaults["combine"] = "set"
    return {**defaults, **params}


def _shift(dims: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d + 1 for d in dims)


# --- batching --------------------------------------------------------------------------------
# No loops over the batch. A batched operand with unbatched indices takes the batch
# dimension as one more window dimension (start 0, size B, always in bounds). Batched
# indices make the batch an operand batching dimension paired with an indices batching
# dimension, materialising the batch on the operand (and updates) when they lack it.

def _gather_batch_rule(b, axis, args, dims, **params):
    p = _with_defaults(gather_p, params)
    (operand, indices), (od, idd) = args, dims
    offset, collapsed = p["offset_dims"], p["collapsed_slice_dims"]
    index_map, sizes = p["start_index_map"], p["slice_sizes"]
    obd, ibd = p["operand_batching_dims"], p["start_indices_batching_dims"]
    if idd is None:           # batch is the first window dim, and output dim 0
        operand = move_axis(b, operand, od, 0)
        new = dict(offset_dims=(0, *_shift(offset)), collapsed_slice_dims=_shift(collapsed),
                   start_index_map=_shift(index_map), slice_sizes=(axis.size, *sizes),
                   operand_batching_dims=_shift(obd), start_indices_batching_dims=ibd)
    elif od is None:          # batch is the first batch dim of indices, and of the output
        indices = move_axis(b, indices, idd, 0)
        new = dict(offset_dims=_shift(offset), collapsed_slice_dims=collapsed,
                   start_index_map=index_map, slice_sizes=sizes,
                   operand_batching_dims=obd, start_indices_batching_dims=_shift(ibd))
    else:                     # both: a batching dimension pair
        operand, indices = move_axis(b, operand, od, 0), move_axis(b, indices, idd, 0)
        new = dict(offset_dims=_shift(offset), collapsed_slice_dims=_shift(collapsed),
                   start_index_map=_shift(index_map), slice_sizes=(1, *sizes),
                   operand_batching_dims=(0, *_shift(obd)),
                   start_indices_batching_dims=(0, *_shift(ibd)))
    return [b.gather(operand, indices, **new, mode=p["mode"])], [0]


def _scatter_batch_rule(b, axis, args, dims, **params):
    p = _with_defaults(scatter_p, params)
    (operand, indices, updates), (od, idd, ud) = args, dims
    operand = batch_to_front(b, operand, od, axis.size)     # the result varies along the batch
    updates = batch_to_front(b, updates, ud, axis.size)
    window, inserted = p["update_window_dims"], p["inserted_window_dims"]
    index_map = p["scatter_dims_to_operand_dims"]
    obd, ibd = p["operand_batching_dims"], p["scatter_indices_batching_dims"]
    if idd is None:           # batch is the first window dim of operand and updates
        new = dict(update_window_dims=(0, *_shift(window)), inserted_window_dims=_shift(inserted),
                   scatter_dims_to_operand_dims=_shift(index_map),
                   operand_batching_dims=_shift(obd), scatter_indices_batching_dims=ibd)
    else:                     # a batching dimension pair; updates' dim 0 is a scatter dim
        indices = move_axis(b, indices, idd, 0)
        new = dict(update_window_dims=_shift(window), inserted_window_dims=_shift(inserted),
                   scatter_dims_to_operand_dims=_shift(index_map),
                   operand_batching_dims=(0, *_shift(obd)),
                   scatter_indices_batching_dims=(0, *_shift(ibd)))
    return [b.scatter(operand, indices, updates, **new, combine=p["combine"],
                      mode=p["mode"])], [0]


batch_rules[gather_p] = _gather_batch_rule
batch_rules[scatter_p] = _scatter_batch_rule


# --- autodiff --------------------------------------------------------------------------------
# gather and scatter-add are each other's transposes (with the matching out-of-bounds
# mode, see Note [out-of-bounds windows]). Indices get no cotangent.

def _gather_vjp(b, ct, operand, indices, **params):
    p = _with_defaults(gather_p, params)
    ct_operand = b.scatter(
        zeros(b, operand.type), indices, ct, update_window_dims=p["offset_dims"],
        inserted_window_dims=p["collapsed_slice_dims"],
        scatter_dims_to_operand_dims=p["start_index_map"],
        operand_batching_dims=p["operand_batching_dims"],
        scatter_indices_batching_dims=p["start_indices_batching_dims"],
        combine="add", mode="clip" if p["mode"] == "clip" else "drop")
    return [ct_operand, None]


def _update_windows(b, v, indices, operand_type, updates_type, p):
    """What each update window of the scatter ``p`` lands on in ``v`` (0 if dropped)."""
    window = _scatter_window(operand_type.ndim, updates_type.shape, p["update_window_dims"],
                             p["inserted_window_dims"], p["operand_batching_dims"])
    return b.gather(v, indices, offset_dims=p["update_window_dims"],
                    collapsed_slice_dims=p["inserted_window_dims"],
                    start_index_map=p["scatter_dims_to_operand_dims"],
                    slice_sizes=window, operand_batching_dims=p["operand_batching_dims"],
                    start_indices_batching_dims=p["scatter_indices_batching_dims"],
                    mode="fill" if p["mode"] == "drop" else "clip")


def _extremum_hits(b, operand, indices, updates, p):
    """For a 'min'/'max' scatter: which operand elements and which updates equal the
    result where they land (as 0/1 floats), and how many do per element (at least 1).
    Each of them gets an equal share of the element's cotangent, as in JAX."""
    out = b.scatter(operand, indices, updates, **p)
    dtype = operand.type.dtype
    operand_hits = b.convert(b.eq(operand, out), new_dtype=dtype)
    landed_on = _update_windows(b, out, indices, operand.type, updates.type, p)
    update_hits = b.convert(b.eq(updates, landed_on), new_dtype=dtype)
    count = b.add(operand_hits, b.scatter(zeros(b, operand.type), indices, update_hits,
                                          **{**p, "combine": "add"}))
    return operand_hits, update_hits, b.max(count, lit(1, dtype))  # 0 only at a NaN


def _scatter_vjp(b, ct, operand, indices, updates, **params):
    p = _with_defaults(scatter_p, params)
    if p["combine"] not in ("set", "add", "mul", "min", "max"):
        raise NotImplementedError(f"grad: scatter with combine={p['combine']!r} is not "
                                  "differentiable (only 'set', 'add', 'mul', 'min' and 'max' are)")

    def windows_of(v):                # what each update window lands on, 0 if dropped
        return _update_windows(b, v, indices, operand.type, updates.type, p)
    if p["combine"] == "mul":
        return _scatter_mul_vjp(b, ct, operand, indices, updates, p, windows_of)
    if p["combine"] in ("min", "max"):
        operand_hits, update_hits, count = _extremum_hits(b, operand, indices, updates, p)
        share = b.div(ct, count)
        return [b.mul(operand_hits, share), None, b.mul(update_hits, windows_of(share))]
    ct_updates = windows_of(ct)
    if p["combine"] == "add":
        return [ct, None, ct_updates]
    # 'set': overwritten elements pass no cotangent back. See Note [duplicate indices].
    ct_operand = b.scatter(ct, indices, zeros(b, updates.type), **p)
    return [ct_operand, None, ct_updates]


def _scatter_mul_vjp(b, ct, x, indices, u, p, windows_of):
    """out = x * P, P[i] the product of the updates that land at i: x gets ct * P, and an
    update u_j landing at i gets ct[i] * x[i] times the product of the others there,
    computed without dividing by a zero update (as in _scatter_mul_jvp): 1 when u_j is
    alone; with no zero there, P / u_j; if u_j is the only zero, the product of the
    nonzero ones; else 0. Exact for repeated indices, where JAX has no rule."""
    ut, xt = u.type, x.type
    mul, add = {**p, "combine": "mul"}, {**p, "combine": "add"}
    is_zero = b.eq(u, _filled(b, ut, 0))
    safe = b.select(is_zero, _filled(b, ut, 1), u)
    product = windows_of(b.scatter(_filled(b, xt, 1), indices, safe, **mul))
    zeros_there = windows_of(b.scatter(_filled(b, xt, 0), indices,
                                       b.convert(is_zero, new_dtype=ut.dtype), **add))
    alone = b.eq(windows_of(b.scatter(_filled(b, xt, 0), indices, _filled(b, ut, 1), **add)),
                 _filled(b, ut, 1))
    zero, one = _filled(b, ut, 0), _filled(b, ut, 1)
    others = b.select(is_zero, b.select(b.eq(zeros_there, one), product, zero),
                      b.select(b.eq(zeros_there, zero), b.div(product, safe), zero))
    others = b.select(alone, one, others)
    return [b.scatter(ct, indices, u, **mul), None, b.mul(windows_of(b.mul(ct, x)), others)]


jvp_rules[gather_p] = linear_jvp(gather_p, 0)
def _filled(b, t: TensorType, value: Any):
    return b.broadcast_in_dim(lit(value, t.dtype), shape=t.shape, broadcast_dimensions=())


def _scatter_mul_jvp(b, primals, tangents, **params):
    """out = x * P, P[i] the product of the updates that land at i. d out = dx * P + x * dP,
    where dP[i] = sum_j du_j * prod_{k != j} u_k over the updates at i, computed without
    dividing by a zero update: with none at i it is P * sum_j du_j / u_j; with one zero
    u_j it is du_j times the product of the others; with two or more it is 0."""
    x, indices, u = primals
    dx, _, du = tangents
    mul, add = {**params, "combine": "mul"}, {**params, "combine": "add"}
    out = b.scatter(x, indices, u, **mul)
    tangent = None if dx is None else b.scatter(dx, indices, u, **mul)
    if du is not None:
        ut, xt = u.type, x.type
        is_zero = b.eq(u, _filled(b, ut, 0))
        safe = b.select(is_zero, _filled(b, ut, 1), u)
        nonzero_product = b.scatter(_filled(b, xt, 1), indices, safe, **mul)
        zero_count = b.scatter(_filled(b, xt, 0), indices, b.convert(is_zero, new_dtype=ut.dtype),
                               **add)
        none_zero = b.scatter(_filled(b, xt, 0), indices,
                              b.select(is_zero, _filled(b, ut, 0), b.div(du, safe)), **add)
        one_zero = b.scatter(_filled(b, xt, 0), indices,
                             b.select(is_zero, du, _filled(b, ut, 0)), **add)
        d_product = b.select(b.eq(zero_count, _filled(b, xt, 0)),
                             b.mul(nonzero_product, none_zero),
                             b.select(b.eq(zero_count, _filled(b, xt, 1)),
                                      b.mul(nonzero_product, one_zero), _filled(b, xt, 0)))
        term = b.mul(x, d_product)
        tangent = term if tangent is None else b.add(tangent, term)
    return [out], [tangent]


def _scatter_jvp(b, primals, tangents, **params):
    # 'set' and 'add' are linear in (operand, updates) jointly; the indices are constant.
    p = _with_defaults(scatter_p, params)
    if p["combine"] in ("min", "max"):        # the transpose of _scatter_vjp's shares
        operand, indices, updates = primals
        t_operand, _, t_updates = tangents
        out = b.scatter(operand, indices, updates, **p)
        operand_hits, update_hits, count = _extremum_hits(b, operand, indices, updates, p)
        total = zeros(b, operand.type)
        if t_operand is not None:
            total = b.mul(operand_hits, t_operand)
        if t_updates is not None:
            total = b.add(total, b.scatter(zeros(b, operand.type), indices,
                                           b.mul(update_hits, t_updates),
                                           **{**p, "combine": "add"}))
        return [out], [b.div(total, count)]
    if p["combine"] == "mul":
        return _scatter_mul_jvp(b, primals, tangents, **params)
    if p["combine"] not in ("set", "add"):
        raise NotImplementedError(f"jvp: scatter with combine={params['combine']!r} is not "
                                  "differentiable (only 'set', 'add', 'mul', 'min' and 'max' are)")
    return linear_jvp(scatter_p, 0, 2)(b, primals, tangents, **params)


vjp_rules[gather_p] = _gather_vjp
jvp_rules[scatter_p] = _scatter_jvp
vjp_rules[scatter_p] = _scatter_vjp


# --- lowering --------------------------------------------------------------------------------

def _upper_bounds(ctx: LoweringContext, indices_type: TensorType, operand_shape, window,
                  index_map) -> ir.Value:
    """operand.shape[d] - window[d] per index-vector entry, broadcast to the indices' shape."""
    bounds = np.array([operand_shape[d] - window[d] for d in index_map], indices_type.dtype)
    vector = hlo.ConstantOp(ir.DenseElementsAttr.get(
        bounds, type=mlir_type(TensorType(bounds.shape, bounds.dtype)))).result
    return ctx.broadcast(vector, TensorType(bounds.shape, bounds.dtype), indices_type,
                         [indices_type.ndim - 1])


def _compare(x: ir.Value, y: ir.Value, direction: str, dtype: np.dtype) -> ir.Value:
    kind = "UNSIGNED" if dtype_kind(dtype) == "u" else "SIGNED"
    return hlo.CompareOp(x, y, hlo.ComparisonDirectionAttr.get(direction),
                         compare_type=hlo.ComparisonTypeAttr.get(kind)).result


def _in_bounds(ctx: LoweringContext, indices: ir.Value, indices_type: TensorType,
               upper: ir.Value) -> ir.Value:
    """A bool per index vector: every entry lies in [0, upper]."""
    zero = ctx.constant(0, indices_type)
    ok = hlo.AndOp(_compare(indices, zero, "GE", indices_type.dtype),
                   _compare(indices, upper, "LE", indices_type.dtype)).result
    scalar = TensorType((), np.dtype(np.bool_))
    op = hlo.ReduceOp([mlir_type(TensorType(indices_type.shape[:-1], scalar.dtype))], [ok],
                      [ctx.constant(True, scalar)],
                      ir.DenseI64ArrayAttr.get([indices_type.ndim - 1]))
    block = op.regions[0].blocks.append(mlir_type(scalar), mlir_type(scalar))
    with ir.InsertionPoint(block):
        hlo.ReturnOp([hlo.AndOp(*block.arguments).result])
    return op.results[0]


def _gather_lowering(ctx, eqn, operand, indices):
    p = _with_defaults(gather_p, eqn.params)
    operand_type, indices_type = (a.type for a in eqn.inputs)
    out_type = eqn.outputs[0].type
    numbers = hlo.GatherDimensionNumbers.get(
        offset_dims=list(p["offset_dims"]), collapsed_slice_dims=list(p["collapsed_slice_dims"]),
        operand_batching_dims=list(p["operand_batching_dims"]),
        start_indices_batching_dims=list(p["start_indices_batching_dims"]),
        start_index_map=list(p["start_index_map"]), index_vector_dim=indices_type.ndim - 1)
    out = hlo.GatherOp(operand, indices, numbers, ir.DenseI64ArrayAttr.get(list(p["slice_sizes"])),
                       indices_are_sorted=False, results=[mlir_type(out_type)]).result
    if p["mode"] == "clip":            # XLA's gather clamps by itself
        return out
    upper = _upper_bounds(ctx, indices_type, operand_type.shape, p["slice_sizes"],
                          p["start_index_map"])
    mask = _in_bounds(ctx, indices, indices_type, upper)
    batch_positions = [d for d in range(out_type.ndim) if d not in p["offset_dims"]]
    mask = ctx.broadcast(mask, TensorType(indices_type.shape[:-1], np.dtype(np.bool_)),
                         TensorType(out_type.shape, np.dtype(np.bool_)), batch_positions)
    return hlo.SelectOp(mask, out, ctx.constant(0, out_type)).result


_COMBINE_OPS = {"add": hlo.AddOp, "mul": hlo.MulOp, "min": hlo.MinOp, "max": hlo.MaxOp}


def _scatter_lowering(ctx, eqn, operand, indices, updates):
    p = _with_defaults(scatter_p, eqn.params)
    operand_type, indices_type, updates_type = (a.type for a in eqn.inputs)
    if p["mode"] == "clip":            # XLA's scatter drops; clamp the starts first
        window = _scatter_window(operand_type.ndim, updates_type.shape, p["update_window_dims"],
                                 p["inserted_window_dims"], p["operand_batching_dims"])
        upper = _upper_bounds(ctx, indices_type, operand_type.shape, window,
                              p["scatter_dims_to_operand_dims"])
        indices = hlo.ClampOp(ctx.constant(0, indices_type), indices, upper).result
    numbers = hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(p["update_window_dims"]),
        inserted_window_dims=list(p["inserted_window_dims"]),
        input_batching_dims=list(p["operand_batching_dims"]),
        scatter_indices_batching_dims=list(p["scatter_indices_batching_dims"]),
        scattered_dims_to_operand_dims=list(p["scatter_dims_to_operand_dims"]),
        index_vector_dim=indices_type.ndim - 1)
    op = hlo.ScatterOp([mlir_type(operand_type)], [operand], indices, [updates], numbers,
                       indices_are_sorted=False, unique_indices=False)
    scalar = mlir_type(TensorType((), operand_type.dtype))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        old, new = block.arguments
        result = new if p["combine"] == "set" else _COMBINE_OPS[p["combine"]](old, new).result
        hlo.ReturnOp([result])
    return op.results[0]


lower_rules[gather_p] = _gather_lowering
lower_rules[scatter_p] = _scatter_lowering
