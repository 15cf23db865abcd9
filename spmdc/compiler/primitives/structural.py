"""Shape-changing primitives: broadcast_in_dim, transpose, reshape, squeeze, expand_dims,
rev, iota, concatenate, pad, slice.

They move or copy elements without arithmetic, so each VJP is another structural op (or a
sum, for broadcasts) and each batching rule adds the batch dimension to the params. The
slices with run-time start indices live in primitives/dynamic_slicing.py.
"""
from __future__ import annotations

import numpy as np

from ..builder import lit
from ..ir import TensorType, dtype_kind, dtype_name
from ..passes.autodiff import nondifferentiable, vjp_rules, zeros
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import batch_rules, batch_to_front, move_axis
from ..stablehlo import hlo, ir, lower_rules
from .core import ShapeError, declare, same_dtype


def _i64s(values) -> ir.DenseI64ArrayAttr:
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def _axes_check(name: str, x: TensorType, axes: tuple[int, ...], rank: int) -> None:
    if any(not 0 <= a < rank for a in axes) or len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: dimensions {axes} are out of range or repeated for "
                         f"operand {x} (valid: 0..{rank - 1}, each at most once)")

# --- broadcast_in_dim ------------------------------------------------------------------------

def _broadcast_in_dim_rule(x: TensorType, *, shape: tuple[int, ...],
                           broadcast_dimensions: tuple[int, ...]) -> TensorType:
    if len(broadcast_dimensions) != x.ndim:
        raise ShapeError(f"broadcast_in_dim: operand {x} needs {x.ndim} broadcast_dimensions, "
                         f"got {broadcast_dimensions}")
    for src, dst in enumerate(broadcast_dimensions):
        if not 0 <= dst < len(shape) or x.shape[src] not in (1, shape[dst]):
            raise ShapeError(f"broadcast_in_dim: cannot broadcast {x} to shape {shape} "
                             f"with broadcast_dimensions={broadcast_dimensions}")
    if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
        raise ShapeError(f"broadcast_in_dim: broadcast_dimensions {broadcast_dimensions} "
                         "must be strictly increasing")
    return TensorType(tuple(shape), x.dtype)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    expanded = np.reshape(x, [x.shape[broadcast_dimensions.index(d)]
                              if d in broadcast_dimensions else 1 for d in range(len(shape))])
    return np.broadcast_to(expanded, shape).copy()


def _broadcast_in_dim_vjp(b, ct, x, *, shape, broadcast_dimensions):
    # Sum over the new dimensions and over the size-1 dimensions that were stretched; the
    # stretched ones are summed away, so a reshape puts their 1s back.
    stretched = {dst for src, dst in enumerate(broadcast_dimensions)
                 if x.type.shape[src] == 1 and shape[dst] != 1}
    axes = tuple(d for d in range(len(shape))
                 if d not in broadcast_dimensions or d in stretched)
    summed = b.reduce_sum(ct, axes=axes) if axes else ct
    if summed.type.shape != x.type.shape:
        summed = b.reshape(summed, new_sizes=x.type.shape)
    return [summed]


def _broadcast_in_dim_batch(b, axis, args, dims, *, shape, broadcast_dimensions):
    x = move_axis(b, args[0], dims[0], 0)
    return [b.broadcast_in_dim(x, shape=(axis.size, *shape), broadcast_dimensions=(
        0, *(d + 1 for d in broadcast_dimensions)))], [0]


broadcast_in_dim_p = declare("broadcast_in_dim", _broadcast_in_dim_rule, _broadcast_in_dim_impl)
batch_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch
jvp_rules[broadcast_in_dim_p] = linear_jvp(broadcast_in_dim_p)
vjp_rules[broadcast_in_dim_p] = _broadcast_in_dim_vjp
lower_rules[broadcast_in_dim_p] = lambda ctx, eqn, x: hlo.BroadcastInDimOp(
    ctx.mlir_type(eqn.outputs[0].type), x, _i64s(eqn.params["broadcast_dimensions"])).result

