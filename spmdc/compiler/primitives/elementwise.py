"""Elementwise primitives: unary and binary math, stop_gradient, convert. Comparisons,
bitwise logic, shifts, select and clamp are in logic.py, imported at the end.

Elementwise operands share one shape, except that rank-0 operands broadcast. Every
primitive here batches with ``elementwise_batch_rule``.

NumPy references for special functions (erf, lgamma, ...) come from ``scipy.special``,
which jaxlib requires; it is imported on first use, not when the compiler is imported.
Ops that StableHLO lacks (asin, acos, atan, sinh, cosh, asinh, acosh, atanh, erf,
erf_inv, lgamma, digamma, polygamma, nextafter) lower to ``chlo`` ops, which PJRT
legalises when it compiles the module (``mlir_context`` registers the dialect).

Note [integer division]
~~~~~~~~~~~~~~~~~~~~~~~
``div`` on integers truncates toward zero and ``rem`` has the sign of the dividend, like
C. Division by zero and ``INT_MIN / -1`` are defined the way XLA defines them (checked on
PJRT CPU): ``x / 0`` has all bits set (-1, or the maximum of an unsigned type), ``x % 0 ==
x``, ``INT_MIN / -1 == INT_MIN`` and ``INT_MIN % -1 == 0``. The references follow.

Note [float to integer conversion]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``convert`` from float to an integer type truncates toward zero and saturates, as XLA
does (checked on PJRT CPU): values beyond the type's range give its min or max, NaN gives
0 (NumPy's ``astype`` wraps or is undefined there; the reference follows XLA). Converting
to bool is ``x != 0`` (NaN -> True) and bool converts as 0/1, as in NumPy.

Note [gradients at kinks]
~~~~~~~~~~~~~~~~~~~~~~~~~
``max``/``min`` split the cotangent half/half between equal operands (as JAX does).
``clamp(lo, x, hi) = min(max(x, lo), hi)`` gives ties to ``x``: ``x`` gets the cotangent
where ``lo <= x <= hi``, ``lo`` where ``x < lo <= hi``, ``hi`` where ``hi < max(x, lo)``.
``abs`` has slope 1 at 0 (and at -0.0), as in JAX, not ``sign(0) = 0``. ``sign``,
``floor``, ``ceil`` and ``round`` are piecewise constant: their VJP rules return zero
(``None``), like JAX, rather than being listed as nondifferentiable, so ``grad`` through
them is well defined.
"""
from __future__ import annotations

import math

import numpy as np

from ..builder import lit
from ..ir import TensorType, dtype_kind
from ..passes.autodiff import (
    activity_rules,
    is_float,
    nondifferentiable,
    unbroadcast,
    vjp_rules,
)
from ..passes.forward import (
    diagonal_jvp,
    jvp_rules,
    partials_jvp,
    sum_jvp,
    summed_tangent,
    zero_jvp,
)
from ..passes.vmap import batch_rules
from ..stablehlo import chlo, elementwise_lowering, hlo, lower_rules
from .complex_order import lexicographic_extremum, numpy_extremum
from .core import (
    ShapeError,
    _check_kind,
    declare,
    elementwise_binary,
    elementwise_unary,
)
from .rules import elementwise_batch_rule

REAL = "f"            # real floats (bfloat16 included, see core._check_kind)
SIGNED = "if"         # what abs accepts (jnp.abs of unsigned or bool is the identity)
ORDERED = "biufc"     # what max and min accept (complex: Note [complex order])


def _const(x, value):
    """A rank-0 literal of ``x``'s dtype."""
    return lit(value, x.type.dtype)


def _chain(deriv):
    """VJP of ``y = f(x)`` from ``deriv(b, x) = f'(x)``: ``ct * f'(x)``."""
    return lambda b, ct, x: [b.mul(ct, deriv(b, x))]


def _partials(dx, dy):
    """VJP of ``z = f(x, y)`` from ``dx(b, x, y)``, ``dy(b, x, y)`` (None: no gradient)."""
    def rule(b, ct, x, y):
        return [None if d is None else unbroadcast(b, b.mul(ct, d(b, x, y)), a.type)
                for d, a in ((dx, x), (dy, y))]
    rule.partials = (dx, dy)            # the JVP is built from them too (_partials_jvp)
    return rule


