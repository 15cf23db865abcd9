"""The convolution primitive ``conv_general_dilated``, XLA's Conv with every option.

Params (all canonical; the frontend in spmdc/lax/convolution.py turns padding strings and
dimension-number strings into these):

    window_strides    one stride per spatial dimension
    padding           one ``(low, high)`` pair per spatial dimension (may be negative)
    lhs_dilation      one factor per spatial dimension of the input (transposed conv)
    rhs_dilation      one factor per spatial dimension of the kernel (atrous conv)
    dimension_numbers ``(lhs_spec, rhs_spec, out_spec)``: for the input, which dimension
                      is the batch, the feature, then the spatial ones; for the kernel the
                      output feature, the input feature, then the spatial ones; for the
                      output like the input. Spatial dimensions are listed in the
                      kernel's order, which is the order of every per-dimension param.
    feature_group_count, batch_group_count   (at most one of them above 1)

Both operands have one dtype, which is the result's (the frontend converts operands for
``preferred_element_type``). See Note [conv groups] for the grouped layouts.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import TensorType, dtype_name
from ..passes.autodiff import vjp_rules, zeros
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules
from ..stablehlo import hlo, ir, lower_rules
from .core import NUMBER, ShapeError, _check_kind, declare, same_dtype
from .reductions import with_precision

__all__ = ["conv_general_dilated_p", "conv_output_shape", "dilate_dim", "conv_vjp_lhs_padding"]

# Note [conv groups]
# ~~~~~~~~~~~~~~~~~~
# feature_group_count G splits the input features into G contiguous groups and the
# kernel's output features into G contiguous groups; group g of the output sees group g of
# the input only (kernel input features = input features / G). batch_group_count B splits
# the input batch into B contiguous groups and the kernel's output features into B
# contiguous groups; output feature group b is computed from batch group b, and the
# output batch is input batch / B (this is how the kernel gradient of a grouped
# convolution is expressed). Both are group-major, as in XLA; the batching rule and the
# VJP rules rely on this when they fold a dimension into a group.


def dilate_dim(d: int, dilation: int) -> int:
    """The size of a dimension of size ``d`` with ``dilation - 1`` holes between elements."""
    return 0 if d == 0 else 1 + dilation * (d - 1)


def _stride_dim(d: int, window: int, stride: int) -> int:
    return max(0, (d - window) // stride + 1)


def conv_output_shape(lhs_shape, rhs_shape, *, window_strides, padding, lhs_dilation,
                      rhs_dilation, dimension_numbers, feature_group_count,
                      batch_group_count) -> tuple[int, ...]:
    """The output shape of a convolution; raises ShapeError naming what does not fit."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    n = len(lhs_shape)
    if len(rhs_shape) != n:
        raise ShapeError(f"conv_general_dilated: lhs and rhs must have the same rank, got "
                         f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if n < 2:
        raise ShapeError("conv_general_dilated: operands need at least a batch (or output "
                         f"feature) and a feature dimension, got rank {n}")
    for name, spec in (("lhs", lhs_spec), ("rhs", rhs_spec), ("out", out_spec)):
        if sorted(spec) != list(range(n)):
            raise ShapeError(f"conv_general_dilated: the {name} dimension numbers {spec} "
                             f"are not a permutation of the {n} dimensions")
    nsp = n - 2
    for name, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation), ("padding", padding)):
        if len(v) != nsp:
            raise ShapeError(f"conv_general_dilated: {name} has {len(v)} entries for "
                             f"{nsp} spatial dimensions")
    for name, v in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                    ("rhs_dilation", rhs_dilation)):
        if any(int(s) < 1 for s in v):
            raise ShapeError(f"conv_general_dilated: {name} must be positive, got {v}")
    G, B = feature_group_count, batch_group_count
    if G < 1 or B < 1:
        raise ShapeError("conv_general_dilated: feature_group_count and batch_group_count "
                         f"must be positive integers, got {G} and {B}")
    if G > 1 and B > 1:
        raise ShapeError("conv_general_dilated: at most one of feature_group_count and "
                         f"batch_group_count may be above 1, got {G} and {B}")
    batch, features = lhs_shape[lhs_spec[0]], lhs_shape[lhs_spec[1]]
    out_features, in_features = rhs_shape[rhs_spec[0]], rhs_shape[rhs_spec[1]]
    if features % G or features // G != in_features:
        raise ShapeError(
            f"conv_general_dilated: the lhs feature dimension ({features}) divided by "
            f"feature_group_count ({G}) must equal the rhs input feature dimension "
            f"({in_features})")
    if out_features % G or out_features % B:
        raise ShapeError(
            f"conv_general_dilated: the rhs output feature dimension ({out_features}) must "
            f"be a multiple of feature_group_count ({G}) and batch_group_count ({B})")
    if batch % B:
        raise ShapeError(f"conv_general_dilated: batch_group_count ({B}) must divide the "
                         f"lhs batch dimension ({batch})")
    spatial = []
    for k in range(nsp):
        d = dilate_dim(lhs_shape[lhs_spec[k + 2]], lhs_dilation[k])
        lo, hi = padding[k]
        if d + lo + hi < 0:
            raise ShapeError(f"conv_general_dilated: padding {tuple(padding)} removes more "
                             f"than spatial dimension {k} holds ({d})")
        w = dilate_dim(rhs_shape[rhs_spec[k + 2]], rhs_dilation[k])
        spatial.append(_stride_dim(d + lo + hi, w, window_strides[k]))
    canonical = (batch // B, out_features, *spatial)
    out = [0] * n
    for i, d in enumerate(out_spec):
        out[d] = canonical[i]
    return tuple(out)


def _conv_rule(lhs: TensorType, rhs: TensorType, precision=None, **params: Any) -> TensorType:
    dtype = same_dtype("conv_general_dilated", lhs, rhs)
    _check_kind("conv_general_dilated", lhs, NUMBER)
    if dtype == np.bool_:
        raise ShapeError(f"conv_general_dilated does not accept dtype {dtype_name(dtype)}")
    return TensorType(conv_output_shape(lhs.shape, rhs.shape, **params), dtype)


def _dilate(x: np.ndarray, factors, first: int) -> np.ndarray:
    """Insert ``factor - 1`` zeros between elements along axes ``first, first + 1, ...``."""
    for k, f in enumerate(factors):
        if f == 1 or x.shape[first + k] == 0:
            continue
        shape = list(x.shape)
        shape[first + k] = dilate_dim(x.shape[first + k], f)
        out = np.zeros(shape, x.dtype)
        index = [slice(None)] * x.ndim
        index[first + k] = slice(None, None, f)
        out[tuple(index)] = x
        x = out
    return x


def _pad(x: np.ndarray, padding, first: int) -> np.ndarray:
    """Pad (or, for negative amounts, crop) axes ``first, first + 1, ...`` with zeros."""
    for k, (lo, hi) in enumerate(padding):
        axis = first + k
        widths = [(0, 0)] * x.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-lo, 0), x.shape[axis] - max(-hi, 0))
        x = x[tuple(index)]
    return x


