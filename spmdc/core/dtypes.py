"""Dtypes: the supported set, canonicalization (x64 on/off), weak types and promotion.

The rules are JAX's ("Type promotion semantics" in JAX's documentation):

- With x64 disabled (the default) 64-bit types canonicalize to their 32-bit
  counterparts; ``SPMDC_ENABLE_X64=1`` (read once, at import) or ``enable_x64(True)``
  keeps them.
- Python scalars are *weakly typed*: ``int`` -> weak int, ``float`` -> weak float,
  ``complex`` -> weak complex (``bool`` is strong). A value's type is a pair
  ``(np.dtype, weak)``.
- Promotion is the join on the lattice in Note [promotion lattice]; under
  ``numpy_dtype_promotion('strict')`` only the joins of Note [strict promotion] exist.
- The narrow types of ml_dtypes (float8s, float4, int4/uint4, int2/uint2) are supported
  as JAX supports them (Note [narrow dtypes]).
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from ..compiler.ir import FINITE_FLOATS, dtype_kind
from ..env import flag as _env_flag
from ..errors import TypePromotionError

__all__ = ["x64_enabled", "enable_x64", "canonicalize", "dtype_and_weak", "result_type",
           "promote_types", "is_float", "is_int", "is_unsigned", "is_complex", "is_inexact",
           "default_float", "default_int", "default_complex", "finfo", "iinfo", "issubdtype",
           "bfloat16", "SUPPORTED_DTYPES", "promotion_mode", "set_promotion_mode",
           "canonicalize_value", "register_value_handler", "NARROW_FLOATS", "NARROW_INTS",
           "kind", "supports_inf"]

bfloat16 = np.dtype(ml_dtypes.bfloat16)

# Note [narrow dtypes]
# ~~~~~~~~~~~~~~~~~~~~
# JAX computes in ml_dtypes' narrow types: the float8s (OCP's e4m3fn and e5m2, AMD's
# fnuz variants, Graphcore's e4m3b11fnuz, IEEE-like e4m3 and e3m4, the MX scale type
# e8m0fnu), float4_e2m1fn, and the 2- and 4-bit integers. Their NumPy ``kind`` is 'V'
# (void), so spmdc never asks NumPy for a dtype's kind: ``kind(dtype)`` is 'f' for every
# float (bfloat16 and the narrow ones) and 'i'/'u' for the narrow integers. StableHLO
# has an element type for each (f8E4M3FN, i4, ui2, ...); XLA converts to them with the
# format's rounding (to nearest even) and its overflow rule (to inf where the format has
# one, else to NaN; a float to an integer saturates). On the promotion lattice they are
# leaves (Note [promotion lattice]): only weak Python scalars join them, so an f8 array
# plus 1.0 stays f8 and f8 + f32 is a TypePromotionError that says to cast.

_BOOL = np.dtype(np.bool_)
NARROW_INTS = tuple(np.dtype(t) for t in (ml_dtypes.int2, ml_dtypes.int4, ml_dtypes.uint2,
                                          ml_dtypes.uint4))
_SIGNED = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64,
                                      ml_dtypes.int2, ml_dtypes.int4))
_UNSIGNED = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64,
                                        ml_dtypes.uint2, ml_dtypes.uint4))
NARROW_FLOATS = tuple(np.dtype(getattr(ml_dtypes, name)) for name in (
    "float4_e2m1fn", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz"))
_FLOATS = (*NARROW_FLOATS, bfloat16, np.dtype(np.float16), np.dtype(np.float32),
           np.dtype(np.float64))
_COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))
SUPPORTED_DTYPES = (_BOOL, *_SIGNED, *_UNSIGNED, *_FLOATS, *_COMPLEX)

_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)

# 64-bit types and what they become with x64 disabled.
_NARROW = {_I64: _I32, np.dtype(np.uint64): np.dtype(np.uint32), _F64: _F32, _C128: _C64}


# --- x64 -------------------------------------------------------------------------------------

_x64 = _env_flag("SPMDC_ENABLE_X64")


def x64_enabled() -> bool:
    return _x64


def enable_x64(enabled: bool) -> bool:
    """Turn 64-bit types on or off (for tests); returns the previous setting."""
    global _x64, _canonical
    previous, _x64 = _x64, bool(enabled)
    _canonical = _canonical_x64 if _x64 else _canonical_x32
    for listener in _x64_listeners:
        listener(_x64)
    return previous


_x64_listeners: list[Any] = []


def on_x64_change(listener: Any) -> None:
    """Call ``listener(enabled)`` now and whenever the x64 setting changes (the runtime's
    C++ dispatchers keep it in their call signatures)."""
    _x64_listeners.append(listener)
    listener(_x64)


def default_int() -> np.dtype:
    return _I64 if _x64 else _I32


def default_float() -> np.dtype:
    return _F64 if _x64 else _F32


def default_complex() -> np.dtype:
    return _C128 if _x64 else _C64


# --- canonicalization ------------------------------------------------------------------------

# Caches from whatever was passed (a dtype, a scalar type, a string) to the canonical
# dtype, one per x64 setting; ``_canonical`` is the one in force.
_canonical_x32: dict[Any, np.dtype] = {}
_canonical_x64: dict[Any, np.dtype] = {}
_canonical = _canonical_x64 if _x64 else _canonical_x32


def canonicalize(dtype: Any) -> np.dtype:
    """The dtype spmdc computes in for ``dtype`` (64-bit types narrowed unless x64)."""
    try:
        return _canonical[dtype]
    except (KeyError, TypeError):       # not cached yet, or not hashable
        pass
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise TypeError(f"spmdc does not support dtype {dtype!r} ({e}); use one of "
                        f"{_supported_names()}") from None
    if not d.isnative:
        d = d.newbyteorder("=")         # byte order is a storage detail, not a type
    if d not in _SUPPORTED_SET:
        raise TypeError(f"spmdc does not support dtype {d}; use one of {_supported_names()}")
    out = d if _x64 else _NARROW.get(d, d)
    try:
        _canonical[dtype] = out
    except TypeError:
        pass
    return out


_SUPPORTED_SET = frozenset(SUPPORTED_DTYPES)


def _supported_names() -> str:
    return ", ".join(str(d) for d in SUPPORTED_DTYPES)


# --- the type of a value ---------------------------------------------------------------------

_INT_BOUNDS = {False: (-2**31, 2**31 - 1), True: (-2**63, 2**63 - 1)}


def _int_dtype(value: int) -> np.dtype:
    low, high = _INT_BOUNDS[_x64]
    if not low <= value <= high:
        hint = "" if _x64 else " (set SPMDC_ENABLE_X64=1 for 64-bit integers)"
        raise OverflowError(f"Python int {value} is too large to convert to "
                            f"{default_int()}: it is outside [{low}, {high}]{hint}")
    return default_int()


# Note [registered array types]
# A library can make the values of its own class arrays to spmdc, as JAX's
# ``jax.interpreters.xla.canonicalize_dtype_handlers[cls] = handler`` does (TFP's JAX
# substrate registers its ``Variable``): ``register_value_handler(cls, handler)``, where
# ``handler(value)`` gives the array-like value (NumPy array, Python scalar, Array) that
# a value of exactly that class stands for. spmdc then takes the type and weak flag of
# such a value from the handler's result (``dtype_and_weak``), and ``canonicalize_value``
# gives the result itself; the data is read with ``np.asarray``, as for every value
# spmdc places on a device, so a handler gives the value's own data in another form
# (JAX's handlers canonicalize: NumPy's float64 becomes float32 without x64). Lookup is by
# exact class, after the built-in scalar and NumPy types, as in JAX.

_value_handlers: dict[type, Any] = {}


def register_value_handler(cls: type, handler: Any) -> None:
    """Make values of exactly ``cls`` arrays to spmdc, standing for ``handler(value)``
    (See Note [registered array types])."""
    if not isinstance(cls, type) or not callable(handler):
        raise TypeError(f"a value handler is registered for a class with a callable, got "
                        f"{cls!r} and {handler!r}")
    _value_handlers[cls] = handler


def canonicalize_value(value: Any) -> Any:
    """The value spmdc computes with for ``value``: a NumPy array or scalar at its
    canonical dtype, the handler's result for a registered class (See Note [registered
    array types]), any other value itself."""
    handler = _value_handlers.get(type(value))
    if handler is not None:
        return handler(value)
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value, canonicalize(value.dtype))
    return value


def dtype_and_weak(value: Any) -> tuple[np.dtype, bool]:
    """``(canonical dtype, weak)`` of a value: Python scalars are weak (bool is not);
    NumPy scalars and arrays are strong; values of a registered class are their handler's
    result's; other objects report ``.dtype`` and ``.weak``."""
    t = type(value)
    if t is bool:
        return _BOOL, False
    if t is int:
        return _int_dtype(value), True
    if t is float:
        return default_float(), True
    if t is complex:
        return default_complex(), True
    if isinstance(value, (np.ndarray, np.generic)):
        return canonicalize(value.dtype), False
    handler = _value_handlers.get(t)
    if handler is not None:                  # See Note [registered array types]
        return dtype_and_weak(handler(value))
    dtype = getattr(value, "dtype", None)
    if dtype is not None and not isinstance(value, type):
        return canonicalize(dtype), bool(getattr(value, "weak", False))
    if isinstance(value, bool):          # subclasses of the Python scalar types
        return _BOOL, False
    if isinstance(value, int):
        return _int_dtype(int(value)), True
    if isinstance(value, float):
        return default_float(), True
    if isinstance(value, complex):
        return default_complex(), True
    if isinstance(value, (list, tuple)):  # nested sequences: what NumPy makes of them
        return canonicalize(np.asarray(value).dtype), False
    raise TypeError(f"cannot use a value of type {t.__name__} as an array: {value!r:.80}")


