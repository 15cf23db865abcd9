"""spmdc.numpy: NumPy's API over spmdc primitives (users import it as ``jnp``).

Every function is a thin wrapper: promote dtypes (JAX's lattice, weak Python scalars),
broadcast shapes (NumPy's rules, made explicit with broadcast_in_dim), then bind
primitives. The same code runs while tracing (equations) and eagerly (one cached
executable per primitive). This module holds dtypes, conversion, elementwise functions
and array creation; the other modules of spmdc.numpy build on it.
"""
from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from ..compiler.primitives.core import registry as _prims
from ..core import dtypes
from ..core.operands import (
    ARRAY_TYPES,
    asarray,
    broadcast_shapes,
    check_flag,  # noqa: F401  (spmdc.numpy's modules use it)
    result_type,
)
from ..core.operands import broadcast_to as _broadcast_to
from ..core.operands import dtype_of as _dtype_of
from ..core.operands import error as _error
from ..core.operands import full as _full
from ..core.operands import iota as _iota
from ..core.operands import is_array as _is_array
from ..core.operands import operand as _operand
from ..core.operands import promote as _promote
from ..core.operands import shape_arg as _shape_arg
from ..core.operands import shape_of as _shape
from ..core.tracing import Tracer, bind, current_trace, type_of
from ..runtime.array import Array

ndarray = Array

# --- dtypes and constants ----------------------------------------------------------------

bool_ = np.bool_
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float16, float32, float64 = np.float16, np.float32, np.float64
bfloat16 = ml_dtypes.bfloat16
complex64, complex128 = np.complex64, np.complex128
dtype = np.dtype
float_ = float64
int_ = int64
pi, e, inf, nan, euler_gamma = np.pi, np.e, np.inf, np.nan, np.euler_gamma
newaxis = None
finfo, iinfo = dtypes.finfo, dtypes.iinfo
issubdtype = dtypes.issubdtype
floating, integer, inexact, number, signedinteger, unsignedinteger, complexfloating = (
    np.floating, np.integer, np.inexact, np.number, np.signedinteger, np.unsignedinteger,
    np.complexfloating)


_ARRAY_TYPES = ARRAY_TYPES


# --- conversion --------------------------------------------------------------------------

def array(x: Any, dtype: Any = None, copy: bool = True) -> Any:
    """``x`` as an spmdc array. spmdc arrays are immutable, so a copy and the original can
    never be told apart: ``copy`` (True, False or None) changes nothing."""
    if copy not in (True, False, None):
        raise _error("array", f"copy must be True, False or None, got {copy!r}")
    return asarray(x, dtype)


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    x = asarray(x)
    shape = _shape_arg(shape, "broadcast_to")
    broadcast_shapes(x.shape, shape, op="broadcast_to")
    if x.shape == shape:
        return x
    if x.ndim == 0:
        return bind(_prims["broadcast_in_dim"], x, shape=shape, broadcast_dimensions=(),
                    weak=x.weak)
    return _broadcast_to(x, shape)


def _elementwise(op: str, prim: str, *args: Any, out_dtype: Any = None,
                 kinds: str | None = None) -> Any:
    args_, dtype, weak = _promote(op, *args)
    if kinds is not None and np.dtype(dtype).kind not in kinds and dtype != bfloat16:
        raise _error(op, f"not defined for dtype {np.dtype(dtype).name}")
    # After _promote every operand is an array (ours, or NumPy for Python values).
    shapes = [a.shape for a in args_]
    if shapes.count(shapes[0]) != len(shapes):      # else nothing to broadcast
        shape = broadcast_shapes(*shapes, op=op)
        args_ = [_broadcast_to(a, shape) for a in args_]
    if not isinstance(args_[0], _ARRAY_TYPES) and not builtins.any(_is_array(a) for a in args_):
        args_[0] = asarray(args_[0])
    return bind(_prims[prim], *args_, weak=weak and out_dtype is None)


# --- elementwise math --------------------------------------------------------------------

def _float_operand(x: Any) -> Any:
    """Integers and bools become the default float (true division, sin of an int ...)."""
    t, weak = type_of(x) if _is_array(x) else type_of(np.asarray(x))
    if t.dtype.kind in "biu":
        return _operand(asarray(x) if not _is_array(x) else x, dtypes.default_float())
    return x


def _unary(name: str, prim: str | None = None, float_only: bool = True) -> Any:
    prim = prim or name

    def fn(x: Any) -> Any:
        x = asarray(x)
        if float_only:
            x = _float_operand(x)
        return bind(_prims[prim], x, weak=x.weak)
    fn.__name__ = name
    return fn