def _conv_impl(lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision=None):
    out_shape = conv_output_shape(
        lhs.shape, rhs.shape, window_strides=window_strides, padding=padding,
        lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count)
    dtype = np.result_type(lhs, rhs)
    wide = np.complex128 if dtype.kind == "c" else np.int64 if dtype.kind in "iu" \
        else np.float64                        # accumulate wide, round once at the end
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    x = np.transpose(np.asarray(lhs).astype(wide), lhs_spec)       # N C spatial...
    w = np.transpose(np.asarray(rhs).astype(wide), rhs_spec)       # O I spatial...
    nsp = x.ndim - 2
    x = _pad(_dilate(x, lhs_dilation, 2), padding, 2)
    w = _dilate(w, rhs_dilation, 2)
    canonical = tuple(out_shape[d] for d in out_spec)
    if 0 in canonical or 0 in w.shape[1:]:
        out = np.zeros(canonical, wide)
    else:
        window = w.shape[2:]
        patches = np.lib.stride_tricks.sliding_window_view(
            x, window, axis=tuple(range(2, 2 + nsp)))
        patches = patches[(slice(None), slice(None),
                           *[slice(None, n * s, s) for n, s in
                             zip(canonical[2:], window_strides, strict=True)])]
        G, B = feature_group_count, batch_group_count
        N, C = x.shape[:2]
        out_features = w.shape[0]
        groups = G * B
        # patches: (B, N/B, G, C/G, out spatial..., window...)
        patches = patches.reshape(B, N // B, G, C // G, *patches.shape[2:])
        w = w.reshape(groups, out_features // groups, *w.shape[1:])   # (group, O/group, I, ...)
        sp = "".join(chr(ord("p") + k) for k in range(nsp))      # output positions
        win = "".join(chr(ord("D") + k) for k in range(nsp))     # window offsets
        if B > 1:                                  # G == 1: (B, N/B, C, ...)
            out = np.einsum(f"bnc{sp}{win},boc{win}->nbo{sp}", patches[:, :, 0], w)
        else:                                      # B == 1: (N, G, C/G, ...)
            out = np.einsum(f"ngc{sp}{win},goc{win}->ngo{sp}", patches[0], w)
        out = out.reshape(canonical)
    return np.transpose(out, np.argsort(out_spec)).astype(dtype)


conv_general_dilated_p = declare("conv_general_dilated", _conv_rule, _conv_impl)


def conv(b, lhs, rhs, **params):
    return b.bind(conv_general_dilated_p, lhs, rhs, **params)


# --- lowering ---------------------------------------------------------------------------------

def _conv_lowering(ctx, eqn, lhs, rhs):
    p = eqn.params
    lhs_spec, rhs_spec, out_spec = p["dimension_numbers"]
    nsp = len(lhs_spec) - 2
    dims = hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0], input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_output_feature_dimension=rhs_spec[0],
        kernel_input_feature_dimension=rhs_spec[1],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0], output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]))
    i64 = ir.IntegerType.get_signless(64)
    padding = np.asarray(p["padding"], np.int64).reshape(nsp, 2)
    return hlo.ConvolutionOp(
        ctx.mlir_type(eqn.outputs[0].type), lhs, rhs, dims,
        ir.IntegerAttr.get(i64, p["feature_group_count"]),
        ir.IntegerAttr.get(i64, p["batch_group_count"]),
        window_strides=list(p["window_strides"]),
        padding=ir.DenseIntElementsAttr.get(padding, type=ir.RankedTensorType.get(
            [nsp, 2], i64)),
        lhs_dilation=list(p["lhs_dilation"]), rhs_dilation=list(p["rhs_dilation"]),
        window_reversal=[False] * nsp,
        precision_config=None if p.get("precision") is None else ir.ArrayAttr.get(
            [hlo.PrecisionAttr.get(x) for x in p["precision"]])).result  # See Note [dot precision]