def _partials_jvp(prim):
    """The JVP of ``z = f(x, y)`` from the partials its VJP rule was built with."""
    return partials_jvp(prim, *vjp_rules[prim].partials)



def _zero_vjp(b, ct, *inputs, **params):
    return [None] * len(inputs)


def _special(name):
    """A scipy.special function as a reference (bfloat16/float16 computed in float32)."""
    def impl(*args):
        import scipy.special
        args = [a if a.dtype in (np.float32, np.float64) else a.astype(np.float32)
                for a in map(np.asarray, args)]
        return getattr(scipy.special, name)(*args)
    return impl


# --- unary float math ------------------------------------------------------------------------

neg_p = elementwise_unary("neg", np.negative, "iufc")
vjp_rules[neg_p] = lambda b, ct, x: [b.neg(ct)]
jvp_rules[neg_p] = diagonal_jvp(neg_p)
lower_rules[neg_p] = elementwise_lowering(hlo.NegOp)

sin_p = elementwise_unary("sin", np.sin)
vjp_rules[sin_p] = _chain(lambda b, x: b.cos(x))                        # d sin = cos
jvp_rules[sin_p] = diagonal_jvp(sin_p)
lower_rules[sin_p] = elementwise_lowering(hlo.SineOp)

cos_p = elementwise_unary("cos", np.cos)
vjp_rules[cos_p] = _chain(lambda b, x: b.neg(b.sin(x)))                 # d cos = -sin
jvp_rules[cos_p] = diagonal_jvp(cos_p)
lower_rules[cos_p] = elementwise_lowering(hlo.CosineOp)

tan_p = elementwise_unary("tan", np.tan)
vjp_rules[tan_p] = _chain(lambda b, x: b.add(_const(x, 1), b.mul(b.tan(x), b.tan(x))))
jvp_rules[tan_p] = diagonal_jvp(tan_p)
lower_rules[tan_p] = elementwise_lowering(hlo.TanOp)                    # 1 + tan^2

asin_p = elementwise_unary("asin", np.arcsin)
vjp_rules[asin_p] = _chain(lambda b, x: b.rsqrt(b.sub(_const(x, 1), b.mul(x, x))))
jvp_rules[asin_p] = diagonal_jvp(asin_p)
lower_rules[asin_p] = elementwise_lowering(chlo.AsinOp)                 # 1/sqrt(1-x^2)

acos_p = elementwise_unary("acos", np.arccos)
vjp_rules[acos_p] = _chain(lambda b, x: b.neg(b.rsqrt(b.sub(_const(x, 1), b.mul(x, x)))))
jvp_rules[acos_p] = diagonal_jvp(acos_p)
lower_rules[acos_p] = elementwise_lowering(chlo.AcosOp)                 # -1/sqrt(1-x^2)

atan_p = elementwise_unary("atan", np.arctan)
vjp_rules[atan_p] = lambda b, ct, x: [b.div(ct, b.add(_const(x, 1), b.mul(x, x)))]
jvp_rules[atan_p] = diagonal_jvp(atan_p)
lower_rules[atan_p] = elementwise_lowering(chlo.AtanOp)                 # 1/(1+x^2)

sinh_p = elementwise_unary("sinh", np.sinh)
vjp_rules[sinh_p] = _chain(lambda b, x: b.cosh(x))
jvp_rules[sinh_p] = diagonal_jvp(sinh_p)
lower_rules[sinh_p] = elementwise_lowering(chlo.SinhOp)

cosh_p = elementwise_unary("cosh", np.cosh)
vjp_rules[cosh_p] = _chain(lambda b, x: b.sinh(x))
jvp_rules[cosh_p] = diagonal_jvp(cosh_p)
lower_rules[cosh_p] = elementwise_lowering(chlo.CoshOp)

tanh_p = elementwise_unary("tanh", np.tanh)
vjp_rules[tanh_p] = _chain(lambda b, x: b.sub(_const(x, 1), b.mul(b.tanh(x), b.tanh(x))))
jvp_rules[tanh_p] = diagonal_jvp(tanh_p)
lower_rules[tanh_p] = elementwise_lowering(hlo.TanhOp)                  # 1 - tanh^2

