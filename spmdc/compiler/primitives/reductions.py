"""Reductions and contractions: reduce_{sum,max,min,prod,and,or}, argmax/argmin,
dot_general. (The cumulative scans cumsum/cumprod/cummax/cummin live in cumulative.py.)

Every reduction takes ``axes``, a tuple of distinct dimensions of its operand, and drops
them from the output; reducing over no axes is the identity, reducing over a size-0 axis
gives the reduction's identity element (0, 1, -inf/+inf or the integer extremes,
False/True). See Note [reduction identities].
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from ..ir import FINITE_FLOATS, TensorType, dtype_kind, dtype_name
from ..passes.autodiff import nondifferentiable, vjp_rules
from ..passes.forward import jvp_rules, linear_jvp, reduction_jvp
from ..passes.vmap import batch_rules, move_axis
from ..stablehlo import LoweringContext, hlo, ir, lower_rules, mlir_type
from .complex_order import ComplexMaxOp, ComplexMinOp, numpy_fold_extremum
from .core import ANY, NUMBER, ShapeError, _check_kind, declare, same_dtype

__all__ = ["reduce_sum_p", "reduce_max_p", "reduce_min_p", "reduce_prod_p", "reduce_and_p",
           "reduce_or_p", "argmax_p", "argmin_p", "dot_general_p", "reduce_lowering",
           "identity_of", "fill_reducer", "compare", "compare_type"]

# Note [reduction identities]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A reduction over an empty axis returns its identity element, as NumPy's ``initial=``
# and StableHLO's ``init_values`` do: sum 0, prod 1, max -inf (floats) / the dtype's
# minimum (integers) / False (bool), min +inf / the dtype's maximum / True, and True,
# False for and, or. On bool, max is "or" and min is "and". The same identities seed the
# StableHLO reductions, so the reference and the lowering agree on empty axes. NaN
# propagates through max and min (NumPy and StableHLO agree).


def identity_of(kind: str, dtype: np.dtype) -> Any:
    """The identity element of the reduction ``kind`` ('sum', 'prod', 'max', 'min',
    'and', 'or') over ``dtype``. See Note [reduction identities]."""
    dtype = np.dtype(dtype)
    if kind in ("sum", "prod"):
        return 0 if kind == "sum" else 1
    if dtype == np.bool_ or kind in ("and", "or"):
        return kind in ("min", "and")
    if dtype_kind(dtype) in "iu":
        info = ml_dtypes.iinfo(dtype)
        return int(info.min) if kind == "max" else int(info.max)
    if dtype in FINITE_FLOATS:                 # the finite float8s: their largest finite value
        finite = float(ml_dtypes.finfo(dtype).max)
        return -finite if kind == "max" else finite
    return -np.inf if kind == "max" else np.inf


# --- shape rule, reference, lowering, batching -----------------------------------------------

def _reduce_rule(name: str, kinds: str):
    def rule(x: TensorType, *, axes: tuple[int, ...]) -> TensorType:
        _check_kind(name, x, kinds)
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            raise ShapeError(f"{name}: axes {axes} out of range or repeated for operand {x}")
        return TensorType(tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)
    return rule


def _reduce_impl(kind: str, ufunc: np.ufunc):
    def impl(x, *, axes):
        x = np.asarray(x)
        init = identity_of(kind, x.dtype)
        if x.dtype.kind == "c" and kind in ("max", "min"):     # See Note [complex order]
            return numpy_fold_extremum(kind, x, axes, init)
        return ufunc.reduce(x, axis=axes, dtype=x.dtype, initial=init)
    return impl


def fill_reducer(op_class: Any, scalar: TensorType, region: Any) -> None:
    """Fill ``region`` with the body ``(a, b) -> op_class(a, b)`` over ``scalar``s."""
    block = region.blocks.append(mlir_type(scalar), mlir_type(scalar))
    with ir.InsertionPoint(block):
        hlo.ReturnOp([op_class(*block.arguments).result])


def reduce_lowering(op_class: Any, init: Callable[[np.dtype], Any]):
    """Lower a reduction with the binary ``op_class`` and identity ``init(dtype)``."""
    def rule(ctx: LoweringContext, eqn, x):
        t = eqn.inputs[0].type
        scalar = TensorType((), t.dtype)
        op = hlo.ReduceOp([mlir_type(eqn.outputs[0].type)], [x],
                          [ctx.constant(init(t.dtype), scalar)],
                          ir.DenseI64ArrayAttr.get(list(eqn.params["axes"])))
        fill_reducer(op_class, scalar, op.regions[0])
        return op.results[0]
    return rule


def _reduce_batch_rule(prim):
    def rule(b, axis, args, dims, *, axes):
        x = move_axis(b, args[0], dims[0], 0)
        return [b.bind(prim, x, axes=tuple(a + 1 for a in axes))], [0]
    return rule


def _reduction(name: str, kind: str, ufunc: np.ufunc, kinds: str, op_class: Any,
               bool_op_class: Any = None, complex_op_class: Any = None):
    """Declare ``name`` with its shape rule, reference, lowering and batching rule.
    ``bool_op_class`` lowers bool operands (max is or, min is and), ``complex_op_class``
    complex ones (Note [complex order])."""
    prim = declare(name, _reduce_rule(name, kinds), _reduce_impl(kind, ufunc))
    rules = {dtype_kind: reduce_lowering(cls or op_class, lambda dtype: identity_of(kind, dtype))
             for dtype_kind, cls in (("b", bool_op_class), ("c", complex_op_class),
                                     ("", op_class))}
    lower_rules[prim] = lambda ctx, eqn, x: rules.get(
        eqn.inputs[0].type.dtype.kind, rules[""])(ctx, eqn, x)
    batch_rules[prim] = _reduce_batch_rule(prim)
    return prim


def _kept(x: TensorType, axes: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(d for d in range(x.ndim) if d not in axes)


def _expand(b, v, x: TensorType, axes: tuple[int, ...]):
    """Broadcast a reduced value back to the operand's shape."""
    return b.broadcast_in_dim(v, shape=x.shape, broadcast_dimensions=_kept(x, axes))