# --- promotion -------------------------------------------------------------------------------

# Note [promotion lattice]
# JAX's type promotion lattice; i*, f*, c* are the weak int, float and complex types
# (Python scalars). An edge a -> b says b is above a. The promoted type of several types
# is their least upper bound (join):
#
#    b1 -> i* -> {u8, i8};  u8 -> {u16, i16};  u16 -> {u32, i32};  u32 -> {u64, i64}
#    i8 -> i16 -> i32 -> i64;  {u64, i64} -> f*;  f* -> {bf16, f16, c*}
#    {bf16, f16} -> f32 -> f64;  c* -> c64;  f32 -> c64;  {f64, c64} -> c128
#
# A join that lands on a weak node (u64 + i8 -> f*, i32 + 1.0 -> f*) gives that kind's
# default dtype, weakly typed: the result keeps deferring to the next strong operand.
# When *every* input is weak the join is taken over their concrete dtypes and the
# result is weak (weak int32 + weak float32 -> weak float32). Canonicalization
# (x64 off: 64 -> 32 bits) comes last, as in JAX.

#
# The narrow types (Note [narrow dtypes]) are leaves: i* -> {i2, i4, u2, u4} and
# f* -> every float8 and float4, with nothing above them. Two types with no common
# upper bound (f8_e4m3fn + f32, i4 + i8) have no join: a TypePromotionError.

