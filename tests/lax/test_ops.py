"""spmdc.lax's elementwise, cumulative, index and shape wrappers (spmdc/lax/ops.py),
against NumPy/SciPy, under jit, vmap and grad."""
import numpy as np
import pytest
import scipy.special

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

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


def test_shape_and_index_ops():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    assert lax.collapse(x, 1).shape == (2, 12)
    assert lax.collapse(x, 0, 2).shape == (6, 4)
    np.testing.assert_array_equal(lax.expand_dims(x, (0, -1)), x[None, ..., None])
    np.testing.assert_array_equal(lax.squeeze(x[:, :1], (1,)), x[:, 0])
    np.testing.assert_array_equal(lax.reshape(x, (4, 6), (2, 1, 0)),
                                  x.transpose(2, 1, 0).reshape(4, 6))
    np.testing.assert_array_equal(lax.index_in_dim(x, -1, 2, keepdims=False), x[..., -1])
    np.testing.assert_array_equal(lax.index_in_dim(x, 1, 1), x[:, 1:2])
    np.testing.assert_array_equal(lax.slice_in_dim(x, 1, None, 2, axis=2), x[..., 1::2])
    np.testing.assert_array_equal(lax.broadcasted_iota(np.int32, (2, 3), 1),
                                  np.broadcast_to(np.arange(3), (2, 3)))
    np.testing.assert_array_equal(lax.broadcast(x[0, 0], (2,)), np.stack([x[0, 0]] * 2))
    full = lax.full((2, 2), 3, np.int32)
    assert full.dtype == np.int32 and (np.asarray(full) == 3).all()
    assert lax.full_like(x, 1.0).shape == x.shape
    with pytest.raises(IndexError, match="out of bounds"):
        lax.index_in_dim(x, 3, 1)


def test_reduce_and_or():
    b = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(lax.reduce_and(b, (1,)), b.all(1))
    np.testing.assert_array_equal(lax.reduce_or(b, (0, 1)), b.any())


def test_top_k():
    x = np.array([[3.0, 1.0, 3.0, 2.0], [0.0, 5.0, 5.0, -1.0]], np.float32)
    values, indices = spmdc.jit(lambda t: lax.top_k(t, 3))(x)
    np.testing.assert_array_equal(values, [[3, 3, 2], [5, 5, 0]])
    np.testing.assert_array_equal(indices, [[0, 2, 3], [1, 2, 0]])     # ties: lower index first
    assert indices.dtype == np.int32
    g = spmdc.grad(lambda t: lax.top_k(t, 2)[0].sum())(x)
    np.testing.assert_array_equal(g, [[1, 0, 1, 0], [0, 1, 1, 0]])
    with pytest.raises(ValueError, match="k=5"):
        lax.top_k(x, 5)


def test_select_n_dot_split_tile():
    cases = [np.full(4, c, np.float32) for c in range(3)]
    np.testing.assert_array_equal(lax.select_n(np.array([0, 2, 1, 0]), *cases), [0, 2, 1, 0])
    np.testing.assert_array_equal(lax.select_n(np.array([True, False, True, False]),
                                               *cases[:2]), [1, 0, 1, 0])
    np.testing.assert_allclose(lax.dot(X, X[0]), X @ X[0], rtol=1e-6)
    np.testing.assert_allclose(lax.dot(X, X.T), X @ X.T, rtol=1e-6)
    pieces = lax.split(X, [1, 2], axis=1)
    np.testing.assert_array_equal(pieces[1], X[:, 1:])
    with pytest.raises(ValueError, match="sum to"):
        lax.split(X, [1, 1], axis=1)
    np.testing.assert_array_equal(lax.tile(X, (2, 1)), np.tile(X, (2, 1)))
    assert lax.broadcast_to_rank(X[0], 3).shape == (1, 1, 3)


@pytest.mark.parametrize("n", [1, 2, 5, 8])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_sums(n, reverse):
    x = np.arange(1.0, 2 * n + 1, dtype=np.float32).reshape(2, n)
    got = lax.associative_scan(lambda a, b: a + b, x, reverse=reverse, axis=1)
    want = np.flip(np.cumsum(np.flip(x, 1), 1), 1) if reverse else np.cumsum(x, 1)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_associative_scan_pytree_and_jit():
    a = np.random.RandomState(1).rand(7).astype(np.float32)
    b = np.random.RandomState(2).rand(7).astype(np.float32)

    def compose(p, q):                 # affine maps x -> a x + b, composed left to right
        return p[0] * q[0], q[0] * p[1] + q[1]
    got_a, got_b = spmdc.jit(lambda u, v: lax.associative_scan(compose, (u, v)))(a, b)
    state, want = (a[0], b[0]), [(a[0], b[0])]
    for i in range(1, 7):
        state = compose(state, (a[i], b[i]))
        want.append(state)
    np.testing.assert_allclose(got_a, [w[0] for w in want], rtol=1e-5)
    np.testing.assert_allclose(got_b, [w[1] for w in want], rtol=1e-5)
    with pytest.raises(TypeError, match="same structure"):
        lax.associative_scan(lambda p, q: p[0], (a, b))


def test_cumlogsumexp():
    y = np.random.RandomState(0).randn(3, 7).astype(np.float32)
    np.testing.assert_allclose(lax.cumlogsumexp(y, 1), np.logaddexp.accumulate(y, 1),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lax.cumlogsumexp(y, 0, reverse=True),
                               np.logaddexp.accumulate(y[::-1], 0)[::-1], rtol=1e-5, atol=1e-6)
    g = spmdc.grad(lambda t: lax.cumlogsumexp(t).sum())(np.array([0.0, 1.0, 2.0], np.float32))
    e = np.exp([0.0, 1.0, 2.0])
    want = [1 + e[0] / e[:2].sum() + e[0] / e.sum(), e[1] / e[:2].sum() + e[1] / e.sum(),
            e[2] / e.sum()]
    np.testing.assert_allclose(g, want, rtol=1e-5)
