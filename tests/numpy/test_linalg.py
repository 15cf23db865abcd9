"""spmdc.numpy.linalg and spmdc.scipy.linalg against NumPy and SciPy: values, reconstruction,
jit and vmap, gradients against finite differences (float64), shapes and batch dimensions
with hypothesis, clear errors; and a Gaussian-process regression whose hyperparameters are
fitted with grad through cholesky/cho_solve, matching SciPy to 1e-4."""
import importlib
import sys

import numpy as np
import oracle
import pytest
import scipy.linalg as sl
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc
import spmdc as jax
import spmdc.numpy as jnp
import spmdc.scipy.linalg as jsl
from spmdc.core import dtypes


@pytest.fixture
def x64():
    previous = dtypes.enable_x64(True)
    yield
    dtypes.enable_x64(previous)


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 4)).astype(np.float32)
SPD = (A @ A.T + 4 * np.eye(4)).astype(np.float32)
B = RNG.normal(size=(4, 2)).astype(np.float32)
BATCH = RNG.normal(size=(2, 6, 6)).astype(np.float32)


def test_submodules_resolve_under_an_alias(monkeypatch):
    monkeypatch.setitem(sys.modules, "jax", jax)
    for name in ("jax.numpy.linalg", "jax.scipy.linalg"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert importlib.import_module("jax.numpy.linalg") is jnp.linalg
    assert importlib.import_module("jax.scipy.linalg") is jsl


# --- numpy.linalg values ---------------------------------------------------------------------

def test_factorisations_reconstruct():
    low = jnp.linalg.cholesky(SPD)
    close(low @ low.T, SPD)
    close(jnp.linalg.cholesky(SPD, upper=True), np.linalg.cholesky(SPD).T)
    q, r = jnp.linalg.qr(B)
    close(q @ r, B)
    assert jnp.linalg.qr(B, mode="complete").Q.shape == (4, 4)
    close(jnp.linalg.qr(B, mode="r"), np.linalg.qr(B, mode="r"))
    u, s, vh = jnp.linalg.svd(B, full_matrices=False)
    close((u * s) @ vh, B)
    close(jnp.linalg.svd(BATCH, compute_uv=False), np.linalg.svd(BATCH, compute_uv=False))
    w, v = jnp.linalg.eigh(SPD)
    close(SPD @ v, v * w, 1e-3)
    close(jnp.linalg.eigvalsh(SPD), np.linalg.eigvalsh(SPD), 1e-3)
    u, s, vh = jnp.linalg.svd(SPD, hermitian=True)
    close((u * s) @ vh, SPD, 1e-3)
    close(s, np.linalg.svd(SPD, compute_uv=False), 1e-3)


def test_solvers_match_numpy():
    close(jnp.linalg.solve(A, B), np.linalg.solve(A, B))
    close(jnp.linalg.solve(A, B[:, 0]), np.linalg.solve(A, B[:, 0]))
    close(jnp.linalg.solve(BATCH, BATCH[..., :2]), np.linalg.solve(BATCH, BATCH[..., :2]), 1e-3)
    close(jnp.linalg.inv(A), np.linalg.inv(A), 1e-3)
    for m in (A[:1, :1], A[:2, :2], A[:3, :3], BATCH):
        close(jnp.linalg.det(m), np.linalg.det(m), 1e-3)
        sign, logdet = jnp.linalg.slogdet(m)
        close(sign, np.linalg.slogdet(m)[0])
        close(logdet, np.linalg.slogdet(m)[1])
    close(jnp.linalg.pinv(B), np.linalg.pinv(B), 1e-3)
    x, resid, rank, s = jnp.linalg.lstsq(B, A[:, 0])
    want = np.linalg.lstsq(B, A[:, 0], rcond=None)
    close(x, want[0], 1e-3)
    close(resid, want[1], 1e-3)
    assert int(rank) == want[2]
    close(s, want[3])


@pytest.mark.parametrize("ord", [None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norms(ord):
    close(jnp.linalg.norm(A, ord), np.linalg.norm(A, ord), 1e-3)
    close(jnp.linalg.norm(BATCH, ord, axis=(2, 0), keepdims=True),
          np.linalg.norm(BATCH, ord, axis=(2, 0), keepdims=True), 1e-3)


@pytest.mark.parametrize("ord", [None, 2, 1, 0, 3, 0.5, -1, np.inf, -np.inf])
def test_vector_norms(ord):
    close(jnp.linalg.norm(A[0], ord), np.linalg.norm(A[0], ord), 1e-3)
    close(jnp.linalg.norm(BATCH, ord, axis=1), np.linalg.norm(BATCH, ord, axis=1), 1e-3)


def test_the_other_functions():
    close(jnp.linalg.matrix_power(A, 5), np.linalg.matrix_power(A, 5), 1e-3)
    close(jnp.linalg.matrix_power(A, -2), np.linalg.matrix_power(A, -2), 1e-2)
    close(jnp.linalg.matrix_power(A, 0), np.eye(4))
    assert int(jnp.linalg.matrix_rank(B @ B.T)) == 2
    close(jnp.linalg.cond(A), np.linalg.cond(A), 1e-3)
    close(jnp.linalg.cond(A, "fro"), np.linalg.cond(A, "fro"), 1e-3)
    chain = [A[0], A, B, B.T]
    close(jnp.linalg.multi_dot(chain), np.linalg.multi_dot(chain), 1e-3)
    close(jnp.linalg.cross(A[:, :3], A[:, 1:]), np.cross(A[:, :3], A[:, 1:]))
    close(jnp.linalg.outer(A[0], A[1]), np.outer(A[0], A[1]))
    close(jnp.linalg.tensordot(BATCH, BATCH, axes=([1, 2], [1, 2])),
          np.tensordot(BATCH, BATCH, axes=([1, 2], [1, 2])), 1e-3)
    close(jnp.linalg.trace(BATCH), np.trace(BATCH, axis1=-2, axis2=-1))
    close(jnp.linalg.diagonal(BATCH, offset=1), np.diagonal(BATCH, 1, -2, -1))
    close(jnp.linalg.vecdot(A, B[:, 0], axis=0), B[:, 0] @ A)


# --- scipy.linalg values ---------------------------------------------------------------------

def test_scipy_cholesky_family():
    for lower in (False, True):
        close(jsl.cholesky(SPD, lower=lower), sl.cholesky(SPD, lower=lower))
        factor = jsl.cho_factor(SPD, lower=lower)
        close(jsl.cho_solve(factor, B), sl.cho_solve(sl.cho_factor(SPD, lower=lower), B), 1e-3)
        close(jsl.cho_solve(factor, B[:, 0]), np.linalg.solve(SPD, B[:, 0]), 1e-3)
    close(jsl.solve(SPD, B, assume_a="pos"), np.linalg.solve(SPD, B), 1e-3)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("trans", [0, 1, "T"])
def test_solve_triangular(lower, trans):
    m = A + 4 * np.eye(4, dtype=np.float32)
    close(jsl.solve_triangular(m, B, lower=lower, trans=trans),
          sl.solve_triangular(m, B, lower=lower, trans=trans), 1e-3)
    close(jsl.solve_triangular(m, B[:, 1], lower=lower, trans=trans, unit_diagonal=True),
          sl.solve_triangular(m, B[:, 1], lower=lower, trans=trans, unit_diagonal=True), 1e-3)


def test_scipy_lu_family():
    for got, want in zip(jsl.lu(A), sl.lu(A), strict=True):
        close(got, want)
    for m in (A, B, B.T):
        pl, u = jsl.lu(m, permute_l=True)
        close(pl @ u, m)
    factors, want = jsl.lu_factor(A), sl.lu_factor(A)
    close(factors[0], want[0])
    np.testing.assert_array_equal(np.asarray(factors[1]), want[1])
    for trans in (0, 1):
        close(jsl.lu_solve(factors, B, trans=trans), sl.lu_solve(want, B, trans=trans), 1e-3)


def test_scipy_decompositions_and_the_rest():
    q, r = jsl.qr(B)
    close(q @ r, B)
    assert q.shape == (4, 4)
    q, r = jsl.qr(B, mode="economic")
    assert q.shape == (4, 2)
    close(jsl.svd(B, compute_uv=False), sl.svd(B, compute_uv=False))
    w, v = jsl.eigh(SPD)
    close(w, sl.eigh(SPD)[0], 1e-3)
    close(jsl.eigh(np.triu(SPD), lower=False, eigvals_only=True), sl.eigvalsh(SPD), 1e-3)
    close(jsl.inv(A), sl.inv(A), 1e-3)
    close(jsl.det(A), sl.det(A), 1e-3)
    close(jsl.solve(A, B), sl.solve(A, B), 1e-3)
    close(jsl.block_diag(A[:2, :2], 3.0, B), sl.block_diag(A[:2, :2], 3.0, B))


@pytest.mark.parametrize("scale", [0.01, 0.3, 3.0, 30.0])
def test_expm(scale):
    close(jsl.expm(A * scale), sl.expm(A * scale), 1e-4 * max(1, np.abs(sl.expm(A * scale)).max()))
    close(jsl.expm(np.triu(A) * scale, upper_triangular=True), sl.expm(np.triu(A) * scale),
          1e-4 * max(1, np.abs(sl.expm(np.triu(A) * scale)).max()))


def test_expm_of_a_batch_in_float64(x64):
    batch = np.stack([A, 0.1 * A]).astype(np.float64)
    close(jsl.expm(batch), np.stack([sl.expm(m) for m in batch]), 1e-10)


# --- transformations ---------------------------------------------------------------------------

def test_jit_and_vmap():
    close(jax.jit(jnp.linalg.solve)(A, B), np.linalg.solve(A, B))
    stack = np.stack([SPD, 2 * SPD])
    close(jax.vmap(jnp.linalg.cholesky)(stack), np.linalg.cholesky(stack))
    close(jax.vmap(jnp.linalg.det)(BATCH), np.linalg.det(BATCH), 1e-3)
    close(jax.vmap(jnp.linalg.solve, in_axes=(None, 1), out_axes=1)(A, B),
          np.linalg.solve(A, B))
    close(jax.jit(jax.vmap(lambda m: jnp.linalg.svd(m, compute_uv=False)))(BATCH),
          np.linalg.svd(BATCH, compute_uv=False))


def _check_grad(f, x, tol=1e-5):
    got = np.asarray(jax.grad(f)(x))
    compiled = jax.jit(f)
    want = oracle.numeric_grad(compiled, x)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


_g = np.random.default_rng(1)
_GA = _g.normal(size=(4, 4))
_GSPD = _GA @ _GA.T + 4 * np.eye(4)
_GB = _g.normal(size=(4, 2))
_GW = _g.normal(size=(4, 4))
# (name, scalar function, point): each derivative against central finite differences, one
# test each so that the two workers of make test share them
GRADIENTS = [
    ("cholesky", lambda m: jnp.sum(jnp.linalg.cholesky(m) * _GW), _GSPD),
    ("solve_matrix", lambda m: jnp.sum(jnp.sin(jnp.linalg.solve(m, _GB))), _GA),
    ("solve_rhs", lambda v: jnp.sum(jnp.linalg.solve(_GA, v) ** 2), _GB),
    ("eigh_values", lambda m: jnp.sum(jnp.linalg.eigh(m)[0] * jnp.arange(4.0)), _GSPD),
    ("eigh_vectors", lambda m: jnp.sum(jnp.abs(jnp.linalg.eigh(m)[1][:, 0])), _GSPD),
    ("svd_values", lambda m: jnp.sum(jnp.linalg.svd(m, compute_uv=False)), _GB),
    ("svd_vectors", lambda m: jnp.sum(jnp.linalg.svd(m, full_matrices=False)[0][:, 0] ** 3),
     _GB),
    ("slogdet", lambda m: jnp.linalg.slogdet(m)[1], _GA),
    ("det", lambda m: jnp.linalg.det(m), _GA),
    ("inv", lambda m: jnp.sum(jnp.linalg.inv(m) * _GW), _GA),
    # scipy's cholesky reads one triangle, but its derivative (JAX's) is that of a function
    # of a symmetric matrix: compare along symmetric perturbations
    ("cho_solve", lambda m: jnp.sum(jsl.cho_solve(jsl.cho_factor((m + m.T) / 2), _GB)), _GSPD),
    ("solve_triangular",
     lambda m: jnp.sum(jsl.solve_triangular(m + 4 * jnp.eye(4), _GB, lower=True)), _GA),
    ("qr", lambda m: jnp.sum(jnp.linalg.qr(m)[1] ** 2) + jnp.sum(jnp.linalg.qr(m)[0] ** 3), _GB),
    ("expm", lambda m: jnp.sum(jsl.expm(m) * _GW), _GA * 0.3),
]


@pytest.mark.parametrize("name,f,x", GRADIENTS, ids=[g[0] for g in GRADIENTS])
def test_gradients_against_finite_differences(x64, name, f, x):
    _check_grad(f, x)


def test_forward_mode_matches_reverse(x64):
    rng = np.random.default_rng(2)
    a = rng.normal(size=(3, 3))
    spd = a @ a.T + 3 * np.eye(3)

    def f(m):
        return jnp.sum(jnp.linalg.cholesky(m)) + jnp.sum(jnp.linalg.eigh(m)[0] ** 2)
    direction = np.eye(3)
    _, tangent = jax.jvp(f, (spd,), (direction,))
    close(tangent, np.sum(np.asarray(jax.grad(f)(spd)) * direction), 1e-8)


# --- hypothesis over shapes and batch dimensions -------------------------------------------------

@settings(max_examples=4)     # each example compiles four factorisations: keep the suite fast
@given(st.lists(st.integers(1, 3), max_size=2).map(tuple), st.integers(1, 5), st.integers(1, 5))
def test_shapes_and_batches(batch, m, n):
    rng = np.random.default_rng(m * 10 + n)
    a = rng.normal(size=(*batch, m, n)).astype(np.float32)
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    close((u * s[..., None, :]) @ vh, a)
    q, r = jnp.linalg.qr(a)
    close(q @ r, a)
    sq = a[..., :1, :1] + 2 if m == 1 else a @ np.swapaxes(a, -1, -2) + np.eye(m)
    close(jnp.linalg.solve(sq, a), np.linalg.solve(sq, a), 1e-3)
    low = jnp.linalg.cholesky(sq)
    close(low @ np.swapaxes(np.asarray(low), -1, -2), sq, 1e-3)


# --- errors --------------------------------------------------------------------------------------

def test_clear_errors():
    with pytest.raises(ValueError, match=r"\[\.\.\., n, n\]"):
        jnp.linalg.inv(B)
    with pytest.raises(TypeError, match="float16"):
        jnp.linalg.det(A.astype(np.float16))
    with pytest.raises(ValueError, match="Invalid order"):
        jnp.linalg.norm(A, "bad")
    with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'bad'"):
        jnp.linalg.qr(A, mode="bad")
    with pytest.raises(NotImplementedError, match="pivoting"):
        jsl.qr(A, pivoting=True)
    with pytest.raises(ValueError, match="Invalid shapes for solve"):
        jnp.linalg.solve(BATCH, BATCH[..., 0])
    nan = jnp.linalg.cholesky(-SPD)
    assert np.all(np.isnan(np.asarray(nan)))


# --- a Gaussian process fitted by grad ----------------------------------------------------------

def _gp_data():
    rng = np.random.default_rng(3)
    x = np.sort(rng.uniform(-3, 3, 24))
    y = np.sin(x) + 0.1 * rng.normal(size=x.shape)
    return x, y


def _kernel(x1, x2, log_amp, log_len, np_=np):
    d = x1[:, None] - x2[None, :]
    return np_.exp(2 * log_amp) * np_.exp(-0.5 * d * d / np_.exp(2 * log_len))


def _nll_scipy(theta, x, y):
    """The negative log marginal likelihood and its gradient, with SciPy's Cholesky."""
    log_amp, log_len, log_noise = theta
    k = _kernel(x, x, log_amp, log_len) + np.exp(2 * log_noise) * np.eye(len(x))
    factor = sl.cho_factor(k, lower=True)
    alpha = sl.cho_solve(factor, y)
    value = 0.5 * y @ alpha + np.sum(np.log(np.diag(factor[0]))) + 0.5 * len(x) * np.log(2 * np.pi)
    inner = sl.cho_solve(factor, np.eye(len(x))) - np.outer(alpha, alpha)
    d = x[:, None] - x[None, :]
    kse = k - np.exp(2 * log_noise) * np.eye(len(x))
    dk = [2 * kse, kse * d * d / np.exp(2 * log_len), 2 * np.exp(2 * log_noise) * np.eye(len(x))]
    return value, np.array([0.5 * np.sum(inner * g) for g in dk])


def _nll_spmdc(theta, x, y):
    log_amp, log_len, log_noise = theta[0], theta[1], theta[2]
    k = _kernel(x, x, log_amp, log_len, jnp) + jnp.exp(2 * log_noise) * jnp.eye(len(x))
    factor = jsl.cho_factor(k, lower=True)
    alpha = jsl.cho_solve(factor, y)
    return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.linalg.diagonal(factor[0]))) \
        + 0.5 * len(x) * np.log(2 * np.pi)


def test_gaussian_process_fit_matches_scipy(x64):
    x, y = _gp_data()
    value_and_grad = jax.jit(jax.value_and_grad(_nll_spmdc))
    theta0 = np.array([0.0, 0.0, -1.0])
    got_value, got_grad = value_and_grad(theta0, x, y)
    want_value, want_grad = _nll_scipy(theta0, x, y)
    close(got_value, want_value, 1e-10)
    close(got_grad, want_grad, 1e-8)

    def ours(theta):
        v, g = value_and_grad(theta, x, y)
        return float(v), np.asarray(g, np.float64)
    fitted = scipy.optimize.minimize(ours, theta0, jac=True, method="L-BFGS-B",
                                     options=dict(gtol=1e-10, ftol=1e-14))
    reference = scipy.optimize.minimize(_nll_scipy, theta0, args=(x, y), jac=True,
                                        method="L-BFGS-B", options=dict(gtol=1e-10, ftol=1e-14))
    close(fitted.x, reference.x, 1e-4)
    # the posterior mean at new points, from both fits
    xs = np.linspace(-3, 3, 7)

    def mean(theta, np_, linalg):
        k = _kernel(x, x, theta[0], theta[1], np_) + np_.exp(2 * theta[2]) * np_.eye(len(x))
        return _kernel(xs, x, theta[0], theta[1], np_) @ linalg.cho_solve(
            linalg.cho_factor(k, lower=True), y)
    close(mean(fitted.x, jnp, jsl), mean(reference.x, np, sl), 1e-4)
    assert fitted.fun < _nll_scipy(theta0, x, y)[0]


def test_tensor_functions_and_expm_frechet():
    rng = np.random.default_rng(5)
    a = rng.normal(size=(6, 2, 3)).astype(np.float32)
    close(jnp.linalg.tensorinv(a, 1), np.linalg.tensorinv(a, 1), 1e-3)
    b = rng.normal(size=(6,)).astype(np.float32)
    close(jnp.linalg.tensorsolve(a, b), np.linalg.tensorsolve(a, b), 1e-3)
    with pytest.raises(ValueError, match="tensorinv is only possible"):
        jnp.linalg.tensorinv(np.ones((2, 3, 6)), 1)
    m, e = A * 0.5, B @ B.T
    value, derivative = jsl.expm_frechet(m, e)
    want_value, want_derivative = sl.expm_frechet(m, e)
    close(value, want_value)
    close(derivative, want_derivative, 1e-3)


def test_lax_linalg():
    from spmdc import lax
    close(lax.linalg.cholesky(SPD), np.linalg.cholesky(SPD))
    m = A + 4 * np.eye(4, dtype=np.float32)
    close(lax.linalg.triangular_solve(m, B[:, 0], left_side=True, lower=True),
          sl.solve_triangular(m, B[:, 0], lower=True), 1e-3)
    close(lax.linalg.triangular_solve(m, B.T, lower=False, transpose_a=True),
          B.T @ np.linalg.inv(np.triu(m).T), 1e-3)
    lu, pivots, perm = lax.linalg.lu(BATCH)
    np.testing.assert_array_equal(np.asarray(lax.linalg.lu_pivots_to_permutation(pivots, 6)),
                                  np.asarray(perm))
    q, r = lax.linalg.qr(B, full_matrices=False)
    close(q @ r, B)
    v, w = lax.linalg.eigh(SPD)
    close(w, np.linalg.eigvalsh(SPD), 1e-3)
    u, s, vt = lax.linalg.svd(B, full_matrices=False)
    close((u * s) @ vt, B)
    with pytest.raises(NotImplementedError, match="pivoting"):
        lax.linalg.qr(B, pivoting=True)


def test_second_order_derivatives(x64):
    # hessian (reverse over reverse) and jacfwd of grad (forward over reverse) against
    # finite differences of the gradient
    rng = np.random.default_rng(6)
    a = rng.normal(size=(3, 3))
    spd = a @ a.T + 3 * np.eye(3)
    b = rng.normal(size=3)
    cases = [(lambda m: jnp.sum(jsl.cho_solve(jsl.cho_factor((m + m.T) / 2, lower=True),
                                              b) ** 2), spd),
             (lambda m: jnp.sum(jnp.linalg.svd(m, compute_uv=False) ** 3), a)]
    for f, x in cases:
        grad = jax.jit(jax.grad(f))
        want = np.stack([(np.asarray(grad(x + d)) - np.asarray(grad(x - d))) / 2e-5
                         for d in 1e-5 * np.eye(9).reshape(9, 3, 3)], axis=-1).reshape(9, 9)
        close(np.asarray(jax.hessian(f)(x)).reshape(9, 9), want, 1e-6)
        close(np.asarray(jax.jacfwd(jax.grad(f))(x)).reshape(9, 9), want, 1e-6)


def test_a_batched_solve_permutes_rows_with_a_gather():
    # issue 18 (W12): the LU solve permuted a batch of right-hand sides with one-hot
    # permutation matrices (a batched matrix product reading n times more than a gather)
    r = np.random.default_rng(0)
    x = r.normal(size=(8, 6, 6)).astype(np.float32)
    a = x @ x.transpose(0, 2, 1) + 6 * np.eye(6, dtype=np.float32)
    b = r.normal(size=(8, 6, 2)).astype(np.float32)
    text = spmdc.jit(jnp.linalg.solve).lower(a, b).as_text()
    assert "stablehlo.dot_general" not in text and "stablehlo.gather" in text
    np.testing.assert_allclose(jnp.linalg.solve(a, b), np.linalg.solve(a, b),
                               rtol=1e-4, atol=1e-5)
    lu_piv = spmdc.scipy.linalg.lu_factor(a)
    np.testing.assert_allclose(spmdc.scipy.linalg.lu_solve(lu_piv, b, trans=1),
                               np.linalg.solve(a.transpose(0, 2, 1), b), rtol=1e-4, atol=1e-5)
