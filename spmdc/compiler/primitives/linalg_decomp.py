"""The orthogonal decompositions on jaxlib's LAPACK kernels: qr, eigh, svd (the rest of
linear algebra and the shared pieces are in linalg.py).

- ``qr(a, full_matrices) -> (q, r)``: Householder QR (``geqrf``, then ``orgqr``, or
  ``ungqr`` for complex matrices, forms ``q``); ``q`` is ``[..., m, m]`` with
  ``full_matrices`` else ``[..., m, min(m, n)]``.
- ``eigh(a, lower) -> (v, w)``: eigenvalues ``w`` in ascending order and eigenvectors in
  the columns of ``v`` of the symmetric (Hermitian) matrix whose ``lower`` (or upper)
  triangle is ``a``'s (``syevd``, ``heevd``); ``w`` is real (float32 for complex64);
  the derivative rules assume symmetric tangents (Note [symmetric inputs] in linalg.py).
- ``svd(a, full_matrices, compute_uv, algorithm) -> (s,)`` or ``(s, u, vt)``: singular
  values in descending order, ``a = u diag(s) vt``, by the LAPACK driver ``algorithm``
  names (Note [svd algorithms]).
The JVP rules are JAX's; the VJP rules their transposes (derivations in the comments) for
real matrices, derived from the JVP for complex ones (Note [complex linear algebra
derivatives] in linalg.py; svd's complex rules are in linalg_svd_complex.py).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..builder import Builder, lit
from ..ir import TensorType, dtype_name
from ..passes.autodiff import vjp_rules, zeros
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules
from ..stablehlo import ffi_call, lower_rules
from .complex_parts import real_dtype
from .core import ShapeError, declare
from .linalg import (
    INT32,
    _diagonal,
    _lower_func,
    _permutation_matrix,
    check_matrix,
    eye_mask,
    lapack_target,
    matmul,
    matrix_batch_rule,
    mH,
    mT,
    not_ok_to_nan,
    tril,
    vjp_by_transposing,
)

__all__ = ["qr_p", "eigh_p", "svd_p", "qr_lowering", "SVD_ALGORITHMS"]


def _rows(b: Builder, v, shape) -> object:
    """A batch of vectors ``v[..., j]`` spread over matrices ``[..., i, j] -> v[j]``."""
    nd = len(shape)
    return b.broadcast_in_dim(v, shape=shape, broadcast_dimensions=(*range(nd - 2), nd - 1))


def _cols(b: Builder, v, shape) -> object:
    """``[..., i, j] -> v[i]``."""
    nd = len(shape)
    return b.broadcast_in_dim(v, shape=shape, broadcast_dimensions=tuple(range(nd - 1)))


def _diag_matrix(b: Builder, v) -> object:
    shape = (*v.type.shape, v.type.shape[-1])
    return b.select(eye_mask(b, shape), _rows(b, v, shape), lit(0, v.type.dtype))


def _reciprocal_gaps(b: Builder, gaps) -> object:
    """``1 / gaps`` off the diagonal, 0 on it (JAX's ``1 / (gaps + I) - I``)."""
    eye = b.convert(eye_mask(b, gaps.type.shape), new_dtype=gaps.type.dtype)
    return b.sub(b.div(lit(1, gaps.type.dtype), b.add(gaps, eye)), eye)


def _sym(b: Builder, x) -> object:
    return b.add(x, mT(b, x))


# --- qr --------------------------------------------------------------------------------------

def _qr_rule(a: TensorType, *, full_matrices: bool):
    check_matrix("qr", a)
    *batch, m, n = a.shape
    k = m if full_matrices else min(m, n)
    return TensorType((*batch, m, k), a.dtype), TensorType((*batch, k, n), a.dtype)


def _qr_impl(a, *, full_matrices):
    q, r = np.linalg.qr(a, mode="complete" if full_matrices else "reduced")
    return q.astype(a.dtype), r.astype(a.dtype)


def qr_lowering(target: Callable[[str, np.dtype], str]) -> Any:
    """The lowering of qr on the ``geqrf`` and ``orgqr`` kernels named by ``target``:
    LAPACK's on the CPU, cuSOLVER's on CUDA, which take and return the same buffers."""
    def rule(ctx, eqn, a):
        t = eqn.inputs[0].type
        full = eqn.params["full_matrices"]
        *batch, m, n = t.shape
        q_t, r_t = (v.type for v in eqn.outputs)
        nd = t.ndim
        if m == 0 or n == 0:
            def empty(b, x):
                eye = b.convert(eye_mask(b, q_t.shape), new_dtype=t.dtype)
                return eye, zeros(b, r_t)
            return _lower_func(ctx, empty, [t], [a])
        k = min(m, n)
        tau_t = TensorType((*batch, k), t.dtype)
        raw, taus = ffi_call(target("geqrf", t.dtype), [a], [t], [t, tau_t],
                             aliases={0: 0})

        def householder_input(b, x):
            if m < n:
                return [b.slice(x, start_indices=(0,) * nd, limit_indices=(*batch, m, m),
                                strides=None)]
            if full and m > n:
                pads = ((0, 0, 0),) * (nd - 1) + ((0, m - n, 0),)
                return [b.pad(x, lit(0, t.dtype), padding_config=pads)]
            return [x]
        (h,) = _lower_func(ctx, householder_input, [t], [raw])
        h_t = TensorType((*batch, m, m if (m < n or full) else n), t.dtype)
        (q,) = ffi_call(target("orgqr", t.dtype), [h, taus], [h_t, tau_t], [h_t],
                        aliases={0: 0})

        def upper(b, x):
            if r_t.shape != t.shape:
                x = b.slice(x, start_indices=(0,) * nd, limit_indices=r_t.shape, strides=None)
            return [tril(b, x, 0, lower=False)]
        (r,) = _lower_func(ctx, upper, [t], [raw])
        return [q, r]
    return rule


def _columns(b, x, start: int, stop: int):
    """The columns ``start:stop`` of a batch of matrices."""
    *batch, rows, _ = x.type.shape
    return b.slice(x, start_indices=(*(0,) * (x.type.ndim - 1), start),
                   limit_indices=(*batch, rows, stop), strides=None)


def _matrix_rows(b, x, start: int, stop: int):
    """The rows ``start:stop`` of a batch of matrices."""
    *batch, _, cols = x.type.shape
    return b.slice(x, start_indices=(*(0,) * (x.type.ndim - 2), start, 0),
                   limit_indices=(*batch, stop, cols), strides=None)


def _solve_adjoint(b, a, rhs):
    """``a^-H rhs`` for square ``a``, by partial-pivoting LU (``a = P^T L U``)."""
    lu, _, perm = b.lu(a)
    conj = {"conjugate_a": True} if a.type.dtype.kind == "c" else {}
    y = b.triangular_solve(lu, rhs, left_side=True, lower=False, transpose_a=True,
                           unit_diagonal=False, **conj)
    z = b.triangular_solve(lu, y, left_side=True, lower=True, transpose_a=True,
                           unit_diagonal=True, **conj)
    return matmul(b, mT(b, _permutation_matrix(b, perm, a.type.dtype)), z)


def _full_qr_jvp(b, q, r, da):
    # A tall a with full_matrices (JAX's rule, arXiv:2409.13374 eqs 32-33): the thin
    # part's derivative, then dQ's last m - n columns from Z = Q_pn (Q_nn - I)^-1:
    # dQ_mp = dQ_mn Z^H - (Q_mn + Q_mp Z) (dQ_pn - Z dQ_nn)^H; dR's last rows are zero.
    m, n = da.type.shape[-2:]
    q_mn, q_mp = _columns(b, q, 0, n), _columns(b, q, n, m)
    dq_mn, dr_nn = _thin_qr_jvp(b, q_mn, _matrix_rows(b, r, 0, n), da)
    q_nn, q_pn = _matrix_rows(b, q_mn, 0, n), _matrix_rows(b, q_mn, n, m)
    dq_nn, dq_pn = _matrix_rows(b, dq_mn, 0, n), _matrix_rows(b, dq_mn, n, m)
    eye = b.convert(eye_mask(b, q_nn.type.shape), new_dtype=q.type.dtype)
    z_h = _solve_adjoint(b, b.sub(q_nn, eye), mH(b, q_pn))
    z = mH(b, z_h)
    dq_mp = b.sub(matmul(b, dq_mn, z_h),
                  matmul(b, b.add(q_mn, matmul(b, q_mp, z)),
                         mH(b, b.sub(dq_pn, matmul(b, z, dq_nn)))))
    nd = da.type.ndim
    dr = b.pad(dr_nn, lit(0, r.type.dtype),
               padding_config=((0, 0, 0),) * (nd - 2) + ((0, m - n, 0), (0, 0, 0)))
    return b.concatenate(dq_mn, dq_mp, dimension=nd - 1), dr


def _qr_jvp(b, primals, tangents, *, full_matrices):
    # A wide a = [A1 A2] (m < n, A1 square): Q R1 = A1 is the square case, and
    # R2 = Q^H A2 gives dR2 = dQ^H A2 + Q^H dA2 (JAX's rule).
    (a,), (da,) = primals, tangents
    q, r = b.qr(a, full_matrices=full_matrices)
    m, n = a.type.shape[-2:]
    if full_matrices and m > n:
        return [q, r], list(_full_qr_jvp(b, q, r, da))
    if m >= n:
        return [q, r], list(_thin_qr_jvp(b, q, r, da))
    dq, dr1 = _thin_qr_jvp(b, q, _columns(b, r, 0, m), _columns(b, da, 0, m))
    dr2 = b.add(matmul(b, mH(b, dq), _columns(b, a, m, n)),
                matmul(b, mH(b, q), _columns(b, da, m, n)))
    return [q, r], [dq, b.concatenate(dr1, dr2, dimension=a.type.ndim - 1)]


def _thin_qr_jvp(b, q, r, da):
    # C = dA R^-1, W = Q^H C, O = tril(W, -1) - tril(W, -1)^H (+ i im(diag(W)) for
    # complex matrices, JAX's correction); dQ = Q (O - W) + C, dR = (W - O) R.
    c = b.triangular_solve(r, da, left_side=False, lower=False, transpose_a=False,
                           unit_diagonal=False)
    w = matmul(b, mH(b, q), c)
    low = tril(b, w, -1)
    o = b.sub(low, mH(b, low))
    if w.type.dtype.kind == "c":
        imag_part = b.sub(w, b.convert(b.real(w), new_dtype=w.type.dtype))
        o = b.add(o, b.select(eye_mask(b, w.type.shape), imag_part, lit(0, w.type.dtype)))
    return b.add(matmul(b, q, b.sub(o, w)), c), matmul(b, b.sub(w, o), r)


def _qr_vjp(b, ct, a, *, full_matrices):
    # Transposing the JVP: G = Q^T qbar - rbar R^T, wbar = tril(G - G^T, -1) - G,
    # cbar = qbar + Q wbar, abar = cbar R^-T.
    m, n = a.type.shape[-2:]
    if m < n or (full_matrices and m > n):        # the transpose of the JVP, derived
        return _qr_vjp_transposed(b, ct, a, full_matrices=full_matrices)
    q, r = b.qr(a, full_matrices=full_matrices)
    q_bar = zeros(b, q.type) if ct[0] is None else ct[0]
    r_bar = zeros(b, r.type) if ct[1] is None else ct[1]
    g = b.sub(matmul(b, mT(b, q), q_bar), matmul(b, r_bar, mT(b, r)))
    w_bar = b.sub(tril(b, b.sub(g, mT(b, g)), -1), g)
    c_bar = b.add(q_bar, matmul(b, q, w_bar))
    return [b.triangular_solve(r, c_bar, left_side=False, lower=False, transpose_a=True,
                               unit_diagonal=False)]


qr_p = declare("qr", _qr_rule, _qr_impl, multiple_results=True)
batch_rules[qr_p] = matrix_batch_rule(qr_p)
jvp_rules[qr_p] = _qr_jvp
_qr_vjp_transposed = vjp_by_transposing(_qr_jvp, True, None)
vjp_rules[qr_p] = vjp_by_transposing(_qr_jvp, True, _qr_vjp)
lower_rules[qr_p] = qr_lowering(lapack_target)


# --- eigh ------------------------------------------------------------------------------------

def _eigh_rule(a: TensorType, *, lower: bool):
    check_matrix("eigh", a, square=True)
    return a, TensorType(a.shape[:-1], _singular_dtype(a.dtype))


def _eigh_impl(a, *, lower):
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return v.astype(a.dtype), w.astype(_singular_dtype(a.dtype))


def _eigh_lowering(ctx, eqn, a):
    t = eqn.inputs[0].type
    if t.shape[-1] == 0:
        return _lower_func(ctx, lambda b, x: [x, zeros(b, eqn.outputs[1].type)], [t], [a])
    w_t = eqn.outputs[1].type
    info_t = TensorType(t.shape[:-2], INT32)
    v, w, info = ffi_call(lapack_target("syevd", t.dtype), [a], [t], [t, w_t, info_t],
                          {"uplo": ord("L" if eqn.params["lower"] else "U"), "mode": ord("V")},
                          aliases={0: 0})
    return [not_ok_to_nan(ctx, info, info_t, v, t), not_ok_to_nan(ctx, info, info_t, w, w_t)]


def _eigh_gaps(b, w):
    shape = (*w.type.shape, w.type.shape[-1])
    return _reciprocal_gaps(b, b.sub(_rows(b, w, shape), _cols(b, w, shape)))  # 1/(w_j - w_i)


def _eigh_jvp(b, primals, tangents, *, lower):
    # M = V^H dA V; dV = V (F o M), dw = re(diag(M)), F_ij = 1 / (w_j - w_i) off the
    # diagonal.
    (a,), (da,) = primals, tangents
    v, w = b.eigh(a, lower=lower)
    m = matmul(b, mH(b, v), matmul(b, da, v))
    gaps = _eigh_gaps(b, w)
    if a.type.dtype.kind == "c":
        gaps = b.convert(gaps, new_dtype=a.type.dtype)
        return [v, w], [matmul(b, v, b.mul(gaps, m)), _diagonal(b, b.real(m))]
    return [v, w], [matmul(b, v, b.mul(gaps, m)), _diagonal(b, m)]


def _eigh_vjp(b, ct, a, *, lower):
    # abar = V (F o (V^T vbar) + diag(wbar)) V^T
    v, w = b.eigh(a, lower=lower)
    inner = zeros(b, v.type)
    if ct[0] is not None:
        inner = b.mul(_eigh_gaps(b, w), matmul(b, mT(b, v), ct[0]))
    if ct[1] is not None:
        inner = b.add(inner, _diag_matrix(b, ct[1]))
    return [matmul(b, v, matmul(b, inner, mT(b, v)))]


eigh_p = declare("eigh", _eigh_rule, _eigh_impl, multiple_results=True)
batch_rules[eigh_p] = matrix_batch_rule(eigh_p)
jvp_rules[eigh_p] = _eigh_jvp
vjp_rules[eigh_p] = vjp_by_transposing(_eigh_jvp, True, _eigh_vjp)
lower_rules[eigh_p] = _eigh_lowering


# --- svd -------------------------------------------------------------------------------------

_SVD_KINDS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
              np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def _singular_dtype(dtype: np.dtype) -> np.dtype:
    return real_dtype(dtype) if dtype.kind == "c" else dtype


def _svd_types(a: TensorType, full_matrices: bool):
    # The singular values are real: float32 for complex64 matrices, float64 for complex128.
    *batch, m, n = a.shape
    k = min(m, n)
    return (TensorType((*batch, k), _singular_dtype(a.dtype)),
            TensorType((*batch, m, m if full_matrices else k), a.dtype),
            TensorType((*batch, n if full_matrices else k, n), a.dtype))


# Note [svd algorithms]
# JAX's lax.linalg.SvdAlgorithm picks the kernel: DEFAULT and DIVIDE_AND_CONQUER are
# LAPACK's divide-and-conquer gesdd on the CPU, QR its QR-iteration gesvd; JACOBI and
# POLAR have no CPU kernel (NotImplementedError, as JAX). On CUDA DEFAULT is cuSOLVER's
# gesvdj up to 1024 x 1024 and gesvd beyond, JACOBI gesvdj and QR gesvd at every size
# (linalg_cuda.py). The param holds the enum's value ("default", "QR", "Jacobi", "polar",
# "divide_and_conquer") and is bound only when it is not "default" (Note [default gather
# and scatter parameters] in lax/slicing.py), so the programs of a plain svd are
# unchanged. The derivative rules keep the algorithm for the decompositions they make.
SVD_ALGORITHMS = ("default", "QR", "Jacobi", "polar", "divide_and_conquer")


def _svd_rule(a: TensorType, *, full_matrices: bool, compute_uv: bool,
              algorithm: str = "default"):
    if a.ndim < 2:
        raise ShapeError(f"svd needs a matrix (or a batch of matrices, [..., m, n]); got {a}")
    if a.dtype not in _SVD_KINDS:
        raise ShapeError(f"svd: LAPACK on CPU has no kernel for {dtype_name(a.dtype)}; "
                         "convert to float32, float64, complex64 or complex128")
    if algorithm not in SVD_ALGORITHMS:
        raise ValueError(f"svd: algorithm must be one of {SVD_ALGORITHMS}, got {algorithm!r}")
    types = _svd_types(a, full_matrices)
    return types if compute_uv else types[:1]


def _svd_impl(a, *, full_matrices, compute_uv, algorithm="default"):
    s_dtype = _singular_dtype(a.dtype)
    if not compute_uv:
        return (np.linalg.svd(a, compute_uv=False).astype(s_dtype),)
    u, s, vt = np.linalg.svd(a, full_matrices=full_matrices)
    return s.astype(s_dtype), u.astype(a.dtype), vt.astype(a.dtype)


def _svd_lowering(ctx, eqn, a):
    t = eqn.inputs[0].type
    full, compute_uv = eqn.params["full_matrices"], eqn.params["compute_uv"]
    algorithm = eqn.params.get("algorithm", "default")
    if algorithm in ("Jacobi", "polar"):
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented "
                                  "on CPU (svd's algorithm=); use SvdAlgorithm.QR, "
                                  "DIVIDE_AND_CONQUER or DEFAULT. See Note [svd algorithms]")
    s_t, u_t, vt_t = _svd_types(t, full)
    if 0 in t.shape[-2:]:
        def empty(b, x):
            eyes = [b.convert(eye_mask(b, ut.shape), new_dtype=t.dtype) for ut in (u_t, vt_t)]
            return [zeros(b, s_t), *eyes][:3 if compute_uv else 1]
        return _lower_func(ctx, empty, [t], [a])
    info_t = TensorType(t.shape[:-2], INT32)
    mode = ("A" if full else "S") if compute_uv else "N"
    driver = "gesvd" if algorithm == "QR" else "gesdd"
    target = f"lapack_{_SVD_KINDS[t.dtype]}{driver}_ffi"
    _, s, u, vt, info = ffi_call(target, [a], [t],
                                 [t, s_t, u_t, vt_t, info_t], {"mode": ord(mode)},
                                 aliases={0: 0})
    outs = [(s, s_t), (u, u_t), (vt, vt_t)][:3 if compute_uv else 1]
    return [not_ok_to_nan(ctx, info, info_t, x, xt) for x, xt in outs]


