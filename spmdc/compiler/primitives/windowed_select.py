"""select_and_scatter_add and select_and_gather_add: the derivatives of max/min pooling
(Note [max pooling derivatives] in windowed.py).

- ``select_and_scatter_add(source, operand)``: for each window of ``operand``, the element
  that ``select`` ('ge': the maximum, 'le': the minimum; the first one on ties) picks
  receives that window's ``source`` value; the VJP of max/min pooling (XLA's
  SelectAndScatter).
- ``select_and_gather_add(tangents, operand)``: for each window, the tangent at the
  element ``select`` picks; the JVP of max/min pooling and the transpose of the former
  (a reduce_window over (operand, tangent) pairs).
"""
from __future__ import annotations

import numpy as np

from ...errors import WindowVJPError
from ..ir import TensorType
from ..passes.autodiff import vjp_rules
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import batch_rules
from ..stablehlo import hlo, ir, lower_rules, mlir_type
from .core import FLOAT, ShapeError, _check_kind, declare
from .reductions import compare, fill_reducer, identity_of
from .windowed import (
    both_batched,
    padding_attr,
    window_output_shape,
    windows,
    with_batch_window,
)

__all__ = ["select_and_scatter_add_p", "select_and_gather_add_p"]


def _pick(select: str):
    return np.greater_equal if select == "ge" else np.less_equal


def _gather_rule(t: TensorType, x: TensorType, *, select, **window) -> TensorType:
    if t.shape != x.shape or t.dtype != x.dtype:
        raise ShapeError(f"select_and_gather_add: tangents {t} and operand {x} must have one "
                         "shape and dtype")
    _check_kind("select_and_gather_add", x, FLOAT)
    if select not in ("ge", "le"):
        raise ShapeError(f"select_and_gather_add: select must be 'ge' or 'le', got {select!r}")
    return TensorType(window_output_shape("select_and_gather_add", x.shape, **window), x.dtype)


def _gather_impl(t, x, *, select, **window):
    init = identity_of("max" if select == "ge" else "min", x.dtype)
    wx = windows(np.asarray(x), init, **window)
    wt = windows(np.asarray(t), 0, **window)
    n = x.ndim
    if wx.size == 0:                            # no windows (window sizes are >= 1)
        return np.zeros(wx.shape[:n], x.dtype)
    flat_x = wx.reshape(*wx.shape[:n], -1)
    flat_t = wt.reshape(*wt.shape[:n], -1)
    # The first element that beats every other one (ge: the first maximum).
    best = (np.argmax(flat_x, axis=-1) if select == "ge" else np.argmin(flat_x, axis=-1)) \
        if flat_x.shape[-1] else np.zeros(flat_x.shape[:-1], int)
    return np.take_along_axis(flat_t, best[..., None], axis=-1)[..., 0].astype(x.dtype)


select_and_gather_add_p = declare("select_and_gather_add", _gather_rule, _gather_impl)


def _gather_lowering(ctx, eqn, t, x):
    dtype = eqn.inputs[1].type.dtype
    select = eqn.params["select"]
    scalar = TensorType((), dtype)
    init_x = ctx.constant(identity_of("max" if select == "ge" else "min", dtype), scalar)
    init_t = ctx.constant(0, scalar)
    out = eqn.outputs[0]
    p = eqn.params
    op = hlo.ReduceWindowOp(
        [mlir_type(out.type), mlir_type(out.type)], [x, t], [init_x, init_t],
        list(p["window_dimensions"]), window_strides=list(p["window_strides"]),
        base_dilations=list(p["base_dilation"]), window_dilations=list(p["window_dilation"]),
        padding=padding_attr(p["padding"]))
    s = mlir_type(scalar)
    block = op.regions[0].blocks.append(s, s, s, s)
    with ir.InsertionPoint(block):
        acc_x, acc_t, new_x, new_t = block.arguments
        keep = compare(acc_x, new_x, "GE" if select == "ge" else "LE", dtype)
        hlo.ReturnOp([hlo.SelectOp(keep, acc_x, new_x).result,
                      hlo.SelectOp(keep, acc_t, new_t).result])
    return op.results[1]


lower_rules[select_and_gather_add_p] = _gather_lowering


def _gather_batch_rule(b, axis, args, dims, *, select, **window):
    t, x = both_batched(b, axis, args, dims)
    return [b.select_and_gather_add(t, x, select=select, **with_batch_window(0, window))], [0]


