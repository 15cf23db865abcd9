"""spmdc.scipy.sparse.linalg: cg, bicgstab and gmres against NumPy's dense solve and SciPy's
solvers (matrix, function and ``@`` operators, pytrees, preconditioners, starting points,
complex Hermitian systems), under jit and vmap, the implicit gradients against the
closed forms, and JAX's errors."""
from __future__ import annotations

import functools

import numpy as np
import pytest
import scipy.sparse.linalg as ssl

import spmdc
import spmdc.numpy as jnp
import spmdc.scipy.sparse.linalg as jsl
from spmdc.core import dtypes

RNG = np.random.default_rng(0)
N = 8
GENERAL = (RNG.normal(size=(N, N)) + 3 * np.eye(N)).astype(np.float32)
SPD = (GENERAL @ GENERAL.T / N + np.eye(N)).astype(np.float32)
B = RNG.normal(size=N).astype(np.float32)
SOLVERS = {"cg": (jsl.cg, SPD), "bicgstab": (jsl.bicgstab, GENERAL),
           "gmres": (jsl.gmres, GENERAL),
           "gmres-incremental": (lambda *a, **k: jsl.gmres(*a, solve_method="incremental",
                                                           **k), GENERAL)}
# gmres's incremental solve differs from the batched one only in how it solves the small
# least-squares problem: make test runs it under jit and vmap and on complex systems; its
# pytree, preconditioner and gradient variants run with make test-slow.
SOLVER_PARAMS = [pytest.param(name, marks=pytest.mark.slow) if name == "gmres-incremental"
                 else name for name in sorted(SOLVERS)]


@pytest.fixture
def x64():
    previous = dtypes.enable_x64(True)
    yield
    dtypes.enable_x64(previous)


def close(got, want, tol=2e-4):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


@functools.cache
def solved(name):
    """``SOLVERS[name]`` on its matrix and ``B`` to ``tol=1e-6``, solved once per module:
    each solve compiles its loop (seconds of XLA), and three tests read it."""
    solver, a = SOLVERS[name]
    return solver(a, B, tol=1e-6)


def test_matrix_function_and_matmul_operators_solve_the_system():
    want = np.linalg.solve(SPD.astype(np.float64), B)

    class Operator:
        shape = SPD.shape

        def __matmul__(self, v):
            return jnp.dot(SPD, v)

    # the NumPy matrix's solve is solved("cg"): jsl.cg(SPD, B, tol=1e-6)
    others = (jnp.asarray(SPD), lambda v: jnp.dot(SPD, v), Operator())
    for x, _ in (solved("cg"), *(jsl.cg(op, B, tol=1e-6) for op in others)):
        assert x.dtype == np.float32
        close(x, want)


def test_scipy_gives_the_same_solutions():
    close(solved("cg")[0], ssl.cg(SPD, B, rtol=1e-6)[0])
    close(solved("bicgstab")[0], ssl.bicgstab(GENERAL, B, rtol=1e-6)[0])
    close(solved("gmres")[0], ssl.gmres(GENERAL, B, rtol=1e-6)[0])


def test_second_values_are_jax_s():
    assert solved("cg")[1] is None and solved("bicgstab")[1] is None
    info = solved("gmres")[1]
    assert int(info) == 0
    assert int(jsl.gmres(GENERAL, B, x0=B * np.nan)[1]) == -1


@pytest.mark.parametrize("name", SOLVER_PARAMS)
def test_pytrees_are_one_long_vector(name):
    solver, a = SOLVERS[name]
    top, bottom = a[:3], a[3:]

    def matvec(tree):
        v = jnp.concatenate([tree["u"], tree["w"].ravel()])
        return {"u": jnp.dot(top, v), "w": jnp.dot(bottom, v).reshape(5, 1)}

    b = {"u": B[:3], "w": B[3:].reshape(5, 1)}
    x, _ = solver(matvec, b, tol=1e-6)
    want = np.linalg.solve(a.astype(np.float64), B)
    close(x["u"], want[:3])
    close(x["w"], want[3:].reshape(5, 1))


@pytest.mark.parametrize("name", SOLVER_PARAMS)
def test_preconditioner_and_start(name):
    solver, a = SOLVERS[name]
    jacobi = np.diag(1 / np.diag(a)).astype(np.float32)
    want = np.linalg.solve(a.astype(np.float64), B)
    close(solver(a, B, M=jacobi, x0=want.astype(np.float32) + 0.1, tol=1e-6)[0], want)


