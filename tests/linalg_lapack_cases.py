"""lax.linalg's LAPACK-backed functions (schur, hessenberg, tridiagonal,
householder_product, ormqr, tridiagonal_solve and its derivatives, symmetric_product,
cholesky_update, qdwh) and scipy.linalg's schur, rsf2csf, sqrtm, funm, solve_sylvester
and eigh_tridiagonal, run on JAX 0.10.2 (`tools/record.py linalg_lapack` records JAX's
results in tests/data/linalg_lapack_reference.npz, one entry per case;
tests/lax/test_linalg_lapack.py and tests/scipy/test_linalg_schur.py compare). INPUTS
are the arrays the cases and the tests share."""
from __future__ import annotations

import importlib

import numpy as np


def _inputs() -> dict[str, np.ndarray]:
    rng = np.random.RandomState(3)

    def normal(*shape):
        return rng.randn(*shape).astype(np.float32)
    a = normal(4, 4)
    ac = (normal(3, 3) + 1j * normal(3, 3)).astype(np.complex64)
    ab, qr_a, c5, c5r = normal(2, 3, 3), normal(5, 3), normal(5, 2), normal(2, 5)
    dl = np.concatenate([[0], normal(4)]).astype(np.float32)
    d = (rng.randn(5) + 3).astype(np.float32)
    du = np.concatenate([normal(4), [0]]).astype(np.float32)
    b, w, sa, m = normal(5, 2), normal(5, 2), normal(3, 4), normal(3, 3)
    wv = normal(4)
    sb = normal(3, 3) + 3 * np.eye(3, dtype=np.float32)
    sc = normal(4, 3)
    s = a + a.T
    rr = np.linalg.cholesky(s @ s.T + np.eye(4, dtype=np.float32)).T
    tridiagonal = np.random.RandomState(5)
    et_d = tridiagonal.randn(6).astype(np.float32)
    et_e = tridiagonal.randn(5).astype(np.float32)
    polar = np.random.RandomState(9)
    q_x = polar.randn(5, 3).astype(np.float32)
    q_xi = (polar.randn(4, 4) * [1, 1e-3, 1e-5, 1]).astype(np.float32)   # ill-conditioned
    return {
        "a": a, "ac": ac, "ab": ab, "s": s, "qr_a": qr_a, "c5": c5, "c5r": c5r,
        "dl": dl, "d": d, "du": du, "b": b, "w": w, "sa": sa, "sc": m + m.T, "rr": rr,
        "wv": wv, "sp": a @ a.T + np.eye(4, dtype=np.float32),
        "SA": a + 3 * np.eye(4, dtype=np.float32), "SB": sb, "SC": sc,
        "et_d": et_d, "et_e": et_e, "et_dc": et_d.astype(np.complex64),
        "et_ec": (et_e * np.complex64(0.6 + 0.8j)).astype(np.complex64),
        "q_x": q_x, "q_xi": q_xi, "q_xp": np.pad(q_x, ((0, 1), (0, 1))),
    }


INPUTS = _inputs()


def _module(lib, name):
    return importlib.import_module(f"{lib.__name__}.{name}")


def _parts(out, names, thunk):
    """One case per output of ``thunk`` (a tuple); a name of None skips that output."""
    for k, name in enumerate(names):
        if name is not None:
            out[name] = lambda k=k: thunk()[k]