def _svd_check_derivative(t: TensorType, full_matrices: bool, compute_uv: bool) -> None:
    if compute_uv and full_matrices and t.shape[-1] != t.shape[-2]:
        raise NotImplementedError(
            "the derivative of svd with full_matrices=True is implemented for square "
            f"matrices only, as in JAX; got {t}: use full_matrices=False")


def _svd_parts(b, a, algorithm):
    s, u, vt = b.svd(a, full_matrices=False, compute_uv=True, **_algorithm_param(algorithm))
    shape = (*s.type.shape, s.type.shape[-1])
    s_j, s_i = _rows(b, s, shape), _cols(b, s, shape)
    f = _reciprocal_gaps(b, b.mul(b.add(s_j, s_i), b.sub(s_j, s_i)))  # 1/(s_j^2 - s_i^2)
    return s, u, vt, s_j, s_i, f


def _algorithm_param(algorithm: str) -> dict[str, str]:
    return {} if algorithm == "default" else {"algorithm": algorithm}


def _svd_jvp(b, primals, tangents, *, full_matrices, compute_uv, algorithm="default"):
    # JAX's rule (real): dS = U^T dA V, ds = diag(dS),
    # dU = U (F o (dS S + S dS^T)) [+ (I - U U^T) dA V S^-1 when m > n],
    # dV = V (F o (S dS + dS^T S)) [+ (I - V V^T) dA^T U S^-1 when n > m].
    (a,), (da,) = primals, tangents
    _svd_check_derivative(a.type, full_matrices, compute_uv)
    s, u, vt, s_j, s_i, f = _svd_parts(b, a, algorithm)
    v = mT(b, vt)
    ds_mat = matmul(b, mT(b, u), matmul(b, da, v))
    ds = _diagonal(b, ds_mat)
    if not compute_uv:
        return [b.svd(a, full_matrices=full_matrices, compute_uv=False,
                      **_algorithm_param(algorithm))[0]], [ds]
    du = matmul(b, u, b.mul(f, _sym(b, b.mul(ds_mat, s_j))))
    dv = matmul(b, v, b.mul(f, _sym(b, b.mul(s_i, ds_mat))))
    m, n = a.type.shape[-2:]
    if m > n:
        dav = matmul(b, da, v)
        du = b.add(du, b.div(b.sub(dav, matmul(b, u, matmul(b, mT(b, u), dav))),
                             _rows(b, s, dav.type.shape)))
    if n > m:
        dau = matmul(b, mT(b, da), u)
        dv = b.add(dv, b.div(b.sub(dau, matmul(b, v, matmul(b, vt, dau))),
                             _rows(b, s, dau.type.shape)))
    return [s, u, vt], [ds, du, mT(b, dv)]