def test_preconditioner_as_a_function():
    close(jsl.cg(SPD, B, M=lambda v: v / jnp.diag(SPD))[0],
          np.linalg.solve(SPD.astype(np.float64), B))


def test_maxiter_stops_early():
    one_step = jsl.cg(SPD, B, maxiter=1)[0]
    # one step of CG from 0 is the steepest-descent step along b
    alpha = B @ B / (B @ SPD @ B)
    close(one_step, alpha * B, tol=1e-5)


def test_complex_hermitian_cg(x64):
    z = RNG.normal(size=(N, N)) + 1j * RNG.normal(size=(N, N))
    a = z @ z.conj().T / N + np.eye(N)
    b = RNG.normal(size=N) + 1j * RNG.normal(size=N)
    x, _ = jsl.cg(a, b, tol=1e-12)
    assert x.dtype == np.complex128
    close(x, np.linalg.solve(a, b), tol=1e-9)
    close(jsl.gmres(a, b, tol=1e-12)[0], np.linalg.solve(a, b), tol=1e-9)
    close(jsl.gmres(a, b, tol=1e-12, solve_method="incremental")[0], np.linalg.solve(a, b),
          tol=1e-9)
    close(jsl.bicgstab(a, b, tol=1e-12)[0], np.linalg.solve(a, b), tol=1e-9)


@pytest.mark.parametrize("name", sorted(SOLVERS))
def test_jit_and_vmap(name):
    solver, a = SOLVERS[name]
    solve = spmdc.jit(lambda a, b: solver(a, b, tol=1e-6)[0])
    close(solve(a, B), np.linalg.solve(a.astype(np.float64), B))
    rhs = RNG.normal(size=(3, N)).astype(np.float32)
    got = spmdc.vmap(lambda b: solver(lambda v: jnp.dot(a, v), b, tol=1e-6)[0])(rhs)
    close(got, np.linalg.solve(a.astype(np.float64), rhs.T).T)


@pytest.mark.parametrize("name", SOLVER_PARAMS)
def test_gradients_are_implicit(name, x64):
    solver, a = SOLVERS[name]
    a, b = a.astype(np.float64), B.astype(np.float64)
    w = RNG.normal(size=N)
    x = np.linalg.solve(a, b)
    adjoint = np.linalg.solve(a.T, w)            # d(w.x)/db = A^-T w; d/dA = -adjoint x^T

    def loss(a, b):
        return jnp.dot(w, solver(lambda v: jnp.dot(a, v), b, tol=1e-10)[0])

    d_a, d_b = spmdc.grad(loss, argnums=(0, 1))(a, b)
    close(d_b, adjoint, tol=1e-7)
    close(d_a, -np.outer(adjoint, x), tol=1e-7)
    _, tangent = spmdc.jvp(lambda b: solver(a, b, tol=1e-10)[0], (b,), (w,))
    close(tangent, np.linalg.solve(a, w), tol=1e-7)


def test_errors_are_jax_s():
    with pytest.raises(ValueError, match="must be a square matrix"):
        jsl.cg(np.ones((3, 4), np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match="must be a function"):
        jsl.bicgstab("A", B)
    with pytest.raises(ValueError, match="matching tree structure"):
        jsl.cg(SPD, B, x0=(B,))
    with pytest.raises(ValueError, match="matching shapes"):
        jsl.cg(SPD, B, x0=B[:4])
    with pytest.raises(ValueError, match="invalid solve_method 'qr'"):
        jsl.gmres(GENERAL, B, solve_method="qr")


def test_vmap_over_matrices_and_its_gradient():
    z = RNG.normal(size=(3, 5, 5)).astype(np.float32)
    mats = z @ z.transpose(0, 2, 1) + 5 * np.eye(5, dtype=np.float32)
    rhs = RNG.normal(size=(3, 5)).astype(np.float32)

    def solves(mats):
        return spmdc.vmap(lambda a, b: jsl.cg(a, b, tol=1e-7)[0])(mats, rhs)

    x = np.linalg.solve(mats.astype(np.float64), rhs[..., None])[..., 0]
    close(solves(mats), x)
    # d sum(x)/dA = -A^-T 1 x^T per system
    adjoint = np.linalg.solve(mats.transpose(0, 2, 1).astype(np.float64), np.ones((3, 5, 1)))
    close(spmdc.grad(lambda m: solves(m).sum())(mats), -adjoint * x[:, None, :], tol=1e-3)
