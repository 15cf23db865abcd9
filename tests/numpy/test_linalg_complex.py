"""Linear algebra on complex64/complex128 matrices: jnp.linalg, jax.scipy.linalg and
lax.linalg values against NumPy/SciPy (one compiled program per dtype), derivatives against
JAX 0.10.2's recorded ones (tests/linalg_complex_cases.py, conjugates included) and, in
complex128, JVPs against central differences and VJPs against the JVPs (JAX's pairing
``re(sum(x * y))``, as jax.test_util.check_grads); eig's derivatives; the CUDA lowerings of
the complex kernels are compared with JAX's in tests/compiler/test_stablehlo.py."""
import linalg_complex_cases as cases
import numpy as np
import oracle
import pytest
import scipy.linalg as sl

import spmdc
import spmdc.numpy as jnp
import spmdc.scipy.linalg as jsl
from spmdc.core import dtypes
from spmdc.lax import linalg as lax_linalg

REFERENCE = oracle.recorded_cases("linalg_complex_reference.json")
# one case per primitive in the quick suite; every case with make test-slow
QUICK = {"cholesky.jvp", "triangular_solve.conjugate.grad", "qr.grad", "eigvalsh.jvp",
         "eigvals.grad", "solve_triangular.adjoint.grad", "qr.wide.grad", "lu.tall.grad"}

RNG = np.random.default_rng(5)


def _complex(*shape):
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


A = _complex(4, 4) + 2 * np.eye(4)
B = _complex(4, 2)
HERMITIAN = A @ A.conj().T + 4 * np.eye(4)
BATCH = _complex(3, 4, 4) + 2 * np.eye(4)


@pytest.fixture
def x64():
    previous = dtypes.enable_x64(True)
    yield
    dtypes.enable_x64(previous)


def _programs(a, b, h, batch):
    """Every complex operation, in one program."""
    out = {
        "solve": jnp.linalg.solve(a, b), "inv": jnp.linalg.inv(a), "det": jnp.linalg.det(a),
        "slogdet": jnp.linalg.slogdet(a), "cholesky": jnp.linalg.cholesky(h),
        "cholesky.upper": jnp.linalg.cholesky(h, upper=True), "qr": jnp.linalg.qr(a),
        "eigh": jnp.linalg.eigh(h), "eigvalsh": jnp.linalg.eigvalsh(h),
        "svd.hermitian": jnp.linalg.svd(h, hermitian=True),
        "lstsq": jnp.linalg.lstsq(a, b)[0], "matrix_power": jnp.linalg.matrix_power(a, -2),
        "cond.1": jnp.linalg.cond(a, 1), "cond.fro": jnp.linalg.cond(a, "fro"),
        "pinv.hermitian": jnp.linalg.pinv(h, hermitian=True),
        "matrix_rank.hermitian": jnp.linalg.matrix_rank(h, hermitian=True),
        "tensorinv": jnp.linalg.tensorinv(a.reshape(4, 2, 2), 1),
        "tensorsolve": jnp.linalg.tensorsolve(a.reshape(4, 2, 2), b[:, 0]),
        "sp.cholesky": jsl.cholesky(h), "sp.cho_solve": jsl.cho_solve(jsl.cho_factor(h), b),
        "sp.cho_solve.lower": jsl.cho_solve(jsl.cho_factor(h, lower=True), b),
        "sp.lu_factor": jsl.lu_factor(a)[0], "sp.lu": jsl.lu(a),
        "sp.solve": jsl.solve(a, b), "sp.solve.pos": jsl.solve(h, b, assume_a="pos"),
        "sp.expm": jsl.expm(a / 4), "sp.qr": jsl.qr(a), "sp.eigh": jsl.eigh(h)[0],
        "sp.inv": jsl.inv(a), "sp.det": jsl.det(a),
        "batch.inv": jnp.linalg.inv(batch), "batch.det": jnp.linalg.det(batch),
        "vmap.cholesky": spmdc.vmap(jnp.linalg.cholesky)(batch @ jnp.conj(
            jnp.swapaxes(batch, -1, -2)) + 4 * jnp.eye(4)),
        "lax.triangular_solve.right": lax_linalg.triangular_solve(
            a, b.T, left_side=False, lower=True, transpose_a=True, conjugate_a=True),
        "lax.triangular_solve.conjugate": lax_linalg.triangular_solve(
            a, b, left_side=True, lower=False, conjugate_a=True),
    }
    for trans in (0, 1, 2):
        out[f"sp.solve_triangular.{trans}"] = jsl.solve_triangular(a, b, trans=trans,
                                                                   lower=True)
        out[f"sp.lu_solve.{trans}"] = jsl.lu_solve(jsl.lu_factor(a), b, trans=trans)
    return out


