"""The narrow dtypes (float8s, float4, int4/uint4, int2/uint2; Note [narrow dtypes] in
spmdc/core/dtypes.py): conversions, promotion, finfo/iinfo, arithmetic and products,
gradients, against values recorded from JAX 0.10.2 on the CPU."""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from oracle import interpreted

import spmdc
import spmdc.numpy as jnp
from spmdc import errors, lax

_INF, _NAN = math.inf, None
_SOURCE = np.array([0.1, -1.7, 3.3, 300.0, -0.02, 7.0, 500.0, -1000.0, np.inf, np.nan, 0.3],
                   np.float32)
# JAX 0.10.2: jnp.asarray(_SOURCE).astype(dtype) (None is NaN): round to nearest even,
# overflow to inf or NaN by the format, floats to integers saturating.
_CONVERTED = {
    "float8_e4m3fn": [0.1015625, -1.75, 3.25, 288.0, -0.01953125, 7.0, _NAN, _NAN, _NAN, _NAN,
                      0.3125],
    "float8_e5m2": [0.09375, -1.75, 3.5, 320.0, -0.01953125, 7.0, 512.0, -1024.0, _INF, _NAN,
                    0.3125],
    "float8_e4m3fnuz": [0.1015625, -1.75, 3.25, _NAN, -0.01953125, 7.0, _NAN, _NAN, _NAN, _NAN,
                        0.3125],
    "float8_e5m2fnuz": [0.09375, -1.75, 3.5, 320.0, -0.01953125, 7.0, 512.0, -1024.0, _NAN,
                        _NAN, 0.3125],
    "float8_e4m3b11fnuz": [0.1015625, -1.75, 3.25, _NAN, -0.01953125, 7.0, _NAN, _NAN, _NAN,
                           _NAN, 0.3125],
    "float8_e3m4": [0.09375, -1.6875, 3.25, _INF, -0.015625, 7.0, _INF, -_INF, _INF, _NAN,
                    0.296875],
    "float8_e4m3": [0.1015625, -1.75, 3.25, _INF, -0.01953125, 7.0, _INF, -_INF, _INF, _NAN,
                    0.3125],
    "float8_e8m0fnu": [0.125, _NAN, 4.0, 256.0, _NAN, 8.0, 512.0, _NAN, _NAN, _NAN, 0.25],
    "float4_e2m1fn": [0.0, -1.5, 3.0, 6.0, -0.0, 6.0, 6.0, -6.0, 6.0, -0.0, 0.5],
    "int4": [0, -1, 3, 7, 0, 7, 7, -8, 7, 0, 0],
    "uint4": [0, 0, 3, 15, 0, 7, 15, 0, 15, 0, 0],
    "int2": [0, -1, 1, 1, 0, 1, 1, -2, 1, 0, 0],
    "uint2": [0, 0, 3, 3, 0, 3, 3, 0, 3, 0, 0],
}
# JAX 0.10.2: jnp.asarray([17, -9, 3, 100, -100], int32).astype(dtype): wrapping.
_FROM_INT = {"int4": [1, 7, 3, 4, -4], "uint4": [1, 7, 3, 4, 12], "int2": [1, -1, -1, 0, 0],
             "uint2": [1, 3, 3, 0, 0]}


def _values(x):
    return [None if np.isnan(v) else v for v in np.asarray(x).astype(np.float64).tolist()]


def test_conversions_round_and_overflow_as_jax():
    names = list(_CONVERTED)
    dtypes = [getattr(jnp, name) for name in names]
    every = spmdc.jit(lambda x, i: ([lax.convert_element_type(x, d) for d in dtypes],
                                    [i.astype(getattr(jnp, n)) for n in _FROM_INT]))
    converted, wrapped = every(_SOURCE, np.array([17, -9, 3, 100, -100], np.int32))
    for name, got in zip(names, converted, strict=True):
        assert got.dtype == np.dtype(getattr(ml_dtypes, name))
        assert _values(got) == _CONVERTED[name], name
    for name, got in zip(_FROM_INT, wrapped, strict=True):
        assert np.asarray(got).astype(np.int64).tolist() == _FROM_INT[name], name
    eager = jnp.asarray(_SOURCE).astype(jnp.float8_e4m3fn)           # outside jit too
    assert _values(eager) == _CONVERTED["float8_e4m3fn"]