_WEAK_INT, _WEAK_FLOAT, _WEAK_COMPLEX = "i*", "f*", "c*"
_U8, _U16, _U32, _U64 = _UNSIGNED[:4]
_I8, _I16 = _SIGNED[:2]
_F16 = np.dtype(np.float16)

_LATTICE: dict[Any, tuple[Any, ...]] = {
    _BOOL: (_WEAK_INT,),
    _WEAK_INT: (_U8, _I8, *NARROW_INTS),
    _U8: (_U16, _I16), _U16: (_U32, _I32), _U32: (_U64, _I64), _U64: (_WEAK_FLOAT,),
    _I8: (_I16,), _I16: (_I32,), _I32: (_I64,), _I64: (_WEAK_FLOAT,),
    _WEAK_FLOAT: (*NARROW_FLOATS, bfloat16, _F16, _WEAK_COMPLEX),
    bfloat16: (_F32,), _F16: (_F32,), _F32: (_F64, _C64), _F64: (_C128,),
    _WEAK_COMPLEX: (_C64,), _C64: (_C128,), _C128: (),
    **{t: () for t in (*NARROW_INTS, *NARROW_FLOATS)},
}


def _upper_sets() -> dict[Any, frozenset[Any]]:
    """Every node's set of nodes at or above it (reflexive-transitive closure)."""
    above: dict[Any, frozenset[Any]] = {}

    def visit(node: Any) -> frozenset[Any]:
        if node not in above:
            above[node] = frozenset({node}).union(*(visit(n) for n in _LATTICE[node]))
        return above[node]

    for node in _LATTICE:
        visit(node)
    return above