def _expected(a, b, h, batch):
    lu_p, lu_l, lu_u = sl.lu(a)
    w, v = np.linalg.eigh(h)
    return {
        "solve": np.linalg.solve(a, b), "inv": np.linalg.inv(a), "det": np.linalg.det(a),
        "slogdet": np.linalg.slogdet(a), "cholesky": np.linalg.cholesky(h),
        "cholesky.upper": np.linalg.cholesky(h).conj().T, "qr": np.linalg.qr(a),
        "eigh": (w, v), "eigvalsh": w, "svd.hermitian": None,
        "lstsq": np.linalg.lstsq(a, b, rcond=None)[0],
        "matrix_power": np.linalg.matrix_power(a, -2), "cond.1": np.linalg.cond(a, 1),
        "cond.fro": np.linalg.cond(a, "fro"),
        "pinv.hermitian": np.linalg.pinv(h, hermitian=True),
        "matrix_rank.hermitian": np.linalg.matrix_rank(h, hermitian=True),
        "tensorinv": np.linalg.tensorinv(a.reshape(4, 2, 2), 1),
        "tensorsolve": np.linalg.tensorsolve(a.reshape(4, 2, 2), b[:, 0]),
        "sp.cholesky": sl.cholesky(h), "sp.cho_solve": sl.cho_solve(sl.cho_factor(h), b),
        "sp.cho_solve.lower": sl.cho_solve(sl.cho_factor(h, lower=True), b),
        "sp.lu_factor": sl.lu_factor(a)[0], "sp.lu": (lu_p, lu_l, lu_u),
        "sp.solve": sl.solve(a, b), "sp.solve.pos": sl.solve(h, b, assume_a="pos"),
        "sp.expm": sl.expm(a / 4), "sp.qr": sl.qr(a), "sp.eigh": w, "sp.inv": sl.inv(a),
        "sp.det": sl.det(a), "batch.inv": np.linalg.inv(batch),
        "batch.det": np.linalg.det(batch),
        "vmap.cholesky": np.linalg.cholesky(batch @ batch.conj().transpose(0, 2, 1)
                                            + 4 * np.eye(4)),
        "lax.triangular_solve.right": np.linalg.solve(np.tril(a).conj(), b).T,  # x L^H = b^T
        "lax.triangular_solve.conjugate": np.linalg.solve(np.triu(a).conj(), b),
        **{f"sp.solve_triangular.{t}": sl.solve_triangular(a, b, trans=t, lower=True)
           for t in (0, 1, 2)},
        **{f"sp.lu_solve.{t}": sl.lu_solve(sl.lu_factor(a), b, trans=t) for t in (0, 1, 2)},
    }


def _same_up_to_phases(got, want, tol):
    """Columns equal up to a unit complex factor each (eigenvectors, Q of QR)."""
    phases = np.sum(want.conj() * got, axis=-2, keepdims=True)
    np.testing.assert_allclose(got, want * phases / np.abs(phases), rtol=tol, atol=tol)