def test_a_constant_of_a_narrow_type_lowers_from_its_bits():
    # Built into the program (a literal array), not passed: the lowering writes its bits.
    f = spmdc.jit(lambda: jnp.array([1.5, 448.0, -0.25], jnp.float8_e4m3fn) * 1)
    g = spmdc.jit(lambda: jnp.array([-8, 7, 3], jnp.int4) + 0)
    assert _values(f()) == [1.5, 448.0, -0.25] and f().dtype == jnp.float8_e4m3fn
    assert np.asarray(g()).astype(int).tolist() == [-8, 7, 3]


def test_narrow_types_are_leaves_of_the_promotion_lattice():
    f8, f32 = jnp.float8_e4m3fn, jnp.float32
    assert jnp.promote_types(f8, f8) == f8
    assert jnp.promote_types(f8, float) == f8 and jnp.promote_types(jnp.int4, int) == jnp.int4
    x = jnp.array([1.0, 2.0], f8)
    assert (x + 1.0).dtype == f8 and _values(x * 2) == [2.0, 4.0]
    # JAX 0.10.2's TypePromotionError messages
    with pytest.raises(errors.TypePromotionError,
                       match=r"Input dtypes \('float8_e4m3fn', 'float8_e5m2'\) have no "
                             r"available implicit dtype promotion path\. To avoid unintended "
                             r"promotion, 8-bit floats do not support implicit promotion"):
        jnp.promote_types(f8, jnp.float8_e5m2)
    with pytest.raises(errors.TypePromotionError, match="8-bit floats do not support"):
        jnp.ones(2, f32) + x
    with pytest.raises(errors.TypePromotionError, match="4-bit integers do not support"):
        jnp.promote_types(jnp.int4, jnp.int8)
    with pytest.raises(errors.TypePromotionError, match="4-bit floats do not support"):
        jnp.promote_types(jnp.float4_e2m1fn, f32)


def test_categories_finfo_and_iinfo():
    assert [jnp.issubdtype(jnp.float8_e4m3fn, jnp.floating),
            jnp.issubdtype(jnp.int4, jnp.signedinteger), jnp.issubdtype(jnp.uint4, jnp.integer),
            jnp.issubdtype(jnp.float8_e5m2, jnp.inexact)] == [True, True, True, True]
    # JAX 0.10.2: finfo(e4m3fn) max 448, eps 0.125, tiny 2**-6; e5m2 max 57344; fnuz 240
    info = jnp.finfo(jnp.float8_e4m3fn)
    assert (float(info.max), float(info.eps), float(info.tiny), info.bits) == (448, 0.125,
                                                                               2**-6, 8)
    assert float(jnp.finfo(jnp.float8_e5m2).max) == 57344
    assert float(jnp.finfo(jnp.float8_e4m3fnuz).max.astype(jnp.float32)) == 240
    assert (int(jnp.iinfo(jnp.int4).min), int(jnp.iinfo(jnp.int4).max)) == (-8, 7)
    assert int(jnp.iinfo(jnp.uint2).max) == 3


def test_max_of_a_float8_without_infinity_starts_from_its_lowest_value():
    # The identity of max is -inf, which e4m3fn cannot hold (it became NaN). JAX 0.10.2:
    # 288 (300 rounded), and -448 for the all-lowest array.
    x = jnp.asarray(np.array([0.1, 300.0, -2.0], np.float32)).astype(jnp.float8_e4m3fn)
    extremes = spmdc.jit(lambda x: (jnp.max(x), jnp.min(x),
                                    jnp.max(jnp.full(3, -448.0, jnp.float8_e4m3fn))))
    assert [float(v) for v in extremes(x)] == [288.0, -2.0, -448.0]