lower_rules[conv_general_dilated_p] = _conv_lowering


# --- batching ---------------------------------------------------------------------------------

def _reshape_axis_into(b, src: int, dst: int, x):
    """Merge dimension ``src`` of ``x`` into dimension ``dst`` (numbered with ``src``
    removed), ``src`` becoming the major part."""
    perm = [i for i in range(x.type.ndim) if i != src]
    perm.insert(dst, src)
    shape = [x.type.shape[i] for i in range(x.type.ndim) if i != src]
    shape[dst] *= x.type.shape[src]
    if perm != list(range(x.type.ndim)):
        x = b.transpose(x, permutation=tuple(perm))
    return b.reshape(x, new_sizes=tuple(shape))


def _reshape_axis_out_of(b, src: int, size: int, x):
    """Split dimension ``src`` of ``x`` into ``(size, rest)``."""
    shape = list(x.type.shape)
    shape[src:src + 1] = [size, shape[src] // size]
    return b.reshape(x, new_sizes=tuple(shape))


def _conv_batch_rule(b, axis, args, dims, **params):
    # JAX's rule: fold the vmapped dimension into the batch, a feature dimension or a
    # group, run one convolution, and split it out of the output again.
    lhs, rhs = args
    ld, rd = dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    G, B = params["feature_group_count"], params["batch_group_count"]
    size = axis.size
    if size == 0:
        unb = [TensorType(tuple(s for i, s in enumerate(a.type.shape) if i != d), a.type.dtype)
               if d is not None else a.type for a, d in zip(args, dims, strict=True)]
        shape = conv_output_shape(unb[0].shape, unb[1].shape,
                                  **{k: v for k, v in params.items() if k != "precision"})
        return [zeros(b, TensorType((0, *shape), lhs.type.dtype))], [0]
    if ld is not None and rd is not None:
        if B > 1:
            new_lhs = _reshape_axis_into(b, ld, lhs_spec[0], lhs)
            params = {**params, "batch_group_count": B * size}
        else:
            new_lhs = _reshape_axis_into(b, ld, lhs_spec[1], lhs)
            params = {**params, "feature_group_count": G * size}
        new_rhs = _reshape_axis_into(b, rd, rhs_spec[0], rhs)
        out = conv(b, new_lhs, new_rhs, **params)
        return [_reshape_axis_out_of(b, out_spec[1], size, out)], [out_spec[1]]
    if ld is not None:
        if B == 1:
            new_lhs = _reshape_axis_into(b, ld, lhs_spec[0], lhs)
        else:
            new_lhs = _reshape_axis_out_of(b, lhs_spec[0] + int(ld <= lhs_spec[0]), B, lhs)
            new_lhs = _reshape_axis_into(b, ld + int(lhs_spec[0] < ld), lhs_spec[0] + 1,
                                         new_lhs)
            new_lhs = _reshape_axis_into(b, lhs_spec[0], lhs_spec[0], new_lhs)
        out = conv(b, new_lhs, rhs, **params)
        return [_reshape_axis_out_of(b, out_spec[0], size, out)], [out_spec[0]]
    if G == 1 and B == 1:
        new_rhs = _reshape_axis_into(b, rd, rhs_spec[0], rhs)
        out = conv(b, lhs, new_rhs, **params)
        return [_reshape_axis_out_of(b, out_spec[1], size, out)], [out_spec[1]]
    # Groups must stay outermost in the kernel's output features: factor them out, fold
    # the vmapped dimension into the rest, put them back; the same on the output.
    groups = G if G > 1 else B
    new_rhs = _reshape_axis_out_of(b, rhs_spec[0] + int(rd <= rhs_spec[0]), groups, rhs)
    new_rhs = _reshape_axis_into(b, rd + int(rhs_spec[0] < rd), rhs_spec[0] + 1, new_rhs)
    new_rhs = _reshape_axis_into(b, rhs_spec[0], rhs_spec[0], new_rhs)
    out = conv(b, lhs, new_rhs, **params)
    out = _reshape_axis_out_of(b, out_spec[1], groups, out)
    out = _reshape_axis_out_of(b, out_spec[1] + 1, size, out)
    out = _reshape_axis_into(b, out_spec[1], out_spec[1] + 1, out)
    return [out], [out_spec[1]]


batch_rules[conv_general_dilated_p] = _conv_batch_rule


# --- derivatives: the transpose of a convolution is a convolution ------------------------------

def conv_vjp_lhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                         lhs_dilation, rhs_dilation) -> tuple[tuple[int, int], ...]:
    """The padding of the convolution that maps an output cotangent back to the input."""
    pads = []
    for i, k, s, o, (lo, _), ld, rd in zip(in_shape, window_dimensions, window_strides,
                                            out_shape, padding, lhs_dilation, rhs_dilation,
                                            strict=True):
        before = dilate_dim(k, rd) - lo - 1
        after = dilate_dim(i, ld) + dilate_dim(k, rd) - 1 - dilate_dim(o, s) - before
        pads.append((before, after))
    return tuple(pads)


