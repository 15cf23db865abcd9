"""The incomplete gamma and beta functions and their relatives (Note [incomplete gamma and
beta] in spmdc/lax/special.py): lax.igamma, igammac, igamma_grad_a,
random_gamma_grad, betainc and zeta, and the same functions under their scipy.special
names (gammainc, gammaincc, betainc), against SciPy; derivatives against finite
differences (float64) and the densities; JAX's edge values. The elementwise wrappers
(lax.lgamma, digamma, erf_inv) are tested in test_elementwise.py, the primitives
one equation at a time in tests/compiler/primitives/, and scipy.special's table against
JAX's recorded values in tests/scipy/test_special.py."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss
import scipy.stats as st

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.scipy.special import betainc, gammainc, gammaincc

# --- lax's names --------------------------------------------------------------------------

def test_incomplete_gamma_and_beta_names():
    a, x = np.float32(2.0), np.float32(1.5)
    np.testing.assert_allclose(lax.igamma(a, x), ss.gammainc(2.0, 1.5), rtol=1e-6)
    np.testing.assert_allclose(lax.igammac(a, x), ss.gammaincc(2.0, 1.5), rtol=1e-6)
    np.testing.assert_allclose(lax.betainc(a, np.float32(3), np.float32(0.4)),
                               ss.betainc(2.0, 3.0, 0.4), rtol=1e-6)
    eps = 1e-3     # dP/da by central differences (in float64)
    want = (ss.gammainc(2.0 + eps, 1.5) - ss.gammainc(2.0 - eps, 1.5)) / (2 * eps)
    np.testing.assert_allclose(lax.igamma_grad_a(a, x), want, rtol=1e-4)
    # a Gamma(a) draw held at its quantile: dx/da = -(dP/da) / p(x)
    density = x ** (a - 1) * np.exp(-x) / ss.gamma(a)
    np.testing.assert_allclose(lax.random_gamma_grad(a, x), -want / density, rtol=1e-4)


A_FEW = np.array([0.5, 1.0, 3.0, 10.0, 2.0], np.float32)
X_FEW = np.array([0.3, 2.0, 2.5, 12.0, 0.0], np.float32)


def test_igamma_igammac_betainc_zeta_match_scipy():
    np.testing.assert_allclose(lax.igamma(A_FEW, X_FEW), ss.gammainc(A_FEW, X_FEW), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(lax.igammac(A_FEW, X_FEW), ss.gammaincc(A_FEW, X_FEW), rtol=1e-5,
                               atol=1e-6)
    x = np.array([0.0, 0.2, 0.7, 1.0], np.float32)
    np.testing.assert_allclose(lax.betainc(np.float32(2), np.float32(3), x),
                               ss.betainc(2.0, 3.0, x), rtol=1e-5, atol=1e-6)
    s, q = np.array([1.5, 2.0, 3.0, 7.5], np.float32), np.array([0.5, 1.0, 2.5, 10.0], np.float32)
    np.testing.assert_allclose(lax.zeta(s, q), ss.zeta(s, q), rtol=1e-5)
    np.testing.assert_allclose(spmdc.vmap(lax.zeta)(s, q), ss.zeta(s, q), rtol=1e-5)
    with pytest.raises(TypeError, match="one floating dtype"):
        lax.igamma(np.ones(2, np.float32), np.ones(2, np.int32))
    with pytest.raises(TypeError, match="one shape"):
        lax.igamma(np.ones(2, np.float32), np.ones(3, np.float32))
    with pytest.raises(NotImplementedError, match="zeta: differentiation"):
        spmdc.grad(lambda q: lax.zeta(np.float32(2), q))(np.float32(1.5))


def test_igamma_derivatives():
    a, x = A_FEW[:4].astype(np.float64), X_FEW[:4].astype(np.float64)
    h = 1e-6
    da = (ss.gammainc(a + h, x) - ss.gammainc(a - h, x)) / (2 * h)
    np.testing.assert_allclose(lax.igamma_grad_a(A_FEW[:4], X_FEW[:4]), da, rtol=1e-4)
    np.testing.assert_allclose(spmdc.vmap(spmdc.grad(lax.igamma))(A_FEW[:4], X_FEW[:4]), da,
                               rtol=1e-4)
    dx = np.exp((a - 1) * np.log(x) - x - ss.gammaln(a))
    np.testing.assert_allclose(spmdc.vmap(spmdc.grad(lax.igammac, 1))(A_FEW[:4], X_FEW[:4]), -dx,
                               rtol=1e-4)
    # at a <= 0 the derivative is NaN, as in JAX
    assert np.isnan(lax.igamma_grad_a(np.float32(0), np.float32(1)))


def test_random_gamma_grad_is_the_sample_derivative():
    a, x = A_FEW[:4], X_FEW[:4]
    a64 = a.astype(np.float64)
    u = ss.gammainc(a64, x.astype(np.float64))
    h = 1e-6
    want = (ss.gammaincinv(a64 + h, u) - ss.gammaincinv(a64 - h, u)) / (2 * h)
    np.testing.assert_allclose(lax.random_gamma_grad(a, x), want, rtol=1e-4)
    assert float(lax.random_gamma_grad(np.float32(1), np.float32(0))) == 0.0
    half = lax.random_gamma_grad(a.astype(jnp.bfloat16), x.astype(jnp.bfloat16))
    assert half.dtype == jnp.bfloat16


# --- the scipy.special names -------------------------------------------------------------

RNG = np.random.default_rng(0)


A = RNG.uniform(0.05, 40, 300)


X = RNG.uniform(0, 60, 300)


B = RNG.uniform(0.05, 30, 300)


Y = RNG.uniform(0, 1, 300)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 3e-5), (np.float64, 1e-12)])
def test_values_against_scipy(dtype, tol):
    with spmdc.enable_x64(dtype == np.float64):
        a, x, b, y = (v.astype(dtype) for v in (A, X, B, Y))
        np.testing.assert_allclose(gammainc(a, x), ss.gammainc(a, x), atol=tol, rtol=tol)
        np.testing.assert_allclose(gammaincc(a, x), ss.gammaincc(a, x), atol=tol, rtol=tol)
        np.testing.assert_allclose(betainc(a, b, y), ss.betainc(a, b, y), atol=tol * 10,
                                   rtol=tol * 10)
        assert np.asarray(gammainc(a, x)).dtype == dtype


def test_edges_as_jax():
    with spmdc.enable_x64():
        got = [float(gammainc(a, x)) for a, x in [(0., 1.), (1., 0.), (-1., 1.), (2., -1.),
                                                   (2., np.inf)]]
        np.testing.assert_array_equal(got, [1.0, 0.0, np.nan, np.nan, 1.0])
        got = [float(betainc(a, b, x)) for a, b, x in [(0., 1., .5), (2., 3., 0.),
                                                        (2., 3., 1.), (-1., 3., .5),
                                                        (2., 3., 1.5)]]
        np.testing.assert_array_equal(got, [1.0, 0.0, 1.0, np.nan, np.nan])


def _fd(f, v, h=1e-6):
    return (f(v + h) - f(v - h)) / (2 * h)


@pytest.mark.parametrize("a,x", [(2.5, 1.3), (2.5, 4.3), (0.7, 0.2), (12.0, 15.0),
                                 (30.0, 25.0), (2.0, 3.7324), (3.0, 7.5)])
def test_gradients_in_a_and_x(a, x):
    # (an integer a ends the continued fraction, but not its derivative in a: regression)
    with spmdc.enable_x64():
        for f, g in ((gammainc, ss.gammainc), (gammaincc, ss.gammaincc)):
            da, dx = spmdc.grad(f, argnums=(0, 1))(a, x)
            np.testing.assert_allclose(da, _fd(lambda v: g(v, x), a), rtol=1e-6, atol=1e-9)
            np.testing.assert_allclose(dx, _fd(lambda v: g(a, v), x), rtol=1e-6, atol=1e-9)
        # the a-derivative loop runs only when asked: jvp in x alone agrees too
        _, t = spmdc.jvp(lambda v: gammainc(a, v), (x,), (1.0,))
        np.testing.assert_allclose(t, st.gamma.pdf(x, a), rtol=1e-10)


def test_betainc_derivative_in_x_only():
    with spmdc.enable_x64():
        d = spmdc.grad(betainc, argnums=2)(2.5, 1.3, 0.4)
        np.testing.assert_allclose(d, st.beta.pdf(0.4, 2.5, 1.3), rtol=1e-10)
        with pytest.raises(ValueError, match="with respect to a and b is not supported"):
            spmdc.grad(betainc, argnums=0)(2.5, 1.3, 0.4)
        assert float(betainc(2.5, 1.3, 0.4)) == pytest.approx(ss.betainc(2.5, 1.3, 0.4))


def test_under_jit_and_vmap():
    a, x = A[:5].astype(np.float32), X[:5].astype(np.float32)
    np.testing.assert_allclose(spmdc.jit(spmdc.vmap(gammainc))(a, x), ss.gammainc(a, x),
                               rtol=3e-5, atol=3e-6)
    g = spmdc.vmap(spmdc.grad(gammainc, argnums=1))(a, x)
    np.testing.assert_allclose(g, st.gamma.pdf(x, a), rtol=1e-4, atol=1e-6)
