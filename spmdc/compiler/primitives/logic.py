"""The logic half of the elementwise family: bitwise logic and shifts, comparisons,
``select`` and ``clamp``. Imported by elementwise.py, whose conventions hold here: rank-0
operands broadcast (for ``clamp``: only its bounds), and every primitive batches with
``elementwise_batch_rule`` (``clamp`` with a wrapper around it).

Note [shift amounts]
~~~~~~~~~~~~~~~~~~~~
A shift amount outside ``[0, bits)`` (read as unsigned, so negative amounts are out of
range too) shifts everything out, as in XLA: ``shift_left`` and ``shift_right_logical``
give 0, ``shift_right_arithmetic`` gives the sign fill (0 or -1). The arithmetic shift
acts on the bit pattern, so on unsigned types it copies the top bit.
"""
from __future__ import annotations

import numpy as np

from ..builder import lit
from ..ir import TensorType, dtype_kind
from ..passes.autodiff import nondifferentiable, unbroadcast, vjp_rules
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import batch_rules, broadcast_batch
from ..stablehlo import elementwise_lowering, hlo, lower_rules
from .core import (
    INTEGRAL,
    ShapeError,
    _check_kind,
    comparison,
    declare,
    elementwise_binary,
    elementwise_unary,
    same_dtype,
    same_shape_or_scalar,
)
from .rules import elementwise_batch_rule

INTEGER = "iu"
ORDERED = "biuf"      # what ordering comparisons accept

# --- bitwise logic and shifts ----------------------------------------------------------------

not_p = elementwise_unary("not", np.invert, INTEGRAL)                   # logical on bool
nondifferentiable[not_p] = "bitwise/logical op on integers and bools"
lower_rules[not_p] = elementwise_lowering(hlo.NotOp)


def _population_count_impl(x: np.ndarray) -> np.ndarray:
    # Count the bits of the two's complement pattern (np.bitwise_count counts |x|'s).
    return np.bitwise_count(x.view(np.dtype(f"u{x.dtype.itemsize}"))).astype(x.dtype)


population_count_p = elementwise_unary("population_count", _population_count_impl, INTEGER)
nondifferentiable[population_count_p] = "integer op"
lower_rules[population_count_p] = elementwise_lowering(hlo.PopulationCountOp)

and_p = elementwise_binary("and", np.bitwise_and, INTEGRAL)             # logical on bool
nondifferentiable[and_p] = "bitwise/logical op on integers and bools"
lower_rules[and_p] = elementwise_lowering(hlo.AndOp)

or_p = elementwise_binary("or", np.bitwise_or, INTEGRAL)
nondifferentiable[or_p] = "bitwise/logical op on integers and bools"
lower_rules[or_p] = elementwise_lowering(hlo.OrOp)

xor_p = elementwise_binary("xor", np.bitwise_xor, INTEGRAL)
nondifferentiable[xor_p] = "bitwise/logical op on integers and bools"
lower_rules[xor_p] = elementwise_lowering(hlo.XorOp)


def _shift_impl(kind: str):
    """Reference shifts; see Note [shift amounts]."""
    def impl(x: np.ndarray, s: np.ndarray) -> np.ndarray:
        x, s = np.broadcast_arrays(x, s)
        bits = 8 * x.dtype.itemsize
        unsigned, signed = np.dtype(f"u{x.dtype.itemsize}"), np.dtype(f"i{x.dtype.itemsize}")
        ok = s.view(np.dtype(f"u{s.dtype.itemsize}")) < bits
        s = np.where(ok, s, 0).astype(unsigned)
        if kind == "left":
            out = np.where(ok, x.view(unsigned) << s, 0).astype(unsigned)
        elif kind == "logical":
            out = np.where(ok, x.view(unsigned) >> s, 0).astype(unsigned)
        else:
            xs = x.view(signed)
            out = np.where(ok, xs >> s.astype(signed), np.where(xs < 0, -1, 0)).astype(signed)
        return out.view(x.dtype)
    return impl


shift_left_p = elementwise_binary("shift_left", _shift_impl("left"), INTEGER)
nondifferentiable[shift_left_p] = "integer op"
lower_rules[shift_left_p] = elementwise_lowering(hlo.ShiftLeftOp)

shift_right_arithmetic_p = elementwise_binary("shift_right_arithmetic",
                                              _shift_impl("arithmetic"), INTEGER)
nondifferentiable[shift_right_arithmetic_p] = "integer op"
lower_rules[shift_right_arithmetic_p] = elementwise_lowering(hlo.ShiftRightArithmeticOp)

shift_right_logical_p = elementwise_binary("shift_right_logical", _shift_impl("logical"), INTEGER)
nondifferentiable[shift_right_logical_p] = "integer op"
lower_rules[shift_right_logical_p] = elementwise_lowering(hlo.ShiftRightLogicalOp)

# --- comparisons -----------------------------------------------------------------------------

def _broadcast_operands(ctx, eqn, operands):
    """Operands with rank-0 ones broadcast to the output shape (dtypes kept)."""
    shape = eqn.outputs[0].type.shape
    return [ctx.broadcast(v, a.type, TensorType(shape, a.type.dtype))
            for v, a in zip(operands, eqn.inputs, strict=True)]


