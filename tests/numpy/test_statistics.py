"""spmdc/numpy/stats_extra.py against NumPy: gradient, cov, corrcoef, cross."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

F = np.array([[1.0, 2.0, 4.0, 7.0], [2.0, 3.0, 5.0, 9.0], [0.0, 1.0, 1.0, 4.0]], np.float32)
A = np.random.RandomState(0).randn(4, 3).astype(np.float32)
B = np.random.RandomState(1).randn(4, 3).astype(np.float32)


def test_gradient():
    for got, want in zip(jnp.gradient(F, 2.0, 0.5), np.gradient(F, 2.0, 0.5), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(jnp.gradient(F, axis=-1), np.gradient(F, axis=-1), rtol=1e-6)
    np.testing.assert_allclose(jnp.gradient(np.arange(5) ** 2), np.gradient(np.arange(5) ** 2))
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(F, edge_order=2)


def test_cov_corrcoef():
    np.testing.assert_allclose(jnp.cov(F), np.cov(F), rtol=1e-5)
    np.testing.assert_allclose(jnp.cov(F, rowvar=False, bias=True),
                               np.cov(F, rowvar=False, bias=True), rtol=1e-5)
    np.testing.assert_allclose(jnp.cov(F[0], F[1], ddof=0), np.cov(F[0], F[1], ddof=0),
                               rtol=1e-5)
    np.testing.assert_allclose(jnp.cov(F[0]), np.cov(F[0]), rtol=1e-6)
    np.testing.assert_allclose(spmdc.jit(jnp.corrcoef)(F), np.corrcoef(F), rtol=1e-5)
    with pytest.raises(NotImplementedError, match="weights"):
        jnp.cov(F, fweights=np.ones(4))


def test_cross():
    np.testing.assert_allclose(jnp.cross(A, B), np.cross(A, B), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.cross(A.T, B.T, axisa=0, axisb=0, axisc=0),
                               np.cross(A.T, B.T, axisa=0, axisb=0, axisc=0), rtol=1e-5,
                               atol=1e-6)
    a2 = np.concatenate([A[:, :2], np.zeros((4, 1), np.float32)], 1)
    np.testing.assert_allclose(jnp.cross(A[:, :2], B), np.cross(a2, B), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.cross(A[:, :2], B[:, :2]),
                               A[:, 0] * B[:, 1] - A[:, 1] * B[:, 0], rtol=1e-6)
    g = spmdc.grad(lambda a: jnp.cross(a, B[0]).sum())(A[0])
    np.testing.assert_allclose(g, np.cross(B[0], np.ones(3, np.float32)), rtol=1e-6)


def test_polynomials():
    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, 5.0], np.float32)
    np.testing.assert_array_equal(jnp.polyadd(a, b), np.polyadd(a, b))
    np.testing.assert_array_equal(jnp.polysub(b, a), np.polysub(b, a))
    np.testing.assert_allclose(jnp.polymul(a, b), np.polymul(a, b), rtol=1e-6)
    np.testing.assert_array_equal(jnp.polyder(a, 2), np.polyder(a, 2))
    np.testing.assert_array_equal(jnp.polyder(np.array([1, 2, 3])), np.polyder([1, 2, 3]))
    np.testing.assert_allclose(jnp.polyint(a), np.polyint(a), rtol=1e-6)
    np.testing.assert_allclose(jnp.polyint(a, 2, [1, 2]), np.polyint(a, 2, [1, 2]), rtol=1e-6)
    np.testing.assert_allclose(jnp.polyint(a, 2, 3), np.polyint(a, 2, 3), rtol=1e-6)


def test_fill_diagonal_put_along_axis():
    for shape, val in [((3, 4), np.array([1.0, 2.0])), ((4, 3), 7.0), ((3, 3, 3), 5.0)]:
        want = np.zeros(shape, np.float32)
        np.fill_diagonal(want, val)
        got = jnp.fill_diagonal(np.zeros(shape, np.float32), val, inplace=False)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.fill_diagonal(np.zeros((2, 2)), 1.0)
    z = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    i = np.array([[1], [0], [3]])
    want = z.copy()
    np.put_along_axis(want, i, -1, 1)
    np.testing.assert_array_equal(jnp.put_along_axis(z, i, -1.0, 1, inplace=False), want)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put_along_axis(z, i, -1.0, 1)