asinh_p = elementwise_unary("asinh", np.arcsinh)
vjp_rules[asinh_p] = _chain(lambda b, x: b.rsqrt(b.add(b.mul(x, x), _const(x, 1))))
jvp_rules[asinh_p] = diagonal_jvp(asinh_p)
lower_rules[asinh_p] = elementwise_lowering(chlo.AsinhOp)               # 1/sqrt(x^2+1)

acosh_p = elementwise_unary("acosh", np.arccosh)                        # 1/sqrt((x-1)(x+1))
vjp_rules[acosh_p] = _chain(lambda b, x: b.rsqrt(b.mul(b.sub(x, _const(x, 1)),
                                                      b.add(x, _const(x, 1)))))
jvp_rules[acosh_p] = diagonal_jvp(acosh_p)
lower_rules[acosh_p] = elementwise_lowering(chlo.AcoshOp)

atanh_p = elementwise_unary("atanh", np.arctanh)
vjp_rules[atanh_p] = lambda b, ct, x: [b.div(ct, b.sub(_const(x, 1), b.mul(x, x)))]
jvp_rules[atanh_p] = diagonal_jvp(atanh_p)
lower_rules[atanh_p] = elementwise_lowering(chlo.AtanhOp)               # 1/(1-x^2)

exp_p = elementwise_unary("exp", np.exp)
vjp_rules[exp_p] = _chain(lambda b, x: b.exp(x))
jvp_rules[exp_p] = diagonal_jvp(exp_p)
lower_rules[exp_p] = elementwise_lowering(hlo.ExpOp)

exp2_p = elementwise_unary("exp2", np.exp2)
vjp_rules[exp2_p] = _chain(lambda b, x: b.mul(b.exp2(x), _const(x, math.log(2))))
jvp_rules[exp2_p] = diagonal_jvp(exp2_p)
lower_rules[exp2_p] = lambda ctx, eqn, x: hlo.ExpOp(hlo.MulOp(              # e^(x ln 2)
    x, ctx.constant(math.log(2), eqn.inputs[0].type)).result).result

log_p = elementwise_unary("log", np.log)
vjp_rules[log_p] = lambda b, ct, x: [b.div(ct, x)]
jvp_rules[log_p] = diagonal_jvp(log_p)
lower_rules[log_p] = elementwise_lowering(hlo.LogOp)

log1p_p = elementwise_unary("log1p", np.log1p)
vjp_rules[log1p_p] = lambda b, ct, x: [b.div(ct, b.add(x, _const(x, 1)))]
jvp_rules[log1p_p] = diagonal_jvp(log1p_p)
lower_rules[log1p_p] = elementwise_lowering(hlo.Log1pOp)

expm1_p = elementwise_unary("expm1", np.expm1)
vjp_rules[expm1_p] = _chain(lambda b, x: b.add(b.expm1(x), _const(x, 1)))
jvp_rules[expm1_p] = diagonal_jvp(expm1_p)
lower_rules[expm1_p] = elementwise_lowering(hlo.Expm1Op)

sqrt_p = elementwise_unary("sqrt", np.sqrt)
vjp_rules[sqrt_p] = lambda b, ct, x: [b.div(b.mul(ct, _const(x, 0.5)), b.sqrt(x))]
jvp_rules[sqrt_p] = diagonal_jvp(sqrt_p)
lower_rules[sqrt_p] = elementwise_lowering(hlo.SqrtOp)                  # 1/(2 sqrt x)

rsqrt_p = elementwise_unary("rsqrt", lambda x: 1 / np.sqrt(x))
vjp_rules[rsqrt_p] = _chain(lambda b, x: b.div(b.mul(b.rsqrt(x), _const(x, -0.5)), x))
jvp_rules[rsqrt_p] = diagonal_jvp(rsqrt_p)
lower_rules[rsqrt_p] = elementwise_lowering(hlo.RsqrtOp)                # -x^(-3/2)/2