sin, cos, tan, tanh, exp, log = (_unary(n) for n in ("sin", "cos", "tan", "tanh", "exp", "log"))
arcsin, arccos = _unary("arcsin", "asin"), _unary("arccos", "acos")
arctan = _unary("arctan", "atan")
sinh, cosh = _unary("sinh"), _unary("cosh")
arcsinh, arccosh, arctanh = (_unary("arcsinh", "asinh"), _unary("arccosh", "acosh"),
                             _unary("arctanh", "atanh"))
exp2, log1p, expm1, sqrt, cbrt = (_unary(n) for n in ("exp2", "log1p", "expm1", "sqrt", "cbrt"))
negative = _unary("negative", "neg", float_only=False)
_abs = _unary("abs", float_only=False)


def absolute(x: Any) -> Any:
    """``|x|``; unsigned integers and booleans are returned unchanged, as in JAX."""
    x = asarray(x)
    return x if x.dtype.kind in "ub" else _abs(x)


abs = absolute
sign = _unary("sign", float_only=False)


def _integral_unchanged(name: str) -> Any:
    """floor / ceil: integers and booleans are returned unchanged (as in JAX)."""
    def fn(x: Any) -> Any:
        x = asarray(x)
        if x.dtype.kind in "biu":
            return x
        return bind(_prims[name], x, weak=x.weak)
    fn.__name__ = name
    return fn


floor, ceil = _integral_unchanged("floor"), _integral_unchanged("ceil")


def trunc(x: Any) -> Any:
    """Round toward zero; integers and booleans are returned unchanged."""
    x = asarray(x)
    if x.dtype.kind in "biu":
        return x
    return where(less(x, 0), ceil(x), floor(x))


def rint(x: Any) -> Any:
    """Round to the nearest integer, ties to even; integers become the default float."""
    x = _float_operand(asarray(x))
    return bind(_prims["round"], x, rounding_method=1, weak=x.weak)
_isfinite = _unary("isfinite", "is_finite")


def isfinite(x: Any) -> Any:
    """Neither infinite nor NaN; a complex number is finite when both its parts are."""
    x = asarray(x)
    if x.dtype.kind == "c":
        from .complex_ops import imag, real
        return logical_and(_isfinite(real(x)), _isfinite(imag(x)))
    return _isfinite(x)


def log2(x: Any) -> Any:
    return log(x) / math.log(2)


def log10(x: Any) -> Any:
    return log(x) / math.log(10)


def square(x: Any) -> Any:
    x = asarray(x)
    return bind(_prims["integer_pow"], x, y=2, weak=x.weak)


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
    if x.dtype.kind in "iu":
        if decimals < 0:
            raise NotImplementedError("round: integers with decimals < 0 are not "
                                      "supported; convert to a float dtype first")
        return x
    if decimals == 0:
        return bind(_prims["round"], x, rounding_method=1, weak=x.weak)
    scale = 10.0 ** decimals
    return bind(_prims["round"], x * scale, rounding_method=1, weak=x.weak) / scale


around = round


def isnan(x: Any) -> Any:
    return not_equal(x, x)


def isinf(x: Any) -> Any:
    x = asarray(x)
    if x.dtype.kind == "c":           # either part infinite (the other may be NaN)
        from .complex_ops import imag, real
        return logical_or(isinf(real(x)), isinf(imag(x)))
    return logical_and(logical_not(isfinite(x)), logical_not(isnan(x)))


def _both_bool(x: Any, y: Any) -> bool:
    return _dtype_of(x) == np.bool_ and _dtype_of(y) == np.bool_


def add(x: Any, y: Any) -> Any:
    # On booleans + is "or" (as in JAX and NumPy).
    prim = "or" if _both_bool(x, y) else "add"
    return _elementwise("add", prim, x, y)


def subtract(x: Any, y: Any) -> Any:
    return _elementwise("subtract", "sub", x, y)


def multiply(x: Any, y: Any) -> Any:
    # On booleans * is "and" (as in JAX and NumPy).
    prim = "and" if _both_bool(x, y) else "mul"
    return _elementwise("multiply", prim, x, y)


def true_divide(x: Any, y: Any) -> Any:
    (x, y), dtype, _ = _promote("divide", x, y)
    if np.dtype(dtype).kind in "biu":
        x, y = _float_operand(x), _float_operand(y)
    return _elementwise("divide", "div", x, y)


divide = true_divide


