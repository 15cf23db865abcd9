"""spmdc.lax.linalg (JAX's ``jax.lax.linalg``): the linear-algebra primitives themselves,
batched over leading dimensions, with no dtype promotion (operands must be float32 or
float64 matrices already), as in JAX. spmdc.numpy.linalg and spmdc.scipy.linalg compose
these decompositions.

Present: cholesky, triangular_solve, lu, lu_pivots_to_permutation, qr, eig, eigh, svd,
and (spmdc/lax/linalg_lapack.py) schur, hessenberg, tridiagonal, tridiagonal_solve,
householder_product, ormqr, symmetric_product, cholesky_update.
EigImplementation and EighImplementation say which kernels eig and eigh run (on the CPU,
LAPACK's; the others raise as JAX's CPU does); SvdAlgorithm which svd runs (Note [svd
algorithms] in compiler/primitives/linalg_decomp.py).
qdwh (spmdc/lax/linalg_qdwh.py) is written with lax on QR, Cholesky and triangular solve.
Absent: the primitives of the composed
cholesky_update, symmetric_product and lu_pivots_to_permutation.
"""
from __future__ import annotations

import enum
import operator
from typing import Any

import numpy as np

from ..compiler.primitives.linalg import cholesky_p, lu_p, triangular_solve_p
from ..compiler.primitives.linalg_decomp import SVD_ALGORITHMS, eigh_p, qr_p, svd_p
from ..compiler.primitives.linalg_eig import eig_p
from ..compiler.primitives.linalg_lapack import (  # noqa: F401  (spmdc.lax.linalg's names)
    hessenberg_p,
    householder_product_p,
    ormqr_p,
    schur_p,
    tridiagonal_p,
    tridiagonal_solve_p,
)
from ..core import dtypes
from ..core.operands import asarray
from ..core.tracing import bind
from ..errors import where as user_line
from .elementwise import _where
from .linalg_lapack import (  # noqa: F401  (spmdc.lax.linalg's names)
    cholesky_update,
    hessenberg,
    householder_product,
    ormqr,
    schur,
    symmetric_product,
    tridiagonal,
    tridiagonal_solve,
)
from .linalg_qdwh import qdwh  # noqa: F401  (spmdc.lax.linalg's name)
from .reductions import reduce_sum
from .shape import transpose

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "qr", "eig",
           "eigh", "svd", "schur", "hessenberg", "tridiagonal", "tridiagonal_solve",
           "householder_product", "ormqr", "symmetric_product", "cholesky_update",
           "EigImplementation", "EighImplementation", "SvdAlgorithm", "qdwh"]


