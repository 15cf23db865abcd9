"""spmdc.lax.linalg's schur, hessenberg, tridiagonal, householder_product, ormqr,
tridiagonal_solve (with its derivatives), symmetric_product and cholesky_update against
JAX 0.10.2's results on the CPU, recorded by `tools/record.py linalg_lapack` from
tests/linalg_lapack_cases.py in tests/data/linalg_lapack_reference.npz (the LAPACK
kernels are the same, so most agree to the last bit), batched, and JAX's exception types
for bad input."""
from __future__ import annotations

import linalg_lapack_cases
import numpy as np
import oracle
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.lax import linalg as L

# The inputs (tests/linalg_lapack_cases.py) and JAX's results for them, by name.
REF = {**linalg_lapack_cases.INPUTS, **oracle.recorded("linalg_lapack_reference.npz")}
TOL = {"rtol": 1e-5, "atol": 1e-5}


def test_every_case_is_recorded():
    recorded = oracle.recorded("linalg_lapack_reference.npz").files
    assert sorted(linalg_lapack_cases.cases(spmdc)) == sorted(recorded)


def test_decompositions_as_jax():
    def run(a, ac, ab, s, raw, taus, c5, c5r):
        out = {}
        out["schur_t"], out["schur_z"] = L.schur(a)
        out["schurc_t"], out["schurc_z"] = L.schur(ac)
        out["schurb_t"], out["schurb_z"] = L.schur(ab)
        out["schur_only"] = L.schur(a, compute_schur_vectors=False)    # [U], as JAX
        out["hess_h"], out["hess_tau"] = L.hessenberg(a)
        out["hessc_h"], out["hessc_tau"] = L.hessenberg(ac)
        for lower in (True, False):
            for k, v in zip("arr d e taus".split(), L.tridiagonal(s, lower=lower),
                            strict=True):
                out[f"trid{int(lower)}_{k}"] = v
        for k, v in zip("arr d e taus".split(), L.tridiagonal(ac + ac.conj().T), strict=True):
            out[f"tridc_{k}"] = v
        out["hp"] = L.householder_product(raw, taus)
        for left in (True, False):
            for tr in (True, False):
                out[f"ormqr{int(left)}{int(tr)}"] = L.ormqr(raw, taus, c5 if left else c5r,
                                                            left=left, transpose=tr)
        return out
    got = spmdc.jit(run)(*(REF[k] for k in "a ac ab s raw taus c5 c5r".split()))
    assert isinstance(got["schur_only"], list) and len(got["schur_only"]) == 1
    for key, value in got.items():
        value = np.stack(value) if isinstance(value, list) else value
        assert value.dtype == REF[key].dtype, key
        np.testing.assert_allclose(value, REF[key], **TOL, err_msg=key)


def test_vmap_over_decompositions():
    ab = REF["ab"]

    def run(ab):
        return (spmdc.vmap(L.schur)(ab), spmdc.vmap(L.hessenberg, in_axes=1)(
            jnp.swapaxes(ab, 0, 1)), spmdc.vmap(lambda x: L.tridiagonal(x + x.T))(ab))
    schur, hessenberg, tridiagonal = spmdc.jit(run)(ab)
    np.testing.assert_allclose(schur[0], REF["schurb_t"], **TOL)
    np.testing.assert_allclose(schur[1], REF["schurb_z"], **TOL)
    from scipy.linalg import lapack
    for i in range(2):
        h, tau, _ = lapack.sgehrd(ab[i])
        np.testing.assert_allclose(hessenberg[0][i], h, **TOL)
        np.testing.assert_allclose(hessenberg[1][i], tau[:2], **TOL)
        np.testing.assert_allclose(tridiagonal[1][i], lapack.ssytrd(ab[i] + ab[i].T, lower=1)[1],
                                   **TOL)


