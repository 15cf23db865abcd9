"""spmdc.lax's elementwise operations: the unary and binary wrappers over the elementwise
primitives (sin, add, the comparisons, the bitwise and shift operations, clz,
population_count ...), select/select_n/clamp, convert_element_type and
bitcast_convert_type, integer_pow, round, mulhi, and the ``dtype`` query.

Like the rest of lax they do not promote dtypes: the operands of a binary operation must
already agree, as in JAX (add/sub/mul/div/max/min bind and let the primitive decide; the
others check and name lax.convert_element_type).
"""
from __future__ import annotations

import enum
from typing import Any

import numpy as np

from ..compiler.primitives.complex_parts import abs_p
from ..compiler.primitives.core import Primitive
from ..compiler.primitives.elementwise import (
    acos_p,
    acosh_p,
    add_p,
    asin_p,
    asinh_p,
    atan2_p,
    atan_p,
    atanh_p,
    bitcast_convert_p,
    cbrt_p,
    ceil_p,
    convert_p,
    cos_p,
    cosh_p,
    div_p,
    exp2_p,
    exp_p,
    expm1_p,
    floor_p,
    integer_pow_p,
    is_finite_p,
    log1p_p,
    log_p,
    logistic_p,
    max_p,
    min_p,
    mul_p,
    neg_p,
    nextafter_p,
    pow_p,
    rem_p,
    round_p,
    rsqrt_p,
    sign_p,
    sin_p,
    sinh_p,
    sqrt_p,
    stop_gradient_p,
    sub_p,
    tan_p,
    tanh_p,
)
from ..compiler.primitives.logic import (
    and_p,
    clamp_p,
    eq_p,
    ge_p,
    gt_p,
    le_p,
    lt_p,
    ne_p,
    not_p,
    or_p,
    population_count_p,
    select_p,
    shift_left_p,
    shift_right_arithmetic_p,
    shift_right_logical_p,
    xor_p,
)
from ..compiler.primitives.misc import clz_p
from ..core import dtypes
from ..core.operands import (
    all_weak,
    asarray,
    broadcast_shapes,
    broadcast_to,
    dtype_of,
    literal,
    promote,
    shape_of,
    stretch_size_one,
    strong,
)
from ..core.tracing import bind
from ..core.tree import tree_map
from .shape import _broadcast_to, broadcast_in_dim

__all__ = ["select", "stop_gradient", "convert_element_type", "integer_pow", "clamp", "sin", "cos",
           "tanh", "exp", "log", "sqrt", "rsqrt", "neg", "add", "sub", "mul", "div", "max", "min",
           "RoundingMethod", "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cosh",
           "sinh", "tan", "cbrt", "ceil", "floor", "sign", "exp2", "expm1", "log1p", "logistic",
           "is_finite", "population_count", "bitwise_not", "square", "reciprocal", "atan2", "rem",
           "pow", "nextafter", "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left",
           "shift_right_arithmetic", "shift_right_logical", "eq", "ne", "lt", "le", "gt", "ge",
           "round", "bitcast_convert_type", "select_n", "clz", "mulhi", "dtype"]


