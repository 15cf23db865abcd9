"""spmdc.scipy.special.bessel_jn (Note [Miller's recurrence] in
spmdc/scipy/special_bessel_jn.py): values against SciPy's jv in float32 and float64 (where
JAX 0.10.2's float32 recurrence overflows to NaN), JAX's float64 values, shapes, dtypes,
derivatives and bad arguments."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import spmdc
import spmdc.scipy.special as sp

Z = np.array([0.0, 0.5, 3.0, 20.0, -2.0, 1e-3, 1e-30, 7.7, -11.3, 25.0])


@pytest.mark.parametrize("dtype, atol", [(np.float32, 3e-6), (np.float64, 5e-13)])
def test_values_match_scipy(dtype, atol):
    with spmdc.enable_x64(dtype == np.float64):
        got = sp.bessel_jn(Z.astype(dtype), v=6)
        assert got.dtype == dtype and got.shape == (7, Z.size)
        want = np.array([ss.jv(k, Z) for k in range(7)])
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=0, atol=atol)


def test_float64_values_match_jax():
    # JAX 0.10.2's bessel_jn(z, v=2) in float64 (its z = 0 value is NaN; ours is SciPy's).
    z = np.array([0.5, 3.0, 20.0, -2.0, 1e-3])
    jax_values = [[0.9384698072408129, -0.26005195490193345, 0.16702466434058322,
                   0.22389077914123573, 0.9999997500000155],
                  [0.24226845767487387, 0.3390589585259364, 0.06683312417585008,
                   -0.5767248077568735, 0.0004999999375000025],
                  [0.03060402345868264, 0.4860912605858911, -0.1603413519229982,
                   0.35283402861563773, 1.2499998958333365e-07]]
    with spmdc.enable_x64():
        np.testing.assert_allclose(np.asarray(sp.bessel_jn(z, v=2)), jax_values, rtol=1e-12)


def test_shapes_and_dtypes():
    assert sp.bessel_jn(2.0, v=0).shape == (1,)
    assert sp.bessel_jn(np.ones((2, 3), np.float32), v=2).shape == (3, 2, 3)
    assert sp.bessel_jn(np.array([1, 2]), v=1).dtype == np.float32
    got = spmdc.jit(lambda z: sp.bessel_jn(z, v=3))(np.float32(4.0))
    np.testing.assert_allclose(np.asarray(got), [ss.jv(k, 4.0) for k in range(4)], atol=2e-6)


def test_derivative_is_scipys():
    with spmdc.enable_x64():
        g = spmdc.grad(lambda z: sp.bessel_jn(z, v=1)[1])(1.5)
        np.testing.assert_allclose(float(g), ss.jvp(1, 1.5), rtol=1e-10)
        g = spmdc.vmap(spmdc.grad(lambda z: sp.bessel_jn(z, v=3)[3]))(np.array([0.7, 9.0]))
        np.testing.assert_allclose(np.asarray(g), ss.jvp(3, [0.7, 9.0]), rtol=1e-9)


def test_bad_arguments():
    with pytest.raises(TypeError, match="v and n_iter must be Python ints"):
        sp.bessel_jn(1.0, v=1.5)
    with pytest.raises(TypeError, match="z must be real"):
        sp.bessel_jn(1j, v=1)
    with pytest.raises(ValueError, match="0 <= v <= n_iter"):
        sp.bessel_jn(1.0, v=60)
