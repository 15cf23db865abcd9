"""spmdc.core.dtypes: canonicalization, weak types, and JAX's promotion table.

The expected promotion table below is transcribed from JAX's documentation ("Type
promotion semantics", the binary promotion table), not computed from the lattice in
dtypes.py, so it checks the implementation against an independent source.
"""
import importlib.util
import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spmdc.core import dtypes

# --- JAX's binary promotion table --------------------------------------------------------------

_NAMES = "b1 u1 u2 u4 u8 i1 i2 i4 i8 bf f2 f4 f8 c8 c16 i* f* c*".split()
_JAX_TABLE = """
b1  b1  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
u1  u1  u1  u2  u4  u8  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 u1  f*  c*
u2  u2  u2  u2  u4  u8  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 u2  f*  c*
u4  u4  u4  u4  u4  u8  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 u4  f*  c*
u8  u8  u8  u8  u8  u8  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 u8  f*  c*
i1  i1  i2  i4  i8  f*  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i1  f*  c*
i2  i2  i2  i4  i8  f*  i2  i2  i4  i8  bf  f2  f4  f8  c8  c16 i2  f*  c*
i4  i4  i4  i4  i8  f*  i4  i4  i4  i8  bf  f2  f4  f8  c8  c16 i4  f*  c*
i8  i8  i8  i8  i8  f*  i8  i8  i8  i8  bf  f2  f4  f8  c8  c16 i8  f*  c*
bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  bf  f4  f4  f8  c8  c16 bf  bf  c8
f2  f2  f2  f2  f2  f2  f2  f2  f2  f2  f4  f2  f4  f8  c8  c16 f2  f2  c8
f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f4  f8  c8  c16 f4  f4  c8
f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  f8  c16 c16 f8  f8  c16
c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c8  c16 c8  c16 c8  c8  c8
c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16 c16
i*  i*  u1  u2  u4  u8  i1  i2  i4  i8  bf  f2  f4  f8  c8  c16 i*  f*  c*
f*  f*  f*  f*  f*  f*  f*  f*  f*  f*  bf  f2  f4  f8  c8  c16 f*  f*  c*
c*  c*  c*  c*  c*  c*  c*  c*  c*  c*  c8  c8  c8  c16 c8  c16 c*  c*  c*
"""
_ROWS = {line.split()[0]: dict(zip(_NAMES, line.split()[1:], strict=True))
         for line in _JAX_TABLE.strip().splitlines()}

# What each table name means as a result_type argument: a dtype (strong) or a Python type
# (weak, like JAX's promote_types).
_ARG = {"b1": np.bool_, "u1": np.uint8, "u2": np.uint16, "u4": np.uint32, "u8": np.uint64,
        "i1": np.int8, "i2": np.int16, "i4": np.int32, "i8": np.int64,
        "bf": ml_dtypes.bfloat16, "f2": np.float16, "f4": np.float32, "f8": np.float64,
        "c8": np.complex64, "c16": np.complex128, "i*": int, "f*": float, "c*": complex}
_WEAK_KIND = {"i*": {False: np.int32, True: np.int64},
              "f*": {False: np.float32, True: np.float64},
              "c*": {False: np.complex64, True: np.complex128}}
_NARROWED = {np.int64: np.int32, np.uint64: np.uint32, np.float64: np.float32,
             np.complex128: np.complex64}


@pytest.fixture(params=[False, True], ids=["x32", "x64"])
def x64(request):
    previous = dtypes.enable_x64(request.param)
    yield request.param
    dtypes.enable_x64(previous)


def _expected(cell, x64):
    """(dtype, weak) that JAX's table entry means with x64 on or off."""
    if cell in _WEAK_KIND:
        return np.dtype(_WEAK_KIND[cell][x64]), True
    t = _ARG[cell]
    return np.dtype(t if x64 else _NARROWED.get(t, t)), False


def test_table_is_complete_and_symmetric():
    assert set(_ROWS) == set(_NAMES)
    for a, b in itertools.product(_NAMES, _NAMES):
        assert _ROWS[a][b] == _ROWS[b][a], (a, b)