def test_narrow_integers_compare_and_reduce_as_integers():
    x = np.array([1, -3, 5], np.int32)
    u = np.array([1, 13, 5], np.int32)
    got = spmdc.jit(lambda x, u: (x.astype(jnp.int4) < 1, jnp.max(x.astype(jnp.int4)),
                                  jnp.min(x.astype(jnp.int4)), jnp.max(u.astype(jnp.uint4)),
                                  u.astype(jnp.uint4) > 4))(x, u)
    assert np.asarray(got[0]).tolist() == [False, True, False]      # JAX 0.10.2
    assert [int(v) for v in got[1:4]] == [5, -3, 13]
    assert np.asarray(got[4]).tolist() == [False, True, True]


def test_dot_general_of_float8s_in_a_preferred_type():
    lhs = jnp.asarray(np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)).astype(jnp.float8_e4m3fn)
    rhs = jnp.asarray(np.array([[1.5, 0.0], [2.0, 4.0]], np.float32)).astype(jnp.float8_e5m2)
    dims = (((1,), (0,)), ((), ()))
    # Two float8 formats: JAX's product takes the wider-ranged (e5m2) operand type.
    out, plain = spmdc.jit(lambda a, b: (
        lax.dot_general(a, b, dims, preferred_element_type=jnp.float32),
        lax.dot_general(a, b, dims)))(lhs, rhs)
    assert out.dtype == np.float32 and np.asarray(out).tolist() == [[-2.5, -8.0], [6.75, 12.0]]
    assert plain.dtype == jnp.float8_e5m2


def test_gradients_flow_through_float8_conversions():
    def loss(x):
        q = x.astype(jnp.float8_e4m3fn).astype(jnp.float32)
        return jnp.sum(q * 3.0)
    x = np.array([0.1, -1.7, 3.3], np.float32)
    assert np.asarray(spmdc.grad(loss)(x)).tolist() == [3.0, 3.0, 3.0]
    g = spmdc.grad(lambda a: jnp.sum(a * 3.0).astype(jnp.float32))(
        jnp.asarray(x).astype(jnp.float8_e5m2))
    assert g.dtype == jnp.float8_e5m2 and _values(g) == [3.0, 3.0, 3.0]


def test_jaxpr_names_narrow_types_as_jax():
    text = str(spmdc.make_jaxpr(lambda a: a.astype(jnp.float8_e5m2))(np.ones(3, np.float32)))
    assert "b:f8_e5m2[3] = convert_element_type[new_dtype=float8_e5m2 weak_type=False] a" \
        in text


def test_jnp_treats_narrow_integers_as_integers():
    # JAX 0.10.2 on int4 [[0, -1, 3], [7, 0, 7]]: floor/round keep int4, isfinite is all
    # True, mean/std/tanh compute in float32.
    x = np.array([[0, -1, 3], [7, 0, 7]], np.int32)
    got = spmdc.jit(lambda x: (jnp.floor(x), jnp.round(x), jnp.isfinite(x), jnp.mean(x),
                               jnp.std(x), jnp.tanh(x)))(jnp.asarray(x).astype(jnp.int4))
    floor, rounded, finite, mean, std, tanh = got
    assert floor.dtype == rounded.dtype == jnp.int4
    assert np.asarray(floor).astype(int).tolist() == x.tolist() == \
        np.asarray(rounded).astype(int).tolist()
    assert np.asarray(finite).all() and mean.dtype == std.dtype == tanh.dtype == np.float32
    np.testing.assert_allclose([float(mean), float(std)], [2.66667, 3.29983], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(tanh)[0], [0.0, -0.76159, 0.99505], atol=1e-5)


