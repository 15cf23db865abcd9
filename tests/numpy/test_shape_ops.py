"""spmdc/numpy/shape_extra.py against NumPy."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_splits_and_stacks():
    _same(jnp.array_split(X, 3, 2), np.array_split(X, 3, 2))
    _same(jnp.array_split(X, [1, -1, 9], 2), np.array_split(X, [1, -1, 9], 2))
    _same(jnp.hsplit(X, 3), np.hsplit(X, 3))
    _same(jnp.vsplit(X, [1]), np.vsplit(X, [1]))
    _same(jnp.dsplit(X, [1, 3]), np.dsplit(X, [1, 3]))
    _same(jnp.unstack(X, axis=1), tuple(np.moveaxis(X, 1, 0)))
    a, b = np.ones(3, np.float32), np.zeros((3, 2), np.float32)
    np.testing.assert_array_equal(jnp.dstack([a, a]), np.dstack([a, a]))
    np.testing.assert_array_equal(jnp.column_stack([a, b]), np.column_stack([a, b]))
    np.testing.assert_array_equal(jnp.append(X, [1, 2]), np.append(X, [1, 2]))
    np.testing.assert_array_equal(jnp.append(X, X[:1], axis=0), np.append(X, X[:1], axis=0))
    shapes = [x.shape for x in jnp.broadcast_arrays(np.ones(3), np.ones((2, 1)))]
    assert shapes == [(2, 3), (2, 3)]


def test_take_along_axis():
    i = np.argsort(X, axis=1)[:, ::-1]
    np.testing.assert_array_equal(jnp.take_along_axis(X, i, 1), np.take_along_axis(X, i, 1))
    i = np.array([[[0], [3], [1]]])
    np.testing.assert_array_equal(jnp.take_along_axis(X, i, -1), np.take_along_axis(X, i, -1))
    g = spmdc.grad(lambda x: jnp.take_along_axis(x, np.array([[2, 2, 0]]), 1).sum())(X[0])
    np.testing.assert_array_equal(g, np.tile(np.array([1, 0, 2, 0], np.float32), (3, 1)))


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


def test_vander_select():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(jnp.vander(x), np.vander(x))
    np.testing.assert_array_equal(jnp.vander(x, 2, True), np.vander(x, 2, True))
    v = np.arange(6)
    np.testing.assert_array_equal(jnp.select([v < 2, v > 3], [v, v ** 2], -1),
                                  np.select([v < 2, v > 3], [v, v ** 2], -1))


def test_dtype_helpers():
    assert jnp.promote_types(np.int8, np.uint8) == np.int16
    assert jnp.promote_types(np.int32, np.float32) == np.float32      # JAX's lattice
    assert jnp.can_cast(np.int32, np.float64) and not jnp.can_cast(np.float32, np.int32)
    assert jnp.isscalar(3.0) and jnp.isscalar(jnp.asarray(1)) and not jnp.isscalar(np.ones(2))
    assert jnp.iscomplexobj(1j) and jnp.isrealobj(X)
    assert jnp.astype(X, jnp.int32).dtype == np.int32
    np.testing.assert_array_equal(jnp.copy(X), X)


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