# --- transpose -------------------------------------------------------------------------------

def _transpose_rule(x: TensorType, *, permutation: tuple[int, ...]) -> TensorType:
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"transpose: {permutation} is not a permutation of the axes of {x}")
    return TensorType(tuple(x.shape[p] for p in permutation), x.dtype)


def _transpose_batch(b, axis, args, dims, *, permutation):
    d = dims[0]   # the batch dimension goes first; the others keep their order
    return [b.transpose(args[0], permutation=(d, *(p + (p >= d) for p in permutation)))], [0]


transpose_p = declare("transpose", _transpose_rule,
                      lambda x, *, permutation: np.transpose(x, permutation))
batch_rules[transpose_p] = _transpose_batch
jvp_rules[transpose_p] = linear_jvp(transpose_p)
vjp_rules[transpose_p] = lambda b, ct, x, *, permutation: [
    b.transpose(ct, permutation=tuple(int(i) for i in np.argsort(permutation)))]
lower_rules[transpose_p] = lambda ctx, eqn, x: hlo.TransposeOp(
    x, _i64s(eqn.params["permutation"])).result

# --- reshape, squeeze, expand_dims --------------------------------------------------------------

def _reshape_rule(x: TensorType, *, new_sizes: tuple[int, ...]) -> TensorType:
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size or any(d < 0 for d in new_sizes):
        raise ShapeError(f"reshape: cannot reshape {x} ({x.size} elements) to {new_sizes}")
    return TensorType(tuple(new_sizes), x.dtype)


def _squeeze_rule(x: TensorType, *, dimensions: tuple[int, ...]) -> TensorType:
    _axes_check("squeeze", x, dimensions, x.ndim)
    if any(x.shape[d] != 1 for d in dimensions):
        raise ShapeError(f"squeeze: dimensions {dimensions} of {x} are not all of size 1")
    return TensorType(tuple(s for d, s in enumerate(x.shape) if d not in dimensions), x.dtype)


def _expand_dims_rule(x: TensorType, *, dimensions: tuple[int, ...]) -> TensorType:
    # ``dimensions`` are positions in the output, like numpy.expand_dims.
    rank = x.ndim + len(dimensions)
    _axes_check("expand_dims", x, dimensions, rank)
    sizes = iter(x.shape)
    return TensorType(tuple(1 if d in dimensions else next(sizes) for d in range(rank)),
                      x.dtype)


def _front_batch(prim):
    """Batch rule for reshape, squeeze and expand_dims: with the batch dimension moved to
    the front, ``new_sizes`` gains the batch size in front and ``dimensions`` shift by one."""
    def rule(b, axis, args, dims, **params):
        x = move_axis(b, args[0], dims[0], 0)
        if "new_sizes" in params:
            params["new_sizes"] = (axis.size, *params["new_sizes"])
        if "dimensions" in params:
            params["dimensions"] = tuple(d + 1 for d in params["dimensions"])
        return [b.bind(prim, x, **params)], [0]
    return rule


def _reshape_lowering(ctx, eqn, x):
    return hlo.ReshapeOp(ctx.mlir_type(eqn.outputs[0].type), x).result


reshape_p = declare("reshape", _reshape_rule, lambda x, *, new_sizes: np.reshape(x, new_sizes))
batch_rules[reshape_p] = _front_batch(reshape_p)
jvp_rules[reshape_p] = linear_jvp(reshape_p)
vjp_rules[reshape_p] = lambda b, ct, x, *, new_sizes: [b.reshape(ct, new_sizes=x.type.shape)]
lower_rules[reshape_p] = _reshape_lowering

squeeze_p = declare("squeeze", _squeeze_rule,
                    lambda x, *, dimensions: np.squeeze(x, axis=dimensions))
batch_rules[squeeze_p] = _front_batch(squeeze_p)
jvp_rules[squeeze_p] = linear_jvp(squeeze_p)
vjp_rules[squeeze_p] = lambda b, ct, x, *, dimensions: [b.reshape(ct, new_sizes=x.type.shape)]
lower_rules[squeeze_p] = _reshape_lowering

