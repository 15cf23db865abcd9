"""Elementwise arithmetic, transcendental and rounding functions (NumPy's ufuncs) and clip:
each is one lax operation on operands promoted as NumPy does, or composes a few (the
integer and float divisions and remainders, divmod, power, trunc, isinf/isposinf/isneginf,
stop_gradient), and NumPy 2's array-API aliases (acos, asin ...). The floating-point
functions composed of these (logaddexp, hypot, sinc, nan_to_num ...) are in
float_ufuncs.py.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.operands import asarray, broadcast_shapes, promote_operands
from ..core.operands import broadcast_to as _broadcast_to
from ..core.operands import dtype_of as _dtype_of
from ..core.operands import error as _error
from ..core.operands import is_array as _is_array
from ..core.operands import operand as _operand
from ..core.operands import promote as _promote
from ..core.tracing import current_trace
from ..transforms.jit import jit
from .comparisons import (
    bitwise_and,
    equal,
    less,
    logical_and,
    logical_not,
    logical_or,
    not_equal,
    where,
)
from .core import _elementwise, operator_index, result_type


def _float_operand(x: Any) -> Any:
    """Integers and bools become the default float (true division, sin of an int ...),
    weakly typed if they were (as in JAX: ``jnp.sqrt(2)`` and ``x / 2`` of a weak int are
    weak floats)."""
    x = x if _is_array(x) else asarray(x)
    if dtypes.kind(x.dtype) in "biu":
        return _operand(x, dtypes.default_float(), weak=bool(x.weak))
    return x


def _unary(name: str, lax_fn: Callable[[Any], Any], float_only: bool = True) -> Any:
    """NumPy's ``name``: the lax function ``lax_fn`` of ``x`` (integers and booleans made
    the default float first if ``float_only``)."""
    def fn(x: Any) -> Any:
        x = asarray(x)
        if float_only:
            x = _float_operand(x)
        return lax_fn(x)
    fn.__name__ = name
    return fn


sin, cos, tan, tanh, exp, log = (_unary(n, getattr(lax, n))
                                 for n in ("sin", "cos", "tan", "tanh", "exp", "log"))


arcsin, arccos = _unary("arcsin", lax.asin), _unary("arccos", lax.acos)


arctan = _unary("arctan", lax.atan)


sinh, cosh = _unary("sinh", lax.sinh), _unary("cosh", lax.cosh)


arcsinh, arccosh, arctanh = (_unary("arcsinh", lax.asinh), _unary("arccosh", lax.acosh),
                             _unary("arctanh", lax.atanh))


exp2, log1p, expm1, sqrt, cbrt = (_unary(n, getattr(lax, n))
                                  for n in ("exp2", "log1p", "expm1", "sqrt", "cbrt"))


negative = _unary("negative", lax.neg, float_only=False)


_abs = _unary("abs", lax.abs, float_only=False)


def absolute(x: Any) -> Any:
    """``|x|``; unsigned integers and booleans are returned unchanged, as in JAX."""
    x = asarray(x)
    return x if dtypes.kind(x.dtype) in "ub" else _abs(x)


abs = absolute


sign = _unary("sign", lax.sign, float_only=False)


def _integral_unchanged(name: str, lax_fn: Callable[[Any], Any]) -> Any:
    """floor / ceil: integers and booleans are returned unchanged (as in JAX)."""
    def fn(x: Any) -> Any:
        x = asarray(x)
        if dtypes.kind(x.dtype) in "biu":
            return x
        return lax_fn(x)
    fn.__name__ = name
    return fn


floor, ceil = _integral_unchanged("floor", lax.floor), _integral_unchanged("ceil", lax.ceil)


def trunc(x: Any) -> Any:
    """Round toward zero; integers and booleans are returned unchanged."""
    x = asarray(x)
    if dtypes.kind(x.dtype) in "biu":
        return x
    return where(less(x, 0), ceil(x), floor(x))


def rint(x: Any) -> Any:
    """Round to the nearest integer, ties to even; integers become the default float."""
    return lax.round(_float_operand(asarray(x)), lax.RoundingMethod.TO_NEAREST_EVEN)


_isfinite = _unary("isfinite", lax.is_finite)


def isfinite(x: Any) -> Any:
    """Neither infinite nor NaN; a complex number is finite when both its parts are."""
    x = asarray(x)
    if dtypes.kind(x.dtype) == "c":
        from .complex_ops import imag, real
        return logical_and(_isfinite(real(x)), _isfinite(imag(x)))
    return _isfinite(x)


def log2(x: Any) -> Any:
    return log(x) / math.log(2)


def log10(x: Any) -> Any:
    return log(x) / math.log(10)


def square(x: Any) -> Any:
    return lax.square(asarray(x))


def reciprocal(x: Any) -> Any:
    return 1 / asarray(x)


def round(x: Any, decimals: int = 0, out: Any = None) -> Any:
    """Round to ``decimals`` places, ties to even; integers are returned unchanged."""
    if out is not None:
        raise NotImplementedError("round: the out= argument is not supported; spmdc arrays "
                                  "are immutable, use the returned value")
    x = asarray(x)
    decimals = operator_index(decimals)
    if x.dtype == np.bool_:
        raise ValueError("round: not defined for booleans (dtype bool is not inexact)")
    if dtypes.kind(x.dtype) in "iu":
        if decimals < 0:
            raise NotImplementedError("round: integers with decimals < 0 are not "
                                      "supported; convert to a float dtype first")
        return x
    if decimals == 0:
        return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
    scale = 10.0 ** decimals
    return lax.round(x * scale, lax.RoundingMethod.TO_NEAREST_EVEN) / scale


around = round


def isnan(x: Any) -> Any:
    return not_equal(x, x)


def isinf(x: Any) -> Any:
    x = asarray(x)
    if dtypes.kind(x.dtype) == "c":           # either part infinite (the other may be NaN)
        from .complex_ops import imag, real
        return logical_or(isinf(real(x)), isinf(imag(x)))
    return logical_and(logical_not(isfinite(x)), logical_not(isnan(x)))


def _both_bool(x: Any, y: Any) -> bool:
    return _dtype_of(x) == np.bool_ and _dtype_of(y) == np.bool_


def add(x: Any, y: Any) -> Any:
    # On booleans + is "or" (as in JAX and NumPy).
    return _elementwise("add", lax.bitwise_or if _both_bool(x, y) else lax.add, x, y)


def subtract(x: Any, y: Any) -> Any:
    return _elementwise("subtract", lax.sub, x, y)


def multiply(x: Any, y: Any) -> Any:
    # On booleans * is "and" (as in JAX and NumPy).
    if _both_bool(x, y):
        return _elementwise("multiply", lax.bitwise_and, x, y)
    if current_trace() is None and _one_bool_operand(x, y):
        return _multiply_by_bool_program(x, y)      # See Note [multiplying by a boolean]
    return _elementwise("multiply", lax.mul, x, y)


# Note [multiplying by a boolean]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX's jnp.multiply is a jitted function, so even called outside jit the boolean
# operand's conversion and the product are one XLA program, and XLA's algebraic
# simplifier rewrites ``a * convert(pred)`` into ``select(pred, a, 0)``: JAX gives
# ``inf * False == 0`` and ``nan * False == 0`` (NumPyro's
# binary_cross_entropy_with_logits relies on it), where IEEE arithmetic op by op gives
# nan. Under a trace spmdc emits the same convert and multiply, so XLA makes the same
# rewrite; an eager product with exactly one boolean operand is compiled as one program
# the same way (a jit, cached per signature), so it gives JAX's values too.

def _one_bool_operand(x: Any, y: Any) -> bool:
    scalars = (int, float, complex, np.generic)
    if not all(_is_array(a) or isinstance(a, scalars) for a in (x, y)):
        return False
    return (_dtype_of(x) == np.bool_) != (_dtype_of(y) == np.bool_)


def _multiply_elementwise(x: Any, y: Any) -> Any:
    return _elementwise("multiply", lax.mul, x, y)


_multiply_by_bool_program = jit(_multiply_elementwise)


def true_divide(x: Any, y: Any) -> Any:
    (ints_x, ints_y), dtype, _ = promote_operands("divide", x, y)
    if dtypes.kind(dtype) in "biu":
        x, y = _float_operand(ints_x), _float_operand(ints_y)
    # else the operands as given: _elementwise keeps a Python scalar weak, so a weak
    # float divided by 2.0 stays weak (Note [weak literals] in core/operands.py)
    return _elementwise("divide", lax.div, x, y)


divide = true_divide


def _numeric(op: str, x: Any, y: Any) -> tuple[Any, Any, np.dtype, bool]:
    """Both operands promoted, booleans made the default int (JAX's promote_args_numeric),
    with the result's weak flag."""
    (x, y), dtype, weak = _promote(op, x, y)
    if dtypes.kind(dtype) == "b":
        dtype = dtypes.default_int()
        x, y = asarray(x).astype(dtype), asarray(y).astype(dtype)
    return x, y, np.dtype(dtype), weak


def _weak(out: Any, weak: bool) -> Any:
    out.weak = weak
    return out


def floor_divide(x: Any, y: Any) -> Any:
    """``x // y`` as JAX computes it: C division stepped down where the signs differ for
    integers (a zero divisor gives XLA's value, as in JAX), CPython's float_divmod for
    floats (``1 // 0.1`` is 9 where ``floor(1 / 0.1)`` is 10; ``-inf // 2`` is NaN)."""
    x, y, dtype, weak = _numeric("floor_divide", x, y)
    if dtypes.kind(dtype) == "u":
        return _weak(_elementwise("floor_divide", lax.div, x, y), weak)
    if dtypes.kind(dtype) == "i":
        q = _elementwise("floor_divide", lax.div, x, y)
        r = _elementwise("floor_divide", lax.rem, x, y)
        fix = logical_and(not_equal(sign(x), sign(y)), not_equal(r, 0))
        return _weak(where(fix, q - 1, q), weak)
    if dtypes.kind(dtype) == "c":
        raise _error("floor_divide", "not defined for complex numbers")
    return _float_divmod(x, y, weak)[0]


def _float_divmod(x: Any, y: Any, weak: bool) -> tuple[Any, Any]:
    """CPython's float_divmod (JAX's): the quotient from ``x - fmod(x, y)``, exact, then
    both stepped where the remainder's sign is not the divisor's."""
    mod = _elementwise("floor_divide", lax.rem, x, y)
    div = _elementwise("floor_divide", lax.div, where(equal(y, 0), x, x - mod), y)
    fix = logical_and(not_equal(mod, 0), not_equal(sign(y), sign(mod)))
    mod, div = where(fix, mod + y, mod), where(fix, div - 1, div)
    return _weak(lax.round(div), weak), _weak(mod, weak)


def remainder(x: Any, y: Any) -> Any:
    """``x % y`` with the divisor's sign (the divisor as converted: -3 % an unsigned array
    divides by 253); an integer zero divisor gives 0, as in JAX and NumPy."""
    x, y, dtype, weak = _numeric("remainder", x, y)
    if dtypes.kind(dtype) in "iu":
        y = where(equal(y, 0), asarray(1, dtype), y)
    r = _elementwise("remainder", lax.rem, x, y)
    # C fmod takes the dividend's sign; Python takes the divisor's
    fix = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(y, 0)))
    return _weak(where(fix, r + y, r), weak)


