"""Windowed reductions (XLA's ReduceWindow) and what their derivatives need.

- ``reduce_window_sum``, ``reduce_window_max``, ``reduce_window_min``: one operand, the
  monoid's identity as the initial value (Note [reduction identities]).
- ``reduce_window``: any number of operands and scalar initial values, reduced by a
  sub-Func ``computation`` (inputs: the accumulators, then the new elements).
- ``select_and_scatter_add`` and ``select_and_gather_add`` (windowed_select.py): the VJP
  and the JVP of max/min pooling.
- ``reduce_precision``: rounding to a float format with fewer exponent/mantissa bits.

Window params (one entry per operand dimension): ``window_dimensions``,
``window_strides``, ``padding`` ((low, high) pairs, possibly negative), ``base_dilation``
(holes between operand elements) and ``window_dilation`` (holes between window elements).
Padding and holes hold the initial value. See Note [max pooling derivatives].
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import WindowVJPError
from ..builder import Builder, lit
from ..interpreter import evaluate
from ..ir import Func, TensorType, dtype_name
from ..passes.autodiff import vjp_rules
from ..passes.forward import jvp_func, jvp_rules, linear_jvp
from ..passes.vmap import batch_rules, move_axis
from ..stablehlo import hlo, ir, lower_body, lower_rules, mlir_type
from .conv import conv_vjp_lhs_padding, dilate_dim
from .core import NUMBER, ShapeError, _check_kind, declare
from .reductions import fill_reducer, identity_of

__all__ = ["reduce_window_sum_p", "reduce_window_max_p", "reduce_window_min_p",
           "reduce_window_p", "reduce_precision_p", "window_output_shape"]

# Note [max pooling derivatives]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As in JAX: the JVP of a windowed max (min) is select_and_gather_add, the tangent of the
# element each window picks (the first maximum); its transpose, the VJP, is
# select_and_scatter_add, which adds each window's cotangent to that element (XLA's
# SelectAndScatter with a >= selector). select_and_scatter_add has no dilation params,
# so the VJP of a windowed max with base or window dilation raises WindowVJPError, as
# JAX's does. The sum's VJP is a windowed sum of the padded, stride-dilated cotangent.
# A general reduce_window (a user's computation) has a JVP (the computation's JVP reduced
# over primal and tangent pairs) but no VJP: it raises, as in JAX.


WINDOW = ("window_dimensions", "window_strides", "padding", "base_dilation",
          "window_dilation")


def _stride_dim(d: int, window: int, stride: int) -> int:
    return max(0, (d - window) // stride + 1)


def window_output_shape(name: str, shape: tuple[int, ...], *, window_dimensions,
                        window_strides, padding, base_dilation=None,
                        window_dilation=None) -> tuple[int, ...]:
    n = len(shape)
    base_dilation = (1,) * n if base_dilation is None else base_dilation
    window_dilation = (1,) * n if window_dilation is None else window_dilation
    for what, v in (("window_dimensions", window_dimensions), ("window_strides",
                    window_strides), ("padding", padding), ("base_dilation", base_dilation),
                    ("window_dilation", window_dilation)):
        if len(v) != n:
            raise ShapeError(f"{name}: {what} has {len(v)} entries for an operand of rank {n} "
                             f"(shape {shape}); give one per dimension")
        if what != "padding" and any(int(s) < 1 for s in v):
            raise ShapeError(f"{name}: {what} must be positive, got {tuple(v)}")
    out = []
    for d, w, s, (lo, hi), bd, wd in zip(shape, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation, strict=True):
        padded = dilate_dim(d, bd) + lo + hi
        if padded < 0:
            raise ShapeError(f"{name}: padding {tuple(padding)} removes more than the "
                             f"operand of shape {shape} holds")
        out.append(_stride_dim(padded, dilate_dim(w, wd), s))
    return tuple(out)


def windows(x: np.ndarray, fill: Any, *, window_dimensions, window_strides, padding,
             base_dilation, window_dilation) -> np.ndarray:
    """The windows of ``x``: shape ``out_shape + window_dimensions``, holes and padding
    holding ``fill``."""
    n = x.ndim
    out_shape = window_output_shape("reduce_window", x.shape, window_dimensions=window_dimensions,
                                    window_strides=window_strides, padding=padding,
                                    base_dilation=base_dilation,
                                    window_dilation=window_dilation)
    if 0 in out_shape:
        return np.full(out_shape + tuple(window_dimensions), fill, x.dtype)
    dilated = np.full([dilate_dim(d, b) for d, b in zip(x.shape, base_dilation, strict=True)],
                      fill, x.dtype)
    dilated[tuple(slice(None, None, b) for b in base_dilation)] = x
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    padded = np.pad(dilated, widths, constant_values=fill) if dilated.size else \
        np.full([d + a + b for d, (a, b) in zip(dilated.shape, widths, strict=True)], fill,
                x.dtype)
    padded = padded[tuple(slice(max(-lo, 0), padded.shape[k] - max(-hi, 0))
                          for k, (lo, hi) in enumerate(padding))]
    spans = [dilate_dim(w, d) for w, d in zip(window_dimensions, window_dilation, strict=True)]
    view = np.lib.stride_tricks.sliding_window_view(padded, spans)
    view = view[tuple(slice(None, o * s, s) for o, s in zip(out_shape, window_strides,
                                                             strict=True))]
    return view[(*[slice(None)] * n, *[slice(None, None, d) for d in window_dilation])]


# --- reduce_window_{sum,max,min} -------------------------------------------------------------

def _monoid_rule(name: str):
    def rule(x: TensorType, **window) -> TensorType:
        _check_kind(name, x, NUMBER)
        if x.dtype == np.bool_:
            raise ShapeError(f"{name} does not accept dtype {dtype_name(x.dtype)}")
        return TensorType(window_output_shape(name, x.shape, **window), x.dtype)
    return rule


def _monoid_impl(kind: str, ufunc: np.ufunc):
    def impl(x, **window):
        init = identity_of(kind, x.dtype)
        w = windows(np.asarray(x), init, **window)
        axes = tuple(range(x.ndim, w.ndim))
        return ufunc.reduce(w, axis=axes, initial=init).astype(x.dtype) if w.size else \
            np.full(w.shape[:x.ndim], init, x.dtype)
    return impl


def padding_attr(padding) -> ir.DenseIntElementsAttr:
    pads = np.asarray(padding, np.int64).reshape(len(padding), 2)
    return ir.DenseIntElementsAttr.get(pads, type=ir.RankedTensorType.get(
        [len(padding), 2], ir.IntegerType.get_signless(64)))


def _reduce_window_op(eqn, operands, inits):
    p = eqn.params
    return hlo.ReduceWindowOp(
        [mlir_type(v.type) for v in eqn.outputs], operands, inits,
        list(p["window_dimensions"]), window_strides=list(p["window_strides"]),
        base_dilations=list(p["base_dilation"]), window_dilations=list(p["window_dilation"]),
        padding=padding_attr(p["padding"]))


def _monoid_lowering(kind: str, op_class: Any):
    def rule(ctx, eqn, x):
        scalar = TensorType((), eqn.inputs[0].type.dtype)
        op = _reduce_window_op(eqn, [x], [ctx.constant(identity_of(kind, scalar.dtype),
                                                       scalar)])
        fill_reducer(op_class, scalar, op.regions[0])
        return op.results[0]
    return rule


def with_batch_window(dim: int, params: dict) -> dict:
    """Window params for an operand with an extra (batch) dimension at ``dim``."""
    ones = {"window_dimensions": 1, "window_strides": 1, "padding": (0, 0),
            "base_dilation": 1, "window_dilation": 1}
    out = dict(params)
    for k, one in ones.items():
        v = list(params[k])
        v.insert(dim, one)
        out[k] = tuple(v)
    return out


def both_batched(b, axis, args, dims):
    """The operands with the batch dimension in front, broadcast where unbatched."""
    return [move_axis(b, a, d, 0) if d is not None else b.broadcast_in_dim(
        a, shape=(axis.size, *a.type.shape), broadcast_dimensions=tuple(
            range(1, a.type.ndim + 1))) for a, d in zip(args, dims, strict=True)]


def _monoid_batch_rule(prim):
    def rule(b, axis, args, dims, **params):
        return [b.bind(prim, args[0], **with_batch_window(dims[0], params))], [dims[0]]
    return rule


def _declare_monoid(kind: str, ufunc: np.ufunc, op_class: Any):
    name = f"reduce_window_{kind}"
    prim = declare(name, _monoid_rule(name), _monoid_impl(kind, ufunc))
    lower_rules[prim] = _monoid_lowering(kind, op_class)
    batch_rules[prim] = _monoid_batch_rule(prim)
    return prim


reduce_window_sum_p = _declare_monoid("sum", np.add, hlo.AddOp)
reduce_window_max_p = _declare_monoid("max", np.maximum, hlo.MaxOp)
reduce_window_min_p = _declare_monoid("min", np.minimum, hlo.MinOp)


def _sum_vjp(b, ct, x, **params):
    # A windowed sum is linear; its transpose spreads each output over its window: the
    # cotangent dilated by the strides and padded, summed over windows with strides =
    # the base dilation (the conv VJP's padding formula).
    n = x.type.ndim
    pads = conv_vjp_lhs_padding(x.type.shape, params["window_dimensions"],
                                params["window_strides"], ct.type.shape, params["padding"],
                                params["base_dilation"], params["window_dilation"])
    config = tuple((lo, hi, s - 1) for (lo, hi), s in zip(pads, params["window_strides"],
                                                           strict=True))
    padded = b.pad(ct, lit(0, ct.type.dtype), padding_config=config)
    return [b.reduce_window_sum(padded, window_dimensions=params["window_dimensions"],
                                window_strides=params["base_dilation"],
                                padding=((0, 0),) * n, base_dilation=(1,) * n,
                                window_dilation=params["window_dilation"])]


vjp_rules[reduce_window_sum_p] = _sum_vjp
jvp_rules[reduce_window_sum_p] = linear_jvp(reduce_window_sum_p)


def _chooser_jvp(select: str, prim):
    def rule(b, primals, tangents, **params):
        (x,), (t,) = primals, tangents
        return [b.bind(prim, x, **params)], [
            b.select_and_gather_add(t, x, select=select, **params)]
    return rule


def _chooser_vjp(select: str, name: str):
    def rule(b, ct, x, **params):
        if any(d != 1 for d in params["base_dilation"] + params["window_dilation"]):
            raise WindowVJPError(
                f"grad of {name} with base_dilation {params['base_dilation']} or "
                f"window_dilation {params['window_dilation']} is not supported (nor is it by "
                "JAX); use dilations of 1 or forward mode (jvp/jacfwd)")
        return [b.select_and_scatter_add(
            ct, x, select=select, window_dimensions=params["window_dimensions"],
            window_strides=params["window_strides"], padding=params["padding"])]
    return rule


jvp_rules[reduce_window_max_p] = _chooser_jvp("ge", reduce_window_max_p)
vjp_rules[reduce_window_max_p] = _chooser_vjp("ge", "reduce_window max")
jvp_rules[reduce_window_min_p] = _chooser_jvp("le", reduce_window_min_p)
vjp_rules[reduce_window_min_p] = _chooser_vjp("le", "reduce_window min")


# --- the general reduce_window -----------------------------------------------------------------

def _general_rule(*types: TensorType, computation: Func, **window) -> tuple[TensorType, ...]:
    n = len(types) // 2
    operands, inits = types[:n], types[n:]
    if n == 0 or len(types) != 2 * n:
        raise ShapeError("reduce_window needs one scalar initial value per operand")
    for o, i in zip(operands, inits, strict=True):
        if i.shape != () or i.dtype != o.dtype:
            raise ShapeError(f"reduce_window: initial value {i} must be a scalar of the "
                             f"dtype of its operand {o}")
        if o.shape != operands[0].shape:
            raise ShapeError(f"reduce_window: operands {operands[0]} and {o} must have one "
                             "shape")
    scalars = tuple(TensorType((), o.dtype) for o in operands)
    if computation.in_types != scalars + scalars or computation.out_types != scalars:
        raise ShapeError("reduce_window: the computation must take the accumulators and the "
                         f"elements ({', '.join(map(str, scalars + scalars))}) and return "
                         f"new accumulators ({', '.join(map(str, scalars))})")
    shape = window_output_shape("reduce_window", operands[0].shape, **window)
    return tuple(TensorType(shape, o.dtype) for o in operands)


def _general_impl(*args, computation: Func, **window):
    n = len(args) // 2
    operands, inits = [np.asarray(a) for a in args[:n]], args[n:]
    windows = [windows(o, i, **window) for o, i in zip(operands, inits, strict=True)]
    rank = operands[0].ndim
    out_shape = windows[0].shape[:rank]
    outs = [np.empty(out_shape, o.dtype) for o in operands]
    for pos in np.ndindex(*out_shape):
        acc = [np.asarray(i, o.dtype) for i, o in zip(inits, operands, strict=True)]
        for offset in np.ndindex(*windows[0].shape[rank:]):
            acc = list(evaluate(computation, *acc, *[w[pos + offset] for w in windows]))
        for o, a in zip(outs, acc, strict=True):
            o[pos] = a
    return tuple(outs)


reduce_window_p = declare("reduce_window", _general_rule, _general_impl, multiple_results=True)


def _general_lowering(ctx, eqn, *args):
    n = len(args) // 2
    op = _reduce_window_op(eqn, list(args[:n]), list(args[n:]))
    func = eqn.params["computation"]
    block = op.regions[0].blocks.append(*[mlir_type(t) for t in func.in_types])
    with ir.InsertionPoint(block):
        hlo.ReturnOp(lower_body(ctx, func, list(block.arguments)))
    return list(op.results)


lower_rules[reduce_window_p] = _general_lowering


def _general_batch_rule(b, axis, args, dims, *, computation, **window):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("vmap of reduce_window over batched initial values is not "
                                  "supported (nor is it by JAX); make them unbatched scalars")
    operands = both_batched(b, axis, args[:n], dims[:n])
    outs = b.reduce_window(*operands, *args[n:], computation=computation,
                           **with_batch_window(0, window))
    return list(outs), [0] * n


def _general_jvp(b, primals, tangents, *, computation, **window):
    # Reduce (primal, tangent) pairs with the computation's JVP; initial tangents are zero.
    n = len(primals) // 2
    if any(t is not None for t in tangents[n:]):
        raise TypeError("reduce_window: the JVP with respect to the initial values is not "
                        "supported (nor is it by JAX); pass them as constants")
    outs = b.reduce_window(*primals, computation=computation, **window)
    if all(t is None for t in tangents[:n]):
        return list(outs), [None] * n
    jvp = jvp_func(computation, [True] * (2 * n))             # (l, r, tl, tr) -> (o, to)
    inner = Builder("reduce_window_jvp")
    left_p = [inner.input(t) for t in computation.in_types[:n]]
    left_t = [inner.input(t) for t in computation.in_types[:n]]
    right_p = [inner.input(t) for t in computation.in_types[n:]]
    right_t = [inner.input(t) for t in computation.in_types[n:]]
    pair = inner.build(inner.inline(jvp, [*left_p, *right_p, *left_t, *right_t]))
    tangent_ins = [t if t is not None else b.broadcast_in_dim(
        lit(0, p.type.dtype), shape=p.type.shape, broadcast_dimensions=())
        for t, p in zip(tangents[:n], primals[:n], strict=True)]
    zero_inits = [lit(0, p.type.dtype) for p in primals[n:]]
    both = b.reduce_window(*primals[:n], *tangent_ins, *primals[n:], *zero_inits,
                           computation=pair, **window)
    return list(both[:n]), list(both[n:])


def _general_vjp(b, ct, *args, computation, **window):
    raise WindowVJPError("grad of reduce_window with a general computation is not supported "
                         "(nor is it by JAX): use lax.add, lax.max or lax.min with their "
                         "identity as the initial value, or forward mode (jvp/jacfwd)")


batch_rules[reduce_window_p] = _general_batch_rule
jvp_rules[reduce_window_p] = _general_jvp
vjp_rules[reduce_window_p] = _general_vjp


# --- reduce_precision ----------------------------------------------------------------------------

def _precision_rule(x: TensorType, *, exponent_bits: int, mantissa_bits: int) -> TensorType:
    _check_kind("reduce_precision", x, "f")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ShapeError("reduce_precision: exponent_bits must be >= 1 and mantissa_bits "
                         f">= 0, got {exponent_bits} and {mantissa_bits}")
    return x


def _precision_impl(x, *, exponent_bits, mantissa_bits):
    # XLA's bit-level algorithm: round the mantissa to nearest even, then flush exponents
    # out of range to signed infinity or zero; NaNs stay NaN.
    x = np.asarray(x)
    wide = np.float64 if x.dtype == np.float64 else np.float32
    v = x.astype(wide)
    uint, bits, mant, expo = (np.uint64, 64, 52, 11) if wide == np.float64 else \
        (np.uint32, 32, 23, 8)
    u = v.view(uint).copy()
    if mantissa_bits < mant:
        shift = mant - mantissa_bits
        last = uint(1 << shift)
        bias = uint((1 << (shift - 1)) - 1)
        u = (u + ((u & last) >> uint(shift)) + bias) & ~uint((1 << shift) - 1)
    if exponent_bits < expo:
        sign = u & uint(1 << (bits - 1))
        exp_mask = uint(((1 << expo) - 1) << mant)
        bias = (1 << (expo - 1)) - 1
        reduced = (1 << (exponent_bits - 1)) - 1
        e = u & exp_mask
        u = np.where(e > uint((bias + reduced) << mant), sign | exp_mask,
                     np.where(e <= uint((bias - reduced) << mant), sign, u))
    out = np.asarray(u, uint).view(wide)
    out = np.where(np.isnan(v), v if mantissa_bits > 0 else np.copysign(np.inf, v), out)
    return out.astype(x.dtype)


reduce_precision_p = declare("reduce_precision", _precision_rule, _precision_impl)
lower_rules[reduce_precision_p] = lambda ctx, eqn, x: hlo.ReducePrecisionOp(
    x, eqn.params["exponent_bits"], eqn.params["mantissa_bits"]).result
batch_rules[reduce_precision_p] = lambda b, axis, args, dims, **p: (
    [b.reduce_precision(args[0], **p)], dims)
vjp_rules[reduce_precision_p] = lambda b, ct, x, **p: [b.reduce_precision(ct, **p)]  # linear
jvp_rules[reduce_precision_p] = linear_jvp(reduce_precision_p)