def _conv_vjp_rhs_padding(in_shape, window_dimensions, window_strides, out_shape, padding,
                          lhs_dilation, rhs_dilation) -> tuple[tuple[int, int], ...]:
    pads = []
    for i, k, s, o, (lo, _), ld, rd in zip(in_shape, window_dimensions, window_strides,
                                            out_shape, padding, lhs_dilation, rhs_dilation,
                                            strict=True):
        hi = dilate_dim(o, s) - dilate_dim(i, ld) + dilate_dim(k, rd) - lo - 1
        pads.append((lo, hi))
    return tuple(pads)


def _swap(spec):
    return (spec[1], spec[0], *spec[2:])


def _conv_lhs_ct(b, ct, lhs_type: TensorType, rhs, *, window_strides, padding, lhs_dilation,
                 rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
                 precision=None):
    # Forward [m, j] [j, k] -> [m, k]; this is [m, k] [k, j] -> [m, j] over the flipped
    # kernel, with strides and input dilation exchanged. Groups move from the kernel's
    # input features to its output features.
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    G, B = feature_group_count, batch_group_count
    if G > 1 or B > 1:
        groups = max(G, B)
        rhs = _reshape_axis_out_of(b, rhs_spec[0], groups, rhs)
        rhs = _reshape_axis_into(b, rhs_spec[0], rhs_spec[1], rhs)
    sdims = lambda spec, shape: tuple(shape[d] for d in spec[2:])  # noqa: E731
    pads = conv_vjp_lhs_padding(sdims(lhs_spec, lhs_type.shape),
                                sdims(rhs_spec, rhs.type.shape), window_strides,
                                sdims(out_spec, ct.type.shape), padding, lhs_dilation,
                                rhs_dilation)
    flipped = b.rev(rhs, dimensions=tuple(rhs_spec[2:]))
    out = conv(b, ct, flipped, window_strides=lhs_dilation, padding=pads,
               lhs_dilation=window_strides, rhs_dilation=rhs_dilation,
               dimension_numbers=(out_spec, _swap(rhs_spec), lhs_spec),
               feature_group_count=max(G, B), batch_group_count=1,
               **with_precision(precision))
    if B > 1:
        out = _reshape_axis_out_of(b, lhs_spec[1], B, out)
        out = _reshape_axis_into(b, lhs_spec[1], lhs_spec[0], out)
    return out


