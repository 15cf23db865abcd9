"""spmdc/lax/reductions.py against NumPy: the cumulative operations (jit, vmap, reverse,
grad), argmax/argmin, reduce_and/or/xor, and lax.reduce with monoids and general
computations."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

X = np.array([[1.5, -2.5, 0.25], [0.5, 3.0, -0.75]], np.float32)


@pytest.mark.parametrize("name,ref", [("cumsum", np.cumsum), ("cumprod", np.cumprod),
                                      ("cummax", np.maximum.accumulate),
                                      ("cummin", np.minimum.accumulate)])
@pytest.mark.parametrize("axis", [0, -1])
def test_cumulative(name, ref, axis):
    f = getattr(lax, name)
    np.testing.assert_allclose(f(X, axis), ref(X, axis=axis), rtol=1e-6)
    rev = np.flip(ref(np.flip(X, axis), axis=axis), axis)
    np.testing.assert_allclose(spmdc.jit(lambda v: f(v, axis, reverse=True))(X), rev, rtol=1e-6)
    np.testing.assert_allclose(spmdc.vmap(lambda v: f(v, 0, True))(X),
                               np.stack([np.flip(ref(np.flip(r))) for r in X]), rtol=1e-6)


def test_cumsum_grad():
    g = spmdc.grad(lambda v: (lax.cumsum(v, reverse=True) * jnp.arange(3.0)).sum())(
        jnp.ones(3))
    np.testing.assert_allclose(g, np.cumsum(np.arange(3.0)), rtol=1e-6)


def test_argmax_argmin():
    got = lax.argmax(X, 1, np.int32)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.argmax(X, 1))
    np.testing.assert_array_equal(lax.argmin(X, -2, np.int32), np.argmin(X, 0))


def test_reduce_and_or():
    b = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(lax.reduce_and(b, (1,)), b.all(1))
    np.testing.assert_array_equal(lax.reduce_or(b, (0, 1)), b.any())


def test_reduce_with_monoids_and_general_computations():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7
    np.testing.assert_array_equal(lax.reduce(x, 0.0, lax.add, (0, 2)), x.sum((0, 2)))
    np.testing.assert_array_equal(lax.reduce(x, -np.inf, lax.max, (1,)), x.max(1))
    np.testing.assert_array_equal(lax.reduce(x, 5.0, lax.add, (1,)), x.sum(1) + 5)
    np.testing.assert_allclose(lax.reduce(x, 0.0, lambda a, b: a + b * b, (0,)),
                               (x * x).sum(0))
    s, m = lax.reduce((x, 2 * x), (0.0, -np.inf),
                      lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])), (2,))
    np.testing.assert_array_equal(s, x.sum(2))
    np.testing.assert_array_equal(m, (2 * x).max(2))
    np.testing.assert_array_equal(lax.reduce(x > 0, True, lax.bitwise_and, (1,)),
                                  (x > 0).all(1))
    np.testing.assert_array_equal(
        spmdc.grad(lambda v: lax.reduce(v, 0.0, lax.add, (1,)).sum())(x), np.ones_like(x))
    np.testing.assert_array_equal(lax.reduce(np.zeros((2, 0)), 3.0, lax.max, (1,)), [3, 3])
    with pytest.raises(ValueError, match="same tree structure"):
        lax.reduce((x, x), 0.0, lax.add, (0,))


def test_reduce_grad_from_an_initial_value_other_than_the_identity():
    # JAX differentiates lax.reduce with any initial value; spmdc sent a monoid from a
    # non-identity initial value down the general reduction, whose grad raised.
    x = np.array([[0.2, 0.9, -1.0], [0.7, 0.1, -2.0]], np.float32)
    got = spmdc.grad(lambda v: lax.reduce(v, np.float32(0.5), lax.max, (0,)).sum())(x)
    np.testing.assert_array_equal(got, [[0, 1, 0], [1, 0, 0]])      # -1 and -2 lose to 0.5
    np.testing.assert_array_equal(lax.reduce(x, np.float32(0.5), lax.max, (0,)),
                                  [x[1, 0], x[0, 1], 0.5])
    got = spmdc.grad(lambda v: lax.reduce(v, np.float32(3.0), lax.mul, (1,)).sum())(x)
    np.testing.assert_allclose(got, 3 * np.prod(x, 1, keepdims=True) / x, rtol=1e-6)
    np.testing.assert_array_equal(lax.reduce(x, -1.0, lax.min, (1,)), [-1.0, -2.0])


INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]


def test_bit_reductions_match_numpy():
    a = np.random.default_rng(1).integers(-2**31, 2**31 - 1, size=(4, 9), dtype=np.int32)
    np.testing.assert_array_equal(lax.reduce_xor(a, [1]), np.bitwise_xor.reduce(a, 1))
    np.testing.assert_array_equal(lax.reduce_xor(a % 2 == 0, [0]),
                                  np.logical_xor.reduce(a % 2 == 0, 0))
    x = np.array([1, 0, 255, -1, 2**20, 2**31 - 1], np.int32)
    want = [32 - int(v).bit_length() if v >= 0 else 0 for v in x]
    np.testing.assert_array_equal(lax.clz(x), want)
    np.testing.assert_array_equal(lax.clz(np.array([1, 128, 0], np.uint8)), [7, 0, 8])
