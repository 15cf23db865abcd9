"""``lobpcg_standard``: the top ``k`` eigenpairs of a symmetric (Hermitian) matrix, or of
the linear operator a function applies, by JAX's LOBPCG (locally optimal block
preconditioned conjugate gradient) variant.

Note [JAX's LOBPCG]
The iteration is JAX 0.10.2's, step for step, so that it converges in the same number of
iterations to the same pairs: the block ``X`` (orthonormalised twice by SVQB, which zeroes
the columns of a rank-deficient block), its search directions ``P`` (first a basis
extension by a block Householder reflector, deterministic) and the residuals ``R``;
each step projects ``[X, P]`` out of ``R``, solves the Rayleigh-Ritz problem on ``[X, P,
R]`` (eigenvalues descending), takes the leading ``k`` Ritz vectors as the new ``X`` and
the orthonormalised rest of their coefficients as the new ``P``, and stops when every
pair's residual norm is below ``tol * 10 * n * (|A x| + lambda)`` or after ``m`` steps.
Products are at HIGHEST precision, as JAX's. No soft locking and no preconditioner, as
in JAX's; the smallest eigenpairs are those of ``-A``.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.tracing import where
from spmdc.transforms.jit import jit

__all__ = ["lobpcg_standard"]


def lobpcg_standard(A: Any, X: Any, m: int = 100, tol: Any = None
                    ) -> tuple[Any, Any, Any]:
    """``(theta, U, i)``: the ``k`` largest eigenvalues (descending) of the ``(n, n)``
    matrix ``A`` (an array, or a function applying it to an ``(n, j)`` block), their
    eigenvectors in the columns of ``U``, and the iterations run (at most ``m``), from
    the ``(n, k)`` initial block ``X`` (``0 < 5 k < n``). See Note [JAX's LOBPCG]."""
    if isinstance(A, np.ndarray) or hasattr(A, "shape"):
        A, X = jnp.asarray(A), jnp.asarray(X)
        if A.dtype != X.dtype:
            raise ValueError(f"A, X must have same dtypes (were {A.dtype}, {X.dtype})")
        return _with_matrix(A, X, m, tol)
    if not callable(A):
        raise TypeError(f"lobpcg_standard: A must be an (n, n) array or a function applying "
                        f"one, got {type(A).__name__}{where()}")
    return _with_function(A, X, m, tol)


def _mm(a: Any, b: Any) -> Any:
    return lax.dot(a, b, precision=(lax.Precision.HIGHEST, lax.Precision.HIGHEST))


@functools.partial(jit, static_argnames=("m",))
def _with_matrix(A: Any, X: Any, m: int, tol: Any) -> tuple[Any, Any, Any]:
    return _lobpcg(functools.partial(_mm, A), X, m, tol)


@functools.partial(jit, static_argnames=("A", "m"))
def _with_function(A: Callable[[Any], Any], X: Any, m: int, tol: Any
                   ) -> tuple[Any, Any, Any]:
    return _lobpcg(A, X, m, tol)


def _check(A: Callable[[Any], Any], X: Any) -> None:
    n, k = X.shape
    if k == 0:
        raise ValueError(f"must have search dim > 0, got {k}")
    if k * 5 >= n:
        raise ValueError(f"expected search dim * 5 < matrix dim (got {k * 5}, {n})")
    probe = A(jnp.zeros((n, 1), X.dtype))
    if probe.dtype != X.dtype:
        raise ValueError(f"A, X must have same dtypes (were {probe.dtype}, {X.dtype})")
    if probe.shape != (n, 1):
        raise ValueError(f"A must be ({n}, {n}) matrix A, got output {probe.shape}")


def _column_norms(x: Any) -> Any:
    return jnp.linalg.norm(x, ord=2, axis=0, keepdims=True)


def _lobpcg(A: Callable[[Any], Any], X: Any, m: int, tol: Any) -> tuple[Any, Any, Any]:
    X = jnp.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"lobpcg_standard: X must be an (n, k) block, got shape {X.shape}")
    n, k = X.shape
    _check(A, X)
    if tol is None:
        tol = float(jnp.finfo(X.dtype).eps)
    X = _orthonormalize(X)
    P = _extend_basis(X, k)
    AX = A(X)
    theta = jnp.sum(X * AX, axis=0, keepdims=True)
    R = AX - theta * X

    def going(state: tuple[Any, ...]) -> Any:
        i, _, _, _, converged, _ = state
        return jnp.logical_and(i < m, converged < k)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        i, X, P, R, _, _ = state
        R = _project_out(jnp.concatenate((X, P), axis=1), R)
        XPR = jnp.concatenate((X, P, R), axis=1)
        theta, Q = _rayleigh_ritz(A, XPR)
        B = Q[:, :k]
        B = B / _column_norms(B)
        X = _mm(XPR, B)
        X = X / _column_norms(X)
        q, _ = jnp.linalg.qr(Q[:k, k:].T)
        P = _mm(XPR, _mm(Q[:, k:], q))
        norm_p = _column_norms(P)
        P = P / jnp.where(norm_p == 0, 1.0, norm_p)
        AX = A(X)
        R = AX - theta[None, :k] * X
        residual = jnp.linalg.norm(R, ord=2, axis=0)
        scale = (jnp.linalg.norm(AX, ord=2, axis=0) + theta[:k]) * n * 10
        converged = jnp.sum(residual < tol * scale)
        return i + 1, X, P, R, converged, theta[None, :k]

    i, X, _, _, _, theta = lax.while_loop(going, step, (0, X, P, R, 0, theta))
    return theta[0, :], X, i