def _lax_cases(lib, out):
    L, jnp, x = _module(lib, "lax.linalg"), _module(lib, "numpy"), INPUTS
    a, ac, s = x["a"], x["ac"], x["s"]
    _parts(out, ["schur_t", "schur_z"], lambda: L.schur(a))
    _parts(out, ["schurc_t", "schurc_z"], lambda: L.schur(ac))
    _parts(out, ["schurb_t", "schurb_z"], lambda: L.schur(x["ab"]))
    out["schur_only"] = lambda: np.stack(L.schur(a, compute_schur_vectors=False))
    _parts(out, ["hess_h", "hess_tau"], lambda: L.hessenberg(a))
    _parts(out, ["hessc_h", "hessc_tau"], lambda: L.hessenberg(ac))
    for lower in (True, False):
        _parts(out, [f"trid{int(lower)}_{k}" for k in ("arr", "d", "e", "taus")],
               lambda lower=lower: L.tridiagonal(s, lower=lower))
    _parts(out, [f"tridc_{k}" for k in ("arr", "d", "e", "taus")],
           lambda: L.tridiagonal(ac + ac.conj().T))

    def householder():
        """qr_a's Householder reflectors below R, and their scales (LAPACK's geqrf)."""
        h, taus = jnp.linalg.qr(x["qr_a"], mode="raw")
        return h.T, taus
    _parts(out, ["raw", "taus"], householder)
    out["hp"] = lambda: L.householder_product(*householder())
    for left in (True, False):
        for tr in (True, False):
            out[f"ormqr{int(left)}{int(tr)}"] = lambda left=left, tr=tr: L.ormqr(
                *householder(), x["c5"] if left else x["c5r"], left=left, transpose=tr)
    dl, d, du, b, w = (x[k] for k in ("dl", "d", "du", "b", "w"))
    zeros, single = np.zeros_like(dl), np.eye(1, 5, dtype=np.float32)[0]
    out["tsolve"] = lambda: L.tridiagonal_solve(dl, d, du, b)
    out["tsolve_pert"] = lambda: L.tridiagonal_solve(zeros, single, zeros, b,
                                                     perturb_singular=True)
    out["tsolve_sing"] = lambda: L.tridiagonal_solve(zeros, single, zeros, b)

    def loss(dl, d, du, b):
        return jnp.sum(L.tridiagonal_solve(dl, d, du, b) * w) ** 2
    _parts(out, ["gdl", "gd", "gdu", "gb"],
           lambda: lib.grad(loss, argnums=(0, 1, 2, 3))(dl, d, du, b))
    out["tsolve_jvp"] = lambda: lib.jvp(L.tridiagonal_solve, (dl, d, du, b),
                                        (dl * 0.1, d * 0.2, du * -0.3, b * 0.5))[1]
    out["symprod"] = lambda: L.symmetric_product(x["sa"], x["sc"], alpha=0.5, beta=2.0,
                                                 symmetrize_output=True)
    out["symprod_low"] = lambda: L.symmetric_product(x["sa"], x["sc"])
    out["cholupd"] = lambda: L.cholesky_update(x["rr"], x["wv"])
    _parts(out, ["q_u", "q_h", "q_it", "q_ok"], lambda: L.qdwh(x["q_x"]))
    _parts(out, ["q_ui", "q_hi", "q_iti", "q_oki"], lambda: L.qdwh(x["q_xi"]))
    _parts(out, ["q_up", "q_hp", "q_itp", None], lambda: L.qdwh(x["q_xp"], dynamic_shape=(5, 3)))
    _parts(out, ["q_u2", None, "q_it2", "q_ok2"], lambda: L.qdwh(x["q_x"], max_iterations=2))


def _scipy_cases(lib, out):
    S, jnp, x = _module(lib, "scipy.linalg"), _module(lib, "numpy"), INPUTS
    a, sa, sb, sc = x["a"], x["SA"], x["SB"], x["SC"]
    _parts(out, ["S_schur_t", "S_schur_z"], lambda: S.schur(a))
    _parts(out, ["S_schurc_t", "S_schurc_z"], lambda: S.schur(a, output="complex"))
    _parts(out, ["S_rsf_t", "S_rsf_z"], lambda: S.rsf2csf(*S.schur(a)))
    out["S_sqrtm"] = lambda: S.sqrtm(a)
    out["S_sqrtm_spd"] = lambda: S.sqrtm(x["sp"])
    out["S_funm_exp"] = lambda: S.funm(a, jnp.exp)
    _parts(out, ["S_funm_sin", "S_funm_err"], lambda: S.funm(a, jnp.sin, disp=False))
    out["S_sylv"] = lambda: S.solve_sylvester(sa, sb, sc)
    out["S_sylv_eig"] = lambda: S.solve_sylvester(sa, sb, sc, method="eigen")
    out["S_sylv_sing"] = lambda: S.solve_sylvester(sa, -sa, jnp.tile(sc[:, :1], (1, 4)))
    d, e = x["et_d"], x["et_e"]
    out["et_w"] = lambda: S.eigh_tridiagonal(d, e, eigvals_only=True)
    _parts(out, ["et_w2", "et_v2"], lambda: S.eigh_tridiagonal(d, e))
    _parts(out, ["et_w3", "et_v3"], lambda: S.eigh_tridiagonal(
        d, e, key=lib.random.key(7), select="i", select_range=(1, 3)))
    out["et_tol"] = lambda: S.eigh_tridiagonal(d, e, eigvals_only=True, tol=1e-2)
    out["et_wc"] = lambda: S.eigh_tridiagonal(x["et_dc"], x["et_ec"], eigvals_only=True)
    _parts(out, ["et_wd", "et_vd"], lambda: S.eigh_tridiagonal(
        np.full(6, 2.0, np.float32), np.full(5, 1e-8, np.float32)))


def cases(lib):
    out = {}
    _lax_cases(lib, out)
    _scipy_cases(lib, out)
    return out
