"""spmdc/lax/elementwise.py against NumPy/SciPy references, under jit, vmap and grad: the
unary and binary wrappers (with erf, lgamma and digamma from special.py beside them), the
bitwise and shift operations, round, select_n, dtype, and the integer bits (mulhi, clz with
its primitive)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special
from primcheck import check_lowering, check_vmap

import spmdc
from spmdc import lax
from spmdc.compiler.primitives.misc import clz_p

X = np.array([[1.5, -2.5, 0.25], [0.5, 3.0, -0.75]], np.float32)


@pytest.mark.parametrize("name,ref", [
    ("cbrt", np.cbrt), ("expm1", np.expm1), ("log1p", lambda x: np.log1p(np.abs(x))),
    ("logistic", scipy.special.expit), ("erf", scipy.special.erf), ("floor", np.floor),
    ("sign", np.sign), ("square", np.square), ("sinh", np.sinh), ("tan", np.tan),
    ("lgamma", lambda x: scipy.special.gammaln(np.abs(x))),
    ("digamma", lambda x: scipy.special.digamma(np.abs(x))),
])
def test_unary_matches_reference(name, ref):
    x = np.abs(X) if name in ("log1p", "lgamma", "digamma") else X
    got = spmdc.jit(getattr(lax, name))(x)
    np.testing.assert_allclose(got, ref(x), rtol=2e-6, atol=1e-6)
    assert got.dtype == np.float32


def test_erf_inv_and_binary_ops():
    p = np.array([-0.5, 0.1, 0.9], np.float32)
    np.testing.assert_allclose(lax.erf_inv(p), scipy.special.erfinv(p), rtol=1e-5)
    np.testing.assert_allclose(lax.atan2(X, X[::-1]), np.arctan2(X, X[::-1]), rtol=1e-6)
    np.testing.assert_allclose(lax.rem(X, np.float32(0.7)), np.fmod(X, np.float32(0.7)),
                               rtol=1e-6)
    np.testing.assert_array_equal(lax.nextafter(X, np.zeros_like(X)),
                                  np.nextafter(X, np.zeros_like(X)))
    np.testing.assert_array_equal(lax.lt(X, X.T[:2, :2].sum()), X < X.T[:2, :2].sum())
    with pytest.raises(TypeError, match="same dtypes"):
        lax.atan2(X, np.ones((2, 3), np.int32))


def test_bitwise_and_shifts():
    a = np.array([5, -8, 255], np.int32)
    b = np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(lax.bitwise_and(a, b), a & b)
    np.testing.assert_array_equal(lax.bitwise_xor(a, b), a ^ b)
    np.testing.assert_array_equal(lax.bitwise_not(a), ~a)
    np.testing.assert_array_equal(lax.shift_left(a, b), a << b)
    np.testing.assert_array_equal(lax.shift_right_arithmetic(a, b), a >> b)
    np.testing.assert_array_equal(lax.shift_right_logical(a, b),
                                  (a.view(np.uint32) >> b.view(np.uint32)).view(np.int32))
    np.testing.assert_array_equal(lax.population_count(np.array([7, 255], np.uint8)), [3, 8])
    np.testing.assert_array_equal(lax.bitcast_convert_type(np.float32(1.0), np.int32),
                                  np.float32(1.0).view(np.int32))


def test_round_methods():
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 2.4], np.float32)
    np.testing.assert_array_equal(lax.round(x), [1, 2, 3, -1, -3, 2])
    np.testing.assert_array_equal(lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.rint(x))
    with pytest.raises(ValueError, match="rounding_method"):
        lax.round(x, 7)


INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]


def _mulhi_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = 8 * x.dtype.itemsize
    full = x.astype(object) * y.astype(object)          # exact Python integers
    return np.array([int(v) >> bits for v in full.ravel()], np.int64).reshape(x.shape) \
        .astype(x.dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_mulhi_matches_the_exact_product(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(np.dtype(dtype).num)
    x = rng.integers(info.min, info.max, size=200, endpoint=True, dtype=dtype)
    y = rng.integers(info.min, info.max, size=200, endpoint=True, dtype=dtype)
    edges = np.array([info.min, info.max, 0, 1, info.min + 1, info.max - 1], dtype)
    x = np.concatenate([x, np.repeat(edges, len(edges))])
    y = np.concatenate([y, np.tile(edges, len(edges))])
    np.testing.assert_array_equal(spmdc.jit(lax.mulhi)(x, y), _mulhi_reference(x, y))
    np.testing.assert_array_equal(spmdc.jit(spmdc.vmap(lax.mulhi))(x[:8], y[:8]),
                                  _mulhi_reference(x[:8], y[:8]))


def test_mulhi_broadcasts_and_checks():
    x = np.array([[-100], [7]], np.int8)
    np.testing.assert_array_equal(lax.mulhi(x, np.int8(100)), [[-40], [2]])
    with pytest.raises(TypeError, match="same number of dimensions"):
        lax.mulhi(np.ones(2, np.int32), np.ones((3, 1), np.int32))
    with pytest.raises(TypeError, match="integers of one dtype"):
        lax.mulhi(np.ones(2, np.int32), np.ones(2, np.uint32))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_clz(dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, 2, 3, info.max, info.min, info.max // 3], dtype)
    bits = 8 * x.dtype.itemsize
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    want = np.array([bits - int(v).bit_length() for v in unsigned], dtype)
    np.testing.assert_array_equal(lax.clz(x), want)
    check_lowering(clz_p, [x], {})
    check_vmap(clz_p, [np.stack([x, x[::-1]])], {}, [0], 2)


def test_clz_rejects_floats():
    with pytest.raises(TypeError, match="clz"):
        lax.clz(np.ones(3, np.float32))


def test_select_n():
    cases = [np.full(4, c, np.float32) for c in range(3)]
    np.testing.assert_array_equal(lax.select_n(np.array([0, 2, 1, 0]), *cases), [0, 2, 1, 0])
    np.testing.assert_array_equal(lax.select_n(np.array([True, False, True, False]),
                                               *cases[:2]), [1, 0, 1, 0])


def test_dtype():
    assert lax.dtype(1.0) == np.float32 and lax.dtype(np.int16(3)) == np.int16


# Weak types and literals, as JAX 0.10.2 gives them (recorded with jax.lax): a wrapper's
# result is weak iff all its operands are; Python scalars are weak, NumPy values strong,
# and a scalar stays a literal of the program (Note [weak literals] in core/operands.py).

def _weak_vector() -> spmdc.Array:
    return lax.broadcast_in_dim(2.0, (2,), ())


def test_a_result_is_weak_iff_every_operand_is():
    w, strong = _weak_vector(), np.ones(2, np.float32)
    assert w.weak                                           # JAX: True
    assert lax.add(2.0, 3.0).weak and lax.add(w, 1.0).weak  # JAX: True, True
    assert not lax.add(w, np.float32(1)).weak               # JAX: False
    assert lax.select(np.array([True, False]), w, w).weak   # JAX: True
    assert lax.concatenate([w, w], 0).weak                  # JAX: True
    assert not lax.concatenate([w, strong], 0).weak         # JAX: False
    m = lax.broadcast_in_dim(2.0, (2, 2), ())
    dims = (((1,), (0,)), ((), ()))
    assert lax.dot_general(m, m, dims).weak                 # JAX: True
    assert not lax.dot_general(m, np.ones((2, 2), np.float32), dims).weak   # JAX: False
    assert lax.is_finite(2.0).weak                          # JAX: True
    assert not lax.convert_element_type(2.0, np.float32).weak    # JAX: False
    assert not lax.convert_element_type(w, np.int32).weak        # JAX: False
    np.testing.assert_array_equal(lax.concatenate([w, strong], 0), [2, 2, 1, 1])


def test_scalar_operands_stay_literals():
    # JAX: { lambda ; a:f32[3]. let b:f32[3] = add a 2.0:f32[] in (b,) }
    func = spmdc.make_ir(lambda x: lax.add(x, 2.0))(np.ones(3, np.float32))
    assert len(func.inputs) == 1 and "add(%0, 2.0:f32)" in str(func)
    func = spmdc.make_ir(lambda x: lax.shift_right_logical(x, np.uint32(3)))(
        np.ones(3, np.uint32))
    assert len(func.inputs) == 1 and "3:u32" in str(func)
    np.testing.assert_array_equal(spmdc.jit(lambda x: lax.mul(x, 3.0))(X), X * 3)