# JAX 0.10.2's jnp.result_type(narrow value, other): the narrow type, or None for its
# TypePromotionError; the others are 0, 0.0, 0j, bool, float32 and int8 arrays. (The whole
# table over 27 types agreed with JAX's when this was written.)
_OTHERS = (0, 0.0, 0j, np.bool_(False), np.float32(0), np.int8(0))
_PROMOTED = {
    "int2": (True, None, None, True, None, None),
    "int4": (True, None, None, True, None, None),
    "uint4": (True, None, None, True, None, None),
    "float4_e2m1fn": (True, True, None, True, None, True),
    "float8_e4m3fn": (True, True, None, True, None, True),
    "float8_e8m0fnu": (True, True, None, True, None, True),
}


def test_promotion_rows_of_the_narrow_types_are_jax_ones():
    for name, row in _PROMOTED.items():
        x = np.zeros((), getattr(ml_dtypes, name))
        for other, same in zip(_OTHERS, row, strict=True):
            if same is None:
                with pytest.raises(errors.TypePromotionError):
                    jnp.result_type(x, other)
            else:
                assert jnp.result_type(x, other) == x.dtype, (name, other)


def test_itemsize_bits_is_the_width():
    # JAX 0.10.2: [4, 2, 4, 8, 8, 32]
    assert [spmdc.dtypes.itemsize_bits(t) for t in (
        jnp.int4, jnp.uint2, jnp.float4_e2m1fn, jnp.float8_e5m2, jnp.bool_, jnp.float32)] == \
        [4, 2, 4, 8, 8, 32]


def test_nanmax_of_a_float8_without_infinity_skips_its_nans():
    # JAX 0.10.2: nanmax 3 and nanmin -1 of [nan, -1, 0, 1, -0.5, 3] in e4m3fn/e4m3fnuz.
    x = np.array([np.nan, -1, 0, 1, -0.5, 3], np.float32)
    got = spmdc.jit(lambda x: [(jnp.nanmax(x.astype(d)), jnp.nanmin(x.astype(d)))
                               for d in (jnp.float8_e4m3fn, jnp.float8_e4m3fnuz)])(x)
    assert [(float(a), float(b)) for a, b in got] == [(3.0, -1.0), (3.0, -1.0)]


def test_sort_puts_the_nan_of_fnuz_float8s_first():
    # JAX 0.10.2 (XLA's total order): [nan -1 -0.5 0 1 3] for e4m3fnuz, NaN last for e4m3fn.
    x = np.array([np.nan, -1, 0, 1, -0.5, 3], np.float32)
    fnuz, fn, order = spmdc.jit(lambda x: (
        jnp.sort(x.astype(jnp.float8_e4m3fnuz)), jnp.sort(x.astype(jnp.float8_e4m3fn)),
        jnp.argsort(x.astype(jnp.float8_e5m2fnuz))))(x)
    assert _values(fnuz) == [None, -1.0, -0.5, 0.0, 1.0, 3.0]
    assert _values(fn) == [-1.0, -0.5, 0.0, 1.0, 3.0, None]
    assert np.asarray(order).tolist() == [0, 1, 4, 2, 3, 5]
    reference = interpreted(jnp.sort, x.astype(ml_dtypes.float8_e4m3fnuz))[0]
    assert _values(reference) == [None, -1.0, -0.5, 0.0, 1.0, 3.0]


def test_arange_of_a_narrow_float_rounds_exact_values():
    # JAX 0.10.2: arange(4, dtype=float8_e8m0fnu) is [nan, 1, 2, 4] (0 has no e8m0 value)
    assert _values(jnp.arange(4, dtype=jnp.float8_e8m0fnu)) == [None, 1.0, 2.0, 4.0]
    assert _values(jnp.arange(0.0, 1.0, 0.25, dtype=jnp.float8_e4m3fn)) == [0, 0.25, 0.5, 0.75]
