"""spmdc.scipy.linalg (JAX's ``jax.scipy.linalg``): SciPy's names over the LAPACK-backed
primitives, with JAX 0.10.2's signatures and results.

As in JAX, ``overwrite_a``/``overwrite_b`` (arrays are immutable, nothing is overwritten),
``check_finite``, ``lwork``, ``debug`` and ``lapack_driver`` are accepted for SciPy
compatibility and have no effect on the result. float32, float64, complex64 and complex128
matrices (see spmdc.numpy.linalg). Absent: ``qr`` with ``pivoting=True`` (a clear error:
spmdc has no geqp3 primitive yet). The special-matrix constructors (``toeplitz``,
``hankel`` ...) are in linalg_special.py; ``qr_multiply``, ``hessenberg`` and ``polar`` in
linalg_decompositions.py; ``schur``, ``rsf2csf``, ``sqrtm``, ``funm`` and ``solve_sylvester``
in linalg_schur.py; ``eigh_tridiagonal`` in linalg_tridiagonal.py.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..lax import linalg as lax_linalg
from ..numpy import linalg as _public
from ..numpy import linalg_solve as _nl
from ..numpy.array_creation import eye, full_like
from ..numpy.comparisons import where
from ..numpy.core import asarray
from ..numpy.reductions import sum as _sum
from ..numpy.shape_ops import concatenate, expand_dims, pad
from ..numpy.tensor_contractions import matmul
from ..numpy.ufuncs import floor, log2, maximum

__all__ = ["cholesky", "cho_factor", "cho_solve", "solve_triangular", "lu", "lu_factor",
           "lu_solve", "qr", "svd", "eigh", "expm", "expm_frechet", "block_diag", "inv", "det",
           "solve"]
from . import linalg_special as _special  # noqa: E402
from .linalg_special import *  # noqa: E402,F401,F403

__all__ += _special.__all__
from . import linalg_decompositions as _decompositions  # noqa: E402
from .linalg_decompositions import hessenberg, polar, qr_multiply  # noqa: E402,F401
from .linalg_schur import funm, rsf2csf, schur, solve_sylvester, sqrtm  # noqa: E402,F401
from .linalg_tridiagonal import eigh_tridiagonal  # noqa: E402,F401

__all__ += _decompositions.__all__


def _vector_rhs(op: str, a: Any, b: Any) -> bool:
    """Whether ``b`` is one right-hand side vector (JAX: ``b.ndim == 1``, and the deprecated
    batched-vector form ``a.ndim == b.ndim + 1`` with matching last dimensions)."""
    if b.ndim == 0:
        raise ValueError(f"{op}: b must be at least one-dimensional, got a scalar")
    return b.ndim == 1 or (a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1])


def _solve_with(op: str, a: Any, b: Any, solve_matrix: Any) -> Any:
    vector = _vector_rhs(op, a, b)
    if vector:
        b = expand_dims(b, -1)
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{op}: a {a.shape} and b {b.shape} do not match")
    x = solve_matrix(b)
    return x[..., 0] if vector else x


# --- Cholesky ------------------------------------------------------------------------------------

def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """The Cholesky factor (upper, ``L^H``, by default, as SciPy) read from the ``lower``
    (or upper) triangle of ``a`` alone."""
    (a,) = _nl.inexact("cholesky", a)
    _nl.square("cholesky", a)
    if lower:
        return lax_linalg.cholesky(a, symmetrize_input=False)
    return _nl.mH(lax_linalg.cholesky(_nl.mH(a), symmetrize_input=False))


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """Solve ``a x = b`` from ``cho_factor(a)``'s ``(c, lower)``."""
    c, lower = c_and_lower
    c, b = _nl.inexact("cho_solve", c, b)
    _nl.square("cho_solve", c)

    def matrix(rhs: Any) -> Any:
        # lower: L L^H x = b; upper: U^H U x = b
        y = _nl.triangular_solve(c, rhs, left_side=True, lower=lower, transpose_a=not lower,
                                 conjugate_a=not lower)
        return _nl.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower,
                                    conjugate_a=lower)
    return _solve_with("cho_solve", c, b, matrix)


def solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False, debug: Any = None,
                     check_finite: bool = True) -> Any:
    if trans in (0, "N"):
        transpose_a = conjugate_a = False
    elif trans in (1, "T"):
        transpose_a, conjugate_a = True, False
    elif trans in (2, "C"):                   # the adjoint (the transpose of real matrices)
        transpose_a = conjugate_a = True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b = _nl.inexact("solve_triangular", a, b)
    _nl.square("solve_triangular", a)
    return _solve_with("solve_triangular", a, b, lambda rhs: _nl.triangular_solve(
        a, rhs, left_side=True, lower=lower, transpose_a=transpose_a,
        conjugate_a=conjugate_a, unit_diagonal=unit_diagonal))