# --- the reductions --------------------------------------------------------------------------

reduce_sum_p = _reduction("reduce_sum", "sum", np.add, NUMBER, hlo.AddOp)
jvp_rules[reduce_sum_p] = linear_jvp(reduce_sum_p)
vjp_rules[reduce_sum_p] = lambda b, ct, x, *, axes: [_expand(b, ct, x.type, axes)]

reduce_prod_p = _reduction("reduce_prod", "prod", np.multiply, NUMBER, hlo.MulOp)


def _reduce_prod_vjp(b, ct, x, *, axes):
    # d prod / d x_i is the product of the others, computed without dividing by x_i,
    # which is NaN at a zero: see Note [products without division] (cumulative.py).
    from .cumulative import prefix_products
    t = x.type
    kept = [d for d in range(t.ndim) if d not in axes]
    order = (*kept, *axes)                 # the reduced axes last, flattened into one
    flat = b.reshape(b.transpose(x, permutation=order) if order != tuple(range(t.ndim))
                     else x, new_sizes=(*(t.shape[d] for d in kept),
                                        math.prod(t.shape[d] for d in axes)))
    last = len(kept)
    others = b.mul(prefix_products(b, flat, last, exclusive=True),
                   prefix_products(b, flat, last, reverse=True, exclusive=True))
    others = b.reshape(others, new_sizes=tuple(t.shape[d] for d in order))
    if order != tuple(range(t.ndim)):
        others = b.transpose(others, permutation=tuple(order.index(d) for d in range(t.ndim)))
    return [b.mul(_expand(b, ct, t, axes), others)]


jvp_rules[reduce_prod_p] = reduction_jvp(reduce_prod_p)
vjp_rules[reduce_prod_p] = _reduce_prod_vjp

reduce_max_p = _reduction("reduce_max", "max", np.maximum, "biufc", hlo.MaxOp, hlo.OrOp,
                          ComplexMaxOp)
reduce_min_p = _reduction("reduce_min", "min", np.minimum, "biufc", hlo.MinOp, hlo.AndOp,
                          ComplexMinOp)


def _extremum_vjp(prim):
    # The cotangent goes to the positions equal to the extremum, divided evenly among
    # ties (as JAX does), so it sums to ct over each reduced slice.
    def rule(b, ct, x, *, axes):
        extremum = _expand(b, b.bind(prim, x, axes=axes), x.type, axes)
        hits = b.convert(b.eq(x, extremum), new_dtype=x.type.dtype)
        share = b.div(ct, b.reduce_sum(hits, axes=axes))
        return [b.mul(hits, _expand(b, share, x.type, axes))]
    return rule


