"""Elementwise primitives: unary and binary math, comparisons, logic, select, convert.

Elementwise operands share one shape, except that rank-0 operands broadcast.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir.dialects import stablehlo as hlo

from ..builder import lit
from ..ir import TensorType
from ..passes.autodiff import nondifferentiable, unbroadcast, vjp_rules
from ..passes.vmap import batch_rules
from ..stablehlo import elementwise_lowering, lower_rules
from .core import (ShapeError, declare, elementwise_binary, elementwise_unary,
                   same_shape_or_scalar)
from .rules import elementwise_batch_rule

# --- unary math ----------------------------------------------------------------------------

neg_p = elementwise_unary("neg", np.negative, "iufc")
vjp_rules[neg_p] = lambda b, ct, x: [b.neg(ct)]
lower_rules[neg_p] = elementwise_lowering(hlo.NegOp)

sin_p = elementwise_unary("sin", np.sin)
vjp_rules[sin_p] = lambda b, ct, x: [b.mul(ct, b.cos(x))]             # d sin = cos
lower_rules[sin_p] = elementwise_lowering(hlo.SineOp)

cos_p = elementwise_unary("cos", np.cos)
vjp_rules[cos_p] = lambda b, ct, x: [b.neg(b.mul(ct, b.sin(x)))]      # d cos = -sin
lower_rules[cos_p] = elementwise_lowering(hlo.CosineOp)

tanh_p = elementwise_unary("tanh", np.tanh)
vjp_rules[tanh_p] = lambda b, ct, x: [                                 # 1 - tanh^2
    b.mul(ct, b.sub(lit(1, x.type.dtype), b.mul(b.tanh(x), b.tanh(x))))]
lower_rules[tanh_p] = elementwise_lowering(hlo.TanhOp)

exp_p = elementwise_unary("exp", np.exp)
vjp_rules[exp_p] = lambda b, ct, x: [b.mul(ct, b.exp(x))]
lower_rules[exp_p] = elementwise_lowering(hlo.ExpOp)

log_p = elementwise_unary("log", np.log)
vjp_rules[log_p] = lambda b, ct, x: [b.div(ct, x)]
lower_rules[log_p] = elementwise_lowering(hlo.LogOp)

# --- binary math ---------------------------------------------------------------------------

add_p = elementwise_binary("add", np.add)
vjp_rules[add_p] = lambda b, ct, x, y: [unbroadcast(b, ct, x.type), unbroadcast(b, ct, y.type)]
lower_rules[add_p] = elementwise_lowering(hlo.AddOp)

sub_p = elementwise_binary("sub", np.subtract)
vjp_rules[sub_p] = lambda b, ct, x, y: [unbroadcast(b, ct, x.type),
                                        unbroadcast(b, b.neg(ct), y.type)]
lower_rules[sub_p] = elementwise_lowering(hlo.SubtractOp)

mul_p = elementwise_binary("mul", np.multiply)
vjp_rules[mul_p] = lambda b, ct, x, y: [unbroadcast(b, b.mul(ct, y), x.type),
                                        unbroadcast(b, b.mul(ct, x), y.type)]
lower_rules[mul_p] = elementwise_lowering(hlo.MulOp)

def _div_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if np.asarray(x).dtype.kind in "iu":     # integer division truncates toward zero, like C
        return (np.sign(x) * np.sign(y) * (np.abs(x) // np.maximum(np.abs(y), 1))).astype(x.dtype)
    return np.divide(x, y)

div_p = elementwise_binary("div", _div_impl)
vjp_rules[div_p] = lambda b, ct, x, y: [                              # d(x/y) = dx/y - x dy/y^2
    unbroadcast(b, b.div(ct, y), x.type),
    unbroadcast(b, b.neg(b.mul(ct, b.div(b.div(x, y), y))), y.type)]
lower_rules[div_p] = elementwise_lowering(hlo.DivOp)

# --- type conversion -------------------------------------------------------------------------

def _convert_rule(x: TensorType, *, new_dtype: np.dtype) -> TensorType:
    return TensorType(x.shape, np.dtype(new_dtype))

convert_p = declare("convert", _convert_rule, lambda x, *, new_dtype: np.asarray(x).astype(new_dtype))
vjp_rules[convert_p] = lambda b, ct, x, *, new_dtype: [
    b.convert(ct, new_dtype=x.type.dtype) if x.type.dtype.kind in "fc" else None]
lower_rules[convert_p] = lambda ctx, eqn, x: hlo.ConvertOp(
    ctx.mlir_type(eqn.outputs[0].type), x).result

for p in (neg_p, sin_p, cos_p, tanh_p, exp_p, log_p, add_p, sub_p, mul_p, div_p, convert_p):
    batch_rules[p] = elementwise_batch_rule(p)

__all__ = [name for name in dir() if name.endswith("_p")]
_ = (ShapeError, same_shape_or_scalar, nondifferentiable)