expand_dims_p = declare("expand_dims", _expand_dims_rule,
                        lambda x, *, dimensions: np.expand_dims(x, dimensions))
batch_rules[expand_dims_p] = _front_batch(expand_dims_p)
jvp_rules[expand_dims_p] = linear_jvp(expand_dims_p)
vjp_rules[expand_dims_p] = lambda b, ct, x, *, dimensions: [
    b.reshape(ct, new_sizes=x.type.shape)]
lower_rules[expand_dims_p] = _reshape_lowering

# --- rev -------------------------------------------------------------------------------------

def _rev_rule(x: TensorType, *, dimensions: tuple[int, ...]) -> TensorType:
    _axes_check("rev", x, dimensions, x.ndim)
    return x


rev_p = declare("rev", _rev_rule, lambda x, *, dimensions: np.flip(x, dimensions).copy())
batch_rules[rev_p] = lambda b, axis, args, dims, *, dimensions: (
    [b.rev(args[0], dimensions=tuple(a + (a >= dims[0]) for a in dimensions))], [dims[0]])
jvp_rules[rev_p] = linear_jvp(rev_p)
vjp_rules[rev_p] = lambda b, ct, x, *, dimensions: [b.rev(ct, dimensions=dimensions)]
lower_rules[rev_p] = lambda ctx, eqn, x: hlo.ReverseOp(x, _i64s(eqn.params["dimensions"])).result

# --- iota ------------------------------------------------------------------------------------

def _iota_rule(*, dtype: np.dtype, shape: tuple[int, ...], dimension: int) -> TensorType:
    dtype = np.dtype(dtype)
    if dtype_kind(dtype) not in "iuf":
        raise ShapeError(f"iota: dtype {dtype_name(dtype)} is not an integer or float type")
    if not 0 <= dimension < len(shape) or any(s < 0 for s in shape):
        raise ShapeError(f"iota: dimension {dimension} is out of range for shape {shape}")
    return TensorType(tuple(shape), dtype)


def _iota_impl(*, dtype, shape, dimension):
    line = np.arange(shape[dimension]).astype(dtype)
    return np.broadcast_to(line.reshape([-1 if d == dimension else 1
                                         for d in range(len(shape))]), shape).copy()


iota_p = declare("iota", _iota_rule, _iota_impl)
# iota has no operands, so vmap copies it unbatched and never asks; the rule says the same.
batch_rules[iota_p] = lambda b, axis, args, dims, **params: ([b.iota(**params)], [None])
nondifferentiable[iota_p] = "iota has no operands: its output is a constant"
lower_rules[iota_p] = lambda ctx, eqn: hlo.IotaOp(
    ctx.mlir_type(eqn.outputs[0].type), eqn.params["dimension"]).result

# --- concatenate -----------------------------------------------------------------------------

def _concatenate_rule(*xs: TensorType, dimension: int) -> TensorType:
    if not xs:
        raise ShapeError("concatenate: needs at least one operand")
    same_dtype("concatenate", *xs)
    x = xs[0]
    if not 0 <= dimension < x.ndim:
        raise ShapeError(f"concatenate: dimension {dimension} is out of range for {x}")
    for y in xs:
        if y.ndim != x.ndim or any(a != c for d, (a, c) in enumerate(
                zip(x.shape, y.shape, strict=True)) if d != dimension):
            raise ShapeError(f"concatenate: operands {', '.join(map(str, xs))} differ in a "
                             f"dimension other than {dimension}")
    shape = list(x.shape)
    shape[dimension] = sum(y.shape[dimension] for y in xs)
    return TensorType(tuple(shape), x.dtype)


def _concatenate_vjp(b, ct, *xs, dimension):
    cts, start = [], 0
    for x in xs:
        stop = start + x.type.shape[dimension]
        cts.append(b.slice(ct, start_indices=tuple(start if d == dimension else 0
                                                   for d in range(ct.type.ndim)),
                           limit_indices=tuple(stop if d == dimension else s
                                               for d, s in enumerate(ct.type.shape)),
                           strides=None))
        start = stop
    return cts


