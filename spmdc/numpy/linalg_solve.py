"""The core of spmdc.numpy.linalg: its result types, the decompositions (lax.linalg's,
with NumPy's signatures and promotion) and the solvers built on them, with JAX 0.10.2's
formulas; and the helpers spmdc.scipy.linalg and random share (``inexact``,
``triangular_solve``, ``lu_solve_factored`` ...). spmdc.numpy.linalg re-exports the public
names and adds the norms and the rest."""
from __future__ import annotations

import builtins
from typing import Any, NamedTuple

import numpy as np

from ..core import dtypes
from ..lax import linalg as lax_linalg
from ..lax.linalg_lapack import geqrf
from ..transforms.eager import library_jit  # See Note [library functions run as one program]
from .array_creation import eye
from .comparisons import where
from .core import asarray, broadcast_to
from .reductions import any as _any
from .reductions import prod, sum
from .shape_ops import expand_dims, swapaxes
from .tensor_contractions import matmul
from .ufuncs import abs, exp, log, sign

__all__ = ["EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "qr", "svd",
           "svdvals", "eigh", "eigvalsh", "inv", "solve", "det", "slogdet", "pinv"]


class EighResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    Q: Any
    R: Any


class SVDResult(NamedTuple):
    U: Any
    S: Any
    Vh: Any


class SlogdetResult(NamedTuple):
    sign: Any
    logabsdet: Any


# --- shared pieces (also used by spmdc.scipy.linalg) --------------------------------------------

def inexact(op: str, *xs: Any) -> list[Any]:
    """The operands as arrays of one float or complex dtype (integers become the default
    float), one that LAPACK has kernels for."""
    xs = [asarray(x) for x in xs]
    dtype, _ = dtypes.result_type(*xs)
    if dtypes.is_complex(dtype):
        return [x.astype(dtype) if x.dtype != dtype else x for x in xs]
    if not dtypes.is_float(dtype):
        dtype = dtypes.default_float()
    if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"{op}: LAPACK has no {np.dtype(dtype).name} kernels; convert the "
                        "operands to float32 (or float64 with x64 enabled)")
    return [x.astype(dtype) if x.dtype != dtype else x for x in xs]


def square(op: str, a: Any) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{op}: the argument must have shape [..., n, n], got {a.shape}")


def mT(x: Any) -> Any:
    return swapaxes(x, -1, -2)


def mH(x: Any) -> Any:
    """The conjugate transpose of matrices (the transpose of real ones)."""
    return mT(x).conj() if dtypes.is_complex(x.dtype) else mT(x)


