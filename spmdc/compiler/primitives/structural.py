"""Shape-changing primitives: broadcast_in_dim, reshape, transpose, slicing, gather ..."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from ..ir import TensorType
from ..stablehlo import lower_rules
from .core import ShapeError, declare

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


broadcast_in_dim_p = declare("broadcast_in_dim", _broadcast_in_dim_rule, _broadcast_in_dim_impl)
lower_rules[broadcast_in_dim_p] = lambda ctx, eqn, x: hlo.BroadcastInDimOp(
    ctx.mlir_type(eqn.outputs[0].type), x,
    ir.DenseI64ArrayAttr.get(list(eqn.params["broadcast_dimensions"]))).result

# --- transpose -------------------------------------------------------------------------------

def _transpose_rule(x: TensorType, *, permutation: tuple[int, ...]) -> TensorType:
    if sorted(permutation) != list(range(x.ndim)):
        raise ShapeError(f"transpose: {permutation} is not a permutation of the axes of {x}")
    return TensorType(tuple(x.shape[p] for p in permutation), x.dtype)


transpose_p = declare("transpose", _transpose_rule,
                      lambda x, *, permutation: np.transpose(x, permutation))
lower_rules[transpose_p] = lambda ctx, eqn, x: hlo.TransposeOp(
    x, ir.DenseI64ArrayAttr.get(list(eqn.params["permutation"]))).result

# --- reshape ---------------------------------------------------------------------------------

def _reshape_rule(x: TensorType, *, new_sizes: tuple[int, ...]) -> TensorType:
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size or any(d < 0 for d in new_sizes):
        raise ShapeError(f"reshape: cannot reshape {x} ({x.size} elements) to {new_sizes}")
    return TensorType(tuple(new_sizes), x.dtype)


reshape_p = declare("reshape", _reshape_rule, lambda x, *, new_sizes: np.reshape(x, new_sizes))
lower_rules[reshape_p] = lambda ctx, eqn, x: hlo.ReshapeOp(
    ctx.mlir_type(eqn.outputs[0].type), x).result