def _numeric(op: str, x: Any, y: Any) -> tuple[Any, Any, np.dtype, bool]:
    """Both operands promoted, booleans made the default int (JAX's promote_args_numeric),
    with the result's weak flag."""
    (x, y), dtype, weak = _promote(op, x, y)
    if np.dtype(dtype).kind == "b":
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
    if dtype.kind == "u":
        return _weak(_elementwise("floor_divide", "div", x, y), weak)
    if dtype.kind == "i":
        q = _elementwise("floor_divide", "div", x, y)
        r = _elementwise("floor_divide", "rem", x, y)
        fix = logical_and(not_equal(sign(x), sign(y)), not_equal(r, 0))
        return _weak(where(fix, q - 1, q), weak)
    if dtype.kind == "c":
        raise _error("floor_divide", "not defined for complex numbers")
    return _float_divmod(x, y, weak)[0]


def _float_divmod(x: Any, y: Any, weak: bool) -> tuple[Any, Any]:
    """CPython's float_divmod (JAX's): the quotient from ``x - fmod(x, y)``, exact, then
    both stepped where the remainder's sign is not the divisor's."""
    mod = _elementwise("floor_divide", "rem", x, y)
    div = _elementwise("floor_divide", "div", where(equal(y, 0), x, x - mod), y)
    fix = logical_and(not_equal(mod, 0), not_equal(sign(y), sign(mod)))
    mod, div = where(fix, mod + y, mod), where(fix, div - 1, div)
    return _weak(bind(_prims["round"], div, rounding_method=0), weak), _weak(mod, weak)


def remainder(x: Any, y: Any) -> Any:
    """``x % y`` with the divisor's sign (the divisor as converted: -3 % an unsigned array
    divides by 253); an integer zero divisor gives 0, as in JAX and NumPy."""
    x, y, dtype, weak = _numeric("remainder", x, y)
    if dtype.kind in "iu":
        y = where(equal(y, 0), asarray(1, dtype), y)
    r = _elementwise("remainder", "rem", x, y)
    # C fmod takes the dividend's sign; Python takes the divisor's
    fix = logical_and(not_equal(r, 0), not_equal(less(r, 0), less(y, 0)))
    return _weak(where(fix, r + y, r), weak)


mod = remainder


def fmod(x: Any, y: Any) -> Any:
    """C's remainder (the dividend's sign); an integer zero divisor gives 0, as in JAX
    (booleans compute as ints, but keep XLA's ``x % 0 == x``, as JAX does)."""
    (_, _), promoted, _ = _promote("fmod", x, y)
    x, y, dtype, weak = _numeric("fmod", x, y)
    if np.dtype(promoted).kind in "iu":
        y = where(equal(y, 0), asarray(1, dtype), y)
    return _weak(_elementwise("fmod", "rem", x, y), weak)


def power(x: Any, y: Any) -> Any:
    if isinstance(y, int) and not isinstance(y, bool) and not _is_array(y):
        x = asarray(x)
        if x.dtype.kind in "iu" and y < 0:
            raise _error("power", "integers to negative integer powers are not allowed")
        return bind(_prims["integer_pow"], x, y=y, weak=x.weak)
    (x, y), dtype, _ = _promote("power", x, y)
    if np.dtype(dtype).kind in "biu":
        return _integer_power(x, y, dtype)
    return _elementwise("power", "pow", x, y)


def _integer_power(x: Any, y: Any, dtype: Any) -> Any:
    """``x ** y`` for integer (or boolean, made the default int) arrays, as JAX computes
    it: binary exponentiation over the exponent's low six bits (a larger power overflows
    for any base above 1). A negative exponent's result is JAX's too (its bits shifted
    logically), which it calls implementation-defined."""
    if np.dtype(dtype).kind == "b":
        dtype = dtypes.default_int()
    x, y = asarray(x).astype(dtype), asarray(y).astype(dtype)
    x, y = _broadcast_to(x, broadcast_shapes(x.shape, y.shape, op="power")), \
        _broadcast_to(y, broadcast_shapes(x.shape, y.shape, op="power"))
    zero, one = asarray(0, dtype), asarray(1, dtype)
    acc = where(logical_and(equal(x, zero), not_equal(y, zero)), zero, one)  # 0 ** 0 is 1
    for _ in range(6):
        acc = where(not_equal(bitwise_and(y, one), zero), acc * x, acc)
        x = x * x
        y = bind(_prims["shift_right_logical"], y, _broadcast_to(one, y.shape))
    return acc


pow = power


def maximum(x: Any, y: Any) -> Any:
    return _elementwise("maximum", "max", x, y)


def minimum(x: Any, y: Any) -> Any:
    return _elementwise("minimum", "min", x, y)


