"""sort: a stable (or not) sort of several same-shaped operands along one dimension,
ordered by the first ``num_keys`` of them (lexicographically); the others ride along.

``sort(*operands, dimension=int, is_stable=bool, num_keys=int) -> operands, sorted``.
See Note [sort order] for how floats compare, Note [complex order] (complex_order.py)
for complex keys.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ..ir import TensorType, dtype_kind
from ..passes.autodiff import is_float, vjp_rules
from ..passes.forward import instantiate, jvp_rules
from ..passes.vmap import batch_rules, batch_to_front
from ..stablehlo import hlo, ir, lower_rules, mlir_type
from .complex_parts import real_dtype
from .core import ShapeError, declare
from .reductions import compare

__all__ = ["sort_p"]

# Note [sort order]
# ~~~~~~~~~~~~~~~~~
# Keys compare in a total order, as in JAX: for floats -0.0 equals 0.0, every NaN equals
# every other NaN and is greater than +inf (so NaNs go last), and otherwise < is IEEE's.
# Several keys compare lexicographically: key 0 first, ties broken by key 1, and so on;
# with is_stable, elements whose keys are all equal keep their order. The comparator is
#
#     less(a, b) = lt0 or (eq0 and (lt1 or (eq1 and ... lt_{k-1})))
#     lt(a, b)   = a < b  or (isnan(b) and not isnan(a))       (floats; plain < otherwise)
#     eq(a, b)   = a == b or (isnan(a) and isnan(b))
#
# The NumPy reference sorts by the same order: each float key becomes the pair
# (isnan(k), k + 0.0 with NaNs zeroed), whose lexicographic order is this one.
#
# The fnuz float8s (e4m3fnuz, e5m2fnuz, e4m3b11fnuz) have one NaN, the bit pattern of
# -0.0, and XLA's total order (which JAX's sort uses) puts it below every number: for
# them NaNs go first (lt gains ``isnan(a) and not isnan(b)`` instead), as in JAX.

_NAN_FIRST = frozenset(np.dtype(getattr(ml_dtypes, name)) for name in (
    "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz"))


def _sort_rule(*operands: TensorType, dimension: int, is_stable: bool, num_keys: int):
    if not operands:
        raise ShapeError("sort needs at least one operand")
    shape = operands[0].shape
    if any(t.shape != shape for t in operands):
        raise ShapeError("sort: operands must have one shape, got "
                         + ", ".join(str(t) for t in operands))
    if not 0 <= dimension < len(shape):
        raise ShapeError(f"sort: dimension {dimension} is out of range for {operands[0]}")
    if not 1 <= num_keys <= len(operands):
        raise ShapeError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(operands)})")
    return tuple(operands)


def _numpy_keys(key: np.ndarray) -> list[np.ndarray]:
    """``key`` as NumPy sort keys (most significant first) in Note [sort order]'s order."""
    if key.dtype.kind == "c":                   # See Note [complex order]
        return _numpy_keys(key.real) + _numpy_keys(key.imag)
    if dtype_kind(key.dtype) == "f":
        wide = key.astype(np.float64)
        nan = np.isnan(wide)
        return [~nan if key.dtype in _NAN_FIRST else nan, np.where(nan, 0.0, wide) + 0.0]
    return [key]


def _sort_impl(*operands, dimension, is_stable, num_keys):
    operands = [np.asarray(x) for x in operands]
    keys = [k for x in operands[:num_keys] for k in _numpy_keys(x)]
    # np.lexsort is stable and takes its most significant key last.
    order = np.lexsort(keys[::-1], axis=dimension)
    return tuple(np.take_along_axis(x, order, axis=dimension) for x in operands)


# --- batching: every operand batched at 0, the sorted dimension one further --------------------

