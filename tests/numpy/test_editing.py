"""spmdc/numpy/editing.py against NumPy: take_along_axis, put_along_axis, fill_diagonal,
ix_, unravel_index, ravel_multi_index, piecewise, trim_zeros, resize (some in
index_tricks.py and shape_ops.py). Set operations, partitions,
insert and delete against JAX's recorded values are in test_setops.py."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


def test_resize_piecewise_trim_zeros():
    a = np.array([1, 2, 3])
    np.testing.assert_array_equal(jnp.resize(a, (2, 4)), np.resize(a, (2, 4)))
    np.testing.assert_array_equal(jnp.resize(a, 2), np.resize(a, 2))
    x = np.linspace(-2, 2, 5).astype(np.float32)
    funcs = [lambda v: -v, lambda v: v * 2, 9.0]
    np.testing.assert_array_equal(jnp.piecewise(x, [x < 0, x > 0], funcs),
                                  np.piecewise(x, [x < 0, x > 0], funcs))
    np.testing.assert_array_equal(spmdc.jit(lambda t: jnp.piecewise(t, [t < 0], [1.0]))(x),
                                  np.piecewise(x, [x < 0], [1.0]))
    z = np.array([0, 0, 1, 2, 0])
    np.testing.assert_array_equal(jnp.trim_zeros(z), np.trim_zeros(z))
    np.testing.assert_array_equal(jnp.trim_zeros(z, "b"), np.trim_zeros(z, "b"))
    with pytest.raises(TypeError, match="traced"):
        spmdc.jit(jnp.trim_zeros)(z)


X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


def test_take_along_axis():
    i = np.argsort(X, axis=1)[:, ::-1]
    np.testing.assert_array_equal(jnp.take_along_axis(X, i, 1), np.take_along_axis(X, i, 1))
    i = np.array([[[0], [3], [1]]])
    np.testing.assert_array_equal(jnp.take_along_axis(X, i, -1), np.take_along_axis(X, i, -1))
    g = spmdc.grad(lambda x: jnp.take_along_axis(x, np.array([[2, 2, 0]]), 1).sum())(X[0])
    np.testing.assert_array_equal(g, np.tile(np.array([1, 0, 2, 0], np.float32), (3, 1)))


def test_take_along_axis_fills_out_of_range_indices_by_default():
    # JAX's take_along_axis defaults to mode='fill' (NaN for floats, as its docstring and
    # spmdc's say); spmdc clamped, so index 9 on an axis of 5 read the last element.
    x = np.arange(15, dtype=np.float32).reshape(3, 5)
    i = np.array([[4, 0, -1], [5, -5, -6], [9, 2, 3]])
    ok = (i >= -5) & (i < 5)
    want = np.where(ok, np.take_along_axis(x, np.where(ok, i, 0), 1), np.nan)
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(x, i, 1)), want)
    np.testing.assert_array_equal(np.asarray(spmdc.jit(jnp.take_along_axis, static_argnums=2)(
        x, i, 1)), want)
    clipped = np.clip(np.where(i < 0, i + 5, i), 0, 4)
    np.testing.assert_array_equal(np.asarray(jnp.take_along_axis(x, i, 1, mode="clip")),
                                  np.take_along_axis(x, clipped, 1))


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_index_helpers():
    np.testing.assert_array_equal(jnp.indices((2, 3)), np.indices((2, 3)))
    _same(jnp.indices((2, 3), sparse=True), np.indices((2, 3), sparse=True))
    np.testing.assert_array_equal(X[jnp.ix_(np.array([1, 0]), np.array([2, 0]))],
                                  X[np.ix_([1, 0], [2, 0])])
    _same(jnp.unravel_index(np.array([5, 22]), (2, 3, 4)), np.unravel_index([5, 22], (2, 3, 4)))
    coords = (np.array([1, 0]), np.array([2, 1]), np.array([3, 0]))
    np.testing.assert_array_equal(jnp.ravel_multi_index(coords, (2, 3, 4)),
                                  np.ravel_multi_index(coords, (2, 3, 4)))
    np.testing.assert_array_equal(jnp.ravel_multi_index(coords[:2], (2, 3), order="F"),
                                  np.ravel_multi_index(coords[:2], (2, 3), order="F"))
    np.testing.assert_array_equal(
        spmdc.jit(lambda c: jnp.ravel_multi_index((c, c), (2, 3), mode="clip"))(np.array([5])),
        np.ravel_multi_index((np.array([5]),) * 2, (2, 3), mode="clip"))
    with pytest.raises(ValueError, match="invalid entry"):
        jnp.ravel_multi_index((np.array([2]),), (2,))


def test_fill_diagonal_put_along_axis():
    for shape, val in [((3, 4), np.array([1.0, 2.0])), ((4, 3), 7.0), ((3, 3, 3), 5.0)]:
        want = np.zeros(shape, np.float32)
        np.fill_diagonal(want, val)
        got = jnp.fill_diagonal(np.zeros(shape, np.float32), val, inplace=False)
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.fill_diagonal(np.zeros((2, 2)), 1.0)
    z = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    i = np.array([[1], [0], [3]])
    want = z.copy()
    np.put_along_axis(want, i, -1, 1)
    np.testing.assert_array_equal(jnp.put_along_axis(z, i, -1.0, 1, inplace=False), want)
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.put_along_axis(z, i, -1.0, 1)