def batch_broadcast(op: str, a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` (both ``[..., r, c]``) with their batch dimensions broadcast."""
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"{op}: batch dimensions {a.shape[:-2]} and {b.shape[:-2]} do not "
                         "broadcast") from None
    return broadcast_to(a, (*batch, *a.shape[-2:])), broadcast_to(b, (*batch, *b.shape[-2:]))


def triangular_solve(a: Any, b: Any, *, left_side: bool, lower: bool, transpose_a: bool,
                     conjugate_a: bool = False, unit_diagonal: bool = False) -> Any:
    """lax.linalg.triangular_solve with the batch dimensions broadcast."""
    a, b = batch_broadcast("triangular_solve", a, b)
    return lax_linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                       transpose_a=transpose_a, conjugate_a=conjugate_a,
                                       unit_diagonal=unit_diagonal)


def permute_rows(perm: Any, b: Any, inverse: bool = False) -> Any:
    """``b[..., perm, :]`` (its inverse with ``inverse``), as a gather; a permutation is in
    bounds, so no bounds check (whose mixed-rank comparison jnp.take would make, refused
    under jax_numpy_rank_promotion='raise')."""
    from .editing import take_along_axis
    if inverse:
        from .sorting import argsort
        perm = argsort(perm, axis=-1)
    # (a product with one-hot permutation matrices, as this was, is exact too, but it
    # reads n times more and takes a matrix product per solve)
    return take_along_axis(b, expand_dims(perm, -1), axis=-2, mode="promise_in_bounds")


def lu_solve_factored(lu: Any, perm: Any, b: Any, trans: int = 0) -> Any:
    """Solve ``a x = b`` (``a^T x = b`` with ``trans=1``, ``a^H x = b`` with ``trans=2``)
    for a matrix ``b`` from ``p a = l u``."""
    lu, b = batch_broadcast("lu_solve", lu, b)
    perm = broadcast_to(perm, (*lu.shape[:-2], perm.shape[-1]))
    if trans == 0:
        x = triangular_solve(lu, permute_rows(perm, b), left_side=True, lower=True,
                             transpose_a=False, unit_diagonal=True)
        return triangular_solve(lu, x, left_side=True, lower=False, transpose_a=False)
    x = triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True,
                         conjugate_a=trans == 2)
    x = triangular_solve(lu, x, left_side=True, lower=True, transpose_a=True,
                         conjugate_a=trans == 2, unit_diagonal=True)
    return permute_rows(perm, x, inverse=True)


def _diag(x: Any) -> Any:
    """The diagonal of square matrices."""
    return sum(where(np.eye(x.shape[-1], dtype=bool), x, 0), axis=-1)


# --- decompositions ------------------------------------------------------------------------------

@library_jit(static_argnames=("upper", "symmetrize_input"))
def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor (upper, ``L^H``, with ``upper=True``) of Hermitian
    positive-definite matrices ``[..., n, n]``; NaNs where the factorisation fails."""
    (a,) = inexact("cholesky", a)
    square("cholesky", a)
    low = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return mH(low) if upper else low


@library_jit(static_argnames=("mode",))
def qr(a: Any, mode: str = "reduced") -> Any:
    (a,) = inexact("qr", a)
    if mode not in ("reduced", "complete", "r", "full", "raw"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if a.ndim < 2:
        raise ValueError(f"qr: the argument must have shape [..., m, n], got {a.shape}")
    if mode == "raw":            # LAPACK's packing, transposed as NumPy's: (h, taus)
        h, taus = geqrf(a)
        return QRResult(mT(h), taus)
    q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


@library_jit(static_argnames=("full_matrices", "compute_uv", "hermitian",
                              "subset_by_index"))
def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: Any = None) -> Any:
    (a,) = inexact("svd", a)
    if a.ndim < 2:
        raise ValueError(f"svd: the argument must have shape [..., m, n], got {a.shape}")
    if subset_by_index is not None and tuple(subset_by_index) != (0, builtins.min(a.shape[-2:])):
        raise NotImplementedError("svd: subset_by_index is not supported on CPU (as in JAX)")
    if hermitian:
        from .shape_ops import flip
        from .sorting import argsort
        w, v = eigh(a)
        # descending |w|: JAX sorts ascending (stably) and reverses, and so does this
        order = flip(argsort(abs(w), axis=-1), -1)
        s = _take_last(abs(w), order)
        if not compute_uv:
            return s
        u = _take_cols(v, order)
        vh = mH(u * expand_dims(_take_last(sign(w), order), -2).astype(u.dtype))
        return SVDResult(u, s, vh)
    if compute_uv:
        return SVDResult(*lax_linalg.svd(a, full_matrices=full_matrices))
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False)


def _take_last(x: Any, order: Any) -> Any:
    """``x[..., order]`` along the last axis (batched), as a one-hot product."""
    n = x.shape[-1]
    onehot = (expand_dims(order, -1) == np.arange(n, dtype=order.dtype)).astype(x.dtype)
    return sum(onehot * expand_dims(x, -2), axis=-1)


def _take_cols(v: Any, order: Any) -> Any:
    n = v.shape[-1]
    onehot = (expand_dims(order, -2) == expand_dims(np.arange(n, dtype=order.dtype), -1))
    return matmul(v, onehot.astype(v.dtype))


def svdvals(x: Any, /) -> Any:
    return svd(x, compute_uv=False)


@library_jit(static_argnames=("UPLO", "symmetrize_input"))
def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> Any:  # noqa: N803
    """Eigenvalues (ascending, real) and eigenvectors (columns) of Hermitian matrices."""
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    (a,) = inexact("eigh", a)
    square("eigh", a)
    v, w = lax_linalg.eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@library_jit(static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:  # noqa: N803
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


# --- solving -------------------------------------------------------------------------------------

@library_jit
def solve(a: Any, b: Any) -> Any:
    """``x`` with ``a @ x == b``; ``b`` is a vector when 1-D, else a batch of matrices
    ``[..., n, k]`` (as in JAX >= 0.5: NumPy 2's rule)."""
    a, b = inexact("solve", a, b)
    square("solve", a)
    if b.ndim > 1 and a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1] and \
            a.shape[-1] != b.shape[-2]:
        raise ValueError(f"Invalid shapes for solve: {a.shape}, {b.shape}: a batch of "
                         "vectors is written solve(a, b[..., None])[..., 0]")
    vector = b.ndim == 1
    if vector:
        b = expand_dims(b, -1)
    if b.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve: a {a.shape} and b {b.shape[:-1] if vector else b.shape} "
                         "do not match")
    lu, _, perm = lax_linalg.lu(a)
    x = lu_solve_factored(lu, perm, b)
    return x[..., 0] if vector else x


@library_jit
def inv(a: Any) -> Any:
    (a,) = inexact("inv", a)
    square("inv", a)
    return solve(a, broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape))


def _slogdet_lu(a: Any) -> tuple[Any, Any]:
    lu, pivots, _ = lax_linalg.lu(a)
    diag = _diag(lu)
    is_zero = _any(diag == 0, axis=-1)
    parity = sum(pivots != np.arange(a.shape[-1], dtype=np.int32), axis=-1)
    if dtypes.is_complex(a.dtype):          # the product of the diagonal's phases
        phase = prod(diag / abs(diag).astype(diag.dtype), axis=-1)
    else:
        phase = asarray(np.ones((), a.dtype))
        parity = parity + sum(diag < 0, axis=-1)
    s = where(is_zero, np.zeros((), a.dtype),
              phase * (1 - 2 * (parity % 2)).astype(a.dtype))
    logdet = where(is_zero, -np.inf, sum(log(abs(diag)), axis=-1))
    return s, logdet


@library_jit(static_argnames=("method",))
def slogdet(a: Any, *, method: str | None = None) -> SlogdetResult:
    (a,) = inexact("slogdet", a)
    square("slogdet", a)
    if method not in (None, "lu"):
        raise ValueError(f"slogdet: method={method!r} is not supported by spmdc; use 'lu'")
    n = a.shape[-1]
    if n in (1, 2):
        d = _det_small(a)
        return SlogdetResult(sign(d), log(abs(d)))
    return SlogdetResult(*_slogdet_lu(a))


def _det_small(a: Any) -> Any:
    n = a.shape[-1]
    if n == 1:
        return a[..., 0, 0]
    if n == 2:
        return a[..., 0, 0] * a[..., 1, 1] - a[..., 0, 1] * a[..., 1, 0]
    e = [[a[..., i, j] for j in range(3)] for i in range(3)]
    return (e[0][0] * e[1][1] * e[2][2] + e[0][1] * e[1][2] * e[2][0]
            + e[0][2] * e[1][0] * e[2][1] - e[0][2] * e[1][1] * e[2][0]
            - e[0][0] * e[1][2] * e[2][1] - e[0][1] * e[1][0] * e[2][2])


@library_jit
def det(a: Any) -> Any:
    """Determinants of ``[..., n, n]`` matrices: closed forms for n <= 3, else from LU."""
    (a,) = inexact("det", a)
    square("det", a)
    if a.shape[-1] == 0:
        return broadcast_to(np.ones((), a.dtype), a.shape[:-2])
    if a.shape[-1] <= 3:
        return _det_small(a)
    s, logdet = _slogdet_lu(a)
    return s * exp(logdet)


@library_jit(static_argnames=("hermitian",))
def pinv(a: Any, rtol: Any = None, hermitian: bool = False) -> Any:
    """The Moore-Penrose pseudo-inverse through the SVD (cut-off ``rtol`` times the
    largest singular value; default ``10 * max(m, n) * eps``)."""
    (a,) = inexact("pinv", a)
    if a.ndim < 2:
        raise ValueError(f"pinv: the argument must have shape [..., m, n], got {a.shape}")
    m, n = a.shape[-2:]
    if m == 0 or n == 0:
        return asarray(np.zeros((*a.shape[:-2], n, m), a.dtype))
    if rtol is None:
        rtol = 10 * builtins.max(m, n) * float(np.finfo(a.dtype).eps)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    cutoff = expand_dims(asarray(rtol).astype(s.dtype), -1) * s[..., 0:1]
    s = where(s > cutoff, s, np.inf).astype(u.dtype)
    if dtypes.is_complex(u.dtype):                       # V S^-1 U^H
        u, vh = u.conj(), vh.conj()
    return matmul(mT(vh), mT(u) / expand_dims(s, -1))