def _svd_vjp(b, ct, a, *, full_matrices, compute_uv, algorithm="default"):
    # The transpose of the JVP, with A1 = F o (U^T ubar), A2 = F o (V^T vbar):
    # dSbar = diag(sbar) + (A1 + A1^T) S + S (A2 + A2^T); abar = U dSbar V^T
    # [+ (ubar - U U^T ubar) S^-1 V^T when m > n] [+ U ((vbar - V V^T vbar) S^-1)^T if n > m].
    _svd_check_derivative(a.type, full_matrices, compute_uv)
    s, u, vt, s_j, s_i, f = _svd_parts(b, a, algorithm)
    v = mT(b, vt)
    shape = (*s.type.shape, s.type.shape[-1])
    ds_bar = zeros(b, TensorType(shape, a.type.dtype))
    if ct[0] is not None:
        ds_bar = _diag_matrix(b, ct[0])
    m, n = a.type.shape[-2:]
    total = None
    if compute_uv and ct[1] is not None:
        u_bar = ct[1]
        a1 = b.mul(f, matmul(b, mT(b, u), u_bar))
        ds_bar = b.add(ds_bar, b.mul(_sym(b, a1), s_j))
        if m > n:
            scaled = b.div(u_bar, _rows(b, s, u_bar.type.shape))
            resid = b.sub(scaled, matmul(b, u, matmul(b, mT(b, u), scaled)))
            total = matmul(b, resid, vt)
    if compute_uv and ct[2] is not None:
        v_bar = mT(b, ct[2])
        a2 = b.mul(f, matmul(b, vt, v_bar))
        ds_bar = b.add(ds_bar, b.mul(s_i, _sym(b, a2)))
        if n > m:
            scaled = b.div(v_bar, _rows(b, s, v_bar.type.shape))
            resid = b.sub(scaled, matmul(b, v, matmul(b, vt, scaled)))
            term = matmul(b, u, mT(b, resid))
            total = term if total is None else b.add(total, term)
    out = matmul(b, u, matmul(b, ds_bar, vt))
    return [out if total is None else b.add(out, total)]


svd_p = declare("svd", _svd_rule, _svd_impl, multiple_results=True)
batch_rules[svd_p] = matrix_batch_rule(svd_p)
jvp_rules[svd_p] = _svd_jvp
vjp_rules[svd_p] = _svd_vjp
lower_rules[svd_p] = _svd_lowering