def _conv_rhs_ct(b, ct, lhs, rhs_type: TensorType, *, window_strides, padding, lhs_dilation,
                 rhs_dilation, dimension_numbers, feature_group_count, batch_group_count,
                 precision=None):
    # [j, m] [m, k] -> [j, k]: the input against the output cotangent, with strides and
    # kernel dilation exchanged; feature groups become batch groups and back.
    if ct.type.size == 0:
        return zeros(b, rhs_type)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    G, B = feature_group_count, batch_group_count
    sdims = lambda spec, shape: tuple(shape[d] for d in spec[2:])  # noqa: E731
    pads = _conv_vjp_rhs_padding(sdims(lhs_spec, lhs.type.shape),
                                 sdims(rhs_spec, rhs_type.shape), window_strides,
                                 sdims(out_spec, ct.type.shape), padding, lhs_dilation,
                                 rhs_dilation)
    return conv(b, lhs, ct, window_strides=rhs_dilation, padding=pads,
                lhs_dilation=lhs_dilation, rhs_dilation=window_strides,
                dimension_numbers=(_swap(lhs_spec), _swap(out_spec), _swap(rhs_spec)),
                feature_group_count=B, batch_group_count=G, **with_precision(precision))


def _conv_vjp(b, ct, lhs, rhs, **params):
    return [_conv_lhs_ct(b, ct, lhs.type, rhs, **params),
            _conv_rhs_ct(b, ct, lhs, rhs.type, **params)]


def _conv_jvp(b, primals, tangents, **params):
    # Bilinear: d conv(x, w) = conv(dx, w) + conv(x, dw).
    (x, w), (tx, tw) = primals, tangents
    out = conv(b, x, w, **params)
    terms = [conv(b, *ops, **params) for ops, t in (((tx, w), tx), ((x, tw), tw))
             if t is not None]
    return [out], [terms[0] if len(terms) == 1 else b.add(*terms)]


vjp_rules[conv_general_dilated_p] = _conv_vjp
jvp_rules[conv_general_dilated_p] = _conv_jvp
