"""spmdc/numpy/statistics.py against NumPy:
cov, corrcoef, quantile/percentile/median and their nan forms, and histogram's counts."""
import warnings

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

F = np.array([[1.0, 2.0, 4.0, 7.0], [2.0, 3.0, 5.0, 9.0], [0.0, 1.0, 1.0, 4.0]], np.float32)
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


Y = np.random.RandomState(0).randn(3, 5, 4).astype(np.float32)


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_quantile(method):
    q = np.array([0.1, 0.5, 0.83], np.float32)
    np.testing.assert_allclose(jnp.quantile(Y, q, axis=(0, 2), method=method),
                               np.quantile(Y, q, axis=(0, 2), method=method), rtol=1e-5)
    np.testing.assert_allclose(jnp.quantile(Y, 0.25, axis=-1, method=method, keepdims=True),
                               np.quantile(Y, 0.25, axis=-1, method=method, keepdims=True),
                               rtol=1e-5)


def test_median_percentile():
    np.testing.assert_allclose(jnp.median(Y, 1, keepdims=True), np.median(Y, 1, keepdims=True),
                               rtol=1e-6)
    np.testing.assert_allclose(jnp.percentile(Y, 30), np.percentile(Y, 30), rtol=1e-6)
    assert np.isnan(jnp.median(np.array([1.0, np.nan])))
    assert jnp.median(np.arange(5)).dtype == np.float32
    g = spmdc.grad(lambda t: jnp.median(t))(np.array([3.0, 1.0, 2.0, 5.0], np.float32))
    np.testing.assert_allclose(g, [0.5, 0, 0.5, 0])


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "nearest", "midpoint"])
def test_nanquantile(method):
    y = Y.copy()
    y[0, :3, 1] = np.nan
    y[1, :, 2] = np.nan                                  # a slice of NaNs only
    q = np.array([0.0, 0.3, 0.5, 1.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")            # NumPy warns about the all-NaN slice
        want = np.nanquantile(y, q, axis=1, method=method)
        want_median = np.nanmedian(y, (0, 2))
    np.testing.assert_allclose(spmdc.jit(lambda t: jnp.nanquantile(t, q, axis=1,
                                                                   method=method))(y),
                               want, rtol=1e-5)
    np.testing.assert_allclose(jnp.nanmedian(y, (0, 2)), want_median, rtol=1e-6)
    np.testing.assert_allclose(jnp.nanpercentile(y[0], 40, 0, keepdims=True),
                               np.nanpercentile(y[0], 40, 0, keepdims=True), rtol=1e-6)


def test_histogram_counts_are_floats_as_in_jax():
    # JAX counts in the float type of the data (and weights) promoted; spmdc's were int32.
    x = np.arange(15, dtype=np.int32)
    counts, edges = jnp.histogram(x, bins=4)
    assert counts.dtype == np.float32 and edges.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(counts), np.histogram(x, bins=4)[0])
    counts, _ = jnp.histogram(x.astype(np.float32), bins=4, weights=x)
    assert counts.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(counts), np.histogram(x, bins=4, weights=x)[0])
    with pytest.raises(ValueError, match="same shape"):
        jnp.histogram(x, bins=4, weights=x[:3])
