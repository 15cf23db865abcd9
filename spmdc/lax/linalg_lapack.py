"""The rest of ``jax.lax.linalg`` that runs on the CPU: ``schur``, ``hessenberg``,
``tridiagonal``, ``geqrf``, ``householder_product``, ``ormqr`` and ``tridiagonal_solve`` (one LAPACK
kernel each, spmdc/compiler/primitives/linalg_lapack.py), and ``symmetric_product`` and
``cholesky_update``, which JAX computes with other operations on the CPU and so does
spmdc. spmdc/lax/linalg.py exports them as ``spmdc.lax.linalg``'s.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiler.primitives.linalg_lapack import (
    geqrf_p,
    hessenberg_p,
    householder_product_p,
    ormqr_p,
    schur_p,
    tridiagonal_p,
    tridiagonal_solve_p,
)
from ..core import dtypes
from ..core.operands import asarray
from ..core.precision import Precision
from ..core.tracing import bind
from .dot import batch_matmul
from .elementwise import _where, abs, sqrt
from .shape import reshape, transpose
from .slicing import dynamic_update_slice, slice

__all__ = ["cholesky_update", "geqrf", "hessenberg", "householder_product", "ormqr", "schur",
           "symmetric_product", "tridiagonal", "tridiagonal_solve"]


def _square(x: Any, message: str) -> Any:
    """``x``, checked to be a (batch of) square matrices: JAX's ValueError otherwise."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(message.format(x.shape))
    return x


def schur(x: Any, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable: Any = None) -> list[Any]:
    """The Schur decomposition ``x = Q U Q^H``: ``(U, Q)``, or ``U`` alone without
    ``compute_schur_vectors``. ``U`` is quasi upper triangular for a real ``x`` (2x2
    blocks for complex eigenvalue pairs), upper triangular for a complex one. As JAX's,
    the result is a list: ``[U, Q]``, or ``[U]`` alone without the vectors."""
    if sort_eig_vals or select_callable is not None:
        # JAX's CPU lowering refuses them too: LAPACK's gees sorting is not wired up.
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                                  "implemented (sort_eig_vals / select_callable); sort the "
                                  "eigenvalues of the returned U yourself")
    x = _square(asarray(x), "The input to schur must be a square matrix. Got shape {}.")
    out = bind(schur_p, x, compute_schur_vectors=bool(compute_schur_vectors))
    return list(out)         # a list, as JAX's bind gives: [U, Q], or [U]


def hessenberg(a: Any) -> list[Any]:
    """The Hessenberg reduction ``a = Q H Q^H`` as LAPACK's ``gehrd`` packs it: ``(h,
    taus)``, H in the upper triangle and first subdiagonal of ``h``, the Householder
    reflectors of Q below it with their scale factors ``taus`` ([..., n - 1])."""
    a = _square(asarray(a), "Argument to Hessenberg reduction must have shape [..., n, n], "
                            "got shape {}")
    return list(bind(hessenberg_p, a))


def tridiagonal(a: Any, *, lower: bool = True) -> list[Any]:
    """The reduction of a symmetric (Hermitian) matrix to tridiagonal form ``a = Q T Q^H``
    (LAPACK's ``sytrd``/``hetrd``): ``(arr, d, e, taus)``, ``d`` T's diagonal, ``e`` its
    off-diagonal, Q's reflectors in ``arr`` (below T with ``lower``, above otherwise)
    with their scale factors ``taus``."""
    a = _square(asarray(a), "The input to tridiagonal must be a square matrix. Got shape {}.")
    if a.shape[-1] == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape "
                         f"{a.shape}.")
    return list(bind(tridiagonal_p, a, lower=bool(lower)))


def geqrf(a: Any) -> tuple[Any, Any]:
    """The QR decomposition as LAPACK's ``geqrf`` packs it: ``(a, taus)``, R in the upper
    triangle of ``a``, the Householder reflectors of Q below it with their scale factors
    ``taus`` ([..., min(m, n)]); ``householder_product`` and ``ormqr`` take them."""
    a = asarray(a)
    if a.ndim < 2:
        raise ValueError(f"geqrf: the argument must have shape [..., m, n], got {a.shape}")
    out, taus = bind(geqrf_p, a)
    return out, taus


