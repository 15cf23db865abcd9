"""``qr_multiply``, ``hessenberg`` and ``polar`` of spmdc.scipy.linalg (JAX's
``jax.scipy.linalg``), written over spmdc's QR, SVD and Cholesky.

``hessenberg`` reduces with LAPACK's Householder reflectors (gehrd's conventions: the
reflector ``I - tau v v^H`` with ``v[0] = 1`` and ``beta = -sign(alpha) * norm``), so ``H`` and
``Q`` carry LAPACK's signs, as JAX's do. ``polar`` computes the unitary factor by the
singular value decomposition (``method='svd'``) or by QDWH, the QR-based dynamically
weighted Halley iteration (``method='qdwh'``, the default, as in JAX; Note [QDWH]).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..numpy import linalg as _public
from ..numpy import linalg_solve as _nl
from ..numpy.array_creation import eye, zeros
from ..numpy.comparisons import where
from ..numpy.core import asarray
from ..numpy.shape_ops import concatenate, swapaxes
from ..numpy.tensor_contractions import matmul
from ..numpy.vectorize import vectorize

__all__ = ["qr_multiply", "hessenberg", "polar"]


def _conj_t(x: Any) -> Any:
    return swapaxes(x, -1, -2).conj()


def qr_multiply(a: Any, c: Any, mode: str = "right", pivoting: bool = False,
                conjugate: bool = False, overwrite_a: bool = False,
                overwrite_c: bool = False) -> tuple[Any, Any]:
    """``(c @ Q, R)`` (``mode='right'``) or ``(Q @ c, R)`` (``mode='left'``) for the QR
    decomposition ``a = Q R``, with ``conj(Q)`` where ``conjugate``; ``R`` is ``k x n``
    with ``k = min(m, n)``."""
    if mode not in ("right", "left"):
        raise ValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting=True is not supported by spmdc (no "
                                  "geqp3 primitive yet); call it with pivoting=False")
    a, c = _nl.inexact("qr_multiply", a, c)
    if a.ndim < 2:
        raise ValueError(f"qr_multiply: a must be a matrix, got shape {a.shape}")
    one_dimensional = c.ndim == 1
    if one_dimensional:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(f"qr_multiply: Q @ c needs c with {k} rows (a has shape "
                         f"{tuple(a.shape)}, so Q has {k} columns); c has {c.shape[-2]}")
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(f"qr_multiply: c @ Q needs c with {m} columns (a has shape "
                         f"{tuple(a.shape)}, so Q has {m} rows); c has {c.shape[-1]}")
    q, r = lax.linalg.qr(a, full_matrices=True)
    if conjugate:
        q = q.conj()
    product = matmul(q[..., :, :k], c) if mode == "left" else matmul(c, q)[..., :k]
    if one_dimensional:
        product = product.ravel()
    return product, _triu(r[..., :k, :])


def _triu(x: Any, k: int = 0) -> Any:
    rows = lax.broadcasted_iota(np.int32, x.shape[-2:], 0)
    cols = lax.broadcasted_iota(np.int32, x.shape[-2:], 1)
    return where(cols - rows >= k, x, zeros((), x.dtype))


def _hessenberg_2d(a: Any, calc_q: bool) -> tuple[Any, Any]:
    n = a.shape[-1]
    index = lax.iota(np.int32, n)
    real = np.dtype(a.dtype).kind != "c"
    zero = zeros((), a.dtype)

    def step(k, carry):
        h, q = carry
        column = h[:, k]
        alpha = column[k + 1]
        tail = where(index > k + 1, column, zero)
        tail_norm = _public.norm(tail)
        norm = lax.sqrt(lax.abs(alpha) ** 2 + tail_norm ** 2).astype(a.dtype)
        sign = where(alpha.real >= 0, asarray(1, a.dtype), asarray(-1, a.dtype))
        beta = -sign * norm
        trivial = tail_norm == 0
        if not real:
            trivial = trivial & (alpha.imag == 0)
        safe_beta = where(trivial, asarray(1, a.dtype), beta)
        tau = where(trivial, zero, (beta - alpha) / safe_beta)
        scale = where(trivial, asarray(1, a.dtype), alpha - beta)
        v = where(index == k + 1, asarray(1, a.dtype), tail / scale)
        v_h = v.conj()
        h = h - tau.conj() * v[:, None] * matmul(v_h, h)[None, :]      # H^H from the left
        h = h - tau * matmul(h, v)[:, None] * v_h[None, :]             # H from the right
        q = q - tau * matmul(q, v)[:, None] * v_h[None, :]
        return h, q

    h, q = lax.fori_loop(0, max(n - 2, 0), step, (a, eye(n, dtype=a.dtype)))
    return _triu(h, -1), q


def hessenberg(a: Any, *, calc_q: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> Any:
    """The upper Hessenberg form ``H`` of a square ``a`` (and, with ``calc_q``, the unitary
    ``Q`` with ``a = Q H Q^H``)."""
    (a,) = _nl.inexact("hessenberg", a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"hessenberg: a must be a square matrix, got shape {a.shape}")
    h, q = vectorize(lambda x: _hessenberg_2d(x, calc_q),
                     signature="(n,n)->(n,n),(n,n)")(a)
    return (h, q) if calc_q else h


# Note [QDWH]
# ~~~~~~~~~~~
# The unitary polar factor of a full-column-rank ``a`` is the limit of the weighted Halley
# iteration ``X <- X (a I + b X^H X)(I + c X^H X)^-1`` from ``X0 = a / alpha`` (``alpha`` at
# least the largest singular value, here ``sqrt(norm_1 * norm_inf)``), whose weights come
# from ``l``, a lower bound of X's smallest singular value, chosen so that the singular
# values reach 1 in at most six steps in float64 (Nakatsukasa, Bai and Gygi 2010). While c
# is large the step is taken by a QR factorisation of ``[sqrt(c) X; I]`` (stable for an
# ill-conditioned X), later by a Cholesky factorisation of ``I + c X^H X`` (cheaper). The
# loop stops when the step changes X by less than ``cbrt(4 eps) |X|`` once l is 1, or after
# ``max_iterations`` (10 by default). The factor is unique for a full-rank ``a``, so the
# result equals the SVD's ``U V^H`` to rounding.


def _qdwh(x: Any, eps: float | None, max_iterations: int | None) -> tuple[Any, Any]:
    m, n = x.shape
    dtype = x.dtype
    real_dtype = np.finfo(dtype).dtype
    eps = float(np.finfo(dtype).eps) if eps is None else float(eps)
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    alpha = lax.sqrt(_public.norm(x, ord=1) * _public.norm(x, ord=np.inf))
    u0 = x / where(alpha == 0, asarray(1, real_dtype), alpha).astype(dtype)
    tol_l, tol_norm = 5.0 * eps, (4.0 * eps) ** (1.0 / 3.0)
    identity = eye(n, dtype=dtype)

    def weights(lower):
        l2 = lower * lower
        d = (4.0 * (1.0 - l2) / (l2 * l2)) ** (1.0 / 3.0)
        root = lax.sqrt(1.0 + d)
        a = root + 0.5 * lax.sqrt(8.0 - 4.0 * d + 8.0 * (2.0 - l2) / (l2 * root))
        b = (a - 1.0) ** 2 / 4.0
        c = a + b - 1.0
        return a, b, c, lower * (a + b * l2) / (1.0 + c * l2)

    def qr_step(u, a, b, c):
        stacked = concatenate([lax.sqrt(c).astype(dtype) * u, identity], axis=0)
        q, _ = lax.linalg.qr(stacked, full_matrices=False)
        e = (b / c).astype(dtype)
        return e * u + ((a - b / c) / lax.sqrt(c)).astype(dtype) * matmul(q[:m], _conj_t(q[m:]))

    def cholesky_step(u, a, b, c):
        z = identity + c.astype(dtype) * matmul(_conj_t(u), u)
        w = lax.linalg.cholesky(z)
        # u (W W^H)^-1: solve against W^H, then against W
        y = lax.linalg.triangular_solve(w, u, left_side=False, lower=True,
                                        transpose_a=True, conjugate_a=True)
        y = lax.linalg.triangular_solve(w, y, left_side=False, lower=True)
        e = (b / c).astype(dtype)
        return e * u + (a - e).astype(dtype) * y

    def keep_going(state):
        _, lower, change, count = state
        return (count < max_iterations) & ((lax.abs(1.0 - lower) > tol_l)
                                           | (change > tol_norm))

    def iterate(state):
        u, lower, _, count = state
        a, b, c, lower_next = weights(lower)
        u_next = lax.cond(c > 100.0, qr_step, cholesky_step, u, a, b, c)
        change = _public.norm(u_next - u) / _public.norm(u_next)
        return u_next, lower_next, change, count + 1

    start = (u0, asarray(eps, real_dtype), asarray(np.inf, real_dtype), asarray(0, np.int32))
    u, _, _, _ = lax.while_loop(keep_going, iterate, start)
    h = matmul(_conj_t(u), x)
    return u, (h + _conj_t(h)) / 2


def _polar_2d(a: Any, side: str, method: str, eps: float | None,
              max_iterations: int | None) -> tuple[Any, Any]:
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            return _qdwh(a, eps, max_iterations)
        if m < n and side == "left":
            unitary, posdef = _qdwh(_conj_t(a), eps, max_iterations)
            return _conj_t(unitary), _conj_t(posdef)
        raise NotImplementedError(
            f"polar: method='qdwh' computes side='right' for m >= n and side='left' for "
            f"m < n; a has shape {a.shape} with side={side!r}: use method='svd'")
    u, s, vh = _public.svd(a, full_matrices=False)
    s = s.astype(u.dtype)
    unitary = matmul(u, vh)
    if side == "right":
        return unitary, matmul(_conj_t(vh) * s[None, :], vh)
    return unitary, matmul(u * s[None, :], _conj_t(u))


def polar(a: Any, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None) -> tuple[Any, Any]:
    """``(unitary, posdef)`` with ``a = unitary @ posdef`` (``side='right'``) or
    ``a = posdef @ unitary`` (``side='left'``), ``posdef`` positive semidefinite."""
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"polar: the input a must be at least a 2-D array, got shape "
                         f"{a.shape}")
    if side not in ("right", "left"):
        raise ValueError(f"polar: side must be 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"polar: unknown polar decomposition method {method!r}; use 'qdwh' "
                         f"or 'svd'")
    (a,) = _nl.inexact("polar", a)
    signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return vectorize(lambda x: _polar_2d(x, side, method, eps, max_iterations),
                     signature=signature)(a)