@pytest.mark.parametrize("row", _NAMES)
def test_promotion_table(row, x64):
    for col in _NAMES:
        got = dtypes.result_type(_ARG[row], _ARG[col])
        assert got == _expected(_ROWS[row][col], x64), (row, col, x64)


_NARROW_NAME = {"u8": "u4", "i8": "i4", "f8": "f4", "c16": "c8"}


@pytest.mark.parametrize("row", _NAMES)
def test_promotion_table_with_values(row, x64):
    """The same table with values: NumPy scalars are strong, Python scalars weak. Values
    are canonicalized first, so with x64 off a 64-bit array promotes as its 32-bit type."""
    def value(name):
        t = _ARG[name]
        return t(1) if t in (int, float, complex) else np.ones((), t)

    def seen(name):
        return name if x64 else _NARROW_NAME.get(name, name)
    for col in _NAMES:
        got = dtypes.result_type(value(row), value(col))
        assert got == _expected(_ROWS[seen(row)][seen(col)], x64), (row, col)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=5), st.randoms())
def test_result_type_is_order_independent(names, rnd):
    args = [_ARG[n] for n in names]
    shuffled = list(args)
    rnd.shuffle(shuffled)
    assert dtypes.result_type(*args) == dtypes.result_type(*shuffled)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_NAMES), min_size=2, max_size=5))
def test_result_type_of_many_is_the_pairwise_fold(names):
    previous = dtypes.enable_x64(True)
    try:
        folded = dtypes.result_type(_ARG[names[0]])
        for n in names[1:]:
            folded = dtypes.result_type(folded, _ARG[n])
        assert dtypes.result_type(*[_ARG[n] for n in names]) == folded
    finally:
        dtypes.enable_x64(previous)


# --- weak types --------------------------------------------------------------------------------

def test_weak_examples_from_the_brief():
    assert dtypes.result_type(1, 2.0) == (np.dtype(np.float32), True)
    assert dtypes.result_type(np.int8(1), 1) == (np.dtype(np.int8), False)
    assert dtypes.result_type(np.ones(3, np.int32), 2.0) == (np.dtype(np.float32), True)
    assert dtypes.result_type(np.ones(3, np.float16), 2.0) == (np.dtype(np.float16), False)
    assert dtypes.result_type(True, 1) == (np.dtype(np.int32), True)
    assert dtypes.result_type(True, False) == (np.dtype(np.bool_), False)
    assert dtypes.result_type(1, 1j) == (np.dtype(np.complex64), True)


def test_weak_pairs():
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    # a weakly typed array defers to a strong one of any width in its category
    assert dtypes.result_type((f32, True), (np.dtype(np.float16), False)) == \
        (np.dtype(np.float16), False)
    assert dtypes.result_type((i32, True), (dtypes.bfloat16, False)) == (dtypes.bfloat16, False)
    # all weak: the join of the concrete dtypes, still weak
    assert dtypes.result_type((i32, True), (f32, True)) == (f32, True)
    assert dtypes.result_type((dtypes.bfloat16, True), (dtypes.bfloat16, True)) == \
        (dtypes.bfloat16, True)
    # the same dtype, one strong: strong
    assert dtypes.result_type((f32, True), (f32, False)) == (f32, False)
    # a single argument keeps its flag
    assert dtypes.result_type((f32, True)) == (f32, True)
    assert dtypes.result_type(np.float32) == (f32, False)


def test_weak_results_follow_x64(x64):
    wide = np.float64 if x64 else np.float32
    assert dtypes.result_type(np.int32, float) == (np.dtype(wide), True)
    assert dtypes.result_type(3, 2.5) == (np.dtype(wide), True)
    assert dtypes.result_type(np.uint64, np.int8) == (np.dtype(wide), True)


def test_promote_types_examples_from_jax_docs():
    assert dtypes.promote_types("int32", "float32") == np.float32
    assert dtypes.promote_types(np.uint16, np.dtype("int32")) == np.int32
    assert dtypes.promote_types("uint8", int) == np.uint8
    assert dtypes.promote_types("float16", float) == np.float16
    assert dtypes.promote_types(ml_dtypes.bfloat16, np.float16) == np.float32


