"""lax.custom_root and lax.custom_linear_solve (spmdc/lax/solves.py): values, and the
implicit derivatives against the closed forms (and JAX 0.10.2's numbers, which these
reproduce to the printed digits)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

A = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
N = np.array([[4.0, 1.0], [-2.0, 3.0]], np.float32)    # not symmetric
B = np.array([1.0, 2.0], np.float32)


def newton_sqrt(c):
    def solve(f, x0):          # iterations the derivative must not go through
        return lax.fori_loop(0, 20, lambda i, x: x - f(x) / (2 * x), x0)
    return lax.custom_root(lambda x: x ** 2 - c, 1.0, solve, lambda g, y: y / g(1.0))


def test_custom_root_value_and_implicit_derivatives():
    np.testing.assert_allclose(newton_sqrt(2.0), np.sqrt(2), rtol=1e-6)
    want = 0.5 / np.sqrt(2.0)
    np.testing.assert_allclose(spmdc.grad(newton_sqrt)(2.0), want, rtol=1e-5)
    np.testing.assert_allclose(spmdc.jvp(newton_sqrt, (2.0,), (1.0,))[1], want, rtol=1e-5)
    np.testing.assert_allclose(spmdc.jit(spmdc.grad(newton_sqrt))(3.0), 0.5 / np.sqrt(3.0),
                               rtol=1e-5)
    np.testing.assert_allclose(spmdc.vmap(newton_sqrt)(np.array([4.0, 9.0], np.float32)),
                               [2, 3], rtol=1e-6)


def test_custom_root_of_a_vector_equation_with_a_matrix_tangent_solve():
    # x = A^{-1} c as the root of A x - c, the solver a few Jacobi sweeps
    def solve_for(c):
        def f(x):
            return A @ x - c

        def solve(f, x0):
            d = np.diag(A)
            return lax.fori_loop(0, 60, lambda i, x: x - f(x) / d, x0)

        def tangent_solve(g, y):
            return jnp.linalg.solve(spmdc.jacfwd(g)(y), y)
        return lax.custom_root(f, jnp.zeros(2), solve, tangent_solve)
    np.testing.assert_allclose(solve_for(B), np.linalg.solve(A, B), rtol=1e-5)
    jac = spmdc.jacrev(solve_for)(B)
    np.testing.assert_allclose(jac, np.linalg.inv(A), rtol=1e-5, atol=1e-6)


def lsolve(a, b, symmetric=True):
    return lax.custom_linear_solve(
        lambda x: a @ x, b, lambda mv, y: jnp.linalg.solve(a, y),
        transpose_solve=None if symmetric else (lambda vm, y: jnp.linalg.solve(a.T, y)),
        symmetric=symmetric)


def test_custom_linear_solve_values_and_derivatives():
    x = np.linalg.solve(A, B)
    np.testing.assert_allclose(lsolve(A, B), x, rtol=1e-6)
    inv = np.linalg.inv(A)
    np.testing.assert_allclose(spmdc.grad(lambda b: lsolve(A, b).sum())(B), inv.sum(0),
                               rtol=1e-5)
    # d(sum x)/dA = -(A^-T 1) x^T
    np.testing.assert_allclose(spmdc.grad(lambda a: lsolve(a, B).sum())(A),
                               -np.outer(inv.T @ np.ones(2), x), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(spmdc.jvp(lambda b: lsolve(A, b), (B,), (np.ones(2, np.float32),))
                               [1], inv @ np.ones(2), rtol=1e-5)
    assert spmdc.jacfwd(lambda a: lsolve(a, B))(A).shape == (2, 2, 2)
    xn = np.linalg.solve(N, B)
    np.testing.assert_allclose(spmdc.grad(lambda a: lsolve(a, B, False).sum())(N),
                               -np.outer(np.linalg.inv(N).T @ np.ones(2), xn), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(spmdc.vmap(lambda b: lsolve(A, b))(np.stack([B, 2 * B])),
                               np.stack([x, 2 * x]), rtol=1e-5)


def test_reverse_mode_without_a_transpose_solve_is_a_clear_error():
    def f(b):
        return lax.custom_linear_solve(lambda x: N @ x, b,
                                       lambda mv, y: jnp.linalg.solve(N, y)).sum()
    np.testing.assert_allclose(f(B), np.linalg.solve(N, B).sum(), rtol=1e-6)
    with pytest.raises(TypeError, match="transpose_solve"):
        spmdc.grad(f)(B)