def _compare_lowering(direction: str):
    def rule(ctx, eqn, x, y):
        t = eqn.inputs[0].type
        # FLOAT is IEEE comparison (NaN unordered: only ne holds), as in NumPy.
        kind = ("FLOAT" if dtype_kind(t.dtype) not in "biu" else
                "SIGNED" if dtype_kind(t.dtype) == "i" else "UNSIGNED")
        x, y = _broadcast_operands(ctx, eqn, [x, y])
        return hlo.CompareOp(x, y, hlo.ComparisonDirectionAttr.get(direction),
                             compare_type=hlo.ComparisonTypeAttr.get(kind)).result
    return rule


eq_p = comparison("eq", np.equal)
ne_p = comparison("ne", np.not_equal)
lt_p = comparison("lt", np.less, ORDERED)
le_p = comparison("le", np.less_equal, ORDERED)
gt_p = comparison("gt", np.greater, ORDERED)
ge_p = comparison("ge", np.greater_equal, ORDERED)
for _cmp in (eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    nondifferentiable[_cmp] = "comparisons give bool"
    lower_rules[_cmp] = _compare_lowering(_cmp.name.upper())

# --- select and clamp ------------------------------------------------------------------------

def _select_rule(pred: TensorType, on_true: TensorType, on_false: TensorType) -> TensorType:
    if pred.dtype != np.bool_:
        raise ShapeError(f"select needs a bool predicate, got {pred} "
                         f"(operands {on_true}, {on_false})")
    dtype = same_dtype("select", on_true, on_false)
    return TensorType(same_shape_or_scalar("select", pred, on_true, on_false), dtype)


def _select_vjp(b, ct, pred, on_true, on_false):
    zero = lit(0, ct.type.dtype)
    return [None, unbroadcast(b, b.select(pred, ct, zero), on_true.type),
            unbroadcast(b, b.select(pred, zero, ct), on_false.type)]


select_p = declare("select", _select_rule, lambda p, t, f: np.where(p, t, f))
jvp_rules[select_p] = linear_jvp(select_p, 1, 2)
vjp_rules[select_p] = _select_vjp
lower_rules[select_p] = lambda ctx, eqn, *ops: hlo.SelectOp(
    *_broadcast_operands(ctx, eqn, ops)).result


def _clamp_rule(lo: TensorType, x: TensorType, hi: TensorType) -> TensorType:
    same_dtype("clamp", lo, x, hi)
    _check_kind("clamp", x, "iuf")
    for bound in (lo, hi):
        if bound.shape not in ((), x.shape):
            raise ShapeError(f"clamp({lo}, {x}, {hi}): bounds must be rank 0 or have the "
                             "operand's shape")
    return x


def _clamp_vjp(b, ct, lo, x, hi):
    # See Note [gradients at kinks] in elementwise.py.
    zero, and_ = lit(0, ct.type.dtype), lambda p, q: b.bind(and_p, p, q)
    return [unbroadcast(b, b.select(and_(b.lt(x, lo), b.le(lo, hi)), ct, zero), lo.type),
            b.select(and_(b.ge(x, lo), b.le(x, hi)), ct, zero),
            unbroadcast(b, b.select(b.lt(hi, b.max(x, lo)), ct, zero), hi.type)]


def _clamp_jvp(b, primals, tangents):
    # The tangent of whichever operand the output is, with _clamp_vjp's tie-breaking.
    (lo, x, hi), (t_lo, t_x, t_hi) = primals, tangents
    out = b.clamp(lo, x, hi)
    and_ = lambda p, q: b.bind(and_p, p, q)  # noqa: E731
    picks = [(and_(b.lt(x, lo), b.le(lo, hi)), t_lo), (and_(b.ge(x, lo), b.le(x, hi)), t_x),
             (b.lt(hi, b.max(x, lo)), t_hi)]
    zero, tout = lit(0, x.type.dtype), None
    for mask, t in picks:
        if t is not None:
            if t.type.shape != x.type.shape:
                t = b.broadcast_in_dim(t, shape=x.type.shape, broadcast_dimensions=())
            term = b.select(mask, t, zero)
            tout = term if tout is None else b.add(tout, term)
    return [out], [tout]


def _clamp_batch(b, axis, args, dims):
    # The output takes x's shape, so a batched bound needs x batched too; then the
    # elementwise rule applies (rank-0 bounds stay rank 0 or broadcast like scalars).
    lo, x, hi = args
    if dims[1] is None:
        args, dims = [lo, broadcast_batch(b, x, axis.size, 0), hi], [dims[0], 0, dims[2]]
    return elementwise_batch_rule(clamp_p)(b, axis, args, dims)


clamp_p = declare("clamp", _clamp_rule, lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi))
jvp_rules[clamp_p] = _clamp_jvp
vjp_rules[clamp_p] = _clamp_vjp
lower_rules[clamp_p] = lambda ctx, eqn, lo, x, hi: hlo.ClampOp(lo, x, hi).result

# --- batching: every primitive here is elementwise ------------------------------------------

__all__ = [name for name in dir() if name.endswith("_p")]
for _prim in [globals()[name] for name in __all__]:
    batch_rules[_prim] = elementwise_batch_rule(_prim)
batch_rules[clamp_p] = _clamp_batch