def _join_table() -> dict[tuple[Any, Any], Any]:
    above = _upper_sets()
    table = {}
    for a in _LATTICE:
        for b in _LATTICE:
            common = above[a] & above[b]
            least = [n for n in common if common <= above[n]]
            assert len(least) <= 1, f"the promotion lattice has no unique join of {a}, {b}"
            if least:                    # none: no promotion path (narrow types)
                table[a, b] = least[0]
    return table


_JOIN = _join_table()
_WEAK_DEFAULT = {_WEAK_INT: _I64, _WEAK_FLOAT: _F64, _WEAK_COMPLEX: _C128}


def _lattice_node(dtype: np.dtype, weak: bool) -> Any:
    if not weak or dtype == _BOOL:
        return dtype
    k = kind(dtype)
    if k in "iu":
        return _WEAK_INT
    if k == "c":
        return _WEAK_COMPLEX
    return _WEAK_FLOAT


def _join(a: Any, b: Any, pairs: list[tuple[np.dtype, bool]]) -> Any:
    """The join of two lattice nodes; a TypePromotionError (JAX's words) where the narrow
    types leave none (See Note [narrow dtypes])."""
    try:
        return _JOIN[a, b]
    except KeyError:
        pass
    names = tuple(_WEAK_NAMES[n] if isinstance(n, str) else str(n)
                  for n in (_lattice_node(d, w) for d, w in pairs))
    narrow = {d for d, _ in pairs}
    if narrow & set(NARROW_INTS):
        why = ("1-bit, 2-bit and 4-bit integers do not support implicit promotion. If "
               "you'd like your inputs to be promoted to another type, you can do so "
               "explicitly using e.g. x.astype('int32')")
    else:
        bits = "4" if np.dtype(ml_dtypes.float4_e2m1fn) in narrow else "8"
        why = (f"{bits}-bit floats do not support implicit promotion. If you'd like your "
               "inputs to be promoted to another type, you can do so explicitly using e.g. "
               "x.astype('float32')")
    raise TypePromotionError(f"Input dtypes {names} have no available implicit dtype "
                             f"promotion path. To avoid unintended promotion, {why}")


def _as_pair(arg: Any) -> tuple[np.dtype, bool]:
    """A (dtype, weak) pair from a pair, a dtype specifier, a Python type, or a value."""
    if type(arg) is tuple and len(arg) == 2 and isinstance(arg[1], (bool, np.bool_)) and \
            isinstance(arg[0], (np.dtype, type, str)):
        return _checked(arg[0]), bool(arg[1])
    if isinstance(arg, np.dtype) or isinstance(arg, str):
        return _checked(arg), False
    if isinstance(arg, type):
        if arg is int:
            return _I64, True
        if arg is float:
            return _F64, True
        if arg is complex:
            return _C128, True
        return _checked(arg), False
    return dtype_and_weak(arg)