batch_rules[select_and_gather_add_p] = _gather_batch_rule
jvp_rules[select_and_gather_add_p] = linear_jvp(select_and_gather_add_p, 0)


def _gather_vjp(b, ct, t, x, *, select, **window):
    if any(d != 1 for d in window["base_dilation"] + window["window_dilation"]):
        raise WindowVJPError("grad of a windowed max/min's forward derivative with "
                             "dilations is not supported (nor is it by JAX)")
    return [b.select_and_scatter_add(ct, x, select=select,
                                     window_dimensions=window["window_dimensions"],
                                     window_strides=window["window_strides"],
                                     padding=window["padding"]), None]


vjp_rules[select_and_gather_add_p] = _gather_vjp


def _scatter_rule(source: TensorType, x: TensorType, *, select, window_dimensions,
                  window_strides, padding) -> TensorType:
    _check_kind("select_and_scatter_add", x, FLOAT)
    if source.dtype != x.dtype:
        raise ShapeError(f"select_and_scatter_add: source {source} and operand {x} must have "
                         "one dtype")
    want = window_output_shape("select_and_scatter_add", x.shape,
                               window_dimensions=window_dimensions,
                               window_strides=window_strides, padding=padding)
    if source.shape != want:
        raise ShapeError(f"select_and_scatter_add: source {source} must have the windowed "
                         f"shape {want} of operand {x}")
    if select not in ("ge", "le"):
        raise ShapeError(f"select_and_scatter_add: select must be 'ge' or 'le', got {select!r}")
    return x


def _scatter_impl(source, x, *, select, window_dimensions, window_strides, padding):
    # XLA's SelectAndScatter: in each window, over the operand's own (unpadded) elements in
    # order, keep the current pick while select(current, next) holds.
    x = np.asarray(x)
    out = np.zeros_like(x)
    better = _pick(select)
    for pos in np.ndindex(*np.shape(source)):
        chosen = None
        for offset in np.ndindex(*window_dimensions):
            index = tuple(p * s + o - lo for p, s, o, (lo, _) in
                          zip(pos, window_strides, offset, padding, strict=True))
            if not all(0 <= i < d for i, d in zip(index, x.shape, strict=True)):
                continue
            if chosen is None or not better(x[chosen], x[index]):
                chosen = index
        if chosen is not None:
            out[chosen] += source[pos]
    return out


select_and_scatter_add_p = declare("select_and_scatter_add", _scatter_rule, _scatter_impl)


def _scatter_lowering(ctx, eqn, source, x):
    p = eqn.params
    dtype = eqn.inputs[1].type.dtype
    scalar = TensorType((), dtype)
    op = hlo.SelectAndScatterOp(
        mlir_type(eqn.outputs[0].type), x, source, ctx.constant(0, scalar),
        window_dimensions=list(p["window_dimensions"]),
        window_strides=list(p["window_strides"]), padding=padding_attr(p["padding"]))
    s = mlir_type(scalar)
    block = op.regions[0].blocks.append(s, s)
    with ir.InsertionPoint(block):
        hlo.ReturnOp([compare(*block.arguments, "GE" if p["select"] == "ge" else "LE",
                              dtype)])
    fill_reducer(hlo.AddOp, scalar, op.regions[1])
    return op.result


lower_rules[select_and_scatter_add_p] = _scatter_lowering


def _scatter_batch_rule(b, axis, args, dims, *, select, window_dimensions, window_strides,
                        padding):
    source, x = both_batched(b, axis, args, dims)
    return [b.select_and_scatter_add(source, x, select=select,
                                     window_dimensions=(1, *window_dimensions),
                                     window_strides=(1, *window_strides),
                                     padding=((0, 0), *padding))], [0]


def _scatter_vjp(b, ct, source, x, *, select, window_dimensions, window_strides, padding):
    n = x.type.ndim
    return [b.select_and_gather_add(ct, x, select=select, window_dimensions=window_dimensions,
                                    window_strides=window_strides, padding=padding,
                                    base_dilation=(1,) * n, window_dilation=(1,) * n), None]


batch_rules[select_and_scatter_add_p] = _scatter_batch_rule
jvp_rules[select_and_scatter_add_p] = linear_jvp(select_and_scatter_add_p, 0)
vjp_rules[select_and_scatter_add_p] = _scatter_vjp