def test_tridiagonal_solve_and_its_derivatives_as_jax():
    dl, d, du, b, w = (REF[k] for k in "dl d du b w".split())

    def loss(dl, d, du, b):
        return jnp.sum(L.tridiagonal_solve(dl, d, du, b) * w) ** 2

    def run(dl, d, du, b):
        zeros = jnp.zeros_like(dl)
        single = jnp.zeros_like(d).at[0].set(1.0)
        return {
            "tsolve": L.tridiagonal_solve(dl, d, du, b),
            "tsolve_pert": L.tridiagonal_solve(zeros, single, zeros, b,
                                               perturb_singular=True),
            "tsolve_sing": L.tridiagonal_solve(zeros, single, zeros, b),
            "grads": spmdc.grad(loss, argnums=(0, 1, 2, 3))(dl, d, du, b),
            "tsolve_jvp": spmdc.jvp(L.tridiagonal_solve, (dl, d, du, b),
                                    (dl * 0.1, d * 0.2, du * -0.3, b * 0.5))[1],
            "batched": spmdc.vmap(L.tridiagonal_solve, in_axes=(None, None, None, 1),
                                  out_axes=1)(dl, d, du, b[:, :, None]),
        }
    got = spmdc.jit(run)(dl, d, du, b)
    for key in ("tsolve", "tsolve_pert", "tsolve_jvp"):
        np.testing.assert_allclose(got[key], REF[key], rtol=1e-5, atol=1e-5, err_msg=key)
    # A singular system without perturbation: NaN or inf, as JAX's (LAPACK's info != 0).
    assert not np.isfinite(np.asarray(got["tsolve_sing"])).all()
    assert not np.isfinite(REF["tsolve_sing"]).all()
    for got_grad, key in zip(got["grads"], ["gdl", "gd", "gdu", "gb"], strict=True):
        np.testing.assert_allclose(got_grad, REF[key], rtol=1e-4, atol=1e-5, err_msg=key)
    np.testing.assert_allclose(got["batched"][:, :, 0], REF["tsolve"], rtol=1e-5, atol=1e-6)


def test_perturbed_solve_alone_compiles():
    # Regression: a program whose only kernel is jaxlib's tridiagonal_solve_perturbed
    # (no lapack_* call) did not register jaxlib's CPU kernels before compiling ("No FFI
    # handler registered").
    zeros = np.zeros(5, np.float32)
    single = np.eye(1, 5, dtype=np.float32)[0]
    got = spmdc.jit(lambda b: L.tridiagonal_solve(zeros, single, zeros, b,
                                                  perturb_singular=True))(REF["b"])
    np.testing.assert_allclose(got, REF["tsolve_pert"], rtol=1e-5)


def test_composed_products_as_jax():
    def run(sa, sc, rr, wv):
        return (L.symmetric_product(sa, sc, alpha=0.5, beta=2.0, symmetrize_output=True),
                L.symmetric_product(sa, sc), L.cholesky_update(rr, wv))
    full, low, updated = spmdc.jit(run)(REF["sa"], REF["sc"], REF["rr"], REF["wv"])
    np.testing.assert_allclose(full, REF["symprod"], **TOL)
    # JAX guarantees the lower triangle only (its CPU result is the whole product).
    np.testing.assert_allclose(np.tril(low), np.tril(REF["symprod_low"]), **TOL)
    np.testing.assert_allclose(updated, REF["cholupd"], **TOL)
    rr, wv = REF["rr"], REF["wv"]
    np.testing.assert_allclose(np.asarray(updated).T @ updated,
                               rr.T @ rr + np.outer(wv, wv), rtol=1e-4, atol=1e-4)


def test_no_derivatives_where_jax_has_none():
    a = REF["a"]
    for f in (lambda x: L.schur(x)[0], lambda x: L.hessenberg(x)[0],
              lambda x: L.tridiagonal(x + x.T)[0]):
        with pytest.raises(NotImplementedError, match="Differentiation rule for"):
            spmdc.jit(spmdc.grad(lambda x, f=f: f(x).sum()))(a)
        with pytest.raises(NotImplementedError, match="Differentiation rule for"):
            spmdc.jit(lambda x, f=f: spmdc.jvp(f, (x,), (x,)))(a)


