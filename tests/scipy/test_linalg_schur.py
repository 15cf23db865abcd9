"""spmdc.scipy.linalg's schur, rsf2csf, sqrtm, funm and solve_sylvester against JAX
0.10.2's results, recorded by `tools/record.py linalg_lapack` from
tests/linalg_lapack_cases.py in tests/data/linalg_lapack_reference.npz, checked against
SciPy's definitions too (the factors reproduce the matrix, sqrtm squares back), and
JAX's exception types for bad input."""
from __future__ import annotations

import linalg_lapack_cases
import numpy as np
import oracle
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.scipy import linalg as S

# The inputs (tests/linalg_lapack_cases.py) and JAX's results for them, by name.
REF = {**linalg_lapack_cases.INPUTS, **oracle.recorded("linalg_lapack_reference.npz")}
TOL = {"rtol": 2e-5, "atol": 2e-5}


def _check(got):
    for key, value in got.items():
        assert value.dtype == REF[key].dtype, key
        np.testing.assert_allclose(value, REF[key], **TOL, err_msg=key)


def test_schur_functions_as_jax():
    def run(a, sa, sb, sc):
        out = {}
        out["S_schur_t"], out["S_schur_z"] = S.schur(a)
        out["S_schurc_t"], out["S_schurc_z"] = S.schur(a, output="complex")
        out["S_rsf_t"], out["S_rsf_z"] = S.rsf2csf(out["S_schur_t"], out["S_schur_z"])
        out["S_sqrtm"] = S.sqrtm(a)
        out["S_sylv"] = S.solve_sylvester(sa, sb, sc)
        return out
    got = spmdc.jit(run)(*(REF[k] for k in ("a", "SA", "SB", "SC")))
    _check(got)
    a = REF["a"]
    t, z = got["S_schurc_t"], got["S_schurc_z"]
    np.testing.assert_allclose(np.asarray(z) @ t @ np.asarray(z).conj().T, a, atol=1e-5)
    np.testing.assert_allclose(np.asarray(got["S_sqrtm"]) @ got["S_sqrtm"], a, atol=1e-4)


@pytest.mark.slow
def test_more_schur_functions_as_jax():
    def run(sp, a, sa, sb, sc):
        out = {"S_sqrtm_spd": S.sqrtm(sp), "S_funm_exp": S.funm(a, jnp.exp)}
        out["S_funm_sin"], out["S_funm_err"] = S.funm(a, jnp.sin, disp=False)
        out["S_sylv_eig"] = S.solve_sylvester(sa, sb, sc, method="eigen")
        out["S_sylv_sing"] = S.solve_sylvester(sa, -sa, jnp.tile(sc[:, :1], (1, 4)))
        return out
    got = spmdc.jit(run)(*(REF[k] for k in ("sp", "a", "SA", "SB", "SC")))
    _check(got)
    assert np.isnan(np.asarray(got["S_sylv_sing"])).all()


def test_bad_input_raises_jaxs_types():
    a, sa, sb, sc = REF["a"], REF["SA"], REF["SB"], REF["SC"]
    ones34 = np.ones((3, 4), np.float32)
    cases = [
        (ValueError, "Expected 'output' to be either 'real' or 'complex'",
         lambda: S.schur(a, output="bogus")),
        (NotImplementedError, "Blocked version", lambda: S.sqrtm(a, blocksize=2)),
        (ValueError, "expected square array_like input", lambda: S.funm(ones34, jnp.exp)),
        (ValueError, "Input 'T' must be square", lambda: S.rsf2csf(ones34, ones34)),
        (ValueError, "Input array shapes must match",
         lambda: S.rsf2csf(np.ones((3, 3)), np.ones((4, 4)))),
        (ValueError, "Unrecognized method bogus",
         lambda: S.solve_sylvester(sa, sb, sc, method="bogus")),
        (ValueError, "Incompatible shapes for Sylvester equation",
         lambda: S.solve_sylvester(sa, sb, sc.T)),
    ]
    for kind, message, call in cases:
        with pytest.raises(kind, match=message):
            spmdc.jit(call)()              # raised while tracing: nothing is compiled


def test_eigh_tridiagonal_as_jax():
    d, e = REF["et_d"], REF["et_e"]

    def run(d, e, dc, ec):
        return {"et_w": S.eigh_tridiagonal(d, e, eigvals_only=True),
                "et_w2_v2": S.eigh_tridiagonal(d, e),
                "et_w3_v3": S.eigh_tridiagonal(d, e, key=spmdc.random.key(7), select="i",
                                               select_range=(1, 3)),
                "et_tol": S.eigh_tridiagonal(d, e, eigvals_only=True, tol=1e-2),
                "et_wc": S.eigh_tridiagonal(dc, ec, eigvals_only=True)}
    got = spmdc.jit(run)(d, e, REF["et_dc"], REF["et_ec"])
    for key in ("et_w", "et_tol", "et_wc"):
        np.testing.assert_allclose(got[key], REF[key], rtol=1e-5, atol=1e-5, err_msg=key)
    for key, (w, v) in (("2", got["et_w2_v2"]), ("3", got["et_w3_v3"])):
        np.testing.assert_allclose(w, REF["et_w" + key], rtol=1e-5, atol=1e-5)
        # The same random starts (spmdc.random is JAX's bit for bit): the same vectors.
        np.testing.assert_allclose(v, REF["et_v" + key], rtol=1e-4, atol=1e-4)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    w, v = (np.asarray(x) for x in got["et_w2_v2"])
    np.testing.assert_allclose(t @ v, v * w, atol=1e-5)


@pytest.mark.slow
def test_eigh_tridiagonal_orthogonalises_a_cluster():
    w, v = S.eigh_tridiagonal(np.full(6, 2.0, np.float32), np.full(5, 1e-8, np.float32))
    np.testing.assert_allclose(w, REF["et_wd"], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(v).T @ v, np.eye(6), atol=1e-5)


def test_eigh_tridiagonal_bad_input():
    d, e = REF["et_d"], REF["et_e"]
    cases = [
        (TypeError, "same dtype", lambda: S.eigh_tridiagonal(d, e.astype(np.complex64))),
        (TypeError, "Only float32 and float64",
         lambda: S.eigh_tridiagonal(d.astype(np.int32), e.astype(np.int32))),
        (ValueError, "select_range must be specified",
         lambda: S.eigh_tridiagonal(d, e, select="i")),
        (ValueError, "empty index range",
         lambda: S.eigh_tridiagonal(d, e, select="i", select_range=(3, 1))),
        (NotImplementedError, "select='v'", lambda: S.eigh_tridiagonal(d, e, select="v")),
        (ValueError, "'select must have a value", lambda: S.eigh_tridiagonal(d, e, select="x")),
    ]
    for kind, message, call in cases:
        with pytest.raises(kind, match=message):
            spmdc.jit(call)()
