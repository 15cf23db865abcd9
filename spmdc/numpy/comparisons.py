"""Comparisons, logical and bitwise ufuncs, predicates (signbit, iscomplex, isreal,
bitwise_count), where and select: each is one lax operation on operands promoted as
NumPy does (core._elementwise), or composes a few.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import lax
from ..core.operands import asarray, broadcast_shapes
from ..core.operands import broadcast_to as _broadcast_to
from ..core.operands import error as _error
from ..core.operands import is_array as _is_array
from ..core.operands import promote as _promote
from ..core.operands import promote_operands as _promote_operands
from ..core.operands import shape_of as _shape
from .core import _elementwise, extended_rule, result_type


def _compare(name: str, lax_fn: Any) -> Any:
    def fn(x: Any, y: Any) -> Any:
        rule = extended_rule(name, x, y)
        if rule is not None:                    # typed keys: spmdc/random/key_ops.py
            return rule(x, y)
        return _elementwise(name, lax_fn, x, y)
    fn.__name__ = name
    return fn


def _lexicographic(lax_fn: Any) -> Any:
    """The ordering comparison ``lax_fn`` extended to complex operands: real parts first,
    imaginary parts where those are equal (Note [complex order] in
    spmdc/compiler/primitives/complex_order.py); lax's own rejects complex operands."""
    def fn(x: Any, y: Any) -> Any:
        dtype = result_type(x, y)
        if dtype.kind != "c":
            return lax_fn(x, y)
        x, y = asarray(x).astype(dtype), asarray(y).astype(dtype)
        real_x, real_y = lax.real(x), lax.real(y)
        return lax.select(lax.eq(real_x, real_y), lax_fn(lax.imag(x), lax.imag(y)),
                          lax_fn(real_x, real_y))
    return fn


equal, not_equal = _compare("equal", lax.eq), _compare("not_equal", lax.ne)


less, less_equal = (_compare("less", _lexicographic(lax.lt)),
                    _compare("less_equal", _lexicographic(lax.le)))


greater, greater_equal = (_compare("greater", _lexicographic(lax.gt)),
                          _compare("greater_equal", _lexicographic(lax.ge)))


def _logical(name: str, lax_fn: Any) -> Any:
    def fn(x: Any, y: Any) -> Any:
        return _elementwise(name, lax_fn, asarray(x).astype(bool), asarray(y).astype(bool))
    fn.__name__ = name
    return fn


logical_and, logical_or, logical_xor = (_logical("logical_and", lax.bitwise_and),
                                        _logical("logical_or", lax.bitwise_or),
                                        _logical("logical_xor", lax.bitwise_xor))


def logical_not(x: Any) -> Any:
    return lax.bitwise_not(asarray(x).astype(bool))


def bitwise_and(x: Any, y: Any) -> Any:
    return _elementwise("bitwise_and", lax.bitwise_and, x, y, kinds="biu")


def bitwise_or(x: Any, y: Any) -> Any:
    return _elementwise("bitwise_or", lax.bitwise_or, x, y, kinds="biu")


def bitwise_xor(x: Any, y: Any) -> Any:
    return _elementwise("bitwise_xor", lax.bitwise_xor, x, y, kinds="biu")


def invert(x: Any) -> Any:
    return lax.bitwise_not(asarray(x))


bitwise_not = invert


def left_shift(x: Any, y: Any) -> Any:
    return _elementwise("left_shift", lax.shift_left, x, y, kinds="iu")


def right_shift(x: Any, y: Any) -> Any:
    (x, y), dtype, _ = _promote("right_shift", x, y)
    shift = lax.shift_right_logical if np.dtype(dtype).kind == "u" else \
        lax.shift_right_arithmetic
    return _elementwise("right_shift", shift, x, y, kinds="iu")


def where(condition: Any, x: Any = None, y: Any = None, /, *, size: Any = None,
          fill_value: Any = None) -> Any:
    if x is None and y is None:                  # the one-argument form is nonzero's
        from .searching import nonzero
        return nonzero(asarray(condition), size=size, fill_value=fill_value)
    if x is None or y is None:
        raise _error("where", "give both x and y, or neither")
    rule = extended_rule("where", x, y)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(condition, x, y)
    if size is not None or fill_value is not None:
        raise ValueError(str(_error("where", "size and fill_value are for the one-argument "
                                    "form only (where(condition, size=...)), not with x "
                                    "and y")))
    (x, y), dtype, _ = _promote_operands("where", x, y)
    condition = asarray(condition)
    if condition.dtype != np.bool_:
        condition = not_equal(condition, 0)
    shape = broadcast_shapes(condition.shape, _shape(x), _shape(y), op="where")
    x, y = (asarray(v) if not _is_array(v) and np.ndim(v) else v for v in (x, y))
    args = [_broadcast_to(v, shape) for v in (condition, x, y)]
    if builtins.all(not _is_array(a) for a in args[1:]) and args[0].ndim == 0:
        args[1] = asarray(args[1])
    return lax.select(*args)


bitwise_invert, bitwise_left_shift, bitwise_right_shift = invert, left_shift, right_shift


def signbit(x: Any) -> Any:
    """Whether the sign bit is set (True for -0.0 and negative NaNs)."""
    x = asarray(x)
    if x.dtype.kind in "iu" or x.dtype == np.bool_:
        return x < 0
    if x.dtype.kind == "c":
        raise TypeError("signbit: not defined for complex numbers")
    width = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    bits = lax.bitcast_convert_type(x, np.dtype(width))
    return bits < 0


def bitwise_count(x: Any) -> Any:
    """The number of 1 bits in ``|x|`` (as NumPy 2: the sign is ignored), as uint8."""
    x = asarray(x)
    if x.dtype.kind not in "biu":
        raise TypeError(f"bitwise_count: needs an integer or boolean array, got {x.dtype}")
    if x.dtype == np.bool_:
        return x.astype(np.uint8)
    from .ufuncs import abs
    magnitude = abs(x) if x.dtype.kind == "i" else x
    count = lax.population_count(magnitude)
    return count.astype(np.uint8)


def iscomplex(x: Any) -> Any:
    """Elementwise: whether the imaginary part is non-zero (False for real arrays)."""
    from .complex_ops import imag
    return imag(asarray(x)) != 0


def isreal(x: Any) -> Any:
    """Elementwise: whether the imaginary part is zero (True for real arrays)."""
    from .complex_ops import imag
    return imag(asarray(x)) == 0


def select(condlist: Sequence[Any], choicelist: Sequence[Any], default: Any = 0) -> Any:
    """The element of the first choice whose condition holds, else ``default``."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: {len(condlist)} conditions for {len(choicelist)} choices")
    if not condlist:
        raise ValueError("select: condlist must not be empty")
    choices = [asarray(c) for c in choicelist]
    dtype = result_type(*choices, default)
    out = asarray(default).astype(dtype)
    for cond, choice in zip(reversed(condlist), reversed(choices), strict=True):
        cond = asarray(cond)
        if cond.dtype != np.bool_:
            raise TypeError(f"select: conditions must be boolean, got {cond.dtype}")
        out = where(cond, choice.astype(dtype), out)
    return out