def test_bad_input_raises_jaxs_types():
    a, dl, d, du, b = (REF[k] for k in "a dl d du b".split())
    cases = [
        (ValueError, "The input to schur must be a square matrix",
         lambda: L.schur(np.ones((3, 4), np.float32))),
        (NotImplementedError, "sort feature", lambda: L.schur(a, sort_eig_vals=True)),
        (ValueError, "Argument to Hessenberg reduction must have shape",
         lambda: L.hessenberg(np.ones((3, 4), np.float32))),
        (ValueError, "at least as many rows as columns",
         lambda: L.householder_product(np.ones((3, 4), np.float32), np.ones(3, np.float32))),
        (ValueError, "must not have more rows",
         lambda: L.householder_product(np.ones((4, 3), np.float32), np.ones(4, np.float32))),
        (TypeError, "all diagonal arguments have the same shape",
         lambda: L.tridiagonal_solve(dl[:4], d, du, b)),
        (TypeError, "leading ndim-1 dimensions of b",
         lambda: L.tridiagonal_solve(dl, d, du, b[:4])),
        (ValueError, "symmetric_update expects",
         lambda: L.symmetric_product(REF["sa"], np.ones((4, 4), np.float32))),
        (ValueError, "Rank-1 update to Cholesky decomposition",
         lambda: L.cholesky_update(REF["rr"], REF["wv"][:3])),
    ]
    for kind, message, call in cases:
        with pytest.raises(kind, match=message):
            spmdc.jit(call)()              # raised while tracing: nothing is compiled


def test_implementation_enums_as_on_jaxs_cpu():
    a = REF["s"]
    w = np.linalg.eigvalsh(a)

    def run(x):
        return (L.eigh(x, implementation=L.EighImplementation.QR)[1],
                L.eig(x, implementation=L.EigImplementation.LAPACK)[0])
    by_qr, by_lapack = spmdc.jit(run)(a)
    np.testing.assert_allclose(by_qr, w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.sort(np.asarray(by_lapack).real), w, rtol=1e-5, atol=1e-5)
    for implementation, message in ((L.EighImplementation.JACOBI, "Jacobi"),
                                    (L.EighImplementation.QDWH, "QDWH")):
        with pytest.raises(NotImplementedError, match=message):
            L.eigh(a, implementation=implementation)
    with pytest.raises(ValueError, match="Only the lapack implementation"):
        L.eig(a, implementation=L.EigImplementation.MAGMA)


def _check_qdwh(result, suffix):
    u, h, iterations, converged = result
    np.testing.assert_allclose(u, REF["q_u" + suffix], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h, REF["q_h" + suffix], rtol=1e-4, atol=1e-5)
    assert int(iterations) == int(REF["q_it" + suffix])


def test_qdwh_as_jax():
    plain, padded = spmdc.jit(lambda x, xp: (L.qdwh(x), L.qdwh(xp, dynamic_shape=(5, 3))))(
        REF["q_x"], REF["q_xp"])
    _check_qdwh(plain, "")
    assert bool(plain[3]) and bool(REF["q_ok"])
    _check_qdwh(padded, "p")
    with pytest.raises(ValueError, match="M >= N"):
        L.qdwh(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="is_hermitian"):
        L.qdwh(REF["q_x"], is_hermitian="yes")


@pytest.mark.slow
def test_qdwh_ill_conditioned_and_cut_short_as_jax():
    ill, short = spmdc.jit(lambda x, xi: (L.qdwh(xi), L.qdwh(x, max_iterations=2)))(
        REF["q_x"], REF["q_xi"])
    _check_qdwh(ill, "i")
    np.testing.assert_allclose(short[0], REF["q_u2"], rtol=1e-4, atol=1e-5)
    assert int(short[2]) == 2 and not bool(short[3]) and not bool(REF["q_ok2"])


def test_lowering_for_cuda_is_a_clear_error():
    # The LAPACK kernels are the CPU's: lowering for CUDA says so instead of emitting a
    # custom call no CUDA handler answers.
    from spmdc.errors import LoweringError
    traced = spmdc.jit(lambda a: L.hessenberg(a)).trace(REF["a"])
    with pytest.raises(LoweringError, match="hessenberg has no lowering for the cuda"):
        traced.lower(lowering_platforms=("cuda",)).as_text()
