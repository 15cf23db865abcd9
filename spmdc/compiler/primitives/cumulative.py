"""Cumulative scans: cumsum, cumprod, cummax, cummin (x, axis=int, reverse=bool).

``out[..., i, ...]`` reduces ``x`` over positions ``0..i`` of ``axis`` (``i..n-1`` when
``reverse``); the output type is the operand type. Lowered with stablehlo.reduce_window: a
window as long as the axis, padded with the identity on the side the scan comes from.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..builder import Builder, lit
from ..ir import TensorType
from ..passes.autodiff import vjp_func, vjp_rules
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import batch_rules, move_axis
from ..stablehlo import LoweringContext, hlo, ir, lower_rules, mlir_type
from .complex_order import ComplexMaxOp, ComplexMinOp, numpy_accumulate_extremum
from .core import ShapeError, _check_kind, declare
from .reductions import fill_reducer, identity_of

__all__ = ["cumsum_p", "cumprod_p", "cummax_p", "cummin_p", "prefix_products"]


def _cumulative_rule(name: str, kinds: str):
    def rule(x: TensorType, *, axis: int, reverse: bool) -> TensorType:
        _check_kind(name, x, kinds)
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} is out of range for operand {x}")
        return x
    return rule


def _cumulative_impl(kind: str, ufunc: np.ufunc):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        if x.dtype.kind == "c" and kind in ("max", "min"):     # See Note [complex order]
            return numpy_accumulate_extremum(kind, x, axis, reverse,
                                             identity_of(kind, x.dtype))
        if reverse:
            return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis, dtype=x.dtype), axis)
        return ufunc.accumulate(x, axis=axis, dtype=x.dtype)
    return impl


def _cumulative_lowering(kind: str, op_class: Any, bool_op_class: Any = None,
                         complex_op_class: Any = None):
    def rule(ctx: LoweringContext, eqn, x):
        t = eqn.inputs[0].type
        axis, reverse = eqn.params["axis"], eqn.params["reverse"]
        if t.size == 0:                  # nothing to scan (and windows must be non-empty)
            return x
        n = t.shape[axis]
        window = [n if d == axis else 1 for d in range(t.ndim)]
        padding = np.zeros((t.ndim, 2), np.int64)
        padding[axis] = (0, n - 1) if reverse else (n - 1, 0)
        scalar = TensorType((), t.dtype)
        op = hlo.ReduceWindowOp([mlir_type(t)], [x],
                                [ctx.constant(identity_of(kind, t.dtype), scalar)],
                                ir.DenseI64ArrayAttr.get(window),
                                window_strides=ir.DenseI64ArrayAttr.get([1] * t.ndim),
                                padding=ir.DenseIntElementsAttr.get(padding))
        special = {"b": bool_op_class, "c": complex_op_class}.get(t.dtype.kind)
        fill_reducer(special or op_class, scalar, op.regions[0])
        return op.results[0]
    return rule


def _cumulative_batch_rule(prim):
    # The rule's second argument is the BatchAxis; ``axis`` is the primitive's parameter.
    def rule(b, batch_axis, args, dims, *, axis, reverse):
        x = move_axis(b, args[0], dims[0], 0)
        return [b.bind(prim, x, axis=axis + 1, reverse=reverse)], [0]
    return rule


def _cumulative(name: str, kind: str, ufunc: np.ufunc, kinds: str, op_class: Any,
                bool_op_class: Any = None, complex_op_class: Any = None):
    prim = declare(name, _cumulative_rule(name, kinds), _cumulative_impl(kind, ufunc))
    lower_rules[prim] = _cumulative_lowering(kind, op_class, bool_op_class, complex_op_class)
    batch_rules[prim] = _cumulative_batch_rule(prim)
    return prim


cumsum_p = _cumulative("cumsum", "sum", np.add, "iufc", hlo.AddOp)
# Each x_j feeds every later output, so its cotangent is the sum of the later cotangents.
jvp_rules[cumsum_p] = linear_jvp(cumsum_p)
vjp_rules[cumsum_p] = lambda b, ct, x, *, axis, reverse: [
    b.cumsum(ct, axis=axis, reverse=not reverse)]

cumprod_p = _cumulative("cumprod", "prod", np.multiply, "iufc", hlo.MulOp)


# Note [products without division]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# d prod(x) / d x_j is the product of the others, and d cumprod(x)_i / d x_j the product
# of the others in the prefix. Writing either as ``product / x_j`` is NaN (0/0) or inf at
# a zero, where the true value is finite: grad(jnp.prod) at [1, 0, 3] is [0, 3, 0].
# So neither rule divides. ``prefix_products`` computes (exclusive) prefix products by
# doubling -- log2(n) rounds of "multiply by myself shifted by 1, 2, 4 ... places" (pad
# with 1) -- and reduce_prod's cotangent is ct times exclusive-left times exclusive-right
# products. cumprod's VJP is the VJP of that doubling program, derived by the autodiff
# pass from the rules of mul and pad; both stay exact at zeros to every order.

def _shifted(b, x, axis: int, by: int, fill: float):
    """``out[i] = x[i - by]`` along ``axis`` (``fill`` where that is out of range)."""
    config = [(0, 0, 0)] * x.type.ndim
    config[axis] = (by, -by, 0)
    return b.pad(x, lit(fill, x.type.dtype), padding_config=tuple(config))


def prefix_products(b, x, axis: int, reverse: bool = False, exclusive: bool = False):
    """cumprod by doubling, without division (Note [products without division])."""
    n, sign = x.type.shape[axis], -1 if reverse else 1
    y = _shifted(b, x, axis, sign, 1) if exclusive and n else x
    step = 1
    while step < n:
        y = b.mul(y, _shifted(b, y, axis, sign * step, 1))
        step *= 2
    return y


def _cumprod_by_doubling(x: TensorType, axis: int, reverse: bool):
    doubling = Builder("cumprod_by_doubling")
    v = doubling.input(x)
    return doubling.build([prefix_products(doubling, v, axis, reverse)])


def _cumprod_vjp(b, ct, x, *, axis, reverse):
    # See Note [products without division].
    func = _cumprod_by_doubling(x.type, axis, reverse)
    return [b.inline(vjp_func(func, [True]), [x, ct])[1]]


def _cumprod_jvp(b, primals, tangents, *, axis, reverse):
    # d out_i = sum_{j in prefix(i)} t_j prod_{k in prefix(i), k != j} x_k, without dividing
    # by x (zeros are fine): Hillis-Steele doubling on pairs (p, dp), where a prefix joined
    # with the one s places before it gives (p q, dp q + p dq); the shift brings in (1, 0).
    (x,), (t,) = primals, tangents
    out = b.cumprod(x, axis=axis, reverse=reverse)
    p, dp, step = x, t, 1
    while step < x.type.shape[axis]:
        q, dq = _shift(b, p, step, axis, reverse, 1), _shift(b, dp, step, axis, reverse, 0)
        p, dp = b.mul(p, q), b.add(b.mul(dp, q), b.mul(p, dq))
        step *= 2
    return [out], [dp]


def _shift(b, v, step, axis, reverse, fill):
    """``v`` moved ``step`` places along ``axis`` (toward the end, or the start when
    ``reverse``), ``fill`` coming in."""
    config = [(0, 0, 0)] * v.type.ndim
    config[axis] = (-step, step, 0) if reverse else (step, -step, 0)
    return b.pad(v, lit(fill, v.type.dtype), padding_config=tuple(config))


jvp_rules[cumprod_p] = _cumprod_jvp
vjp_rules[cumprod_p] = _cumprod_vjp

cummax_p = _cumulative("cummax", "max", np.maximum, "biufc", hlo.MaxOp, hlo.OrOp,
                       ComplexMaxOp)
cummin_p = _cumulative("cummin", "min", np.minimum, "biufc", hlo.MinOp, hlo.AndOp,
                       ComplexMinOp)


def _cumulative_extremum_vjp(prim):
    # out_i is the extremum of a prefix, so its cotangent goes where reduce_max's would: to
    # the prefix positions equal to out_i, divided evenly among ties. We build the
    # (n, n) matrix hits[i, j] = (j in the prefix of i) * (x_j == out_i) along the axis, so
    # this costs O(n^2) memory per scanned row; fine for the sizes scans see in practice.
    def rule(b, ct, x, *, axis, reverse):
        t = x.type
        n, last = t.shape[axis], t.ndim          # in (..., i, j) the j dimension is `last`
        xs = move_axis(b, x, axis, t.ndim - 1)
        outs = move_axis(b, b.bind(prim, x, axis=axis, reverse=reverse), axis, t.ndim - 1)
        cts = move_axis(b, ct, axis, t.ndim - 1)
        square = (*xs.type.shape, n)
        rows = tuple(range(t.ndim - 1))
        x_j = b.broadcast_in_dim(xs, shape=square, broadcast_dimensions=(*rows, last))
        out_i = b.broadcast_in_dim(outs, shape=square, broadcast_dimensions=(*rows, last - 1))
        i = b.iota(dtype=np.dtype(np.int32), shape=(n, n), dimension=0)
        j = b.iota(dtype=np.dtype(np.int32), shape=(n, n), dimension=1)
        prefix = b.convert(b.ge(j, i) if reverse else b.le(j, i), new_dtype=t.dtype)
        prefix = b.broadcast_in_dim(prefix, shape=square, broadcast_dimensions=(last - 1, last))
        hits = b.mul(prefix, b.convert(b.eq(x_j, out_i), new_dtype=t.dtype))
        share = b.div(cts, b.reduce_sum(hits, axes=(last,)))
        share = b.broadcast_in_dim(share, shape=square, broadcast_dimensions=(*rows, last - 1))
        ct_x = b.reduce_sum(b.mul(hits, share), axes=(last - 1,))
        return [move_axis(b, ct_x, t.ndim - 1, axis)]
    return rule


def _cumulative_extremum_jvp(prim):
    # The tangent of out_i is the mean tangent of the prefix positions equal to out_i: the
    # transpose of _cumulative_extremum_vjp's hits matrix, built the same way.
    def rule(b, primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        nd = x.type.ndim
        n, last = x.type.shape[axis], nd
        out = b.bind(prim, x, axis=axis, reverse=reverse)
        xs, outs, ts = (move_axis(b, v, axis, nd - 1) for v in (x, out, t))
        square = (*xs.type.shape, n)
        rows = tuple(range(nd - 1))
        x_j = b.broadcast_in_dim(xs, shape=square, broadcast_dimensions=(*rows, last))
        t_j = b.broadcast_in_dim(ts, shape=square, broadcast_dimensions=(*rows, last))
        out_i = b.broadcast_in_dim(outs, shape=square, broadcast_dimensions=(*rows, last - 1))
        i = b.iota(dtype=np.dtype(np.int32), shape=(n, n), dimension=0)
        j = b.iota(dtype=np.dtype(np.int32), shape=(n, n), dimension=1)
        prefix = b.convert(b.ge(j, i) if reverse else b.le(j, i), new_dtype=x.type.dtype)
        prefix = b.broadcast_in_dim(prefix, shape=square, broadcast_dimensions=(last - 1, last))
        hits = b.mul(prefix, b.convert(b.eq(x_j, out_i), new_dtype=x.type.dtype))
        tout = b.div(b.reduce_sum(b.mul(hits, t_j), axes=(last,)),
                     b.reduce_sum(hits, axes=(last,)))
        return [out], [move_axis(b, tout, nd - 1, axis)]
    return rule


jvp_rules[cummax_p] = _cumulative_extremum_jvp(cummax_p)
vjp_rules[cummax_p] = _cumulative_extremum_vjp(cummax_p)
jvp_rules[cummin_p] = _cumulative_extremum_jvp(cummin_p)
vjp_rules[cummin_p] = _cumulative_extremum_vjp(cummin_p)
