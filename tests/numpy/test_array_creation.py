"""spmdc/numpy/arrays_extra.py against NumPy: grids, triangles, diagonals, rotations,
roll, kron, differences, trapezoid, polyval; under jit, vmap and grad."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

A = np.arange(12.0, dtype=np.float32).reshape(3, 4)
B = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
V = np.array([1.0, -2.0, 3.0], np.float32)


@pytest.mark.parametrize("k", [-2, 0, 1, 3, 5])
def test_diag_and_triangles(k):
    np.testing.assert_array_equal(jnp.diag(A, k), np.diag(A, k))
    np.testing.assert_array_equal(jnp.diag(V, k), np.diag(V, k))
    np.testing.assert_array_equal(jnp.tril(B, k), np.tril(B, k))
    np.testing.assert_array_equal(spmdc.jit(lambda m: jnp.triu(m, k))(B), np.triu(B, k))
    np.testing.assert_array_equal(jnp.tri(3, 5, k), np.tri(3, 5, k, dtype=np.float32))
    for got, want in zip(jnp.tril_indices(4, k, 3), np.tril_indices(4, k, 3), strict=True):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(jnp.triu_indices_from(A, k), np.triu_indices_from(A, k), strict=True):
        np.testing.assert_array_equal(got, want)


def test_diagonal_and_diag_indices():
    np.testing.assert_array_equal(jnp.diagonal(B, 1, 2, 0), np.diagonal(B, 1, 2, 0))
    np.testing.assert_array_equal(jnp.diagonal(B, -1, -1, -2), np.diagonal(B, -1, -1, -2))
    assert jnp.diagonal(A, 7).shape == (0,)
    rows, cols = jnp.diag_indices_from(np.zeros((3, 3)))
    np.testing.assert_array_equal(rows, np.arange(3))
    np.testing.assert_array_equal(cols, np.arange(3))
    with pytest.raises(ValueError, match="different"):
        jnp.diagonal(A, 0, 1, -1)


def test_diag_tril_grad():
    g = spmdc.grad(lambda m: (jnp.diag(m, 1) * V).sum() + jnp.tril(m).sum())(A)
    want = np.tril(np.ones_like(A)) + np.diag(V, 1)[:3, :4]
    np.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("k", range(-1, 5))
def test_rot90_flips(k):
    np.testing.assert_array_equal(jnp.rot90(B, k, (2, 0)), np.rot90(B, k, (2, 0)))
    np.testing.assert_array_equal(jnp.fliplr(B), np.fliplr(B))
    np.testing.assert_array_equal(jnp.flipud(B), np.flipud(B))


def test_roll():
    np.testing.assert_array_equal(jnp.roll(B, -5), np.roll(B, -5))
    np.testing.assert_array_equal(jnp.roll(B, (1, 2), (0, 2)), np.roll(B, (1, 2), (0, 2)))
    np.testing.assert_array_equal(jnp.roll(B, 7, axis=-1), np.roll(B, 7, axis=-1))
    np.testing.assert_array_equal(spmdc.jit(lambda s: jnp.roll(B, s, 1))(2), np.roll(B, 2, 1))
    got = spmdc.vmap(lambda s: jnp.roll(V, s))(np.arange(3))
    np.testing.assert_array_equal(got, np.stack([np.roll(V, s) for s in range(3)]))


def test_kron_meshgrid():
    np.testing.assert_array_equal(jnp.kron(A, V), np.kron(A, V))
    np.testing.assert_array_equal(jnp.kron(B, A), np.kron(B, A))
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            got = jnp.meshgrid(V, A[0], V[:2], indexing=indexing, sparse=sparse)
            want = np.meshgrid(V, A[0], V[:2], indexing=indexing, sparse=sparse)
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError, match="indexing"):
        jnp.meshgrid(V, indexing="yx")


def test_diff_ediff1d():
    np.testing.assert_array_equal(jnp.diff(B, 2, axis=1, prepend=0),
                                  np.diff(B, 2, axis=1, prepend=0))
    np.testing.assert_array_equal(jnp.diff(B, append=B[..., :2]), np.diff(B, append=B[..., :2]))
    np.testing.assert_array_equal(jnp.diff(np.array([True, False, False])),
                                  np.diff(np.array([True, False, False])))
    np.testing.assert_array_equal(jnp.ediff1d(A, to_begin=[9], to_end=7),
                                  np.ediff1d(A, to_begin=[9], to_end=7))


def test_trapezoid_polyval():
    x = np.array([0.0, 0.5, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(jnp.trapezoid(A, x), np.trapezoid(A, x), rtol=1e-6)
    np.testing.assert_allclose(jnp.trapezoid(B, dx=0.5, axis=1), np.trapezoid(B, dx=0.5, axis=1))
    assert jnp.trapezoid(np.arange(4)).dtype == np.float32         # integers integrate as floats
    np.testing.assert_allclose(jnp.polyval(V, A), np.polyval(V, A), rtol=1e-6)
    assert jnp.polyval(np.array([1, 2], np.int32), 3).dtype == np.int32
    g = spmdc.grad(lambda t: jnp.polyval(V, t))(np.float32(2.0))
    np.testing.assert_allclose(g, np.polyval(np.polyder(V), 2.0), rtol=1e-6)


def test_array_api_aliases():
    np.testing.assert_array_equal(jnp.matrix_transpose(B), np.swapaxes(B, -1, -2))
    np.testing.assert_array_equal(jnp.permute_dims(B, (2, 0, 1)), B.transpose(2, 0, 1))
    np.testing.assert_array_equal(jnp.concat([A, A], axis=1), np.concatenate([A, A], 1))


def test_eye_triangles_and_fills_are_built_in_the_program():
    # jnp.eye, tri, tril and triu under a trace captured their N x M masks as constant
    # arguments (a causal mask of a sequence of 2048 was a 4 MB argument of every call),
    # and jnp.full's scalar was an argument too, which XLA cannot fold (x + zeros); JAX
    # builds arange(n) with an iota
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    cases = [(lambda x: x + jnp.eye(5, 6, 1), x + np.eye(5, 6, 1)),
             (lambda x: x + jnp.zeros((5, 6)), x),
             (lambda x: x * jnp.full((5, 6), -1, jnp.uint8), x * 255),
             (lambda x: x + jnp.arange(6), x + np.arange(6)),
             (lambda x: x + jnp.arange(6, dtype=jnp.uint8), x + np.arange(6)),
             (lambda x: x * jnp.tri(5, 6, -1), x * np.tri(5, 6, -1)),
             (lambda x: jnp.tril(x, -1), np.tril(x, -1)),
             (lambda x: jnp.triu(x, 2), np.triu(x, 2))]
    for f, expected in cases:
        main = spmdc.jit(f).lower(x).as_text().splitlines()[1]
        assert main.count("%arg") == 1, main
        np.testing.assert_array_equal(spmdc.jit(f)(x), expected.astype(np.float32))
        np.testing.assert_array_equal(f(x), expected.astype(np.float32))      # eagerly
