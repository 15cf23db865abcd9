"""spmdc.scipy.special: values equal to JAX 0.10.2's (recorded by
`tools/record.py libs`) and close to SciPy's, gradients against JAX's and against
finite differences, and stability at extreme arguments. The incomplete gamma and beta
functions are tested in tests/lax/test_special.py, the distributions in test_stats.py."""
from __future__ import annotations

import functools

import numpy as np
import oracle
import pytest
import scipy.special as ss
from libs_cases import DIFFERENTIABLE, PAIR_A, PAIR_B, POSITIVE, SPECIAL_BINARY, SPECIAL_UNARY

import spmdc
import spmdc.numpy as jnp
import spmdc.scipy.special as sp

REF = oracle.recorded("libs_reference.npz")
close = functools.partial(oracle.assert_close, rtol=4e-6, atol=0.0)


@pytest.mark.parametrize("name", sorted(SPECIAL_UNARY))
def test_unary_values_match_jax_and_scipy(name):
    x = SPECIAL_UNARY[name]
    got = getattr(sp, name)(x)
    close(got, REF[f"special.{name}"], atol=1e-37)
    with np.errstate(all="ignore"):
        want = getattr(ss, name)(x.astype(np.float64))
    # JAX's float32 log_ndtr switches to -ndtr(-x) above 5, good to ~1e-3 relative there.
    rtol = 1e-3 if name == "log_ndtr" else 2e-5
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=1e-6)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_match_jax(name):
    f = getattr(sp, name)
    x, want = SPECIAL_UNARY[name], REF[f"special.{name}.grad"]
    # log_ndtr's series is differentiated here; JAX's rule exp(logpdf - ans) loses ~1e-5 at
    # -40 (the Mills ratio there is 40.02497; JAX gives 40.0254).
    rtol = 2e-5 if name == "log_ndtr" else 1e-5
    close(spmdc.vmap(spmdc.grad(f))(x), want, rtol=rtol, atol=1e-30)


@pytest.mark.parametrize("name", SPECIAL_BINARY)
def test_binary_values_match_jax_and_scipy(name):
    got = getattr(sp, name)(PAIR_A, PAIR_B)
    close(got, REF[f"special.{name}"], rtol=1e-6)
    with np.errstate(all="ignore"):
        want = getattr(ss, name)(PAIR_A.astype(np.float64), PAIR_B.astype(np.float64))
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-5)


def test_multigammaln_polygamma_and_logsumexp_match_jax():
    close(sp.multigammaln(POSITIVE[3:] + 2, 3), REF["special.multigammaln"])
    close(sp.polygamma(np.arange(3)[:, None], POSITIVE), REF["special.polygamma"], rtol=1e-5)
    close(sp.logsumexp(PAIR_A, b=PAIR_B - 2.), REF["special.logsumexp.b"])
    lse, sign = sp.logsumexp(PAIR_A, b=PAIR_B - 2., return_sign=True)
    close(np.stack([np.asarray(lse), np.asarray(sign)]), REF["special.logsumexp.sign"])


def test_logsumexp_b_negative_sum_is_nan_and_weights_zero_drop_out():
    assert np.isnan(float(sp.logsumexp(jnp.array([0., 1.]), b=jnp.array([1., -2.]))))
    out = sp.logsumexp(jnp.array([1000., -np.inf, 3.]), b=jnp.array([0., 1., 1.]))
    assert float(out) == pytest.approx(3.0)
    x = np.array([[1., 2., 3.], [4., 5., 6.]], np.float32)
    close(sp.logsumexp(x, axis=(0, 1), keepdims=True),
          np.asarray(ss.logsumexp(x, axis=(0, 1), keepdims=True), np.float32))
    g = spmdc.grad(lambda v: sp.logsumexp(v, b=jnp.array([2., 3.])))(jnp.array([1e30, 1e30]))
    np.testing.assert_allclose(g, [0.4, 0.6], rtol=1e-6)