def test_kernels_match_numpy():
    """The kernels themselves in one program (the quick suite's value check)."""
    a, b, h = (x.astype(np.complex64) for x in (A, B, HERMITIAN))
    low, (lu, _, perm), (v, w), x = spmdc.jit(lambda a, b, h: (
        lax_linalg.cholesky(h), lax_linalg.lu(a), lax_linalg.eigh(h),
        lax_linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True,
                                    conjugate_a=True)))(a, b, h)
    np.testing.assert_allclose(low, np.linalg.cholesky(h), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(lu, sl.lu_factor(a)[0], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(h), rtol=1e-4)
    assert np.asarray(w).dtype == np.float32
    _same_up_to_phases(np.asarray(v), np.linalg.eigh(h)[1], 1e-4)
    np.testing.assert_allclose(x, sl.solve_triangular(a, b, lower=True, trans="C"),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_values_match_numpy_and_scipy(x64, dtype):
    args = [x.astype(dtype) for x in (A, B, HERMITIAN, BATCH)]
    got = spmdc.jit(_programs)(*args)
    want = _expected(*args)
    tol = 2e-4 if dtype == np.complex64 else 1e-10
    real = np.float32 if dtype == np.complex64 else np.float64
    for name, value in got.items():
        if name in ("qr", "sp.qr"):                     # Q R = a, R upper triangular
            q, r = (np.asarray(x) for x in value)
            np.testing.assert_allclose(q @ r, args[0], rtol=tol, atol=tol, err_msg=name)
            np.testing.assert_allclose(np.triu(r), r, err_msg=name)
            _same_up_to_phases(q, np.linalg.qr(args[0])[0], tol)
        elif name == "eigh":
            w, v = (np.asarray(x) for x in value)
            assert w.dtype == real, (name, w.dtype)
            np.testing.assert_allclose(w, want[name][0], rtol=tol, atol=tol, err_msg=name)
            _same_up_to_phases(v, want[name][1], tol)
        elif name == "svd.hermitian":
            u, s, vh = (np.asarray(x) for x in value)
            np.testing.assert_allclose((u * s) @ vh, args[2], rtol=tol, atol=tol * 10)
            np.testing.assert_allclose(s, np.linalg.svd(args[2], compute_uv=False),
                                       rtol=tol, atol=tol)
        elif name == "sp.lu":
            p, low, up = (np.asarray(x) for x in value)
            np.testing.assert_allclose(p @ low @ up, args[0], rtol=tol, atol=tol)
            np.testing.assert_allclose(low, want[name][1], rtol=tol, atol=tol)
        else:
            values = value if isinstance(value, tuple) else (value,)
            wants = want[name] if isinstance(value, tuple) else (want[name],)
            for g, w in zip(values, wants, strict=True):
                np.testing.assert_allclose(np.asarray(g), w, rtol=tol * 10, atol=tol * 10,
                                           err_msg=name)
    assert np.asarray(got["slogdet"][1]).dtype == real        # log|det| is real
    assert np.asarray(got["solve"]).dtype == dtype


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(REFERENCE)])
def test_derivatives_match_jax(name):
    leaves = spmdc.tree_util.tree_leaves(cases.cases(spmdc)[name]())
    oracle.assert_matches_recorded(tuple(leaves), REFERENCE[name], name, rtol=2e-3,
                                   atol=2e-4)


def _outputs(a):
    """Complex results of every differentiable operation of a general ``a``."""
    h = a @ jnp.conj(a.T) + 4 * jnp.eye(4)
    w, v = jnp.linalg.eigh(h)
    ew, _, evr = lax_linalg.eig(a, enable_eigvec_derivs=True)
    q, r = jnp.linalg.qr(a)
    return (jnp.linalg.solve(a, B), jnp.linalg.det(a), jnp.linalg.slogdet(a)[1],
            jnp.linalg.cholesky(h), q, r, w, jnp.abs(v) ** 2, lax_linalg.lu(a)[0],
            jsl.cho_solve(jsl.cho_factor(h), B),
            jsl.solve_triangular(a, B, trans="C", lower=True), ew, evr,
            jnp.linalg.eigvals(a))


@pytest.mark.slow
def test_derivatives_against_differences(x64):
    """check_grads for complex inputs: the JVP against central differences, the VJP
    against the JVP under JAX's pairing."""
    t = _complex(4, 4)
    f = spmdc.jit(_outputs)
    eps = 1e-6
    plus, minus = f(A + eps * t), f(A - eps * t)
    _, tangents = spmdc.jvp(_outputs, (A,), (t,))
    for k, (p, m, d) in enumerate(zip(plus, minus, tangents, strict=True)):
        np.testing.assert_allclose(np.asarray(d), (np.asarray(p) - np.asarray(m)) / (2 * eps),
                                   rtol=1e-5, atol=1e-6, err_msg=f"output {k}")
    outs, pullback = spmdc.vjp(_outputs, A)
    cts = [_complex(*np.shape(o)).astype(np.asarray(o).dtype) if np.iscomplexobj(o)
           else RNG.normal(size=np.shape(o)) for o in outs]
    (a_bar,) = pullback(tuple(cts))
    forward = sum(np.real(np.sum(np.asarray(d) * c)) for d, c in zip(tangents, cts,
                                                                      strict=True))
    np.testing.assert_allclose(np.real(np.sum(np.asarray(a_bar) * t)), forward, rtol=1e-9)


