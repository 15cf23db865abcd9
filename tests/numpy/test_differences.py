"""spmdc/numpy/differences.py: diff, ediff1d,
gradient, trapezoid against NumPy."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

A = np.arange(12.0, dtype=np.float32).reshape(3, 4)


B = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


def test_diff_ediff1d():
    np.testing.assert_array_equal(jnp.diff(B, 2, axis=1, prepend=0),
                                  np.diff(B, 2, axis=1, prepend=0))
    np.testing.assert_array_equal(jnp.diff(B, append=B[..., :2]), np.diff(B, append=B[..., :2]))
    np.testing.assert_array_equal(jnp.diff(np.array([True, False, False])),
                                  np.diff(np.array([True, False, False])))
    np.testing.assert_array_equal(jnp.ediff1d(A, to_begin=[9], to_end=7),
                                  np.ediff1d(A, to_begin=[9], to_end=7))


V = np.array([1.0, -2.0, 3.0], np.float32)


def test_trapezoid_polyval():
    x = np.array([0.0, 0.5, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(jnp.trapezoid(A, x), np.trapezoid(A, x), rtol=1e-6)
    np.testing.assert_allclose(jnp.trapezoid(B, dx=0.5, axis=1), np.trapezoid(B, dx=0.5, axis=1))
    assert jnp.trapezoid(np.arange(4)).dtype == np.float32         # integers integrate as floats
    np.testing.assert_allclose(jnp.polyval(V, A), np.polyval(V, A), rtol=1e-6)
    assert jnp.polyval(np.array([1, 2], np.int32), 3).dtype == np.int32
    g = spmdc.grad(lambda t: jnp.polyval(V, t))(np.float32(2.0))
    np.testing.assert_allclose(g, np.polyval(np.polyder(V), 2.0), rtol=1e-6)


F = np.array([[1.0, 2.0, 4.0, 7.0], [2.0, 3.0, 5.0, 9.0], [0.0, 1.0, 1.0, 4.0]], np.float32)


def test_gradient():
    for got, want in zip(jnp.gradient(F, 2.0, 0.5), np.gradient(F, 2.0, 0.5), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(jnp.gradient(F, axis=-1), np.gradient(F, axis=-1), rtol=1e-6)
    np.testing.assert_allclose(jnp.gradient(np.arange(5) ** 2), np.gradient(np.arange(5) ** 2))
    with pytest.raises(NotImplementedError, match="edge_order"):
        jnp.gradient(F, edge_order=2)