# --- dtype_and_weak ----------------------------------------------------------------------------

class _FakeArray:
    def __init__(self, dtype, weak=None):
        self.dtype = np.dtype(dtype)
        if weak is not None:
            self.weak = weak


def test_dtype_and_weak(x64):
    wide = {np.int32: np.int64, np.float32: np.float64, np.complex64: np.complex128}
    w = (lambda t: np.dtype(wide[t])) if x64 else np.dtype
    assert dtypes.dtype_and_weak(True) == (np.dtype(np.bool_), False)
    assert dtypes.dtype_and_weak(3) == (w(np.int32), True)
    assert dtypes.dtype_and_weak(3.0) == (w(np.float32), True)
    assert dtypes.dtype_and_weak(1j) == (w(np.complex64), True)
    assert dtypes.dtype_and_weak(np.float64(1)) == (w(np.float32), False)
    assert dtypes.dtype_and_weak(np.arange(3, dtype=np.int64)) == (w(np.int32), False)
    assert dtypes.dtype_and_weak(np.bool_(True)) == (np.dtype(np.bool_), False)
    assert dtypes.dtype_and_weak(np.ones(2, ml_dtypes.bfloat16)) == (dtypes.bfloat16, False)
    assert dtypes.dtype_and_weak(_FakeArray(np.float32, weak=True)) == \
        (np.dtype(np.float32), True)
    assert dtypes.dtype_and_weak(_FakeArray(np.int8)) == (np.dtype(np.int8), False)
    assert dtypes.dtype_and_weak([1.0, 2.0]) == (w(np.float32), False)


def test_python_int_range():
    previous = dtypes.enable_x64(False)
    try:
        assert dtypes.dtype_and_weak(2**31 - 1) == (np.dtype(np.int32), True)
        assert dtypes.dtype_and_weak(-2**31) == (np.dtype(np.int32), True)
        for bad in (2**31, -2**31 - 1):
            with pytest.raises(OverflowError, match=str(bad)):
                dtypes.dtype_and_weak(bad)
        dtypes.enable_x64(True)
        assert dtypes.dtype_and_weak(2**31) == (np.dtype(np.int64), True)
        with pytest.raises(OverflowError, match=str(2**63)):
            dtypes.dtype_and_weak(2**63)
    finally:
        dtypes.enable_x64(previous)


def test_unusable_values():
    with pytest.raises(TypeError, match="does not support dtype"):
        dtypes.dtype_and_weak(np.array(["a"]))
    with pytest.raises(TypeError, match="does not support dtype"):
        dtypes.dtype_and_weak(np.array([object()]))
    with pytest.raises(TypeError, match="cannot use a value of type"):
        dtypes.dtype_and_weak({1: 2})


# --- canonicalize and x64 ----------------------------------------------------------------------

def test_canonicalize(x64):
    for t, narrow in _NARROWED.items():
        assert dtypes.canonicalize(t) == (t if x64 else narrow)
        assert dtypes.canonicalize(np.dtype(t).name) == (t if x64 else narrow)
    for t in (np.bool_, np.int8, np.uint16, np.int32, np.float16, np.float32, np.complex64,
              ml_dtypes.bfloat16):
        assert dtypes.canonicalize(t) == np.dtype(t)
        assert type(dtypes.canonicalize(t)) is type(np.dtype(t))
    assert dtypes.canonicalize(float) == (np.float64 if x64 else np.float32)
    assert dtypes.canonicalize(np.dtype(">f4")) == np.float32
    assert dtypes.default_float() == (np.float64 if x64 else np.float32)
    assert dtypes.default_int() == (np.int64 if x64 else np.int32)
    assert dtypes.default_complex() == (np.complex128 if x64 else np.complex64)
    assert dtypes.x64_enabled() is x64


