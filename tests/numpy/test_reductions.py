"""spmdc/numpy/reductions.py against NumPy: the nan* reductions, count_nonzero and
cumulative_sum/prod. Reductions with where= and accumulation
dtypes against JAX's recorded values are in tests/e2e/test_reference_cases.py."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

X = np.array([[1.0, np.nan, -2.0, 4.0], [np.nan, np.nan, np.nan, np.nan],
              [0.5, 3.0, np.nan, -1.0]], np.float32)


@pytest.mark.parametrize("name", ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar",
                                  "nanstd"])
@pytest.mark.parametrize("axis", [None, 1, -2, (0, 1)])
def test_nan_reductions(name, axis):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = getattr(np, name)(X, axis=axis)
    got = spmdc.jit(lambda v: getattr(jnp, name)(v, axis))(X)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got.dtype == np.float32


def test_nan_reductions_options():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(jnp.nanvar(X, 1, ddof=1, keepdims=True),
                                   np.nanvar(X, 1, ddof=1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(jnp.nancumsum(X, 1), np.nancumsum(X, 1))
    np.testing.assert_allclose(jnp.nancumprod(X), np.nancumprod(X))
    np.testing.assert_array_equal(jnp.nanargmax(X, 1), [3, -1, 1])   # -1: all NaN (JAX)
    np.testing.assert_array_equal(jnp.nanargmin(X[[0, 2]], 1), np.nanargmin(X[[0, 2]], 1))
    assert jnp.nansum(np.arange(4)) == 6 and jnp.nanmax(np.arange(4)) == 3
    g = spmdc.grad(lambda v: jnp.nanmean(v))(X[0])
    np.testing.assert_allclose(g, [1 / 3, 0, 1 / 3, 1 / 3], rtol=1e-6)


def test_average_ptp_count_cumulative():
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    w = np.array([1.0, 2.0, 0.5, 0.0], np.float32)
    np.testing.assert_allclose(jnp.average(a, 1, w), np.average(a, 1, w), rtol=1e-6)
    got, scale = jnp.average(a, 1, w, returned=True)
    np.testing.assert_allclose(scale, np.full(3, w.sum()))
    np.testing.assert_allclose(jnp.average(a, weights=a), np.average(a, weights=a), rtol=1e-6)
    np.testing.assert_allclose(jnp.average(a, (0, 1)), a.mean())
    np.testing.assert_array_equal(jnp.ptp(a, 1), np.ptp(a, 1))
    np.testing.assert_array_equal(jnp.count_nonzero(X != 1, 0), np.count_nonzero(X != 1, 0))
    np.testing.assert_array_equal(jnp.cumulative_sum(np.arange(4), include_initial=True),
                                  [0, 0, 1, 3, 6])
    np.testing.assert_array_equal(jnp.cumulative_prod(a, axis=0), np.cumprod(a, 0))
    with pytest.raises(ValueError, match="axis must be given"):
        jnp.cumulative_sum(a)
    assert jnp.atleast_3d(np.ones(3)).shape == (1, 3, 1)
    assert jnp.atleast_3d(np.ones((2, 3))).shape == (2, 3, 1)


def test_eager_mean_divides_as_jaxs_jitted_mean():
    # JAX's jnp.mean is one XLA program even outside jit, where the division by the count
    # is folded into a multiplication (Note [eager mean is one program]); recorded from
    # JAX 0.10.2 on CPU. Divided op by op, the first two would be 0x40400000.
    def bits(x):
        return [hex(v) for v in np.asarray(x).ravel().view(np.uint32)]
    assert bits(jnp.mean(np.arange(7))) == ["0x40400001"]
    assert bits(jnp.mean(np.arange(7, dtype=np.float32))) == ["0x40400001"]
    x = np.linspace(0.5, 9.0, 300, dtype=np.float32)
    assert bits(jnp.mean(x)) == ["0x4097ffff"]
    assert bits(jnp.mean(x.reshape(3, 100), axis=1, keepdims=True)) == [
        "0x3ff41ed2", "0x4097fffe", "0x40f2f84a"]
    assert jnp.mean(x.reshape(3, 100), axis=1, keepdims=True).shape == (3, 1)
    assert jnp.mean(x.astype(np.float16)).dtype == np.float16