def arctan2(x: Any, y: Any) -> Any:
    # Promote first, as JAX: bfloat16 with int32 stays bfloat16; only two integer or
    # boolean operands become the default float.
    if np.dtype(_promote("arctan2", x, y)[1]).kind in "biu":
        x, y = _float_operand(x), _float_operand(y)
    return _elementwise("arctan2", "atan2", x, y)


def _compare(name: str, prim: str) -> Any:
    def fn(x: Any, y: Any) -> Any:
        out = _elementwise(name, prim, x, y, out_dtype=np.bool_)
        out.weak = False
        return out
    fn.__name__ = name
    return fn


equal, not_equal = _compare("equal", "eq"), _compare("not_equal", "ne")
less, less_equal = _compare("less", "lt"), _compare("less_equal", "le")
greater, greater_equal = _compare("greater", "gt"), _compare("greater_equal", "ge")


def _logical(name: str, prim: str) -> Any:
    def fn(x: Any, y: Any) -> Any:
        return _elementwise(name, prim, asarray(x).astype(bool), asarray(y).astype(bool))
    fn.__name__ = name
    return fn


logical_and, logical_or, logical_xor = (_logical("logical_and", "and"),
                                        _logical("logical_or", "or"),
                                        _logical("logical_xor", "xor"))


def logical_not(x: Any) -> Any:
    return bind(_prims["not"], asarray(x).astype(bool))


def bitwise_and(x: Any, y: Any) -> Any:
    return _elementwise("bitwise_and", "and", x, y, kinds="biu")


def bitwise_or(x: Any, y: Any) -> Any:
    return _elementwise("bitwise_or", "or", x, y, kinds="biu")


def bitwise_xor(x: Any, y: Any) -> Any:
    return _elementwise("bitwise_xor", "xor", x, y, kinds="biu")


def invert(x: Any) -> Any:
    x = asarray(x)
    return bind(_prims["not"], x, weak=x.weak)


bitwise_not = invert


def left_shift(x: Any, y: Any) -> Any:
    return _elementwise("left_shift", "shift_left", x, y, kinds="iu")


def right_shift(x: Any, y: Any) -> Any:
    (x, y), dtype, _ = _promote("right_shift", x, y)
    prim = "shift_right_logical" if np.dtype(dtype).kind == "u" else "shift_right_arithmetic"
    return _elementwise("right_shift", prim, x, y, kinds="iu")


def where(condition: Any, x: Any = None, y: Any = None, /, *, size: Any = None,
          fill_value: Any = None) -> Any:
    if x is None and y is None:                  # the one-argument form is nonzero's
        from .searching import nonzero
        return nonzero(asarray(condition), size=size, fill_value=fill_value)
    if x is None or y is None:
        raise _error("where", "give both x and y, or neither")
    if size is not None or fill_value is not None:
        raise ValueError(str(_error("where", "size and fill_value are for the one-argument "
                                    "form only (where(condition, size=...)), not with x "
                                    "and y")))
    (x, y), dtype, weak = _promote("where", x, y)
    condition = asarray(condition)
    if condition.dtype != np.bool_:
        condition = not_equal(condition, 0)
    shape = broadcast_shapes(condition.shape, _shape(x), _shape(y), op="where")
    x, y = (asarray(v) if not _is_array(v) and np.ndim(v) else v for v in (x, y))
    args = [_broadcast_to(v, shape) for v in (condition, x, y)]
    if builtins.all(not _is_array(a) for a in args[1:]) and args[0].ndim == 0:
        args[1] = asarray(args[1])
    return bind(_prims["select"], *args, weak=weak)


def clip(x: Any, min: Any = None, max: Any = None, a_min: Any = None,  # noqa: F811  (NumPy's parameter names)
         a_max: Any = None) -> Any:
    lo = min if min is not None else a_min
    hi = max if max is not None else a_max
    x = asarray(x)
    if lo is not None:
        x = maximum(x, lo)
    if hi is not None:
        x = minimum(x, hi)
    return x


# --- creation ----------------------------------------------------------------------------

def _dtype_or(dtype: Any, default: np.dtype) -> np.dtype:
    return dtypes.canonicalize(dtype if dtype is not None else default)


def operator_index(d: Any) -> int:
    import operator
    return operator.index(d)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    return _full(_shape_arg(shape), fill_value, dtype)


def zeros(shape: Any, dtype: Any = None) -> Any:
    return full(shape, 0, _dtype_or(dtype, dtypes.default_float()))


def ones(shape: Any, dtype: Any = None) -> Any:
    return full(shape, 1, _dtype_or(dtype, dtypes.default_float()))


