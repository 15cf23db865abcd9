"""spmdc/numpy/searching.py against NumPy: searchsorted, digitize, nonzero family (with
size= under jit), lexsort, bincount, interp, isin (histogram's edges with them)."""

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

M = np.array([[0, 1, 0], [2, 0, 3]], np.int32)
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted(side):
    a = np.array([1.0, 2.0, 2.0, 3.0, np.nan], np.float32)
    v = np.array([[0.0, 2.0], [2.5, np.nan]], np.float32)
    np.testing.assert_array_equal(spmdc.jit(lambda x: jnp.searchsorted(a, x, side))(v),
                                  np.searchsorted(a, v, side))
    order = np.array([1, 2, 0])
    np.testing.assert_array_equal(jnp.searchsorted(np.array([3, 1, 2]), 2, side, order),
                                  np.searchsorted(np.array([3, 1, 2]), 2, side, order))


@pytest.mark.parametrize("right", [False, True])
def test_digitize(right):
    bins = np.array([0.0, 1.0, 2.5, 4.0], np.float32)
    x = np.array([-1, 0, 1, 3, 4, 5], np.float32)
    np.testing.assert_array_equal(jnp.digitize(x, bins, right), np.digitize(x, bins, right))
    np.testing.assert_array_equal(jnp.digitize(x, bins[::-1], right),
                                  np.digitize(x, bins[::-1], right))


def test_nonzero_family():
    for got, want in zip(jnp.nonzero(M), np.nonzero(M), strict=True):
        np.testing.assert_array_equal(got, want)
    rows, cols = spmdc.jit(lambda t: jnp.nonzero(t, size=5, fill_value=-1))(M)
    np.testing.assert_array_equal(rows, [0, 1, 1, -1, -1])
    np.testing.assert_array_equal(cols, [1, 0, 2, -1, -1])
    rows, _ = spmdc.jit(lambda t: jnp.nonzero(t, size=2))(M)
    np.testing.assert_array_equal(rows, [0, 1])
    np.testing.assert_array_equal(jnp.argwhere(M), np.argwhere(M))
    np.testing.assert_array_equal(jnp.flatnonzero(M), np.flatnonzero(M))
    np.testing.assert_array_equal(spmdc.jit(lambda t: jnp.flatnonzero(t, size=4))(M),
                                  [1, 3, 5, 0])
    with pytest.raises(TypeError, match="size="):
        spmdc.jit(jnp.nonzero)(M)


def test_lexsort_bincount():
    k1, k2 = np.array([1, 0, 1, 0, 2]), np.array([3, 3, 1, 1, 1])
    np.testing.assert_array_equal(jnp.lexsort((k1, k2)), np.lexsort((k1, k2)))
    x = np.array([0, 3, 3, 1], np.int32)
    np.testing.assert_array_equal(jnp.bincount(x, minlength=6), np.bincount(x, minlength=6))
    w = np.array([0.5, 1.0, 2.0, 4.0], np.float32)
    np.testing.assert_allclose(jnp.bincount(x, w), np.bincount(x, w))
    got = spmdc.jit(lambda t: jnp.bincount(t, length=3))(np.array([0, 3, 3, 1, -1], np.int32))
    np.testing.assert_array_equal(got, [1, 1, 0])      # outside [0, length): dropped


def test_histogram_interp_isin():
    data = np.array([0.0, 1.0, 1.5, 2.0, 7.0, 9.0, 9.0], np.float32)
    for bins, rng in [(4, None), (3, (1.0, 8.0))]:
        counts, edges = jnp.histogram(data, bins, rng)
        want_counts, want_edges = np.histogram(data, bins, rng)
        np.testing.assert_array_equal(counts, want_counts)
        np.testing.assert_allclose(edges, want_edges, rtol=1e-6)
    density, _ = jnp.histogram(data, 4, density=True)
    np.testing.assert_allclose(density, np.histogram(data, 4, density=True)[0], rtol=1e-6)
    x = np.array([-1, 0.5, 1.5, 1.0, 9], np.float32)
    xp, fp = np.array([0.0, 1.0, 2.0], np.float32), np.array([1.0, 3.0, 2.0], np.float32)
    np.testing.assert_allclose(jnp.interp(x, xp, fp), np.interp(x, xp, fp), rtol=1e-6)
    np.testing.assert_allclose(jnp.interp(x, xp, fp, -5, 5), np.interp(x, xp, fp, -5, 5))
    g = spmdc.grad(lambda t: jnp.interp(t, xp, fp))(np.float32(0.5))
    np.testing.assert_allclose(g, 2.0)
    np.testing.assert_array_equal(jnp.isin(M, [2, 3]), np.isin(M, [2, 3]))
    np.testing.assert_array_equal(jnp.isin(M, [2, 3], invert=True), np.isin(M, [2, 3], invert=True))


def test_where_with_size_is_nonzero():
    # JAX's one-argument where takes size= and fill_value= (nonzero's); spmdc's where had
    # no such keywords.
    c = np.array([[1, 0, 3], [0, 0, 6]]) % 3 == 0
    got = spmdc.jit(lambda m: jnp.where(m, size=5, fill_value=-1))(c)
    want = jnp.nonzero(c, size=5, fill_value=-1)
    assert len(got) == 2
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    np.testing.assert_array_equal(np.asarray(jnp.where(c)[1]), np.nonzero(c)[1])
    with pytest.raises(ValueError, match="one-argument form only"):
        jnp.where(c, 1, 2, size=3)
