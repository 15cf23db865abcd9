"""Reductions and contractions: reduce_{sum,max,min,prod}, argmax/argmin, dot_general."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from ..ir import TensorType
from ..stablehlo import LoweringContext, lower_rules, mlir_type
from ..passes.autodiff import vjp_rules
from ..passes.vmap import batch_rules, move_axis
from .core import ShapeError, declare, same_dtype

# --- reductions ------------------------------------------------------------------------------

def _reduce_rule(name: str):
    def rule(x: TensorType, *, axes: tuple[int, ...]) -> TensorType:
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            raise ShapeError(f"{name}: axes {axes} out of range or repeated for operand {x}")
        return TensorType(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)
    return rule


def reduce_lowering(op_class, init):
    """Lower a reduction with the binary ``op_class`` and identity ``init(dtype)``."""
    def rule(ctx: LoweringContext, eqn, x):
        t = eqn.inputs[0].type
        scalar = TensorType((), t.dtype)
        init_value = ctx.constant(init(t.dtype), scalar)
        op = hlo.ReduceOp([mlir_type(eqn.outputs[0].type)], [x], [init_value],
                          ir.DenseI64ArrayAttr.get(list(eqn.params["axes"])))
        block = op.regions[0].blocks.append(mlir_type(scalar), mlir_type(scalar))
        with ir.InsertionPoint(block):
            hlo.ReturnOp([op_class(*block.arguments).result])
        return op.results[0]
    return rule


reduce_sum_p = declare("reduce_sum", _reduce_rule("reduce_sum"),
                       lambda x, *, axes: np.sum(x, axis=axes, dtype=x.dtype))
lower_rules[reduce_sum_p] = reduce_lowering(hlo.AddOp, lambda dtype: 0)

# --- dot_general -----------------------------------------------------------------------------

def _dot_general_rule(x: TensorType, y: TensorType, *, contract, batch) -> TensorType:
    same_dtype("dot_general", x, y)
    (xc, yc), (xb, yb) = contract, batch
    if len(xc) != len(yc) or len(xb) != len(yb):
        raise ShapeError(f"dot_general: contract={contract} batch={batch} pair up unequal "
                         "numbers of dimensions")
    for a, c in ((xc, yc), (xb, yb)):
        for i, j in zip(a, c, strict=True):
            if not (0 <= i < x.ndim and 0 <= j < y.ndim) or x.shape[i] != y.shape[j]:
                raise ShapeError(f"dot_general: cannot contract {x} with {y} "
                                 f"(contract={contract}, batch={batch})")
    free_x = [d for i, d in enumerate(x.shape) if i not in xc and i not in xb]
    free_y = [d for i, d in enumerate(y.shape) if i not in yc and i not in yb]
    return TensorType(tuple([x.shape[i] for i in xb] + free_x + free_y), x.dtype)


def _dot_general_impl(x, y, *, contract, batch):
    (xc, yc), (xb, yb) = contract, batch
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    xs = [next(letters) for _ in range(x.ndim)]
    ys = [next(letters) for _ in range(y.ndim)]
    for i, j in zip(xc + xb, yc + yb, strict=True):
        ys[j] = xs[i]
    out = [xs[i] for i in xb] + [s for i, s in enumerate(xs) if i not in xc and i not in xb] \
        + [s for i, s in enumerate(ys) if i not in yc and i not in yb]
    spec = f"{''.join(xs)},{''.join(ys)}->{''.join(out)}"
    return np.einsum(spec, x, y).astype(np.result_type(x, y))


dot_general_p = declare("dot_general", _dot_general_rule, _dot_general_impl)


def _dot_general_lowering(ctx, eqn, x, y):
    (xc, yc), (xb, yb) = eqn.params["contract"], eqn.params["batch"]
    dims = hlo.DotDimensionNumbers.get(lhs_batching_dimensions=list(xb),
                                       rhs_batching_dimensions=list(yb),
                                       lhs_contracting_dimensions=list(xc),
                                       rhs_contracting_dimensions=list(yc))
    return hlo.DotGeneralOp(mlir_type(eqn.outputs[0].type), x, y, dims).result


lower_rules[dot_general_p] = _dot_general_lowering


def _reduce_sum_vjp(b, ct, x, *, axes):
    kept = tuple(d for d in range(x.type.ndim) if d not in axes)
    return [b.broadcast_in_dim(ct, shape=x.type.shape, broadcast_dimensions=kept)]


def _reduce_batch_rule(prim):
    def rule(b, axis, args, dims, *, axes):
        x = move_axis(b, args[0], dims[0], 0)
        return [b.bind(prim, x, axes=tuple(a + 1 for a in axes))], [0]
    return rule


vjp_rules[reduce_sum_p] = _reduce_sum_vjp
batch_rules[reduce_sum_p] = _reduce_batch_rule(reduce_sum_p)