def empty(shape: Any, dtype: Any = None) -> Any:
    return zeros(shape, dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full(_shape(x) if shape is None else shape, fill_value,
                dtype if dtype is not None else _dtype_of(x))


def zeros_like(x: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(x, 0, dtype, shape)


def ones_like(x: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full_like(x, 1, dtype, shape)


empty_like = zeros_like


def iota(dtype: Any, size: int) -> Any:
    return _iota(dtypes.canonicalize(dtype), (size,), 0)


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None) -> Any:
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise _error("arange", "arguments must be concrete Python numbers, not traced "
                         "values (the result's size must be known when tracing)")
    value = np.arange(start, stop, step) if dtype is None else \
        np.arange(start, stop, step, dtype=dtypes.canonicalize(dtype))
    if dtype is None and value.dtype.kind == "f":
        value = value.astype(dtypes.default_float())
    value = value.astype(dtypes.canonicalize(value.dtype))
    if stop is None and step is None and value.dtype.kind in "iu" and current_trace():
        return _iota(value.dtype, value.shape, 0)       # arange(n) in a program, as JAX
    return asarray(value)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0) -> Any:
    """``num`` evenly spaced values from ``start`` to ``stop`` (array bounds broadcast, the
    new axis at ``axis``), computed as JAX does: ``start * (1 - t) + stop * t`` for
    ``t = i / div``, and ``stop`` itself as the last value when ``endpoint``, so that a
    histogram's last edge is exactly the data's maximum."""
    num = operator.index(num)
    if num < 0:
        raise _error("linspace", f"num must be non-negative, got {num}")
    start, stop = asarray(start), asarray(stop)
    if dtype is None:
        dtype = result_type(start, stop)
        if not dtypes.is_inexact(dtype):
            dtype = dtypes.default_float()
    dtype = dtypes.canonicalize(dtype)
    compute = dtype if dtypes.is_inexact(dtype) else dtypes.default_float()
    start, stop = start.astype(compute), stop.astype(compute)
    bounds = list(np.broadcast_shapes(start.shape, stop.shape))
    start, stop = broadcast_to(start, tuple(bounds)), broadcast_to(stop, tuple(bounds))
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    shape = [*bounds[:axis], 1, *bounds[axis:]]
    div = (num - 1) if endpoint else num
    if num > 1:
        delta = (stop - start) / asarray(div, compute)
        real = np.dtype(np.float64 if compute in (np.float64, np.complex128) else
                        compute if dtypes.is_float(compute) else np.float32)
        iota_shape = [1] * len(shape)
        iota_shape[axis] = div
        t = (_iota(real, (div,), 0) / asarray(div, real)).reshape(iota_shape).astype(compute)
        out = start.reshape(shape) * (1 - t) + stop.reshape(shape) * t
        if endpoint:
            from .shape_ops import concatenate
            out = concatenate([out, stop.reshape(shape)], axis=axis)
    elif num == 1:
        delta = asarray(np.nan, compute) if endpoint else stop - start
        out = start.reshape(shape)
    else:
        delta = asarray(np.nan, compute)
        out = zeros(tuple(shape[:axis] + [0] + shape[axis + 1:]), compute)
    if dtypes.is_int(dtype) and not dtypes.is_int(out.dtype):
        out = floor(out)
    out = out.astype(dtype)
    return (out, delta) if retstep else out


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None) -> Any:
    M = N if M is None else M
    dtype = _dtype_or(dtype, dtypes.default_float())
    value = np.eye(N, M, k, dtype=dtype)                # (also checks the arguments)
    if current_trace() is None:
        return asarray(value)
    return diagonal_mask(value.shape, operator.index(k), "eq").astype(dtype)


def diagonal_mask(shape: tuple[int, int], k: int, prim: str) -> Any:
    """``row + k <prim> column`` for every element of an n x m matrix ("eq": the k-th
    diagonal, "ge": it and below), built in the program being traced from two iotas
    rather than captured as an n x m constant, as JAX builds it."""
    rows = bind(_prims["iota"], dtype=np.dtype(np.int32), shape=shape, dimension=0)
    cols = bind(_prims["iota"], dtype=np.dtype(np.int32), shape=shape, dimension=1)
    if k:
        rows = bind(_prims["add"], rows, np.int32(k))
    return bind(_prims[prim], rows, cols)


def identity(n: int, dtype: Any = None) -> Any:
    return eye(n, dtype=dtype)


def size(x: Any) -> int:
    return int(np.prod(_shape(x)))


def shape(x: Any) -> tuple[int, ...]:
    return _shape(x)


def ndim(x: Any) -> int:
    return len(_shape(x))