jvp_rules[reduce_max_p] = reduction_jvp(reduce_max_p)
vjp_rules[reduce_max_p] = _extremum_vjp(reduce_max_p)
jvp_rules[reduce_min_p] = reduction_jvp(reduce_min_p)
vjp_rules[reduce_min_p] = _extremum_vjp(reduce_min_p)

reduce_and_p = _reduction("reduce_and", "and", np.logical_and, "b", hlo.AndOp)
nondifferentiable[reduce_and_p] = "reduce_and takes and returns bool"
reduce_or_p = _reduction("reduce_or", "or", np.logical_or, "b", hlo.OrOp)
nondifferentiable[reduce_or_p] = "reduce_or takes and returns bool"

# --- argmax / argmin -------------------------------------------------------------------------

# Note [argmax ties and NaN]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# Like NumPy: the first index of the extreme value wins, and a NaN counts as more extreme
# than any number (so the first NaN wins). The lowering is a variadic stablehlo.reduce over
# (value, index) pairs whose body picks one pair by that total order: "more extreme value,
# then smaller index". The order is total, so the body is associative and commutative, as
# stablehlo.reduce requires. The init pair is (the reduction's identity, index 0): it can
# only win when every value equals the identity, and then index 0 is the right answer.

def _arg_rule(name: str):
    def rule(x: TensorType, *, axis: int, index_dtype: np.dtype) -> TensorType:
        _check_kind(name, x, "biuf")
        if np.dtype(index_dtype).kind not in "iu":
            raise ShapeError(f"{name}: index_dtype must be an integer type, got "
                             f"{dtype_name(np.dtype(index_dtype))}")
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} is out of range for operand {x}")
        if x.shape[axis] == 0:
            raise ShapeError(f"{name}: cannot take the {name} over axis {axis} of size 0 "
                             f"(operand {x})")
        return TensorType(x.shape[:axis] + x.shape[axis + 1:], np.dtype(index_dtype))
    return rule


def _arg_impl(np_fn):
    return lambda x, *, axis, index_dtype: np_fn(x, axis=axis).astype(index_dtype)


def compare_type(dtype: np.dtype) -> str:
    """StableHLO's comparison_type for a dtype."""
    dtype = np.dtype(dtype)
    if dtype_kind(dtype) == "f":
        return "FLOAT"
    return "SIGNED" if dtype_kind(dtype) == "i" else "UNSIGNED"     # bool: unsigned


def compare(a: ir.Value, b: ir.Value, direction: str, dtype: np.dtype) -> ir.Value:
    """``stablehlo.compare`` with ``direction`` ('EQ', 'LT' ...) for operands of ``dtype``."""
    return hlo.CompareOp(a, b, hlo.ComparisonDirectionAttr.get(direction),
                         compare_type=hlo.ComparisonTypeAttr.get(compare_type(dtype))).result


def _arg_lowering(kind: str):
    direction = "GT" if kind == "max" else "LT"

    def rule(ctx: LoweringContext, eqn, x):
        t, out = eqn.inputs[0].type, eqn.outputs[0].type
        axis = eqn.params["axis"]
        value_scalar, index_scalar = TensorType((), t.dtype), TensorType((), out.dtype)
        index = hlo.IotaOp(mlir_type(TensorType(t.shape, out.dtype)), axis).result
        op = hlo.ReduceOp([mlir_type(TensorType(out.shape, t.dtype)), mlir_type(out)],
                          [x, index],
                          [ctx.constant(identity_of(kind, t.dtype), value_scalar),
                           ctx.constant(0, index_scalar)],
                          ir.DenseI64ArrayAttr.get([axis]))
        block = op.regions[0].blocks.append(mlir_type(value_scalar), mlir_type(index_scalar),
                                            mlir_type(value_scalar), mlir_type(index_scalar))
        with ir.InsertionPoint(block):
            a, a_index, c, c_index = block.arguments
            # See Note [argmax ties and NaN]: pick a when it is more extreme, or when the
            # values tie (NaN ties NaN) and its index is smaller.
            more = compare(a, c, direction, t.dtype)
            tie = compare(a, c, "EQ", t.dtype)
            if compare_type(t.dtype) == "FLOAT":
                a_nan, c_nan = compare(a, a, "NE", t.dtype), compare(c, c, "NE", t.dtype)
                more = hlo.OrOp(more, hlo.AndOp(a_nan, hlo.NotOp(c_nan)).result).result
                tie = hlo.OrOp(tie, hlo.AndOp(a_nan, c_nan).result).result
            first = compare(a_index, c_index, "LT", out.dtype)
            pick_a = hlo.OrOp(more, hlo.AndOp(tie, first).result).result
            hlo.ReturnOp([hlo.SelectOp(pick_a, a, c).result,
                          hlo.SelectOp(pick_a, a_index, c_index).result])
        return op.results[1]
    return rule