cbrt_p = elementwise_unary("cbrt", np.cbrt, REAL)
vjp_rules[cbrt_p] = lambda b, ct, x: [b.div(ct, b.mul(_const(x, 3),     # 1/(3 cbrt(x)^2)
                                                      b.mul(b.cbrt(x), b.cbrt(x))))]
jvp_rules[cbrt_p] = diagonal_jvp(cbrt_p)
lower_rules[cbrt_p] = elementwise_lowering(hlo.CbrtOp)

def _logistic_reference(x):
    """``scipy.special.expit`` for real ``x``; ``1 / (1 + exp(-x))`` for complex ``x``
    (which expit does not take; XLA's logistic does, as JAX's ``logistic_p``)."""
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return 1 / (1 + np.exp(-x))
    return _special("expit")(x)


logistic_p = elementwise_unary("logistic", _logistic_reference)
vjp_rules[logistic_p] = _chain(lambda b, x: b.mul(b.logistic(x),        # s (1 - s)
                                                  b.sub(_const(x, 1), b.logistic(x))))
jvp_rules[logistic_p] = diagonal_jvp(logistic_p)
lower_rules[logistic_p] = elementwise_lowering(hlo.LogisticOp)

erf_p = elementwise_unary("erf", _special("erf"), REAL)
vjp_rules[erf_p] = _chain(lambda b, x: b.mul(_const(x, 2 / math.sqrt(math.pi)),
                                             b.exp(b.neg(b.mul(x, x)))))
jvp_rules[erf_p] = diagonal_jvp(erf_p)
lower_rules[erf_p] = elementwise_lowering(chlo.ErfOp)                   # 2/sqrt(pi) e^-x^2

erf_inv_p = elementwise_unary("erf_inv", _special("erfinv"), REAL)
vjp_rules[erf_inv_p] = _chain(lambda b, x: b.mul(_const(x, math.sqrt(math.pi) / 2),
                                                 b.exp(b.mul(b.erf_inv(x), b.erf_inv(x)))))
jvp_rules[erf_inv_p] = diagonal_jvp(erf_inv_p)
lower_rules[erf_inv_p] = elementwise_lowering(chlo.ErfInvOp)

lgamma_p = elementwise_unary("lgamma", _special("gammaln"), REAL)
vjp_rules[lgamma_p] = _chain(lambda b, x: b.digamma(x))
jvp_rules[lgamma_p] = diagonal_jvp(lgamma_p)
lower_rules[lgamma_p] = elementwise_lowering(chlo.LgammaOp)

digamma_p = elementwise_unary("digamma", _special("psi"), REAL)
vjp_rules[digamma_p] = _chain(lambda b, x: b.polygamma(_const(x, 1), x))
jvp_rules[digamma_p] = diagonal_jvp(digamma_p)
lower_rules[digamma_p] = elementwise_lowering(chlo.DigammaOp)


def _polygamma_impl(n: np.ndarray, x: np.ndarray) -> np.ndarray:
    # Defined for integral n >= 0 only (NaN elsewhere, as chlo.polygamma gives).
    ok = (n >= 0) & (n == np.floor(n))
    with np.errstate(invalid="ignore"):
        return np.where(ok, _special("polygamma")(np.where(ok, n, 0), x), np.nan)


# polygamma(n, x) = d^(n+1)/dx^(n+1) lgamma(x): digamma's derivative. n holds integers;
# it gets no gradient.
polygamma_p = elementwise_binary("polygamma", _polygamma_impl, REAL)
vjp_rules[polygamma_p] = _partials(None, lambda b, n, x: b.polygamma(b.add(n, _const(n, 1)), x))
jvp_rules[polygamma_p] = _partials_jvp(polygamma_p)
lower_rules[polygamma_p] = elementwise_lowering(chlo.PolygammaOp)

# --- unary numeric ---------------------------------------------------------------------------

def _abs_rule(x: TensorType) -> TensorType:
    """|x|: the input type, or the parts' type for a complex x (complex_parts.py)."""
    _check_kind("abs", x, SIGNED + "c")
    if x.dtype.kind == "c":
        return TensorType(x.shape, np.dtype(np.float64 if x.dtype == np.complex128
                                            else np.float32))
    return x


