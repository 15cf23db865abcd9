"""Derivatives of linear algebra on complex matrices (and eig's on real ones, and rectangular
lu and qr), run on spmdc
and on JAX 0.10.2 (`tools/record.py linalg_complex` records JAX's results in
tests/data/linalg_complex_reference.json; tests/numpy/test_linalg_complex.py compares).
``cases(lib)`` maps a name to a thunk returning a pytree of arrays: a gradient (JAX's
convention for complex inputs, conjugates included) or a JVP's tangent."""
from __future__ import annotations

import importlib

import numpy as np

rng = np.random.default_rng(31)


def _complex(*shape):
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(np.complex64)


A = _complex(4, 4) + 4 * np.eye(4, dtype=np.complex64)
TANGENT = _complex(4, 4)
WEIGHTS = _complex(4, 4)
RHS = _complex(4, 2)
TALL = _complex(5, 3)
HERMITIAN = (A @ A.conj().T).astype(np.complex64)
REAL = rng.normal(size=(4, 4)).astype(np.float32)
REAL_TANGENT = rng.normal(size=(4, 4)).astype(np.float32)
BATCH = _complex(2, 3, 3) + 3 * np.eye(3, dtype=np.complex64)


def _pairing(jnp, x, w):
    """A real function of ``x`` that reads all of it: ``re(sum(x * w[:shape]))``."""
    w = np.resize(WEIGHTS.ravel(), x.shape)
    w = w if np.issubdtype(x.dtype, np.complexfloating) else w.real
    return jnp.real(jnp.sum(x * w.astype(x.dtype)))