# --- LU ------------------------------------------------------------------------------------------

def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """``(lu, piv)``: ``l`` (unit diagonal) below and ``u`` on and above the diagonal of
    ``lu``; ``piv`` LAPACK's 0-based row swaps."""
    (a,) = _nl.inexact("lu_factor", a)
    if a.ndim < 2:
        raise ValueError(f"lu_factor: a must be a matrix, got shape {a.shape}")
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """Solve ``a x = b`` (``trans=1``: ``a^T x = b``; ``trans=2``: ``a^H x = b``) from
    ``lu_factor(a)``."""
    lu_, pivots = lu_and_piv
    lu_, b = _nl.inexact("lu_solve", lu_, b)
    _nl.square("lu_solve", lu_)
    if trans not in (0, 1, 2):
        raise ValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    perm = lax_linalg.lu_pivots_to_permutation(asarray(pivots).astype(np.int32),
                                               lu_.shape[-1])
    return _solve_with("lu_solve", lu_, b, lambda rhs: _nl.lu_solve_factored(
        lu_, perm, rhs, trans=trans))


def lu(a: Any, permute_l: bool = False, overwrite_a: bool = False,
       check_finite: bool = True) -> Any:
    """``(p, l, u)`` with ``a = p @ l @ u`` (``(p @ l, u)`` with ``permute_l``), for a
    single matrix."""
    (a,) = _nl.inexact("lu", a)
    if a.ndim != 2:
        raise ValueError(f"lu: a must be a 2-D matrix, got shape {a.shape}")
    lu_, _, perm = lax_linalg.lu(a)
    m, n = a.shape
    k = min(m, n)
    p = (expand_dims(perm, 0) == expand_dims(np.arange(m, dtype=np.int32), 1)).astype(a.dtype)
    rows, cols = np.indices((m, n))
    low = where(rows > cols, lu_, 0)[:, :k] + eye(m, k, dtype=a.dtype)
    up = where(rows <= cols, lu_, 0)[:k, :]
    return (matmul(p, low), up) if permute_l else (p, low, up)


# --- orthogonal decompositions -------------------------------------------------------------

def qr(a: Any, overwrite_a: bool = False, lwork: Any = None, mode: str = "full",
       pivoting: bool = False, check_finite: bool = True) -> Any:
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported by spmdc (no geqp3 "
                                  "primitive yet)")
    if mode not in ("full", "r", "economic"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    (a,) = _nl.inexact("qr", a)
    if a.ndim < 2:
        raise ValueError(f"qr: a must be a matrix, got shape {a.shape}")
    q, r = lax_linalg.qr(a, full_matrices=mode in ("full", "r"))
    return (r,) if mode == "r" else (q, r)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True,
        overwrite_a: bool = False, check_finite: bool = True,
        lapack_driver: str = "gesdd") -> Any:
    if lapack_driver not in ("gesdd", "gesvd"):
        raise ValueError(f"svd: lapack_driver must be 'gesdd' or 'gesvd', got {lapack_driver!r}")
    out = _nl.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)
    return tuple(out) if compute_uv else out