def _arg_batch_rule(prim):
    # The rule's second argument is the BatchAxis; ``axis`` is the primitive's parameter.
    def rule(b, batch_axis, args, dims, *, axis, index_dtype):
        x = move_axis(b, args[0], dims[0], 0)
        return [b.bind(prim, x, axis=axis + 1, index_dtype=index_dtype)], [0]
    return rule


argmax_p = declare("argmax", _arg_rule("argmax"), _arg_impl(np.argmax))
batch_rules[argmax_p] = _arg_batch_rule(argmax_p)
nondifferentiable[argmax_p] = "argmax returns integer indices"
lower_rules[argmax_p] = _arg_lowering("max")

argmin_p = declare("argmin", _arg_rule("argmin"), _arg_impl(np.argmin))
batch_rules[argmin_p] = _arg_batch_rule(argmin_p)
nondifferentiable[argmin_p] = "argmin returns integer indices"
lower_rules[argmin_p] = _arg_lowering("min")

# --- dot_general -----------------------------------------------------------------------------
# Output dimensions: the batch dimensions (in the order of ``batch``), then x's free
# dimensions, then y's free dimensions (each in operand order), like StableHLO.
#
# Note [dot precision]
# ~~~~~~~~~~~~~~~~~~~~
# ``lax.Precision`` requests reach the equation as an optional param ``precision``: a pair
# of StableHLO precision names, ``('HIGHEST', 'HIGH')``, one per operand. It is absent
# (not None) when the user asked for nothing, so the common IR and its caches are
# unchanged. It is lowered to dot_general's ``precision_config``, kept by the batching
# rule and given unchanged to every dot of the VJP and JVP (as JAX does). The NumPy
# reference computes at full precision, which meets every request. A dot algorithm (JAX's
# DotAlgorithmPreset) adds the optional param ``algorithm``: StableHLO's attribute as
# ``(lhs_type, rhs_type, accumulation_type, lhs_components, rhs_components, operations,
# imprecise_accumulation)`` with short type names ('bf16', 'f32' ...), carried the same
# way (Note [dot algorithms] in core/precision.py).

def with_precision(precision: tuple[str, str] | None,
                   algorithm: tuple[Any, ...] | None = None) -> dict[str, Any]:
    """The optional params of a dot: none, ``precision``, or both."""
    if precision is None:
        return {}
    return {"precision": precision} if algorithm is None else \
        {"precision": precision, "algorithm": algorithm}

def _free(ndim: int, contract: tuple[int, ...], batch: tuple[int, ...]) -> list[int]:
    return [i for i in range(ndim) if i not in contract and i not in batch]


# Memo of _dot_general_rule, (x, y, contract, batch) -> output type: a program multiplies
# the same few types over and over, and the checks cost four times the lookup (W2).
# Cleared when full, so that it stays small.
_dot_general_types: dict[tuple[Any, ...], TensorType] = {}


def _dot_general_rule(x: TensorType, y: TensorType, *, contract, batch,
                      precision=None, algorithm=None) -> TensorType:
    key = (x, y, contract, batch)
    out = _dot_general_types.get(key)
    if out is None:
        if len(_dot_general_types) >= 4096:
            _dot_general_types.clear()
        out = _dot_general_types[key] = _dot_general_type(x, y, contract, batch)
    return out