def _where(pred: Any, x: Any, y: Any) -> Any:
    """``x`` where ``pred`` (a boolean array) else ``y``, promoted and broadcast as
    jnp.where does: NumPy scalars stay literals and rank-0 operands broadcast in the
    select itself."""
    (x, y), _, weak = promote("where", x, y)
    shape = broadcast_shapes(pred.shape, shape_of(x), shape_of(y), op="where")
    return bind(select_p, *(broadcast_to(v, shape) for v in (pred, x, y)), weak=weak)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred`` else ``on_false``; the result is weak iff both are."""
    pred, on_true, on_false = (literal(v) for v in (pred, on_true, on_false))
    return bind(select_p, pred, on_true, on_false, weak=all_weak(on_true, on_false))


def stop_gradient(x: Any) -> Any:
    """``x`` (a pytree) as a constant of differentiation."""
    def one(v: Any) -> Any:
        v = asarray(v)
        return bind(stop_gradient_p, v, weak=v.weak)
    return tree_map(one, x)


def convert_element_type(x: Any, new_dtype: Any) -> Any:
    """``x`` as ``new_dtype``, strongly typed (a strong array of that dtype as it is; a
    Python or NumPy scalar converted in the program, a literal of it)."""
    x, dtype = literal(x), dtypes.canonicalize(new_dtype)
    if dtype_of(x) == dtype:
        x = asarray(x)
        return strong(x) if x.weak else x
    return bind(convert_p, x, new_dtype=dtype)


def integer_pow(x: Any, y: int) -> Any:
    x = asarray(x)
    return bind(integer_pow_p, x, y=int(y), weak=x.weak)


def clamp(lo: Any, x: Any, hi: Any) -> Any:
    x = asarray(x)
    return bind(clamp_p, asarray(lo).astype(x.dtype), x, asarray(hi).astype(x.dtype),
                weak=x.weak)


def _unary(name: str, prim: Primitive) -> Any:
    def fn(x: Any) -> Any:
        x = asarray(x)
        return bind(prim, x, weak=x.weak)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (the ``{prim.name}`` primitive)."
    return fn


def _binary(name: str, prim: Primitive, weak_out: bool = True) -> Any:
    def fn(x: Any, y: Any) -> Any:
        x, y = literal(x), literal(y)
        if dtype_of(x) != dtype_of(y):
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                            f"{dtype_of(x)}, {dtype_of(y)}; convert one with "
                            f"lax.convert_element_type")
        # See Note [size-1 dimensions of lax operations] (core/operands.py)
        x, y = stretch_size_one([x, y])
        return bind(prim, x, y, weak=weak_out and all_weak(x, y))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of two arrays of one dtype."
    return fn


sin, cos, tanh, exp, log = (_unary("sin", sin_p), _unary("cos", cos_p), _unary("tanh", tanh_p),
                            _unary("exp", exp_p), _unary("log", log_p))
sqrt, rsqrt, neg = _unary("sqrt", sqrt_p), _unary("rsqrt", rsqrt_p), _unary("neg", neg_p)


def _binary_unchecked(name: str, prim: Primitive) -> Any:
    """A binary wrapper that leaves the dtypes to the primitive (add, sub, mul, div, max,
    min), unlike ``_binary``, which requires them to agree."""
    def fn(x: Any, y: Any) -> Any:
        # See Note [size-1 dimensions of lax operations] (core/operands.py)
        x, y = stretch_size_one([literal(x), literal(y)])
        return bind(prim, x, y, weak=all_weak(x, y))
    fn.__name__ = name
    return fn


add, sub, mul, div = (_binary_unchecked("add", add_p), _binary_unchecked("sub", sub_p),
                      _binary_unchecked("mul", mul_p), _binary_unchecked("div", div_p))
max, min = _binary_unchecked("max", max_p), _binary_unchecked("min", min_p)


abs, acos, acosh, asin, asinh = (_unary("abs", abs_p), _unary("acos", acos_p),
                                 _unary("acosh", acosh_p), _unary("asin", asin_p),
                                 _unary("asinh", asinh_p))


atan, atanh, cosh, sinh, tan = (_unary("atan", atan_p), _unary("atanh", atanh_p),
                                _unary("cosh", cosh_p), _unary("sinh", sinh_p),
                                _unary("tan", tan_p))


cbrt, ceil, floor, sign = (_unary("cbrt", cbrt_p), _unary("ceil", ceil_p),
                           _unary("floor", floor_p), _unary("sign", sign_p))


exp2, expm1, log1p, logistic = (_unary("exp2", exp2_p), _unary("expm1", expm1_p),
                                _unary("log1p", log1p_p), _unary("logistic", logistic_p))


population_count = _unary("population_count", population_count_p)


bitwise_not = _unary("bitwise_not", not_p)


atan2, rem, pow, nextafter = (_binary("atan2", atan2_p), _binary("rem", rem_p),
                              _binary("pow", pow_p), _binary("nextafter", nextafter_p))


bitwise_and, bitwise_or, bitwise_xor = (
    _binary("bitwise_and", and_p), _binary("bitwise_or", or_p), _binary("bitwise_xor", xor_p))


shift_left, shift_right_arithmetic, shift_right_logical = (
    _binary("shift_left", shift_left_p),
    _binary("shift_right_arithmetic", shift_right_arithmetic_p),
    _binary("shift_right_logical", shift_right_logical_p))


eq, ne, lt, le, gt, ge = (_binary(n, p, weak_out=False) for n, p in (
    ("eq", eq_p), ("ne", ne_p), ("lt", lt_p), ("le", le_p), ("gt", gt_p), ("ge", ge_p)))


def is_finite(x: Any) -> Any:
    """Elementwise: neither infinite nor NaN (a bool array, weak iff ``x`` is, as JAX's)."""
    x = asarray(x)
    return bind(is_finite_p, x, weak=x.weak)


def square(x: Any) -> Any:
    """``x * x``."""
    x = asarray(x)
    return bind(integer_pow_p, x, y=2, weak=x.weak)


def reciprocal(x: Any) -> Any:
    """``1 / x``."""
    x = asarray(x)
    return bind(integer_pow_p, x, y=-1, weak=x.weak)


class RoundingMethod(enum.IntEnum):
    """How ``lax.round`` breaks ties: away from zero (0) or to the nearest even (1)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Any, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Round to the nearest integer; ties go away from zero, or to even with
    ``rounding_method=RoundingMethod.TO_NEAREST_EVEN`` (or 1)."""
    if isinstance(rounding_method, str):
        rounding_method = RoundingMethod[rounding_method.upper()]
    method = int(rounding_method)
    if method not in (0, 1):
        raise ValueError(f"lax.round: rounding_method must be a lax.RoundingMethod (0 or 1), "
                         f"got {rounding_method!r}")
    x = asarray(x)
    return bind(round_p, x, rounding_method=method, weak=x.weak)


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """The same bits read as ``new_dtype``, which must have the same width."""
    x = asarray(operand)
    return bind(bitcast_convert_p, x, new_dtype=dtypes.canonicalize(new_dtype))


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise: ``which`` is boolean (two cases) or an integer array
    of indices into ``cases``, which share one shape and dtype."""
    if not cases:
        raise ValueError("lax.select_n: needs at least one case")
    which = asarray(which)
    if len(cases) == 1:
        return asarray(cases[0])
    if which.dtype == np.bool_:
        if len(cases) != 2:
            raise ValueError(f"lax.select_n: a boolean selector picks from 2 cases, got "
                             f"{len(cases)}")
        return select(which, cases[1], cases[0])
    if which.dtype.kind not in "iu":
        raise TypeError(f"lax.select_n: which must be bool or an integer, got {which.dtype}")
    out = asarray(cases[-1])
    for i in range(len(cases) - 2, -1, -1):
        pick = which == np.asarray(i, which.dtype)
        if pick.shape != out.shape:
            pick = broadcast_in_dim(pick, out.shape, tuple(
                range(len(out.shape) - pick.ndim, len(out.shape))))
        out = select(pick, cases[i], out)
    return out


def clz(x: Any) -> Any:
    """Elementwise count of leading zero bits of an integer array."""
    x = asarray(x)
    return bind(clz_p, x, weak=x.weak)


def mulhi(x: Any, y: Any, /) -> Any:
    """Elementwise upper N bits of the 2N-bit product of two N-bit integers (signed or
    unsigned, as the dtype says).

    Computed in N-bit arithmetic from half-width limbs, so no wider type is needed:
    with ``a = a1 2^h + a0`` and ``b = b1 2^h + b0`` (``h = N/2``) the unsigned high part is
    ``a1 b1 + (a1 b0 >> h) + (a0 b1 >> h) + carry``; the signed one subtracts ``b`` where
    ``a < 0`` and ``a`` where ``b < 0`` (mod 2^N)."""
    x, y = asarray(x), asarray(y)
    if x.dtype != y.dtype or x.dtype.kind not in "iu":
        raise TypeError(f"mulhi: operands must be integers of one dtype, got {x.dtype} and "
                        f"{y.dtype}")
    if x.ndim and y.ndim and x.ndim != y.ndim:
        raise TypeError(f"mulhi: arrays must have the same number of dimensions, got "
                        f"{{{x.ndim}, {y.ndim}}}")
    if x.shape != y.shape:
        shape = broadcast_shapes(x.shape, y.shape)
        x, y = _broadcast_to(x, shape), _broadcast_to(y, shape)
    signed = x.dtype.kind == "i"
    udt = np.dtype(f"u{x.dtype.itemsize}")
    a, b = (bitcast_convert_type(v, udt) if signed else v for v in (x, y))
    h = udt.type(4 * udt.itemsize)
    mask = udt.type((1 << int(h)) - 1)
    a0, a1 = bitwise_and(a, mask), shift_right_logical(a, h)
    b0, b1 = bitwise_and(b, mask), shift_right_logical(b, h)
    p01, p10 = mul(a0, b1), mul(a1, b0)
    mid = add(add(shift_right_logical(mul(a0, b0), h), bitwise_and(p01, mask)),
              bitwise_and(p10, mask))
    hi = add(add(mul(a1, b1), shift_right_logical(p01, h)),
             add(shift_right_logical(p10, h), shift_right_logical(mid, h)))
    if not signed:
        return hi
    zero = np.zeros((), x.dtype)
    hi = sub(hi, select(lt(x, zero), b, np.zeros(b.shape, udt)))
    hi = sub(hi, select(lt(y, zero), a, np.zeros(a.shape, udt)))
    return bitcast_convert_type(hi, x.dtype)


def dtype(x: Any, *, canonicalize: bool = False) -> np.dtype:
    """The dtype of a value or of a dtype-like (``lax.dtype``). spmdc's dtypes are always
    canonical (64-bit types only with x64), so ``canonicalize`` changes nothing."""
    if not isinstance(canonicalize, bool):
        raise TypeError(f"lax.dtype: canonicalize must be a bool, got {canonicalize!r}")
    if isinstance(x, (str, np.dtype)) or (isinstance(x, type) and x not in (int, float,
                                                                           complex, bool)):
        return dtypes.canonicalize(x)
    if isinstance(x, type):                  # the Python types name the default dtypes
        return dtypes.dtype_and_weak(x(0))[0]
    return dtypes.dtype_and_weak(x)[0]