mod = remainder


def fmod(x: Any, y: Any) -> Any:
    """C's remainder (the dividend's sign); an integer zero divisor gives 0, as in JAX
    (booleans compute as ints, but keep XLA's ``x % 0 == x``, as JAX does)."""
    (_, _), promoted, _ = _promote("fmod", x, y)
    x, y, dtype, weak = _numeric("fmod", x, y)
    if dtypes.kind(promoted) in "iu":
        y = where(equal(y, 0), asarray(1, dtype), y)
    return _weak(_elementwise("fmod", lax.rem, x, y), weak)


def power(x: Any, y: Any) -> Any:
    if isinstance(y, int) and not isinstance(y, bool) and not _is_array(y):
        x = asarray(x)
        if dtypes.kind(x.dtype) in "iu" and y < 0:
            raise _error("power", "integers to negative integer powers are not allowed")
        return lax.integer_pow(x, y)
    (x, y), dtype, _ = _promote("power", x, y)
    if dtypes.kind(dtype) in "biu":
        return _integer_power(x, y, dtype)
    return _elementwise("power", lax.pow, x, y)


def _integer_power(x: Any, y: Any, dtype: Any) -> Any:
    """``x ** y`` for integer (or boolean, made the default int) arrays, as JAX computes
    it: binary exponentiation over the exponent's low six bits (a larger power overflows
    for any base above 1). A negative exponent's result is JAX's too (its bits shifted
    logically), which it calls implementation-defined."""
    if dtypes.kind(dtype) == "b":
        dtype = dtypes.default_int()
    x, y = asarray(x).astype(dtype), asarray(y).astype(dtype)
    x, y = _broadcast_to(x, broadcast_shapes(x.shape, y.shape, op="power")), \
        _broadcast_to(y, broadcast_shapes(x.shape, y.shape, op="power"))
    zero, one = asarray(0, dtype), asarray(1, dtype)
    acc = where(logical_and(equal(x, zero), not_equal(y, zero)), zero, one)  # 0 ** 0 is 1
    for _ in range(6):
        acc = where(not_equal(bitwise_and(y, one), zero), acc * x, acc)
        x = x * x
        y = lax.shift_right_logical(y, _broadcast_to(one, y.shape))
    return acc