def test_eigenvector_derivatives_need_the_opt_in():
    a = RNG.normal(size=(3, 3)).astype(np.float32)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs=True"):
        spmdc.jvp(lambda m: lax_linalg.eig(m, compute_left_eigenvectors=False), (a,), (a,))


def test_complex_kernels_in_the_cpu_lowering():
    """LAPACK's c/z kernels, the conjugate transpose as trsm's trans 'C' and eigh's real
    eigenvalues, as JAX lowers them."""
    a = A.astype(np.complex64)
    text = spmdc.jit(lambda a, b: (
        lax_linalg.cholesky(a), lax_linalg.lu(a), lax_linalg.qr(a), lax_linalg.eigh(a),
        lax_linalg.triangular_solve(a, b, left_side=True, transpose_a=True,
                                    conjugate_a=True))).lower(a, B.astype(np.complex64))
    text = text.as_text()
    for target in ("lapack_cpotrf_ffi", "lapack_cgetrf_ffi", "lapack_cgeqrf_ffi",
                   "lapack_cungqr_ffi", "lapack_cheevd_ffi", "lapack_ctrsm_ffi"):
        assert target in text, target
    assert "trans_x = 67 : ui8" in text                       # ord("C")
    assert "tensor<4xf32>" in text                             # heevd's eigenvalues


@pytest.mark.slow
def test_qdwh_and_tridiagonal_eigenvectors_of_complex_matrices():
    a = A[:, :3].astype(np.complex64)
    u, h, _, converged = lax_linalg.qdwh(a)
    want_u, want_h = sl.polar(a)
    assert bool(converged)
    np.testing.assert_allclose(u, want_u, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(h, want_h, rtol=1e-4, atol=1e-4)
    d = RNG.normal(size=5).astype(np.complex64)
    e = _complex(4).astype(np.complex64)
    w, v = jsl.eigh_tridiagonal(d, e)         # e above the diagonal, conj(e) below
    t = np.diag(d) + np.diag(e, 1) + np.diag(e.conj(), -1)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(t), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(t @ np.asarray(v), np.asarray(v) * np.asarray(w), atol=1e-4)
    assert np.asarray(v).dtype == np.complex64


def test_cholesky_update_takes_real_factors_as_jax():
    with pytest.raises(TypeError, match="does not accept dtype complex64 at position 1"):
        lax_linalg.cholesky_update(np.eye(3, dtype=np.float32), np.ones(3, np.complex64))


def test_cuda_svd_conjugates_the_jacobi_v_as_jax():
    """cuSOLVER's gesvdj gives V; V^H is its conjugate transpose for complex matrices
    (the kernel calls themselves are compared in tests/compiler/test_stablehlo.py)."""
    import types

    import cuda_lowering_cases
    make, args = cuda_lowering_cases.CASES["svd_c64_reduced"]
    lib = types.SimpleNamespace(lax=spmdc.lax, jnp=jnp)
    ours = spmdc.jit(make(lib)).trace(*args).lower(lowering_platforms=("cuda",)).as_text()
    theirs = oracle.recorded("cuda_lowerings.json")["modules"]["svd_c64_reduced"]

    def conjugation(text):
        return [line.split("=", 1)[1].strip() for line in text.splitlines()
                if "stablehlo.imag" in line or "stablehlo.negate" in line]
    assert conjugation(ours) == conjugation(theirs) != []


def test_lu_solve_under_strict_promotion(x64):
    # Lineax solves with jax_numpy_dtype_promotion='strict' and rank promotion 'raise':
    # the permutation from the pivots must not mix int64 and int32, nor ranks.
    a, b = A.astype(np.complex128), B.astype(np.complex128)
    with spmdc.numpy_dtype_promotion("strict"), spmdc.numpy_rank_promotion("raise"):
        x = spmdc.jit(lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b, trans=2))(a, b)
        y = spmdc.jit(lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b))(a, b[:, 0])
    np.testing.assert_allclose(y, sl.lu_solve(sl.lu_factor(a), b[:, 0]), rtol=1e-10)
    np.testing.assert_allclose(x, sl.lu_solve(sl.lu_factor(a), b, trans=2), rtol=1e-10)
