"""spmdc/numpy/array_creation.py against NumPy: diagonals, triangles and their indices,
meshgrid (with kron), diagflat, logspace, fromfunction and the other small builders,
under jit, vmap and grad; eye, tri and fills built in the program rather than captured."""

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


def test_small_builders():
    np.testing.assert_allclose(jnp.logspace(0, 2, 3), [1, 10, 100], rtol=1e-6)
    np.testing.assert_allclose(jnp.logspace(0, 3, 4, base=2.0), [1, 2, 4, 8])
    b = np.ones((2, 3, 4))
    assert jnp.rollaxis(b, 2).shape == np.rollaxis(b, 2).shape
    assert jnp.rollaxis(b, 0, 3).shape == np.rollaxis(b, 0, 3).shape
    np.testing.assert_array_equal(jnp.diagflat(np.array([[1, 2]]), 1),
                                  np.diagflat([[1, 2]], 1))
    np.testing.assert_array_equal(jnp.fromfunction(lambda i, j: i + j, (2, 3)),
                                  np.fromfunction(lambda i, j: i + j, (2, 3)))
    assert jnp.float_power(2, 3) == 8.0 and jnp.iterable([1]) and not jnp.iterable(1)