def cases(lib):
    jnp, linalg = lib.numpy, lib.lax.linalg
    sl = importlib.import_module(f"{lib.__name__}.scipy.linalg")
    grad = lib.grad

    def loss(f):
        return lambda *xs: _pairing(jnp, f(*xs), WEIGHTS)

    def lossv(f):
        """Several outputs, each paired with the weights."""
        return lambda *xs: sum(_pairing(jnp, y, WEIGHTS) for y in f(*xs))

    def jvp(f, x, t):
        return lambda: lib.jvp(f, (x,), (t,))[1]

    def gauge_free(v):
        """|v|^2 elementwise: the same for every phase of each eigenvector."""
        return jnp.abs(v) ** 2

    return {
        "cholesky.grad": lambda: grad(loss(jnp.linalg.cholesky))(HERMITIAN),
        "cholesky.jvp": jvp(linalg.cholesky, HERMITIAN, TANGENT + TANGENT.conj().T),
        "triangular_solve.grad": lambda: grad(loss(lambda a, b: linalg.triangular_solve(
            a, b, left_side=True, lower=True)), argnums=(0, 1))(A, RHS),
        "triangular_solve.conjugate.grad": lambda: grad(loss(
            lambda a, b: linalg.triangular_solve(a, b, left_side=True, lower=False,
                                                 transpose_a=True, conjugate_a=True)),
            argnums=(0, 1))(A, RHS),
        "triangular_solve.right.jvp": jvp(lambda a: linalg.triangular_solve(
            a, RHS.T, left_side=False, lower=True), A, TANGENT),
        "lu.grad": lambda: grad(loss(lambda a: linalg.lu(a)[0]))(A),
        "lu.tall.grad": lambda: grad(loss(lambda a: linalg.lu(a)[0]))(TALL),
        "lu.wide.jvp": jvp(lambda a: linalg.lu(a)[0], TALL.T.copy(), TALL.T.conj().copy()),
        "lu.real_wide.grad": lambda: grad(loss(lambda a: linalg.lu(a)[0]))(REAL[:3]),
        "solve.grad": lambda: grad(loss(jnp.linalg.solve), argnums=(0, 1))(A, RHS),
        "inv.grad": lambda: grad(loss(jnp.linalg.inv))(A),
        "det.grad": lambda: grad(lambda a: jnp.abs(jnp.linalg.det(a)))(A),
        "det.jvp": jvp(jnp.linalg.det, A, TANGENT),
        "slogdet.grad": lambda: grad(lambda a: jnp.linalg.slogdet(a)[1])(A),
        "qr.grad": lambda: grad(lossv(lambda a: jnp.linalg.qr(a)))(TALL),
        "qr.square.jvp": jvp(lambda a: jnp.linalg.qr(a), A, TANGENT),
        "qr.wide.grad": lambda: grad(lossv(lambda a: jnp.linalg.qr(a)))(TALL.T.copy()),
        "qr.wide_complete.jvp": jvp(lambda a: jnp.linalg.qr(a, mode="complete"),
                                    TALL.T.copy(), TALL.conj().T.copy()),
        "qr.real_wide.grad": lambda: grad(lossv(lambda a: jnp.linalg.qr(a)))(REAL[:3]),
        "qr.tall_complete.grad": lambda: grad(lossv(lambda a: jnp.linalg.qr(
            a, mode="complete")))(TALL),
        "qr.real_tall_complete.jvp": jvp(lambda a: jnp.linalg.qr(a, mode="complete"),
                                         REAL[:, :2].copy(), REAL_TANGENT[:, :2].copy()),
        "eigh.grad": lambda: grad(lambda a: jnp.sum(jnp.linalg.eigh(a)[0] * np.arange(4.0))
                                  + jnp.sum(gauge_free(jnp.linalg.eigh(a)[1]) * REAL))(
            HERMITIAN),
        "eigvalsh.jvp": jvp(jnp.linalg.eigvalsh, HERMITIAN, TANGENT + TANGENT.conj().T),
        "svd.hermitian.grad": lambda: grad(
            lambda a: jnp.sum(jnp.linalg.svd(a, hermitian=True, compute_uv=False)))(HERMITIAN),
        "lstsq.grad": lambda: grad(loss(lambda a: jnp.linalg.lstsq(a, TALL[:, :1])[0]))(TALL),
        "cho_solve.grad": lambda: grad(loss(lambda a, b: sl.cho_solve(sl.cho_factor(a), b)),
                                       argnums=(0, 1))(HERMITIAN, RHS),
        "solve_triangular.adjoint.grad": lambda: grad(loss(
            lambda a, b: sl.solve_triangular(a, b, trans="C", lower=True)),
            argnums=(0, 1))(A, RHS),
        "lu_solve.adjoint.grad": lambda: grad(loss(
            lambda a, b: sl.lu_solve(sl.lu_factor(a), b, trans=2)), argnums=(0, 1))(A, RHS),
        "expm.grad": lambda: grad(loss(sl.expm))(A / 4),
        "matrix_power.negative.grad": lambda: grad(
            loss(lambda a: jnp.linalg.matrix_power(a, -2)))(A),
        "inv.batch.grad": lambda: grad(loss(jnp.linalg.inv))(BATCH),
        "inv.vmap.jvp": jvp(lib.vmap(jnp.linalg.inv), BATCH, BATCH.conj()),
        "eigvals.grad": lambda: grad(loss(jnp.linalg.eigvals))(A),
        "eigvals.real.grad": lambda: grad(loss(jnp.linalg.eigvals))(REAL),
        "eigvals.real.jvp": jvp(jnp.linalg.eigvals, REAL, REAL_TANGENT),
        "eig.vectors.grad": lambda: grad(lossv(lambda a: linalg.eig(
            a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)))(A),
        "eig.vectors.real.jvp": jvp(lambda a: linalg.eig(
            a, compute_left_eigenvectors=False, enable_eigvec_derivs=True), REAL,
            REAL_TANGENT),
        "eig.left.jvp": jvp(lambda a: linalg.eig(a, enable_eigvec_derivs=True), A, TANGENT),
        "eig.vectors.batch.grad": lambda: grad(lossv(lambda a: linalg.eig(
            a, compute_left_eigenvectors=False, enable_eigvec_derivs=True)))(BATCH),
    }