pow = power


def maximum(x: Any, y: Any) -> Any:
    return _elementwise("maximum", lax.max, x, y)


def minimum(x: Any, y: Any) -> Any:
    return _elementwise("minimum", lax.min, x, y)


def arctan2(x: Any, y: Any) -> Any:
    # Promote first, as JAX: bfloat16 with int32 stays bfloat16; only two integer or
    # boolean operands become the default float.
    if dtypes.kind(_promote("arctan2", x, y)[1]) in "biu":
        x, y = _float_operand(x), _float_operand(y)
    return _elementwise("arctan2", lax.atan2, x, y)


def clip(x: Any, min: Any = None, max: Any = None, a_min: Any = None,  # noqa: F811  (NumPy's parameter names)
         a_max: Any = None) -> Any:
    lo = min if min is not None else a_min
    hi = max if max is not None else a_max
    x = asarray(x)
    if "c" in {dtypes.kind(_dtype_of(v)) for v in (x, lo, hi) if v is not None}:
        raise ValueError(            # JAX's words; see Note [complex order]
            "Clip received a complex value either through the input or the min/max "
            "keywords. Complex values have no ordering and cannot be clipped. Please "
            "convert to a real value or array by taking the real or imaginary components "
            "via jax.numpy.real/imag respectively.")
    if lo is not None:
        x = maximum(x, lo)
    if hi is not None:
        x = minimum(x, hi)
    return x