@pytest.mark.parametrize("bad", [object, str, "U3", "datetime64[s]", "V8", np.float128
                                 if hasattr(np, "float128") else "V4"])
def test_canonicalize_rejects_unsupported(bad):
    with pytest.raises(TypeError, match=r"spmdc does not support dtype .*; use one of .*float32"):
        dtypes.canonicalize(bad)
    with pytest.raises(TypeError, match="does not support dtype"):
        dtypes.result_type(np.float32, bad)


def test_canonicalize_rejects_non_dtypes():
    with pytest.raises(TypeError, match="does not support dtype"):
        dtypes.canonicalize("not-a-dtype")


def test_enable_x64_returns_previous():
    first = dtypes.enable_x64(True)
    try:
        assert dtypes.enable_x64(False) is True
        assert dtypes.canonicalize(np.float64) == np.float32
        assert dtypes.enable_x64(True) is False
        assert dtypes.canonicalize(np.float64) == np.float64
    finally:
        dtypes.enable_x64(first)


@pytest.mark.parametrize("value,enabled", [("1", True), ("true", True), ("True", True),
                                           ("yes", True), ("ON", True), (" on ", True),
                                           ("0", False), ("", False), ("no", False),
                                           ("off", False), ("FALSE", False), (None, False)])
def test_x64_environment_variable(monkeypatch, value, enabled):
    if value is None:
        monkeypatch.delenv("SPMDC_ENABLE_X64", raising=False)
    else:
        monkeypatch.setenv("SPMDC_ENABLE_X64", value)
    # a private copy of the module: the flag is read once, at import
    spec = importlib.util.spec_from_file_location(dtypes.__package__ + "._dtypes_copy",
                                                  dtypes.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.x64_enabled() is enabled
    assert module.canonicalize(np.float64) == (np.float64 if enabled else np.float32)
    assert module.dtype_and_weak(1.0) == (np.dtype(np.float64 if enabled else np.float32), True)


# --- predicates and info -----------------------------------------------------------------------

def test_predicates():
    floats = [ml_dtypes.bfloat16, np.float16, np.float32, np.float64]
    ints = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
    for t in floats:
        assert dtypes.is_float(t) and not dtypes.is_int(t) and dtypes.is_inexact(t)
        assert dtypes.issubdtype(t, np.floating) and dtypes.issubdtype(t, np.inexact)
        assert not dtypes.issubdtype(t, np.integer)
    for t in ints:
        assert dtypes.is_int(t) and not dtypes.is_float(t)
        assert dtypes.issubdtype(t, np.integer) and dtypes.issubdtype(t, np.number)
        assert dtypes.is_unsigned(t) == dtypes.issubdtype(t, np.unsignedinteger)
    assert not dtypes.is_int(np.bool_) and not dtypes.is_float(np.bool_)
    assert not dtypes.issubdtype(np.bool_, np.number)
    assert dtypes.issubdtype(np.bool_, np.bool_)
    assert dtypes.is_complex(np.complex64) and dtypes.issubdtype(np.complex64, np.inexact)
    assert not dtypes.issubdtype(np.complex64, np.floating)
    assert dtypes.issubdtype(np.float32, np.float32)
    assert not dtypes.issubdtype(np.float32, np.float64)
    assert dtypes.issubdtype(np.floating, np.inexact)


def test_finfo_iinfo():
    bf = dtypes.finfo(ml_dtypes.bfloat16)
    assert float(bf.eps) == 2.0 ** -7 and bf.bits == 16
    assert float(dtypes.finfo(np.float32).eps) == float(np.finfo(np.float32).eps)
    assert dtypes.finfo(np.complex64).bits == 32
    assert dtypes.iinfo(np.int8).min == -128 and dtypes.iinfo(np.uint16).max == 65535
    with pytest.raises(TypeError, match="floating-point"):
        dtypes.finfo(np.int32)
    with pytest.raises(TypeError, match="integer"):
        dtypes.iinfo(np.bool_)


def test_result_type_needs_arguments():
    with pytest.raises(ValueError, match="at least one"):
        dtypes.result_type()