def _dot_general_type(x: TensorType, y: TensorType, contract, batch) -> TensorType:
    same_dtype("dot_general", x, y)
    _check_kind("dot_general", x, ANY)
    (xc, yc), (xb, yb) = contract, batch
    xs, ys = x.shape, y.shape
    x_paired, y_paired = xc + xb, yc + yb
    if len(xc) != len(yc) or len(xb) != len(yb):
        raise ShapeError(f"dot_general: contract={contract} batch={batch} pair up unequal "
                         "numbers of dimensions")
    if len(set(x_paired)) != len(x_paired) or len(set(y_paired)) != len(y_paired):
        raise ShapeError(f"dot_general: contract={contract} batch={batch} repeat a "
                         f"dimension of {x} or {y}")
    for i, j in zip(x_paired, y_paired, strict=True):
        if not (0 <= i < len(xs) and 0 <= j < len(ys)) or xs[i] != ys[j]:
            raise ShapeError(f"dot_general: cannot contract {x} with {y} "
                             f"(contract={contract}, batch={batch})")
    return TensorType((*[xs[i] for i in xb],
                       *[d for i, d in enumerate(xs) if i not in x_paired],    # x's free dims
                       *[d for i, d in enumerate(ys) if i not in y_paired]), x.dtype)


def _dot_general_impl(x, y, *, contract, batch, precision=None, algorithm=None):
    (xc, yc), (xb, yb) = contract, batch
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    xs = [next(letters) for _ in range(x.ndim)]
    ys = [next(letters) for _ in range(y.ndim)]
    for i, j in zip(xc + xb, yc + yb, strict=True):
        ys[j] = xs[i]
    out = [xs[i] for i in xb] + [xs[i] for i in _free(x.ndim, xc, xb)] \
        + [ys[i] for i in _free(y.ndim, yc, yb)]
    spec = f"{''.join(xs)},{''.join(ys)}->{''.join(out)}"
    return np.einsum(spec, x, y).astype(np.result_type(x, y))


dot_general_p = declare("dot_general", _dot_general_rule, _dot_general_impl)


# (contract, batch) -> DotDimensionNumbers attribute. Attributes belong to the one MLIR
# context (mlir_context), so every lowering can reuse them; making one costs more than
# making the op. See Note [fast op creation] in stablehlo.py.
_dimension_numbers: dict[tuple[Any, Any], ir.Attribute] = {}


def _dot_general_lowering(ctx, eqn, x, y):
    key = (eqn.params["contract"], eqn.params["batch"])
    dims = _dimension_numbers.get(key)
    if dims is None:
        (xc, yc), (xb, yb) = key
        dims = _dimension_numbers[key] = hlo.DotDimensionNumbers.get(
            lhs_batching_dimensions=list(xb), rhs_batching_dimensions=list(yb),
            lhs_contracting_dimensions=list(xc), rhs_contracting_dimensions=list(yc))
    attributes = {"dot_dimension_numbers": dims}
    precision = eqn.params.get("precision")
    if precision is not None:                       # See Note [dot precision]
        attributes["precision_config"] = ir.ArrayAttr.get(
            [hlo.PrecisionAttr.get(p) for p in precision])
    algorithm = eqn.params.get("algorithm")
    if algorithm is not None:
        lhs, rhs, acc, *counts = algorithm
        attributes["algorithm"] = hlo.DotAlgorithm.get(
            _ALGORITHM_TYPES[lhs](), _ALGORITHM_TYPES[rhs](), _ALGORITHM_TYPES[acc](), *counts)
    return ctx.create_op(hlo.DotGeneralOp, eqn.outputs[0].type, [x, y], attributes)


lower_rules[dot_general_p] = _dot_general_lowering
_ALGORITHM_TYPES = {"f16": ir.F16Type.get, "bf16": ir.BF16Type.get, "f32": ir.F32Type.get,
                    "f64": ir.F64Type.get}


def _dot_general_batch_rule(b, axis, args, dims, *, contract, batch, precision=None,
                            algorithm=None):
    # One dot_general, never a loop: a batch dimension on both operands joins ``batch``;
    # on one operand it is just another free dimension of that operand, and we report
    # where the output puts it. Operands stay where they are: we renumber dimensions.
    x, y = args
    dx, dy = dims
    (xc, yc), (xb, yb) = contract, batch

    def renumber(ds, d):       # dimension numbers after inserting a batch dim at d
        return tuple(i + (d is not None and i >= d) for i in ds)

    xc, xb, yc, yb = renumber(xc, dx), renumber(xb, dx), renumber(yc, dy), renumber(yb, dy)
    if dx is not None and dy is not None:
        out = b.dot_general(x, y, contract=(xc, yc), batch=((dx, *xb), (dy, *yb)),
                            **with_precision(precision, algorithm))
        return [out], [0]
    out = b.dot_general(x, y, contract=(xc, yc), batch=(xb, yb),
                        **with_precision(precision, algorithm))
    x_free, y_free = _free(x.type.ndim, xc, xb), _free(y.type.ndim, yc, yb)
    if dx is not None:
        return [out], [len(xb) + x_free.index(dx)]
    return [out], [len(xb) + len(x_free) + y_free.index(dy)]


