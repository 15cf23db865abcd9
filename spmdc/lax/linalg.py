"""spmdc.lax.linalg (JAX's ``jax.lax.linalg``): the linear-algebra primitives themselves,
batched over leading dimensions, with no dtype promotion (operands must be float32 or
float64 matrices already), as in JAX.

Present: cholesky, triangular_solve, lu, lu_pivots_to_permutation, qr, eigh, svd. Absent:
the complex-valued or GPU/TPU-only ones (eig, schur, hessenberg, tridiagonal,
tridiagonal_solve, householder_product, ormqr, qdwh, cholesky_update,
symmetric_product) and the ``*_p`` primitive objects.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..compiler.primitives.core import registry as _prims
from ..core.tracing import bind
from ..numpy.core import asarray
from ..numpy.linalg_solve import symmetrize

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "qr", "eigh",
           "svd"]


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor; NaNs where the factorisation fails."""
    x = asarray(x)
    return bind(_prims["cholesky"], symmetrize(x) if symmetrize_input else x)


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
    out = bind(_prims["triangular_solve"], a, b, left_side=bool(left_side), lower=bool(lower),
               transpose_a=bool(transpose_a), unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = out[..., 0] if left_side else out[..., 0, :]
    return out


def lu(x: Any) -> tuple[Any, Any, Any]:
    """``(lu, pivots, permutation)`` of partial-pivoting LU (``p x = l u``)."""
    return tuple(bind(_prims["lu"], asarray(x)))


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation that LAPACK's row swaps ``pivots`` (0-based) make of
    ``range(permutation_size)``."""
    from ..scipy.linalg import _permutation_from_pivots
    pivots = asarray(pivots)
    size = operator.index(permutation_size)
    if pivots.dtype != np.int32:
        raise TypeError(f"lu_pivots_to_permutation: pivots must be int32, got {pivots.dtype}")
    if pivots.shape[-1] > size:
        raise ValueError(f"lu_pivots_to_permutation: {pivots.shape[-1]} pivots for a "
                         f"permutation of size {size}")
    return _permutation_from_pivots(pivots, size)


def qr(x: Any, *, pivoting: bool = False, full_matrices: bool = True,
       use_magma: bool | None = None) -> tuple[Any, Any]:
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported by spmdc (no geqp3 "
                                  "primitive yet)")
    return tuple(bind(_prims["qr"], asarray(x), full_matrices=bool(full_matrices)))


def eigh(x: Any, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index: Any = None,
         implementation: Any = None) -> tuple[Any, Any]:
    """``(v, w)``: eigenvectors in the columns of ``v``, eigenvalues ``w`` ascending (the
    LAPACK kernel always sorts)."""
    x = asarray(x)
    n = x.shape[-1] if x.ndim else 0
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        raise NotImplementedError("eigh: subset_by_index is not supported on CPU (as in JAX)")
    if implementation is not None:
        raise NotImplementedError("eigh: only the default (LAPACK) implementation exists on "
                                  "CPU")
    v, w = bind(_prims["eigh"], symmetrize(x) if symmetrize_input else x, lower=bool(lower))
    return v, w


def svd(x: Any, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: Any = None, algorithm: Any = None) -> Any:
    """``(u, s, vh)`` (``s`` alone without ``compute_uv``), singular values descending."""
    x = asarray(x)
    if subset_by_index is not None and tuple(subset_by_index) != (0, min(x.shape[-2:])):
        raise NotImplementedError("svd: subset_by_index is not supported on CPU (as in JAX)")
    if algorithm is not None:
        raise NotImplementedError("svd: only the default (gesdd) algorithm is supported")
    out = bind(_prims["svd"], x, full_matrices=bool(full_matrices),
               compute_uv=bool(compute_uv))
    if compute_uv:
        s, u, vt = out
        return u, s, vt
    return out[0]