def householder_product(a: Any, taus: Any) -> Any:
    """The product of the elementary Householder reflectors stored in the columns of
    ``a`` (below the diagonal) with scale factors ``taus``: Q of a QR factorization,
    [..., m, n] (LAPACK's ``orgqr``/``ungqr``)."""
    a, taus = asarray(a), asarray(taus)
    if a.ndim >= 2 and a.shape[-2] < a.shape[-1]:
        raise ValueError("The first argument to householder_product must have at least as "
                         f"many rows as columns, got shape {a.shape}")
    if a.ndim >= 2 and taus.ndim >= 1 and taus.shape[-1] > min(a.shape[-2:]):
        raise ValueError("The second argument to householder_product must not have more "
                         "rows than the minimum of the first argument's rows and columns.")
    return bind(householder_product_p, a, taus)


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """``Q @ c`` (``c @ Q`` without ``left``; Q^T, or Q^H for complex types, with
    ``transpose``) for the Q whose reflectors ``a`` and ``taus`` hold, as ``geqrf`` gives
    them, without forming Q (LAPACK's ``ormqr``/``unmqr``)."""
    return bind(ormqr_p, asarray(a), asarray(taus), asarray(c), left=bool(left),
                transpose=bool(transpose))


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *,
                      perturb_singular: bool = False) -> Any:
    """The solution X of ``A X = b`` for the tridiagonal A with lower diagonal ``dl``
    (``dl[0]`` is 0), diagonal ``d`` and upper diagonal ``du`` (``du[-1]`` is 0), each
    [..., m], b [..., m, k]. ``perturb_singular`` perturbs tiny pivots so that a singular
    A gives finite results (jaxlib's kernel), as JAX's."""
    return bind(tridiagonal_solve_p, asarray(dl), asarray(d), asarray(du), asarray(b),
                perturb_singular=bool(perturb_singular))


def _mT(x: Any) -> Any:
    return transpose(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def _tril(x: Any, k: int = 0) -> Any:
    rows = np.arange(x.shape[-2])[:, None]
    cols = np.arange(x.shape[-1])[None, :]
    return _where(cols <= rows + k, x, np.zeros((), x.dtype))


def symmetric_product(a_matrix: Any, c_matrix: Any, *, alpha: float = 1.,
                      beta: float = 0., symmetrize_output: bool = False) -> Any:
    """``alpha * a @ a^T + beta * c`` for a [..., m, n] and a symmetric c [..., m, m].
    JAX guarantees only the lower triangle (its GPU kernel writes that one);
    ``symmetrize_output`` mirrors it into the upper one."""
    a, c = asarray(a_matrix), asarray(c_matrix)
    if a.ndim < 2 or c.ndim < 2 or a.shape[-2] != c.shape[-1] or c.shape[-2] != c.shape[-1]:
        raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and "
                         f"a square matrix of shape (m, m). Got shapes {a.shape} and "
                         f"{c.shape}.")
    result = alpha * batch_matmul(a, _mT(a), precision=Precision.HIGHEST) + beta * c
    if symmetrize_output:
        result = _tril(result) + _mT(_tril(result, -1))
    return result


def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """The Cholesky factor of ``R^T R + w w^T`` for the upper-triangular factor ``R`` of
    ``R^T R`` (n x n) and ``w`` (n,), in O(n^2) by Givens rotations, as JAX's."""
    r, w = asarray(r_matrix), asarray(w_vector)
    if r.ndim != 2 or w.ndim != 1 or r.shape[0] != r.shape[1] or w.shape[0] != r.shape[1]:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and "
                         f"a vector of the same size as input. Got shapes {r.shape} and "
                         f"{w.shape} instead")
    for position, x in enumerate((r, w)):
        if not dtypes.is_float(x.dtype):             # real factors only, as JAX's
            raise TypeError(f"cholesky_update does not accept dtype {x.dtype} at position "
                            f"{position}. Accepted dtypes at position {position} are "
                            "subtypes of floating.")
    n = w.shape[0]
    one, zero = np.ones((), r.dtype), np.zeros((), r.dtype)
    for k in range(n):
        row = reshape(slice(r, (k, 0), (k + 1, n)), (n,))
        x, y = reshape(slice(row, (k,), (k + 1,)), ()), reshape(slice(w, (k,), (k + 1,)), ())
        # The Givens rotation (c, s) zeroing y against x, scaled against overflow.
        scale = _where(abs(x) > abs(y), abs(x), abs(y))
        safe = _where(y == 0, one, scale)
        xs, ys = x / safe, y / safe
        rh = 1 / sqrt(xs * xs + ys * ys)
        c = _where(y == 0, one, xs * rh)
        s = _where(y == 0, zero, -ys * rh)
        row, w = c * row - s * w, c * w + s * row
        r = dynamic_update_slice(r, reshape(row, (1, n)), (k, 0))
    return r