def _checked(dtype: Any) -> np.dtype:
    """``np.dtype(dtype)`` if spmdc supports it (not narrowed: canonicalization is last)."""
    canonicalize(dtype)                  # raises the TypeError for unsupported dtypes
    return np.dtype(dtype)


# Note [strict promotion]
# ~~~~~~~~~~~~~~~~~~~~~~~
# ``numpy_dtype_promotion('strict')`` (config ``jax_numpy_dtype_promotion``) keeps
# only JAX's strict lattice: a strong dtype has nothing above it, and the weak kinds sit
# below their own kind (i* below every integer, float and complex type and f*; f* below
# every float and complex type and c*; c* below the complex types). So the dtypes of
# the operands must be one strong dtype, with Python scalars of a kind it holds (f32 +
# 2.0 and f32 + 2, not i32 + 2.0 nor f32 + i32; bool is strong); anything else is a
# TypePromotionError. The mode is process-wide, as x64 is; it is part of jit's cache
# key, and while it is strict every jit call takes the Python path (Note [config on
# the hot path] in core/config.py), so a program traced under 'standard' is not reused.

PROMOTION_MODES = ("standard", "strict")
_promotion = ["standard"]

_STRICT_ABOVE = {
    _WEAK_INT: frozenset((*_SIGNED, *_UNSIGNED, *_FLOATS, *_COMPLEX)),
    _WEAK_FLOAT: frozenset((*_FLOATS, *_COMPLEX)),
    _WEAK_COMPLEX: frozenset(_COMPLEX),
}
_WEAK_NAMES = {_WEAK_INT: "<class 'int'>", _WEAK_FLOAT: "<class 'float'>",
               _WEAK_COMPLEX: "<class 'complex'>"}


def promotion_mode() -> str:
    """'standard' or 'strict' (see Note [strict promotion])."""
    return _promotion[0]


def set_promotion_mode(mode: Any) -> str:
    """Set the promotion mode; returns the previous one."""
    if mode not in PROMOTION_MODES:
        raise ValueError(f"jax_numpy_dtype_promotion takes 'standard' or 'strict', got "
                         f"{mode!r}")
    previous, _promotion[0] = _promotion[0], mode
    return previous


def _check_strict(pairs: list[tuple[np.dtype, bool]]) -> None:
    nodes = [_lattice_node(d, w) for d, w in pairs]
    strong = {n for n in nodes if not isinstance(n, str)}
    if not strong:
        return                           # Python scalars only: their kinds join
    allowed = len(strong) == 1 and all(
        next(iter(strong)) in _STRICT_ABOVE[n] for n in nodes if isinstance(n, str))
    if not allowed:
        names = tuple(_WEAK_NAMES[n] if isinstance(n, str) else str(n) for n in nodes)
        raise TypePromotionError(
            f"Input dtypes {names} have no available implicit dtype promotion path when "
            "jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
            "output type, or set jax_numpy_dtype_promotion=standard.")


def result_type(*args: Any) -> tuple[np.dtype, bool]:
    """``(dtype, weak)`` of combining the arguments under JAX's promotion rules.

    Each argument is a ``(dtype, weak)`` pair, a dtype specifier (strong), a Python type
    ``int``/``float``/``complex`` (weak), or a value (see ``dtype_and_weak``).
    """
    if not args:
        raise ValueError("result_type needs at least one argument")
    pairs = [_as_pair(a) for a in args]
    dtype, weak = pairs[0]
    if len(pairs) == 1:
        return canonicalize(dtype), weak and dtype != _BOOL
    if _promotion[0] == "strict":        # See Note [strict promotion]
        _check_strict(pairs)
    if all(w for _, w in pairs):         # See Note [promotion lattice]: all weak
        for other, _ in pairs[1:]:
            dtype = _join(dtype, other, pairs)
        return canonicalize(dtype), dtype != _BOOL
    node = _lattice_node(dtype, weak)
    for other, other_weak in pairs[1:]:
        node = _join(node, _lattice_node(other, other_weak), pairs)
    if isinstance(node, str):            # a weak node: that kind's default, weakly typed
        return canonicalize(_WEAK_DEFAULT[node]), True
    return canonicalize(node), False


