"""spmdc.scipy.stats.gaussian_kde against scipy.stats.gaussian_kde (densities, bandwidths,
weights, covariance, the integrals), resampling equal to JAX 0.10.2's draws (recorded),
the estimator as a pytree through jit, vmap and grad, and JAX's errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as ss

import spmdc
import spmdc.numpy as jnp
from spmdc.scipy.stats import gaussian_kde
from spmdc.tree_util import tree_leaves

RNG = np.random.default_rng(3)
DATA = RNG.normal(size=(2, 30)).astype(np.float32)
WEIGHTS = RNG.uniform(size=30).astype(np.float32)
POINTS = RNG.normal(size=(2, 5)).astype(np.float32)
LINE = DATA[0]


def close(got, want, tol=2e-5):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * 1e-2)


@pytest.mark.parametrize("bw_method", [None, "scott", "silverman", 0.4,
                                       lambda kde: 0.5 * kde.neff ** -0.2])
@pytest.mark.parametrize("weighted", [False, True])
def test_densities_and_bandwidths_are_scipy_s(bw_method, weighted):
    weights = WEIGHTS if weighted else None
    got = gaussian_kde(DATA, bw_method=bw_method, weights=weights)
    want = ss.gaussian_kde(DATA, bw_method=bw_method, weights=weights)
    assert (got.d, got.n) == (2, 30)
    close(got.neff, want.neff)
    close(got.covariance, want.covariance)
    close(got.inv_cov, want.inv_cov, tol=1e-4)
    close(got.evaluate(POINTS), want.evaluate(POINTS))
    close(got(POINTS), want(POINTS))
    close(got.pdf(POINTS), want.pdf(POINTS))
    close(got.logpdf(POINTS), want.logpdf(POINTS))


def test_one_dimensional_data_and_point_shapes():
    got, want = gaussian_kde(LINE), ss.gaussian_kde(LINE)
    close(got.evaluate(np.linspace(-3, 3, 7)), want.evaluate(np.linspace(-3, 3, 7)))
    close(got.evaluate(0.5), want.evaluate(0.5))
    two = gaussian_kde(DATA)
    close(two.evaluate(POINTS[:, 0]), ss.gaussian_kde(DATA).evaluate(POINTS[:, 0]))


def test_logpdf_stays_finite_in_the_tails():
    far = np.array([40.0, -60.0], np.float32)
    got = gaussian_kde(LINE).logpdf(far)
    assert np.all(np.isfinite(got))
    close(got, ss.gaussian_kde(LINE.astype(np.float64)).logpdf(far), tol=1e-4)


def test_integrals_are_scipy_s():
    got, want = gaussian_kde(DATA, weights=WEIGHTS), ss.gaussian_kde(DATA, weights=WEIGHTS)
    mean, cov = np.array([0.3, -0.2]), np.array([[1.0, 0.2], [0.2, 0.5]])
    close(got.integrate_gaussian(mean, cov), want.integrate_gaussian(mean, cov))
    line, other = gaussian_kde(LINE, "silverman"), gaussian_kde(DATA[1, :20], 0.3)
    line_s, other_s = ss.gaussian_kde(LINE, "silverman"), ss.gaussian_kde(DATA[1, :20], 0.3)
    close(line.integrate_box_1d(-0.5, 1.0), line_s.integrate_box_1d(-0.5, 1.0))
    close(line.integrate_kde(other), line_s.integrate_kde(other_s))
    close(other.integrate_kde(line), line_s.integrate_kde(other_s))
    close(got.integrate_kde(gaussian_kde(POINTS)),
          want.integrate_kde(ss.gaussian_kde(POINTS)))


def test_resample_draws_jax_s_values():
    got = gaussian_kde(DATA, weights=WEIGHTS).resample(spmdc.random.PRNGKey(0), (4,))
    # JAX 0.10.2, same estimator and key
    close(got, [[-2.292527437210083, -0.36008220911026, -1.043302297592163,
                 1.1242644786834717],
                [-0.33007508516311646, 0.37194183468818665, 0.0011118650436401367,
                 0.4874500632286072]], tol=1e-6)
    close(gaussian_kde(LINE, "silverman").resample(spmdc.random.PRNGKey(1)),
          [-1.0162498950958252], tol=1e-6)
    batch = gaussian_kde(DATA).resample(spmdc.random.PRNGKey(2), (3, 1000))
    assert batch.shape == (2, 3, 1000)
    draws = np.asarray(batch).reshape(2, -1)
    # a mixture's covariance: the data's (population) covariance plus the kernel's
    want = np.cov(DATA, bias=True) + np.asarray(gaussian_kde(DATA).covariance)
    np.testing.assert_allclose(np.cov(draws), want, atol=0.1)


def test_the_estimator_is_a_pytree():
    kde = gaussian_kde(DATA, weights=WEIGHTS)
    leaves = tree_leaves(kde)
    assert [np.shape(x) for x in leaves] == [(), (2, 30), (30,), (2, 2), (2, 2)]
    want = ss.gaussian_kde(DATA, weights=WEIGHTS).logpdf(POINTS)
    close(spmdc.jit(lambda k, x: k.logpdf(x))(kde, POINTS), want)
    built = spmdc.jit(lambda data: gaussian_kde(data).covariance)(DATA)
    close(built, ss.gaussian_kde(DATA).covariance)
    per_point = spmdc.vmap(lambda x: kde.pdf(x[:, None])[0], in_axes=1)(POINTS)
    close(per_point, ss.gaussian_kde(DATA, weights=WEIGHTS).pdf(POINTS))


def test_grad_of_logpdf_in_the_points():
    kde = gaussian_kde(DATA)
    grad = spmdc.grad(lambda x: kde.logpdf(x).sum())(POINTS)
    step = 1e-3
    want = np.zeros_like(POINTS)
    scipy_kde = ss.gaussian_kde(DATA.astype(np.float64))
    for i in np.ndindex(POINTS.shape):
        shift = np.zeros(POINTS.shape)
        shift[i] = step
        want[i] = (scipy_kde.logpdf(POINTS + shift).sum()
                   - scipy_kde.logpdf(POINTS - shift).sum()) / (2 * step)
    close(grad, want, tol=1e-3)
    d_data = spmdc.grad(lambda data: gaussian_kde(data).logpdf(POINTS).sum())(DATA)
    assert d_data.shape == DATA.shape and np.all(np.isfinite(d_data))


def test_errors_are_jax_s():
    with pytest.raises(ValueError, match="should have multiple elements"):
        gaussian_kde(np.ones(1))
    with pytest.raises(NotImplementedError, match="complex data"):
        gaussian_kde(DATA + 1j)
    with pytest.raises(ValueError, match="should be of length n=30"):
        gaussian_kde(DATA, weights=WEIGHTS[:4])
    with pytest.raises(ValueError, match="should be one-dimensional"):
        gaussian_kde(DATA, weights=WEIGHTS.reshape(5, 6))
    with pytest.raises(ValueError, match="`bw_method` should be"):
        gaussian_kde(DATA, bw_method="wide")
    kde = gaussian_kde(DATA)
    with pytest.raises(ValueError, match="points have dimension 3, dataset has dimension 2"):
        kde.evaluate(np.ones((3, 4)))
    with pytest.raises(ValueError, match="only handles 1D pdfs"):
        kde.integrate_box_1d(0.0, 1.0)
    with pytest.raises(ValueError, match="must be scalars"):
        gaussian_kde(LINE).integrate_box_1d(np.zeros(2), 1.0)
    with pytest.raises(ValueError, match="mean does not have dimension 2"):
        kde.integrate_gaussian(np.zeros(3), np.eye(2))
    with pytest.raises(ValueError, match="not the same dimensionality"):
        kde.integrate_kde(gaussian_kde(LINE))
    assert not hasattr(kde, "integrate_box") and not hasattr(kde, "set_bandwidth")
    assert jnp.isscalar(kde.neff)