concatenate_p = declare("concatenate", _concatenate_rule,
                        lambda *xs, dimension: np.concatenate(xs, axis=dimension))
batch_rules[concatenate_p] = lambda b, axis, args, dims, *, dimension: (
    [b.concatenate(*(batch_to_front(b, x, d, axis.size) for x, d in zip(args, dims, strict=True)),
                   dimension=dimension + 1)], [0])
jvp_rules[concatenate_p] = linear_jvp(concatenate_p)
vjp_rules[concatenate_p] = _concatenate_vjp
lower_rules[concatenate_p] = lambda ctx, eqn, *xs: hlo.ConcatenateOp(
    list(xs), eqn.params["dimension"]).result

# --- pad -------------------------------------------------------------------------------------

def _padded_size(n: int, lo: int, hi: int, interior: int) -> int:
    return lo + hi + n + max(n - 1, 0) * interior


def _pad_rule(x: TensorType, padding_value: TensorType, *, padding_config) -> TensorType:
    if padding_value.shape != () or padding_value.dtype != x.dtype:
        raise ShapeError(f"pad: padding value {padding_value} must be a rank-0 "
                         f"{dtype_name(x.dtype)} to pad {x}")
    if len(padding_config) != x.ndim:
        raise ShapeError(f"pad: operand {x} needs {x.ndim} (lo, hi, interior) triples, "
                         f"got padding_config={padding_config}")
    shape = tuple(_padded_size(n, lo, hi, interior)
                  for n, (lo, hi, interior) in zip(x.shape, padding_config, strict=True))
    if any(interior < 0 for _, _, interior in padding_config) or any(s < 0 for s in shape):
        raise ShapeError(f"pad: padding_config={padding_config} on {x} has negative interior "
                         f"padding or crops more than the padded size (result {shape})")
    return TensorType(shape, x.dtype)


def _pad_impl(x, padding_value, *, padding_config):
    shape = [_padded_size(n, *c) for n, c in zip(x.shape, padding_config, strict=True)]
    out = np.full(shape, padding_value, x.dtype)
    # Element k of a dimension lands at lo + k * (interior + 1) unless cropped away.
    src, dst = [], []
    for n, size, (lo, _, interior) in zip(x.shape, shape, padding_config, strict=True):
        where = lo + np.arange(n) * (interior + 1)
        keep = (where >= 0) & (where < size)
        src.append(np.arange(n)[keep])
        dst.append(where[keep])
    out[np.ix_(*dst)] = x[np.ix_(*src)]
    return out