def _sort_batch(b, axis, args, dims, *, dimension, is_stable, num_keys):
    moved = [batch_to_front(b, x, d, axis.size) for x, d in zip(args, dims, strict=True)]
    outs = b.sort(*moved, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return list(outs), [0] * len(outs)


# --- VJP: the permutation, applied backwards ---------------------------------------------------
# Sorting the operands together with an iota gives the permutation perm (sorted position k
# holds original position perm[k]). The cotangent of an operand puts ct[k] back at perm[k],
# which is itself a sort: of (perm, ct) by perm, whose keys are distinct.

def _sort_vjp(b, cts, *operands, dimension, is_stable, num_keys):
    t = operands[0].type
    iota = b.iota(dtype=np.dtype(np.int32), shape=t.shape, dimension=dimension)
    perm = b.sort(*operands, iota, dimension=dimension, is_stable=is_stable,
                  num_keys=num_keys)[-1]
    wanted = [k for k, (x, ct) in enumerate(zip(operands, cts, strict=True))
              if ct is not None and is_float(x.type)]
    out: list[Any] = [None] * len(operands)
    if wanted:
        back = b.sort(perm, *(cts[k] for k in wanted), dimension=dimension, is_stable=False,
                      num_keys=1)
        for k, ct in zip(wanted, back[1:], strict=True):
            out[k] = ct
    return out


# --- JVP: the tangents ride along ------------------------------------------------------------
# Each sorted output is its operand permuted, so its tangent is the operand's tangent
# permuted the same way: sort the tangents as extra (non-key) operands.

def _sort_jvp(b, primals, tangents, *, dimension, is_stable, num_keys):
    carried = [k for k, (x, t) in enumerate(zip(primals, tangents, strict=True))
               if t is not None and is_float(x.type)]
    outs = b.sort(*primals, *(instantiate(b, tangents[k], primals[k]) for k in carried),
                  dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    n = len(primals)
    out_tangents: list[Any] = [None] * n
    for k, t in zip(carried, outs[n:], strict=True):
        out_tangents[k] = t
    return list(outs[:n]), out_tangents


# --- lowering ----------------------------------------------------------------------------------

def _lt_eq(x: ir.Value, y: ir.Value, dtype: np.dtype) -> tuple[ir.Value, ir.Value]:
    """``x < y`` and ``x == y`` in Note [sort order]'s total order."""
    lt, eq = compare(x, y, "LT", dtype), compare(x, y, "EQ", dtype)
    if dtype_kind(dtype) != "f":
        return lt, eq
    x_nan, y_nan = compare(x, x, "NE", dtype), compare(y, y, "NE", dtype)
    if np.dtype(dtype) in _NAN_FIRST:       # See Note [sort order]: NaNs go first
        lt = hlo.OrOp(lt, hlo.AndOp(x_nan, hlo.NotOp(y_nan).result).result).result
    else:
        lt = hlo.OrOp(lt, hlo.AndOp(y_nan, hlo.NotOp(x_nan).result).result).result
    eq = hlo.OrOp(eq, hlo.AndOp(x_nan, y_nan).result).result
    return lt, eq


def _key_parts(x: ir.Value, y: ir.Value, dtype: np.dtype) -> list[tuple[Any, Any, np.dtype]]:
    """A key's comparands: a complex key compares by its real, then its imaginary part
    (Note [complex order]); any other key by itself."""
    if dtype.kind != "c":
        return [(x, y, dtype)]
    part = real_dtype(dtype)
    return [(hlo.RealOp(x).result, hlo.RealOp(y).result, part),
            (hlo.ImagOp(x).result, hlo.ImagOp(y).result, part)]


def _sort_lowering(ctx, eqn, *operands):
    params = eqn.params
    types = [a.type for a in eqn.inputs]
    op = hlo.SortOp([mlir_type(t) for t in types], list(operands),
                    dimension=params["dimension"], is_stable=params["is_stable"])
    scalars = [mlir_type(TensorType((), t.dtype)) for t in types for _ in (0, 1)]
    block = op.comparator.blocks.append(*scalars)
    with ir.InsertionPoint(block):
        keys = [pair for k in range(params["num_keys"])
                for pair in _key_parts(block.arguments[2 * k], block.arguments[2 * k + 1],
                                       types[k].dtype)]
        less = None
        for x, y, dtype in reversed(keys):                # innermost key first
            lt, eq = _lt_eq(x, y, dtype)
            less = lt if less is None else hlo.OrOp(lt, hlo.AndOp(eq, less).result).result
        hlo.ReturnOp([less])
    return list(op.results)


sort_p = declare("sort", _sort_rule, _sort_impl, multiple_results=True)
batch_rules[sort_p] = _sort_batch
vjp_rules[sort_p] = _sort_vjp
jvp_rules[sort_p] = _sort_jvp
lower_rules[sort_p] = _sort_lowering
