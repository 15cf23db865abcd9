"""spmdc.lax's contractions: dot_general (with precision and preferred_element_type, see
Note [dot precision] and Note [dot algorithms]), dot and batch_matmul. ragged_dot is in
ragged.py, the convolutions in convolution.py.
"""
from __future__ import annotations

import builtins
from typing import Any

from ..compiler.primitives.reductions import dot_general_p, with_precision
from ..core.operands import (
    all_weak,
    asarray,
)
from ..core.precision import (
    Algorithm,
    check_precision,
    dot_operands,
    preferred_operands,
    preferred_result,
)
from ..core.tracing import bind
from ..transforms.partitioned import place_computed

__all__ = ["dot_general", "dot", "batch_matmul"]


def dot_general(x: Any, y: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """Contract ``x`` and ``y`` over the dimensions ``((x_contract, y_contract), (x_batch,
    y_batch))``; ``preferred_element_type`` is the dtype both are converted to first (and
    so the result's), e.g. int8 operands accumulating in int32; floating operands with an
    integer type are contracted as they are and the result converted, as in JAX.
    ``precision`` (a lax.Precision, its string alias, a pair, or a dot algorithm) becomes
    the lowered dot's precision_config (Note [dot precision], Note [dot algorithms]).
    ``out_sharding`` (a NamedSharding or a PartitionSpec over the current mesh) lays the
    result out so, as a sharding constraint on it (``place_computed``)."""
    precision = check_precision("dot_general", precision)
    (xc, yc), (xb, yb) = dimension_numbers
    x, y = preferred_operands("dot_general", asarray(x), asarray(y), preferred_element_type)
    return place_computed(lambda: preferred_result(dot_general_checked(
        x, y, ((tuple(xc), tuple(yc)), (tuple(xb), tuple(yb))), precision),
        preferred_element_type), out_sharding)


def dot_general_checked(x: Any, y: Any, dimension_numbers: Any, precision: Any) -> Any:
    """``dot_general`` of two spmdc arrays whose checks are done: ``precision`` in
    ``check_precision``'s canonical form, dimension numbers as tuples, operands already of
    their preferred type. numpy's products call it after their own checks."""
    contract, batch = dimension_numbers
    if isinstance(precision, Algorithm):            # See Note [dot algorithms]
        x, y, out = dot_operands("dot_general", x, y, precision)
        z = bind(dot_general_p, x, y, contract=contract, batch=batch, weak=all_weak(x, y),
                 **with_precision(("DEFAULT", "DEFAULT"), precision.param))
        return z if z.dtype == out else z.astype(out)
    return bind(dot_general_p, x, y, contract=contract, batch=batch, weak=all_weak(x, y),
                **with_precision(precision))


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None,
        out_sharding: Any = None) -> Any:
    """Vector/matrix products of rank-1 and rank-2 operands (contracting lhs's last axis
    with rhs's first); ``out_sharding`` as dot_general's."""
    x, y = asarray(lhs), asarray(rhs)
    if x.ndim not in (1, 2) or y.ndim not in (1, 2):
        raise TypeError(f"lax.dot needs rank-1 or rank-2 operands, got shapes {x.shape} and "
                        f"{y.shape}; use lax.dot_general")
    return dot_general(x, y, (((x.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type, out_sharding)


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products over the leading (batch) dimensions of two arrays of one rank."""
    lhs, rhs = asarray(lhs), asarray(rhs)
    if builtins.min(lhs.ndim, rhs.ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs.ndim}, "
                         f"{rhs.ndim}")
    if lhs.ndim != rhs.ndim:
        raise ValueError(f"Arguments to batch_matmul must have the same rank, got {lhs.ndim}, "
                         f"{rhs.ndim}")
    batch = tuple(range(lhs.ndim - 2))
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)),
                       precision=precision)