def eigh(a: Any, b: Any = None, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, turbo: bool = True,
         eigvals: Any = None, type: int = 1, check_finite: bool = True) -> Any:  # noqa: A002
    """Eigenvalues (and eigenvectors) read from the ``lower`` (or upper) triangle of ``a``."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    w, v = _nl.eigh(a, UPLO="L" if lower else "U", symmetrize_input=False)
    return w if eigvals_only else (w, v)


# --- the rest ------------------------------------------------------------------------------------

def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return _nl.inv(a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    return _nl.det(a)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, debug: bool = False, check_finite: bool = True,
          assume_a: str = "gen") -> Any:
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    if assume_a != "pos":
        return _nl.solve(a, b)
    a, b = _nl.inexact("solve", a, b)
    return cho_solve(cho_factor(a, lower=lower), b)


def block_diag(*arrs: Any) -> Any:
    if not arrs:
        arrs = (np.zeros((1, 0), np.float32),)
    arrs = [asarray(a) for a in arrs]
    dtype = np.result_type(*[a.dtype for a in arrs])
    for i, a in enumerate(arrs):
        if a.ndim > 2:
            raise ValueError("Arguments to block_diag must have at most 2 dimensions, got "
                             f"shape {a.shape} at argument {i}.")
    arrs = [a.astype(dtype).reshape((1, -1) if a.ndim < 2 else a.shape) for a in arrs]
    total = sum(a.shape[1] for a in arrs)
    padded, col = [], 0
    for a in arrs:
        padded.append(pad(a, ((0, 0), (col, total - a.shape[1] - col))))
        col += a.shape[1]
    return concatenate(padded, axis=0)


# Pade approximants of exp (Higham 2005, the coefficients SciPy and JAX use).
_PADE = {3: (120., 60., 12., 1.),
         5: (30240., 15120., 3360., 420., 30., 1.),
         7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
         9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160.,
             110880., 3960., 90., 1.),
         13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
              129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
              40840800., 960960., 16380., 182., 1.)}


def _pade(a: Any, order: int) -> tuple[Any, Any]:
    b = _PADE[order]
    ident = eye(a.shape[-1], dtype=a.dtype)
    a2 = matmul(a, a)
    if order == 13:
        a4 = matmul(a2, a2)
        a6 = matmul(a4, a2)
        u = matmul(a, matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
                   + b[3] * a2 + b[1] * ident)
        v = matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 \
            + b[2] * a2 + b[0] * ident
        return u, v
    powers = [ident, a2]
    for _ in range(2, order // 2 + 1):
        powers.append(matmul(powers[-1], a2) if len(powers) != 2 else matmul(a2, a2))
    # highest power first, as JAX sums them
    odd, even = None, None
    for i in reversed(range(len(powers))):
        odd = b[2 * i + 1] * powers[i] if odd is None else odd + b[2 * i + 1] * powers[i]
        even = b[2 * i] * powers[i] if even is None else even + b[2 * i] * powers[i]
    return matmul(a, odd), even


def expm(A: Any, *, upper_triangular: bool = False, max_squarings: int = 16) -> Any:  # noqa: N803
    """The matrix exponential by scaling and squaring with Pade approximants (the orders
    and thresholds of JAX's and SciPy's: up to 13 in float64, 7 in float32)."""
    from .. import lax
    (a,) = _nl.inexact("expm", A)
    _nl.square("expm", a)
    if a.ndim > 2:
        from ..transforms.vmap import vmap
        flat = a.reshape((-1, *a.shape[-2:]))
        out = vmap(lambda m: expm(m, upper_triangular=upper_triangular,
                                  max_squarings=max_squarings))(flat)
        return out.reshape(a.shape)
    l1 = _public.norm(a, 1)
    if a.dtype in (np.float64, np.complex128):
        maxnorm, conds, orders = 5.371920351148152, (1.495585217958292e-002,
                                                    2.539398330063230e-001,
                                                    9.504178996162932e-001,
                                                    2.097847961257068e+000), (3, 5, 7, 9, 13)
    else:
        maxnorm, conds, orders = 3.925724783138660, (4.258730016922831e-001,
                                                    1.880152677804762e+000), (3, 5, 7)
    n_squarings = maximum(0, floor(log2(l1 / maxnorm)))
    a = a / (2 ** n_squarings).astype(a.dtype)
    index = _sum(asarray(np.asarray(conds, a.dtype)) <= l1).astype(np.int32)
    u, v = lax.switch(index, [lambda x, k=k: _pade(x, k) for k in orders], a)
    p, q = u + v, -u + v
    r = solve_triangular(q, p) if upper_triangular else _nl.solve(q, p)

    def square_step(c: Any, i: Any) -> tuple[Any, None]:
        return where(i < n_squarings, matmul(c, c), c), None
    r, _ = lax.scan(square_step, r, np.arange(max_squarings, dtype=a.dtype))
    return where(n_squarings > max_squarings, full_like(r, np.nan), r)


def expm_frechet(A: Any, E: Any, *, method: str | None = None,  # noqa: N803
                 compute_expm: bool = True) -> Any:
    """The Frechet derivative of ``expm`` at ``A`` in the direction ``E`` (and ``expm(A)``
    with ``compute_expm``), by forward-mode differentiation of ``expm``."""
    from ..transforms.forward import jvp
    if method not in (None, "SPS", "blockEnlarge"):
        raise ValueError(f"expm_frechet: unknown method {method!r}")
    a, e = asarray(A), asarray(E)
    if a.ndim < 2 or a.shape[-2] != a.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a.shape}")
    if e.ndim < 2 or e.shape[-2] != e.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e.shape}")
    if a.shape != e.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={a.shape} "
                         f"E.shape={e.shape}")
    value, derivative = jvp(expm, (a,), (e,))
    return (value, derivative) if compute_expm else derivative