acos, acosh, asin, asinh, atan, atanh, atan2 = (
    arccos, arccosh, arcsin, arcsinh, arctan, arctanh, arctan2)


def _floats(*xs: Any) -> list[Any]:
    """The operands promoted together, then to a float type (JAX's promote_args_inexact)."""
    xs = [asarray(x) for x in xs]
    dtype = result_type(*xs)
    if dtypes.kind(dtype) in "biu":
        dtype = dtypes.default_float()
    return [x if x.dtype == dtype else x.astype(dtype) for x in xs]


def positive(x: Any) -> Any:
    x = asarray(x)
    if x.dtype == np.bool_:
        raise TypeError("positive: not defined for booleans (as in NumPy)")
    return x * 1 if x.weak else x + np.zeros((), x.dtype)


def divmod(x1: Any, x2: Any) -> tuple[Any, Any]:  # noqa: A001  (NumPy's name)
    y1, y2, dtype, weak = _numeric("divmod", x1, x2)
    if dtypes.kind(dtype) in "iu":
        return floor_divide(x1, x2), remainder(x1, x2)
    if dtypes.kind(dtype) == "c":
        raise TypeError("divmod: not defined for complex numbers")
    return _float_divmod(y1, y2, weak)


def stop_gradient(x: Any) -> Any:
    return lax.stop_gradient(asarray(x))


def isposinf(x: Any) -> Any:
    x = asarray(x)
    return isinf(x) & (x > 0)


def isneginf(x: Any) -> Any:
    x = asarray(x)
    return isinf(x) & (x < 0)