def _pad_vjp(b, ct, x, padding_value, *, padding_config):
    # Undo the edge padding (negative lo/hi, i.e. cropping, becomes zero padding back), then
    # take every (interior + 1)-th element.
    unpadded = b.pad(ct, lit(0, ct.type.dtype),
                     padding_config=tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
    ct_x = b.slice(unpadded, start_indices=(0,) * x.type.ndim,
                   limit_indices=unpadded.type.shape,
                   strides=tuple(interior + 1 for _, _, interior in padding_config))
    # The padding value's cotangent sums ct over the positions it filled.
    mask = b.pad(zeros(b, x.type), lit(1, x.type.dtype), padding_config=padding_config)
    ct_value = b.reduce_sum(b.mul(ct, mask), axes=tuple(range(ct.type.ndim)))
    return [ct_x, ct_value]


def _pad_batch(b, axis, args, dims, *, padding_config):
    (x, value), (dx, dvalue) = args, dims
    if dvalue is None:
        d = dx
        config = (*padding_config[:d], (0, 0, 0), *padding_config[d:])
        return [b.pad(x, value, padding_config=config)], [d]
    # A padding value per batch element: pad with a placeholder, then select the batch's
    # value where the mask of padded positions is true.
    x = batch_to_front(b, x, dx, axis.size)
    config = ((0, 0, 0), *padding_config)
    padded = b.pad(x, lit(0, x.type.dtype), padding_config=config)
    logical = TensorType(x.type.shape[1:], np.dtype(np.bool_))
    mask = b.pad(zeros(b, logical), lit(True, np.bool_), padding_config=padding_config)
    shape = padded.type.shape
    mask = b.broadcast_in_dim(mask, shape=shape, broadcast_dimensions=tuple(
        range(1, len(shape))))
    value = b.broadcast_in_dim(move_axis(b, value, dvalue, 0), shape=shape,
                               broadcast_dimensions=(0,))
    return [b.select(mask, value, padded)], [0]


def _pad_lowering(ctx, eqn, x, value):
    config = eqn.params["padding_config"]
    lo, hi, interior = ([c[k] for c in config] for k in range(3))
    return hlo.PadOp(x, value, _i64s(lo), _i64s(hi), _i64s(interior)).result


pad_p = declare("pad", _pad_rule, _pad_impl)
batch_rules[pad_p] = _pad_batch
jvp_rules[pad_p] = linear_jvp(pad_p)
vjp_rules[pad_p] = _pad_vjp
lower_rules[pad_p] = _pad_lowering

# --- slice -----------------------------------------------------------------------------------

def _slice_rule(x: TensorType, *, start_indices: tuple[int, ...], limit_indices: tuple[int, ...],
                strides: tuple[int, ...] | None) -> TensorType:
    strides = (1,) * x.ndim if strides is None else strides
    if not len(start_indices) == len(limit_indices) == len(strides) == x.ndim:
        raise ShapeError(f"slice: operand {x} needs {x.ndim} start, limit and stride values, "
                         f"got {start_indices}, {limit_indices}, {strides}")
    for n, start, limit, stride in zip(x.shape, start_indices, limit_indices, strides,
                                       strict=True):
        if not 0 <= start <= limit <= n or stride < 1:
            raise ShapeError(f"slice: start_indices={start_indices}, limit_indices="
                             f"{limit_indices}, strides={strides} do not fit {x} "
                             "(need 0 <= start <= limit <= size and stride >= 1)")
    return TensorType(tuple(-(-(limit - start) // stride) for start, limit, stride in
                            zip(start_indices, limit_indices, strides, strict=True)), x.dtype)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    strides = (1,) * x.ndim if strides is None else strides
    return x[tuple(slice(*s) for s in zip(start_indices, limit_indices, strides,
                                          strict=True))].copy()


def _slice_vjp(b, ct, x, *, start_indices, limit_indices, strides):
    # Zeros around the slice; a stride s leaves s - 1 zeros between kept elements.
    strides = (1,) * x.type.ndim if strides is None else strides
    config = []
    for n, m, start, stride in zip(x.type.shape, ct.type.shape, start_indices, strides,
                                   strict=True):
        config.append((start, n - _padded_size(m, start, 0, stride - 1), stride - 1))
    return [b.pad(ct, lit(0, ct.type.dtype), padding_config=tuple(config))]


def _slice_batch(b, axis, args, dims, *, start_indices, limit_indices, strides):
    d = dims[0]
    return [b.slice(args[0], start_indices=(*start_indices[:d], 0, *start_indices[d:]),
                    limit_indices=(*limit_indices[:d], axis.size, *limit_indices[d:]),
                    strides=None if strides is None else (*strides[:d], 1, *strides[d:]))], [d]


def _slice_lowering(ctx, eqn, x):
    p = eqn.params
    strides = (1,) * len(p["start_indices"]) if p["strides"] is None else p["strides"]
    return hlo.SliceOp(x, _i64s(p["start_indices"]), _i64s(p["limit_indices"]),
                       _i64s(strides)).result


slice_p = declare("slice", _slice_rule, _slice_impl)
batch_rules[slice_p] = _slice_batch
jvp_rules[slice_p] = linear_jvp(slice_p)
vjp_rules[slice_p] = _slice_vjp
lower_rules[slice_p] = _slice_lowering