def _mT(x: Any) -> Any:
    """The matrices of ``x`` (its last two dimensions) transposed."""
    return transpose(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def symmetrize(x: Any) -> Any:
    return (x + _mT(x)) / 2


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor; NaNs where the factorisation fails."""
    x = asarray(x)
    return bind(cholesky_p, symmetrize(x) if symmetrize_input else x)


def triangular_solve(a: Any, b: Any, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False) -> Any:
    """``op(a) x = b`` (``x op(a) = b`` unless ``left_side``); ``b`` may have one
    dimension less than ``a`` (a vector per matrix). ``conjugate_a`` has no effect on
    real matrices (the only ones spmdc's LAPACK lowering takes)."""
    a, b = asarray(a), asarray(b)
    singleton = b.ndim == a.ndim - 1
    if singleton:
        b = b.reshape(b.shape + (1,)) if left_side else b.reshape(b.shape[:-1] + (1, b.shape[-1]))
    out = bind(triangular_solve_p, a, b, left_side=bool(left_side), lower=bool(lower),
               transpose_a=bool(transpose_a), unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = out[..., 0] if left_side else out[..., 0, :]
    return out


def lu(x: Any) -> tuple[Any, Any, Any]:
    """``(lu, pivots, permutation)`` of partial-pivoting LU (``p x = l u``)."""
    return tuple(bind(lu_p, asarray(x)))


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation that LAPACK's row swaps ``pivots`` (0-based) make of
    ``range(permutation_size)``."""
    pivots = asarray(pivots)
    size = operator.index(permutation_size)
    if pivots.dtype != np.int32:
        raise TypeError(f"lu_pivots_to_permutation: pivots must be int32, got {pivots.dtype}")
    if pivots.shape[-1] > size:
        raise ValueError(f"lu_pivots_to_permutation: {pivots.shape[-1]} pivots for a "
                         f"permutation of size {size}")
    return _permutation_from_pivots(pivots, size)


def _permutation_from_pivots(pivots: Any, m: int) -> Any:
    """The row order that the swaps ``row k <-> row pivots[k]`` give, built by a Python
    loop of one-hot swaps (the pivots are traced values)."""
    pivots = asarray(pivots).astype(np.int32)
    batch = pivots.shape[:-1]
    slots = np.arange(m, dtype=np.int32)
    perm = asarray(np.broadcast_to(slots, (*batch, m)).copy())
    wide = np.promote_types(perm.dtype, dtypes.default_int())  # jnp.sum's accumulator
    for k in range(pivots.shape[-1]):
        j = pivots[..., k].reshape((*batch, 1))
        is_k, is_j = slots == k, slots == j
        pk = reduce_sum(_where(is_k, perm, 0).astype(wide), (perm.ndim - 1,))
        pj = reduce_sum(_where(is_j, perm, 0).astype(wide), (perm.ndim - 1,))
        # back to int32 (JAX's permutation dtype), so no promotion joins the two widths
        pk = pk.astype(np.int32).reshape((*batch, 1))
        pj = pj.astype(np.int32).reshape((*batch, 1))
        perm = _where(is_k, pj, _where(is_j, pk, perm))
    return perm


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Any, Any]:
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported by spmdc (no geqp3 "
                                  "primitive yet)")
    return tuple(bind(qr_p, asarray(x), full_matrices=bool(full_matrices)))


class EigImplementation(enum.Enum):
    """Which kernel ``eig`` runs: on the CPU, LAPACK's (the only one there, as in JAX)."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Which algorithm ``eigh`` runs: on the CPU, QR (LAPACK's syevd), as in JAX; Jacobi
    and QDWH are GPU/TPU algorithms there."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, use_magma: bool | None = None,
        implementation: EigImplementation | None = None) -> list[Any]:
    """``[w, vl, vr]``: the (complex) eigenvalues of general square matrices, then the
    left and the right eigenvectors (columns) where asked for (LAPACK's geev). Not
    differentiable yet. ``implementation`` may be LAPACK (or None) only, as on JAX's CPU."""
    if implementation is not None and implementation != EigImplementation.LAPACK:
        raise ValueError("Only the lapack implementation is supported on CPU "
                         f"(eig's implementation={implementation}).")
    return list(bind(eig_p, asarray(x), compute_left=bool(compute_left_eigenvectors),
                     compute_right=bool(compute_right_eigenvectors)))


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: Any = None,
         implementation: EighImplementation | None = None) -> tuple[Any, Any]:
    """``(v, w)``: eigenvectors in the columns of ``v``, eigenvalues ``w`` ascending (the
    LAPACK kernel always sorts). ``implementation``: QR (LAPACK's syevd, the default)."""
    x = asarray(x)
    n = x.shape[-1] if x.ndim else 0
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        raise NotImplementedError("eigh: subset_by_index is not supported on CPU (as in JAX)")
    if implementation == EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU (eigh's "
                                  "implementation=); use EighImplementation.QR or None")
    if implementation == EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU (eigh's "
                                  "implementation=); use EighImplementation.QR or None")
    if implementation not in (None, EighImplementation.QR):
        raise TypeError(f"eigh: implementation must be an EighImplementation or None, got "
                        f"{implementation!r}")
    v, w = bind(eigh_p, symmetrize(x) if symmetrize_input else x, lower=bool(lower))
    return v, w


class SvdAlgorithm(enum.Enum):
    """Which kernel svd runs (JAX's): on the CPU, DEFAULT and DIVIDE_AND_CONQUER are
    LAPACK's gesdd and QR its gesvd; JACOBI and POLAR raise NotImplementedError there.
    See Note [svd algorithms] in compiler/primitives/linalg_decomp.py."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


assert tuple(a.value for a in SvdAlgorithm) == SVD_ALGORITHMS


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: Any = None, algorithm: SvdAlgorithm | None = None) -> Any:
    """``(u, s, vh)`` (``s`` alone without ``compute_uv``), singular values descending,
    by the kernel ``algorithm`` names (None: DEFAULT)."""
    x = asarray(x)
    if subset_by_index is not None and tuple(subset_by_index) != (0, min(x.shape[-2:])):
        raise NotImplementedError("svd: subset_by_index is not supported on CPU (as in JAX)")
    if algorithm is not None and not isinstance(algorithm, SvdAlgorithm):
        raise NotImplementedError(f"svd: algorithm must be a jax.lax.linalg.SvdAlgorithm or "
                                  f"None, got {algorithm!r}{user_line()}")
    chosen = {} if algorithm in (None, SvdAlgorithm.DEFAULT) else {"algorithm": algorithm.value}
    out = bind(svd_p, x, full_matrices=bool(full_matrices),
               compute_uv=bool(compute_uv), **chosen)
    if compute_uv:
        s, u, vt = out
        return u, s, vt
    return out[0]