def _eigh_descending(a: Any) -> tuple[Any, Any]:
    w, v = jnp.linalg.eigh(a)
    return w[::-1], v[:, ::-1]


def _svqb(X: Any) -> Any:
    """An orthonormal basis of the span of ``X``'s columns, from the eigenbasis of
    ``X^T X`` (columns for near-zero eigenvalues, a rank deficiency, zeroed)."""
    norms = _column_norms(X)
    X = X / jnp.where(norms == 0, 1.0, norms)
    gram = _mm(X.T, X)
    w, V = _eigh_descending(gram)
    tau = jnp.finfo(X.dtype).eps * w[0]
    inv_sqrt = jnp.where(tau > 0, jnp.maximum(w, tau), 1.0) ** (-0.5)
    out = _mm(X, V * inv_sqrt[None, :])
    keep = ((w > tau) * (jnp.diag(gram) > 0.0))[None, :]
    out = out * keep.astype(out.dtype)
    norms = _column_norms(out)
    keep = keep * (norms > 0.0)
    return out / jnp.where(keep, norms, 1.0)


def _orthonormalize(basis: Any) -> Any:
    return _svqb(_svqb(basis))


def _project_out(basis: Any, U: Any) -> Any:
    """The part of ``U`` orthogonal to the orthonormal (zero columns allowed) ``basis``,
    its columns orthonormal or zero: orthogonality to ``basis`` wins over rank."""
    for _ in range(2):
        U = _orthonormalize(U - _mm(basis, _mm(basis.T, U)))
    for _ in range(2):
        U = U - _mm(basis, _mm(basis.T, U))
    return U * (_column_norms(U) >= 0.99).astype(U.dtype)


def _rayleigh_ritz(A: Callable[[Any], Any], S: Any) -> tuple[Any, Any]:
    return _eigh_descending(_mm(S.T, A(S)))


def _extend_basis(X: Any, extra: int) -> Any:
    """``extra`` orthonormal columns orthogonal to the orthonormal ``X``: the block
    Householder reflector taking ``X`` to the leading unit vectors, applied to the next
    ``extra`` unit vectors."""
    n, k = X.shape
    top, bottom = X[:k], X[k:]
    u, s, vt = jnp.linalg.svd(top)
    y = jnp.concatenate([top + _mm(u, vt), bottom], axis=0)
    units = jnp.concatenate([jnp.eye(extra, dtype=X.dtype),
                             jnp.zeros((n - k - extra, extra), X.dtype)], axis=0)
    w = _mm(y, vt.T * ((2 * (1 + s)) ** -0.5)[None, :])
    h = -2 * _mm(_mm(w, w[k:, :].T), units)
    return h.at[k:].add(units)