def test_extreme_arguments_stay_finite_and_accurate():
    x = np.array([-1e4, -100., 100., 1e4], np.float32)
    np.testing.assert_allclose(sp.log_ndtr(x), ss.log_ndtr(x.astype(np.float64)), rtol=1e-5)
    g = spmdc.vmap(spmdc.grad(sp.log_ndtr))(x)
    assert np.isfinite(np.asarray(g)).all()
    np.testing.assert_allclose(g[:2], -x[:2].astype(np.float64), rtol=1e-3)   # ~ -x far left
    assert np.asarray(sp.i0e(np.float32(1e30))) > 0
    assert float(sp.xlogy(0., 0.)) == 0.0 and float(sp.xlog1py(0., -1.)) == 0.0
    assert np.isnan(float(sp.xlogy(0., np.nan)))
    assert float(sp.entr(0.)) == 0.0 and float(sp.entr(-1.)) == -np.inf
    assert float(sp.ndtri(0.)) == -np.inf and float(sp.ndtri(1.)) == np.inf
    np.testing.assert_allclose(sp.betaln(1e4, 1e4 + 7.), ss.betaln(1e4, 1e4 + 7.), rtol=1e-5)


def _elementwise_derivative(f, x, eps):
    """Central differences of an elementwise function, all elements at once (float64)."""
    x = np.asarray(x, np.float64)
    return (f(x + eps) - f(x - eps)) / (2 * eps)


@pytest.mark.parametrize("name,x", [
    ("xlogy", np.array([0.5, 2., 3.])), ("xlog1py", np.array([0.5, 2., 3.])),
    ("entr", np.array([0.2, 0.5, 3.])), ("logit", np.array([0.1, 0.5, 0.8])),
    ("i0", np.array([-2., 0.5, 3.])), ("i1", np.array([-2., 0.5, 3.])),
    ("betaln", np.array([0.7, 3., 12.])), ("gamma", np.array([-1.5, 0.7, 3.]))])
def test_gradients_against_finite_differences(name, x):
    f = getattr(sp, name)
    g = (lambda v: f(v, 1.7)) if name in ("xlogy", "xlog1py", "betaln") else f
    got = spmdc.vmap(spmdc.grad(g))(x.astype(np.float32))
    ref = getattr(ss, name)
    r = (lambda v: ref(v, 1.7)) if name in ("xlogy", "xlog1py", "betaln") else ref
    np.testing.assert_allclose(got, _elementwise_derivative(r, x, 1e-6), rtol=2e-4, atol=1e-5)


def test_custom_derivatives_are_jax_rules():
    assert float(spmdc.grad(lambda v: sp.xlogy(v, 2.))(0.)) == pytest.approx(np.log(2.))
    assert float(spmdc.grad(lambda y: sp.xlogy(0., y))(2.)) == 0.0
    assert float(spmdc.grad(lambda v: sp.xlogy(v, 0.))(0.)) == -np.inf
    assert float(spmdc.grad(lambda y: sp.xlog1py(3., y))(1.)) == pytest.approx(1.5)
    assert float(spmdc.grad(sp.logit)(0.)) == np.inf
    g = spmdc.vmap(spmdc.grad(lambda v: sp.xlogy(v, jnp.array([1., 2., 3.]))[1]))(
        jnp.array([0., 1.]))
    np.testing.assert_allclose(g, [np.log(2.), np.log(2.)], rtol=1e-6)


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="integer type"):
        sp.polygamma(1.5, 2.)
    with pytest.raises(TypeError, match="series_order"):
        sp.log_ndtr(1., series_order=2.5)
    with pytest.raises(ValueError, match="series_order"):
        sp.log_ndtr(1., series_order=31)
    with pytest.raises(TypeError, match="not supported"):
        sp.ndtr(jnp.array([1, 2]))
    with pytest.raises(TypeError, match="d must be a concrete integer"):
        sp.multigammaln(3., 2.5)