abs_p = declare("abs", _abs_rule, np.abs)     # complex rules: complex_parts.py
vjp_rules[abs_p] = lambda b, ct, x: [                       # See Note [gradients at kinks]
    b.select(b.ge(x, lit(0, x.type.dtype)), ct, b.neg(ct))]
jvp_rules[abs_p] = diagonal_jvp(abs_p)
lower_rules[abs_p] = elementwise_lowering(hlo.AbsOp)

def _sign_impl(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.dtype.kind != "c":
        return np.sign(x)
    with np.errstate(invalid="ignore", divide="ignore"):   # x / |x|, 0 at 0, as XLA's sign
        return np.where(x == 0, 0, x / np.abs(x)).astype(x.dtype)


sign_p = elementwise_unary("sign", _sign_impl, "iufc")    # unsigned too, as JAX's lax.sign
vjp_rules[sign_p] = _zero_vjp
jvp_rules[sign_p] = diagonal_jvp(sign_p)


def _sign_lowering(ctx, eqn, x):
    t = eqn.outputs[0].type
    if dtype_kind(t.dtype) == "u":      # StableHLO's sign takes no unsigned type
        return hlo.MinOp(x, ctx.constant(1, t)).result
    return hlo.SignOp(x).result


lower_rules[sign_p] = _sign_lowering

floor_p = elementwise_unary("floor", np.floor, REAL)
vjp_rules[floor_p] = _zero_vjp
jvp_rules[floor_p] = diagonal_jvp(floor_p)
lower_rules[floor_p] = elementwise_lowering(hlo.FloorOp)

ceil_p = elementwise_unary("ceil", np.ceil, REAL)
vjp_rules[ceil_p] = _zero_vjp
jvp_rules[ceil_p] = diagonal_jvp(ceil_p)
lower_rules[ceil_p] = elementwise_lowering(hlo.CeilOp)


def _round_rule(x: TensorType, *, rounding_method: int) -> TensorType:
    _check_kind("round", x, REAL)
    if rounding_method not in (0, 1):
        raise ShapeError(f"round: rounding_method must be 0 (half away from zero) or 1 "
                         f"(half to even), got {rounding_method!r}")
    return x


def _round_impl(x: np.ndarray, *, rounding_method: int) -> np.ndarray:
    if rounding_method == 1:
        return np.rint(x)
    whole = np.trunc(x)                         # x - trunc(x) is exact, unlike x + 0.5
    return whole + np.where(np.abs(x - whole) >= 0.5, np.sign(x), 0).astype(x.dtype)


round_p = declare("round", _round_rule, _round_impl)
vjp_rules[round_p] = _zero_vjp
jvp_rules[round_p] = diagonal_jvp(round_p)
lower_rules[round_p] = lambda ctx, eqn, x: (
    hlo.RoundNearestEvenOp if eqn.params["rounding_method"] == 1 else hlo.RoundOp)(x).result


def _is_finite_rule(x: TensorType) -> TensorType:
    _check_kind("is_finite", x, REAL)
    return TensorType(x.shape, np.dtype(np.bool_))


is_finite_p = declare("is_finite", _is_finite_rule, np.isfinite)
nondifferentiable[is_finite_p] = "its output is bool"
lower_rules[is_finite_p] = elementwise_lowering(hlo.IsFiniteOp)

def _integer_pow_rule(x: TensorType, *, y: int) -> TensorType:
    _check_kind("integer_pow", x, "iufc")
    if not isinstance(y, int) or isinstance(y, bool):
        raise ShapeError(f"integer_pow: exponent y must be an int, got {y!r}")
    if y < 0 and x.dtype.kind in "iu":
        raise ShapeError(f"integer_pow: negative exponent y={y} needs a float operand, got {x}")
    return x


def _integer_pow_impl(x: np.ndarray, *, y: int) -> np.ndarray:
    return np.power(x, x.dtype.type(y)) if y >= 0 else np.power(x, y)


def _integer_pow_lowering(ctx, eqn, x):
    y, t = eqn.params["y"], eqn.outputs[0].type
    power, square, n = None, x, abs(y)          # square-and-multiply over the bits of |y|
    while n:
        if n & 1:
            power = square if power is None else hlo.MulOp(power, square).result
        n >>= 1
        if n:
            square = hlo.MulOp(square, square).result
    if power is None:                           # y == 0: ones
        return ctx.constant(1, t)
    return hlo.DivOp(ctx.constant(1, t), power).result if y < 0 else power


def _integer_pow_vjp(b, ct, x, *, y):
    if y == 0:
        return [None]
    if y == 1:
        return [ct]
    power = x if y == 2 else b.integer_pow(x, y=y - 1)
    return [b.mul(ct, b.mul(_const(x, y), power))]  # y x^(y-1)


integer_pow_p = declare("integer_pow", _integer_pow_rule, _integer_pow_impl)
vjp_rules[integer_pow_p] = _integer_pow_vjp
jvp_rules[integer_pow_p] = diagonal_jvp(integer_pow_p)
lower_rules[integer_pow_p] = _integer_pow_lowering

# --- binary math -----------------------------------------------------------------------------

add_p = elementwise_binary("add", np.add)
vjp_rules[add_p] = lambda b, ct, x, y: [unbroadcast(b, ct, x.type), unbroadcast(b, ct, y.type)]
jvp_rules[add_p] = sum_jvp(add_p)
lower_rules[add_p] = elementwise_lowering(hlo.AddOp)

sub_p = elementwise_binary("sub", np.subtract)
vjp_rules[sub_p] = lambda b, ct, x, y: [unbroadcast(b, ct, x.type),
                                        unbroadcast(b, b.neg(ct), y.type)]
jvp_rules[sub_p] = sum_jvp(sub_p, negate_y=True)
lower_rules[sub_p] = elementwise_lowering(hlo.SubtractOp)

mul_p = elementwise_binary("mul", np.multiply)
vjp_rules[mul_p] = _partials(lambda b, x, y: y, lambda b, x, y: x)
jvp_rules[mul_p] = _partials_jvp(mul_p)
lower_rules[mul_p] = elementwise_lowering(hlo.MulOp)


def _safe_divisor(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    # 1 where y == 0 (patched afterwards) or where INT_MIN / -1 would overflow: x / 1 and
    # x % 1 then give XLA's INT_MIN and 0. See Note [integer division].
    bad = y == 0
    if x.dtype.kind == "i":
        bad |= (x == np.iinfo(x.dtype).min) & (y == -1)
    return np.where(bad, np.ones_like(y), y)


def _div_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind not in "iu":
        return np.divide(x, y)
    x, y = np.broadcast_arrays(x, y)
    d = _safe_divisor(x, y)
    q = x // d                                   # floors; step back up toward zero
    if x.dtype.kind == "i":
        q = q + ((x % d != 0) & ((x < 0) != (d < 0))).astype(x.dtype)
    return np.where(y == 0, ~np.zeros_like(x), q)


# Note [JAX's derivative arithmetic]
# A derivative rule fixes the float operations a gradient is computed with, and so its
# last bits. Where spmdc's rule would round differently from JAX's, it is written as JAX
# computes it, so gradients agree with JAX's bit for bit and a program that iterates on
# them (a NUTS chain, an optimizer) follows JAX's trajectory instead of drifting from it
# after a few hundred steps. div: JAX's JVP is tx / y - (ty x) y^-2, and its reverse
# mode (the transpose of that JVP) gives ct / y and -((ct y^-2) x); ``ct * (1 / y)``
# rounds twice and differs in the last bit.


def _div_vjp(b, ct, x, y):
    # See Note [JAX's derivative arithmetic]: ct / y, and -((ct y^-2) x)
    return [unbroadcast(b, b.div(ct, y), x.type),
            unbroadcast(b, b.neg(b.mul(b.mul(ct, b.integer_pow(y, y=-2)), x)), y.type)]


def _div_jvp(b, primals, tangents):
    x, y = primals
    tx, ty = tangents
    out = b.div(x, y)
    terms = ([] if tx is None else [b.div(tx, y)]) + \
        ([] if ty is None else [b.mul(b.mul(b.neg(ty), x), b.integer_pow(y, y=-2))])
    return [out], [summed_tangent(b, terms, out)]


div_p = elementwise_binary("div", _div_impl)
vjp_rules[div_p] = _div_vjp
jvp_rules[div_p] = _div_jvp
lower_rules[div_p] = elementwise_lowering(hlo.DivOp)


def _rem_impl(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind not in "iu":
        return np.fmod(x, y)
    x, y = np.broadcast_arrays(x, y)
    return np.where(y == 0, x, np.fmod(x, _safe_divisor(x, y)))


def _trunc(b, q):
    return b.mul(b.sign(q), b.floor(b.abs(q)))


rem_p = elementwise_binary("rem", _rem_impl, "iuf")                     # x - y trunc(x/y)
vjp_rules[rem_p] = _partials(lambda b, x, y: _const(x, 1),
                             lambda b, x, y: b.neg(_trunc(b, b.div(x, y))))
jvp_rules[rem_p] = _partials_jvp(rem_p)
lower_rules[rem_p] = elementwise_lowering(hlo.RemOp)

pow_p = elementwise_binary("pow", np.power, "fc")
vjp_rules[pow_p] = _partials(                    # y x^(y-1) (0 where y == 0), x^y log x
    lambda b, x, y: b.select(b.eq(y, _const(y, 0)), _const(y, 0),
                             b.mul(y, b.pow(x, b.sub(y, _const(y, 1))))),
    lambda b, x, y: b.mul(b.pow(x, y), b.log(b.select(b.eq(x, _const(x, 0)), _const(x, 1), x))))
jvp_rules[pow_p] = _partials_jvp(pow_p)
lower_rules[pow_p] = elementwise_lowering(hlo.PowOp)


def _share(b, x, y, z):
    # x's share of the cotangent of z = max/min(x, y): 1, 1/2 on ties, else 0.
    half, one, zero = _const(x, 0.5), _const(x, 1), _const(x, 0)
    return b.select(b.eq(x, z), b.select(b.eq(y, z), half, one), zero)


def _extremum_impl(kind: str, ufunc: np.ufunc):
    def impl(x, y):
        if np.result_type(x, y).kind == "c":        # See Note [complex order]
            return numpy_extremum(kind, x, y)
        return ufunc(x, y)
    return impl


def _extremum_lowering(op_class, direction: str):
    real_rule = elementwise_lowering(op_class)

    def rule(ctx, eqn, x, y):
        out = eqn.outputs[0].type
        if out.dtype.kind != "c":
            return real_rule(ctx, eqn, x, y)
        x, y = (v if a.type.shape == out.shape else
                ctx.broadcast(v, a.type, TensorType(out.shape, a.type.dtype))
                for v, a in zip((x, y), eqn.inputs, strict=True))
        return lexicographic_extremum(x, y, direction)      # See Note [complex order]
    return rule


# See Note [gradients at kinks] and, for complex operands, Note [complex order].
max_p = elementwise_binary("max", _extremum_impl("max", np.maximum), ORDERED)
vjp_rules[max_p] = _partials(lambda b, x, y: _share(b, x, y, b.max(x, y)),
                             lambda b, x, y: _share(b, y, x, b.max(x, y)))
jvp_rules[max_p] = _partials_jvp(max_p)
lower_rules[max_p] = _extremum_lowering(hlo.MaxOp, "GT")

min_p = elementwise_binary("min", _extremum_impl("min", np.minimum), ORDERED)
vjp_rules[min_p] = _partials(lambda b, x, y: _share(b, x, y, b.min(x, y)),
                             lambda b, x, y: _share(b, y, x, b.min(x, y)))
jvp_rules[min_p] = _partials_jvp(min_p)
lower_rules[min_p] = _extremum_lowering(hlo.MinOp, "LT")

atan2_p = elementwise_binary("atan2", np.arctan2, REAL)                 # atan(x / y)
vjp_rules[atan2_p] = _partials(lambda b, x, y: b.div(y, b.add(b.mul(x, x), b.mul(y, y))),
                               lambda b, x, y: b.div(b.neg(x), b.add(b.mul(x, x), b.mul(y, y))))
jvp_rules[atan2_p] = _partials_jvp(atan2_p)
lower_rules[atan2_p] = elementwise_lowering(hlo.Atan2Op)

nextafter_p = elementwise_binary("nextafter", np.nextafter, REAL)       # ~ x: slope 1 in x
vjp_rules[nextafter_p] = lambda b, ct, x, y: [unbroadcast(b, ct, x.type), None]
jvp_rules[nextafter_p] = partials_jvp(nextafter_p, lambda b, x, y: _const(x, 1), None)
lower_rules[nextafter_p] = elementwise_lowering(chlo.NextAfterOp)

# --- stop_gradient ---------------------------------------------------------------------------

stop_gradient_p = declare("stop_gradient", lambda x: x, lambda x: np.array(x))
vjp_rules[stop_gradient_p] = lambda b, ct, x, active=None: [None]
# Its output depends on no differentiated input (Note [activity]), so what it feeds is
# not differentiated: a custom_jvp rule applied to it is never called, as in JAX.
activity_rules[stop_gradient_p] = lambda active: [False]
jvp_rules[stop_gradient_p] = zero_jvp(stop_gradient_p)
lower_rules[stop_gradient_p] = lambda ctx, eqn, x: x

# --- type conversion -------------------------------------------------------------------------

def _convert_rule(x: TensorType, *, new_dtype: np.dtype) -> TensorType:
    return TensorType(x.shape, np.dtype(new_dtype))


def _convert_impl(x: np.ndarray, *, new_dtype: np.dtype) -> np.ndarray:
    # See Note [float to integer conversion].
    new_dtype = np.dtype(new_dtype)
    if not (_is_real_float(x.dtype) and dtype_kind(new_dtype) in "iu"):
        return x.astype(new_dtype)
    info = np.iinfo(new_dtype)
    high, low = x >= info.max, x <= info.min         # the bounds round to x's precision
    inside = np.where(high | low | np.isnan(x), 0, x).astype(new_dtype)
    return np.where(high, info.max, np.where(low, info.min, inside)).astype(new_dtype)


def _is_real_float(dtype: np.dtype) -> bool:
    return dtype_kind(dtype) == "f"


def _convert_jvp(b, primals, tangents, *, new_dtype):
    # Float to float: the tangent converts too; to an integer or bool type: no tangent.
    (x,), (t,) = primals, tangents
    out = b.convert(x, new_dtype=new_dtype)
    return [out], [b.convert(t, new_dtype=new_dtype) if is_float(out.type) else None]


convert_p = declare("convert", _convert_rule, _convert_impl)
vjp_rules[convert_p] = lambda b, ct, x, *, new_dtype: [     # bfloat16 is a float too
    b.convert(ct, new_dtype=x.type.dtype) if is_float(x.type) else None]
jvp_rules[convert_p] = _convert_jvp
lower_rules[convert_p] = lambda ctx, eqn, x: hlo.ConvertOp(
    ctx.mlir_type(eqn.outputs[0].type), x).result

def _bitcast_convert_rule(x: TensorType, *, new_dtype: np.dtype) -> TensorType:
    new_dtype = np.dtype(new_dtype)
    if new_dtype.itemsize != x.dtype.itemsize or np.dtype(np.bool_) in (x.dtype, new_dtype):
        raise ShapeError(f"bitcast_convert: {x} and {new_dtype} differ in bit width (or one "
                         "is bool); only same-width reinterpretation is supported")
    return TensorType(x.shape, new_dtype)


# The same bits read as another type of the same width (random number generation builds
# floats from random integers this way). Its output is not a differentiable function of
# its input's value.
bitcast_convert_p = declare("bitcast_convert", _bitcast_convert_rule,
                            lambda x, *, new_dtype: np.ascontiguousarray(x).view(new_dtype))
nondifferentiable[bitcast_convert_p] = "it reinterprets bits; no derivative of the value"
lower_rules[bitcast_convert_p] = lambda ctx, eqn, x: hlo.BitcastConvertOp(
    ctx.mlir_type(eqn.outputs[0].type), x).result

# --- batching: every primitive here is elementwise ------------------------------------------

__all__ = [name for name in dir() if name.endswith("_p")]
for _prim in [globals()[name] for name in __all__]:
    batch_rules[_prim] = elementwise_batch_rule(_prim)

from . import logic  # noqa: E402,F401  (registration: the other half of the family)
