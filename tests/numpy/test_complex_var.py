"""Variance and standard deviation of complex arrays (Flax's BatchNorm on complex
inputs): real, ``mean(|x - mean|^2)``, as NumPy and JAX; a complex ``dtype=`` keeps the
complex type; a real one is JAX's ValueError. And ``lax.logistic`` (``nn.sigmoid``) of
complex values, which Flax's gated recurrent cells compute on complex inputs."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

Z = np.array([[1 + 2j, 3 - 1j], [0.5j, 2 + 0j], [-1 + 1j, 0.25 - 2j]], np.complex64)
MASK = np.array([[True, False], [True, True], [False, True]])


def test_complex_variance_is_real_and_matches_numpy():
    var, std, masked, ddof = spmdc.jit(lambda z: (
        jnp.var(z, 0), jnp.std(z), jnp.var(z, 0, where=MASK), jnp.var(z, 1, ddof=1)))(Z)
    assert var.dtype == std.dtype == masked.dtype == np.float32
    np.testing.assert_allclose(var, np.var(Z, 0), rtol=1e-6)
    np.testing.assert_allclose(std, np.std(Z), rtol=1e-6)
    np.testing.assert_allclose(masked, np.var(Z, 0, where=MASK), rtol=1e-6)
    np.testing.assert_allclose(ddof, np.var(Z, 1, ddof=1), rtol=1e-6)


def test_complex_dtype_keeps_complex_and_real_dtype_is_refused():
    got = jnp.var(Z, 0, dtype=jnp.complex64)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, np.var(Z, 0).astype(np.complex64), rtol=1e-6)
    with pytest.raises(ValueError, match="no real dtype"):
        jnp.var(Z, dtype=jnp.float32)


def test_logistic_of_complex_values_and_its_gradient():
    want = 1 / (1 + np.exp(-Z))
    np.testing.assert_allclose(spmdc.nn.sigmoid(Z), want, rtol=1e-6)
    np.testing.assert_allclose(spmdc.jit(lax.logistic)(Z), want, rtol=1e-6)
    # JAX 0.10.2: jax.grad(lambda z: jax.nn.sigmoid(z).real.sum())(Z[:2])
    grad = spmdc.grad(lambda z: spmdc.nn.sigmoid(z).real.sum())(Z[:2])
    np.testing.assert_allclose(grad, np.array([[0.14088872 - 0.42071843j,
                                                0.02861294 + 0.03745594j],
                                               [0.26629987 + 0j, 0.10499363 + 0j]],
                                              np.complex64), rtol=2e-6, atol=1e-7)
