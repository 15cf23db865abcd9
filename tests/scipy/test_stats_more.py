"""spmdc.scipy.stats's truncnorm, gennorm, wrapcauchy, betabinom, multinomial,
poisson.entropy, mode, rankdata and sem: equal to JAX 0.10.2's values (recorded by
`tools/record.py stats_more` from tests/stats_more_cases.py), eagerly and under jit, close
to SciPy's, and JAX's exceptions for bad arguments."""
from __future__ import annotations

import numpy as np
import oracle
import pytest
import scipy.stats as sst
import stats_more_cases

import spmdc
import spmdc.numpy as jnp
import spmdc.scipy.stats as st

RECORDED = oracle.recorded_cases("stats_more_reference.json")
CASES = stats_more_cases.cases(spmdc)


def test_every_case_is_recorded():
    assert sorted(CASES) == sorted(RECORDED)


@pytest.mark.parametrize("name", oracle.one_per_method(CASES))  # every case: test-slow
def test_matches_jax(name):
    oracle.assert_matches_recorded(CASES[name](), RECORDED[name], name, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["truncnorm.logpdf.tail", "mode.axis0",
                                  "rankdata.average.axis1"])
def test_matches_jax_under_jit(name):
    got = spmdc.jit(CASES[name])()
    oracle.assert_matches_recorded(got, RECORDED[name], name, rtol=2e-5, atol=1e-6)


@pytest.mark.slow
def test_truncnorm_matches_scipy():
    x = np.linspace(-3.0, 7.0, 41)
    a, b, loc, scale = np.array([[-1.0], [0.5], [-35.0]]), np.array([[2.0], [4.0], [-30.0]]), \
        0.3, 1.7
    for fn in ("logpdf", "cdf", "sf"):
        got = getattr(st.truncnorm, fn)(x, a, b, loc, scale)
        want = getattr(sst.truncnorm, fn)(x, a, b, loc, scale)
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=2e-4, atol=1e-6,
                                   err_msg=fn)


def test_truncnorm_gradient_is_finite_and_right():
    # NumPyro's TruncatedNormal differentiates the log-density in loc and scale.
    def f(loc, scale):
        return st.truncnorm.logpdf(0.4, -1.0, 2.0, loc, scale)
    g = spmdc.grad(f, argnums=(0, 1))(0.1, 1.3)
    eps = 1e-3
    want = [(sst.truncnorm.logpdf(0.4, -1, 2, 0.1 + eps, 1.3)
             - sst.truncnorm.logpdf(0.4, -1, 2, 0.1 - eps, 1.3)) / (2 * eps),
            (sst.truncnorm.logpdf(0.4, -1, 2, 0.1, 1.3 + eps)
             - sst.truncnorm.logpdf(0.4, -1, 2, 0.1, 1.3 - eps)) / (2 * eps)]
    np.testing.assert_allclose([float(g[0]), float(g[1])], want, rtol=1e-3)


@pytest.mark.slow
def test_other_distributions_match_scipy():
    x = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(st.gennorm.cdf(x, 1.5), sst.gennorm.cdf(x, 1.5), rtol=1e-5,
                               atol=1e-7)
    theta = np.linspace(0.1, 6.0, 9)
    np.testing.assert_allclose(st.wrapcauchy.pdf(theta, 0.4), sst.wrapcauchy.pdf(theta, 0.4),
                               rtol=1e-5)
    k = np.arange(0, 9.0)
    np.testing.assert_allclose(st.betabinom.pmf(k, 8, 1.5, 2.5), sst.betabinom.pmf(k, 8, 1.5, 2.5),
                               rtol=1e-5, atol=1e-7)
    counts = np.array([1, 2, 3])
    np.testing.assert_allclose(st.multinomial.pmf(counts, 6, np.array([0.2, 0.3, 0.5])),
                               sst.multinomial.pmf(counts, 6, [0.2, 0.3, 0.5]), rtol=1e-5)
    mu = np.array([0.5, 3.0, 30.0, 300.0])
    np.testing.assert_allclose(st.poisson.entropy(mu), sst.poisson.entropy(mu), rtol=1e-4)


def test_sample_statistics_match_scipy():
    sample = stats_more_cases.SAMPLE
    result = st.mode(sample, axis=1)
    want = sst.mode(sample, axis=1)
    np.testing.assert_array_equal(result.mode, want.mode)
    np.testing.assert_array_equal(result.count, want.count)
    assert isinstance(result, tuple) and result._fields == ("mode", "count")
    for method in ("average", "min", "max", "dense", "ordinal"):
        np.testing.assert_array_equal(st.rankdata(stats_more_cases.TIES, method),
                                      sst.rankdata(stats_more_cases.TIES, method))
    np.testing.assert_allclose(st.sem(stats_more_cases.NORMAL, axis=1),
                               sst.sem(stats_more_cases.NORMAL, axis=1), rtol=1e-5)


def test_bad_arguments_raise_jax_exceptions():
    with pytest.raises(ValueError, match="integer type"):
        st.multinomial.logpmf(np.array([1.0, 2.0]), 3, np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="unknown method 'mean'"):
        st.rankdata(jnp.arange(3.0), "mean")
    with pytest.raises(ValueError, match="nan_policy"):
        st.mode(jnp.arange(3.0), nan_policy="skip")
    with pytest.raises(NotImplementedError, match="nan_policy='omit'"):
        st.rankdata(jnp.arange(3.0), nan_policy="omit")
    with pytest.raises(ValueError, match="is not supported"):
        st.sem(jnp.arange(3.0), nan_policy="raise")