_pairs_cache: dict[tuple[Any, ...], tuple[np.dtype, bool]] = {}


def result_type_of_pairs(pairs: tuple[tuple[np.dtype, bool], ...]) -> tuple[np.dtype, bool]:
    """``result_type(*pairs)`` for ``(np.dtype, bool)`` pairs, memoized (per x64 mode)."""
    key = (pairs, _x64, _promotion[0])
    try:
        return _pairs_cache[key]
    except KeyError:
        pass
    out = _pairs_cache[key] = result_type(*pairs)
    return out


def promote_types(a: Any, b: Any) -> np.dtype:
    """Like ``jnp.promote_types``: the dtype of combining ``a`` and ``b``."""
    return result_type(a, b)[0]


# --- predicates and info ---------------------------------------------------------------------

def kind(dtype: Any) -> str:
    """NumPy's kind letter of ``dtype``, with 'f' for bfloat16 and the narrow floats and
    'i'/'u' for the narrow integers (NumPy says 'V'). See Note [narrow dtypes]."""
    return dtype_kind(dtype)


def supports_inf(dtype: Any) -> bool:
    """Whether ``dtype`` has infinities (inexact types but the finite float8s/float4)."""
    d = np.dtype(dtype)
    return is_inexact(d) and d not in FINITE_FLOATS


def is_float(dtype: Any) -> bool:
    return np.dtype(dtype) in _FLOATS


def is_int(dtype: Any) -> bool:
    """Signed or unsigned integer (not bool)."""
    d = np.dtype(dtype)
    return d in _SIGNED or d in _UNSIGNED


def is_unsigned(dtype: Any) -> bool:
    return np.dtype(dtype) in _UNSIGNED


def is_complex(dtype: Any) -> bool:
    return np.dtype(dtype) in _COMPLEX


def is_inexact(dtype: Any) -> bool:
    return is_float(dtype) or is_complex(dtype)


def finfo(dtype: Any) -> Any:
    """Machine limits of a float type (bfloat16 included); complex types give their
    component's."""
    d = np.dtype(dtype)
    if d in _COMPLEX:
        d = _F32 if d == _C64 else _F64
    if d not in _FLOATS:
        raise TypeError(f"finfo needs a floating-point dtype, got {d}")
    return ml_dtypes.finfo(d)


def iinfo(dtype: Any) -> Any:
    d = np.dtype(dtype)
    if not is_int(d):
        raise TypeError(f"iinfo needs an integer dtype, got {d}")
    return ml_dtypes.iinfo(d) if d in NARROW_INTS else np.iinfo(d)


# The abstract NumPy scalar types and the supported dtypes under each; NumPy itself does
# not know that bfloat16 is a floating type.
_CATEGORIES: dict[type, frozenset[np.dtype]] = {
    np.generic: frozenset(SUPPORTED_DTYPES),
    np.number: frozenset(SUPPORTED_DTYPES) - {_BOOL},
    np.integer: frozenset(_SIGNED + _UNSIGNED),
    np.signedinteger: frozenset(_SIGNED),
    np.unsignedinteger: frozenset(_UNSIGNED),
    np.inexact: frozenset(_FLOATS + _COMPLEX),
    np.floating: frozenset(_FLOATS),
    np.complexfloating: frozenset(_COMPLEX),
}


def issubdtype(a: Any, b: Any) -> bool:
    """Like ``np.issubdtype``, knowing that bfloat16 is a floating type."""
    category = _CATEGORIES.get(b)
    if category is None or (isinstance(a, type) and a in _CATEGORIES):
        return bool(np.issubdtype(a, b))
    return np.dtype(a) in category