batch_rules[dot_general_p] = _dot_general_batch_rule


def _operand_ct_plan(mine_ndim: int, other_ndim: int, my_contract, my_batch,
                     other_contract, other_batch, other_free_in_ct):
    """How to compute the cotangent of one operand: ct contracted with the other operand
    over the other's free dimensions (batched over the batch dimensions), then transposed
    back. Returns ``(other_first, contract, batch, permutation)``, with ``permutation``
    None when no transpose is needed.

    Operand order matters for speed: ``dot_general(ct, other)`` lists my free dims before
    my contracted ones, ``dot_general(other, ct)`` the other way round. We pick the order
    that needs no transpose when one does (the weight cotangent ``x^T @ ct`` of ``x @ w``
    is ``dot_general(x, ct)``): a transpose after a batched dot_general (vmap of grad) is
    a separate full copy of the result in XLA, 3x the time of W5 (docs/PERFORMANCE.md)."""
    nb = len(my_batch)
    other_free = tuple(_free(other_ndim, other_contract, other_batch))
    # Output dimensions: batch, then my free dims and other's contracted dims (in
    # ascending order, each paired with one of my contracted dims), in operand order.
    pair = dict(zip(other_contract, my_contract, strict=True))
    my_free = _free(mine_ndim, my_contract, my_batch)
    contracted = [pair[j] for j in sorted(other_contract)]
    identity = tuple(range(mine_ndim))
    swapped = [*my_batch, *contracted, *my_free]
    if tuple(swapped.index(i) for i in identity) == identity and my_free and contracted:
        return True, (other_free, other_free_in_ct), (other_batch, tuple(range(nb))), None
    layout = [*my_batch, *my_free, *contracted]
    permutation = tuple(layout.index(i) for i in identity)
    return (False, (other_free_in_ct, other_free), (tuple(range(nb)), other_batch),
            None if permutation == identity else permutation)


def _operand_ct(b, ct, other, plan, precision):
    other_first, contract, batch, permutation = plan
    if other_first:
        return b.dot_general(other, ct, contract=contract, batch=batch, **precision)
    g = b.dot_general(ct, other, contract=contract, batch=batch, **precision)
    return g if permutation is None else b.transpose(g, permutation=permutation)


# (x.ndim, y.ndim, contract, batch) -> the plans of both cotangents: they depend on the
# dimension numbers alone, and a gradient asks for the same few over and over (W2).
_vjp_plans: dict[tuple[Any, ...], tuple[Any, Any]] = {}


def _dot_general_vjp(b, ct, x, y, *, contract, batch, precision=None, algorithm=None):
    key = (x.type.ndim, y.type.ndim, contract, batch)
    plans = _vjp_plans.get(key)
    if plans is None:
        (xc, yc), (xb, yb) = contract, batch
        nb, nx = len(xb), len(_free(x.type.ndim, xc, xb))
        ct_x_free = tuple(range(nb, nb + nx))
        ct_y_free = tuple(range(nb + nx, ct.type.ndim))
        plans = _vjp_plans[key] = (
            _operand_ct_plan(x.type.ndim, y.type.ndim, xc, xb, yc, yb, ct_y_free),
            _operand_ct_plan(y.type.ndim, x.type.ndim, yc, yb, xc, xb, ct_x_free))
    extra = with_precision(precision, algorithm)   # See Note [dot precision]
    return [_operand_ct(b, ct, y, plans[0], extra), _operand_ct(b, ct, x, plans[1], extra)]


def _dot_general_jvp(b, primals, tangents, *, contract, batch, precision=None,
                     algorithm=None):
    # Bilinear: d(x . y) = dx . y + x . dy.
    (x, y), (tx, ty) = primals, tangents
    extra = with_precision(precision, algorithm)
    out = b.dot_general(x, y, contract=contract, batch=batch, **extra)
    terms = [b.dot_general(*ops, contract=contract, batch=batch, **extra)
             for ops, t in (((tx, y), tx), ((x, ty), ty)) if t is not None]
    return [out], [terms[0] if len(terms) == 1 else b.add(*terms)]


jvp_rules[dot_general_p] = _dot_general_jvp
vjp_rules[dot_general_p] = _dot_general_vjp
