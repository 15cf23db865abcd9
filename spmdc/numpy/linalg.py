"""spmdc.numpy.linalg (JAX's ``jax.numpy.linalg``): decompositions over the LAPACK-backed
primitives of compiler/primitives/linalg.py and linalg_decomp.py, and the functions built
on them, with JAX 0.10.2's signatures and formulas.

Real float32/float64 matrices only: jaxlib's complex LAPACK kernels exist, but spmdc has
no complex conjugate in its IR yet, so a complex operand is a clear TypeError. ``eig`` and
``eigvals`` (nonsymmetric eigenproblems) are absent: their results are complex. Missing
besides: ``qr(mode='raw')`` (a clear error).
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, NamedTuple

import numpy as np

from ..compiler.primitives.core import registry as _prims
from ..core import dtypes
from ..core.tracing import bind
from .core import (
    abs,
    asarray,
    broadcast_to,
    eye,
    isnan,
    log,
    power,
    sign,
    sqrt,
    where,
)
from .products import matmul, tensordot  # noqa: F401  (re-exported)
from .products import outer as _outer
from .products import trace as _trace
from .reductions import any as _any
from .reductions import max as _max
from .reductions import min as _min
from .reductions import sum
from .shape_ops import expand_dims, moveaxis, ravel, swapaxes

__all__ = ["EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "qr", "svd",
           "svdvals", "eigh", "eigvalsh", "inv", "solve", "det", "slogdet", "lstsq", "pinv",
           "norm", "vector_norm", "matrix_norm", "matrix_power", "matrix_rank", "cond",
           "multi_dot", "cross", "outer", "tensordot", "trace", "matmul", "matrix_transpose",
           "vecdot", "diagonal", "tensorinv", "tensorsolve"]


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
    """The operands as arrays of one float dtype (integers become the default float)."""
    xs = [asarray(x) for x in xs]
    dtype, _ = dtypes.result_type(*xs)
    if dtypes.is_complex(dtype):
        raise TypeError(f"{op}: complex matrices are not supported by spmdc's linear "
                        "algebra yet; use real float32 or float64 matrices")
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


def batch_broadcast(op: str, a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` (both ``[..., r, c]``) with their batch dimensions broadcast."""
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"{op}: batch dimensions {a.shape[:-2]} and {b.shape[:-2]} do not "
                         "broadcast") from None
    return broadcast_to(a, (*batch, *a.shape[-2:])), broadcast_to(b, (*batch, *b.shape[-2:]))


def triangular_solve(a: Any, b: Any, *, left_side: bool, lower: bool, transpose_a: bool,
                     unit_diagonal: bool = False) -> Any:
    a, b = batch_broadcast("triangular_solve", a, b)
    return bind(_prims["triangular_solve"], a, b, left_side=left_side, lower=lower,
                transpose_a=transpose_a, unit_diagonal=unit_diagonal)


def lu_factor(a: Any) -> tuple[Any, Any, Any]:
    """``(lu, pivots, permutation)`` of the lu primitive."""
    return tuple(bind(_prims["lu"], a))


def permute_rows(perm: Any, b: Any, inverse: bool = False) -> Any:
    """``b[..., perm, :]`` (its inverse with ``inverse``): a gather for one permutation,
    else a product with the one-hot permutation matrices (exact: each output is one
    input times 1)."""
    n = perm.shape[-1]
    if perm.ndim == 1 and not inverse:          # one matrix (also each one under vmap)
        from .indexing import take
        return take(b, perm, axis=-2)
    p = (expand_dims(perm, -1) == np.arange(n, dtype=np.int32)).astype(b.dtype)
    return matmul(mT(p) if inverse else p, b)


def lu_solve_factored(lu: Any, perm: Any, b: Any, trans: int = 0) -> Any:
    """Solve ``a x = b`` (``a^T x = b`` with trans) for a matrix ``b`` from ``p a = l u``."""
    lu, b = batch_broadcast("lu_solve", lu, b)
    perm = broadcast_to(perm, (*lu.shape[:-2], perm.shape[-1]))
    if trans == 0:
        x = triangular_solve(lu, permute_rows(perm, b), left_side=True, lower=True,
                             transpose_a=False, unit_diagonal=True)
        return triangular_solve(lu, x, left_side=True, lower=False, transpose_a=False)
    x = triangular_solve(lu, b, left_side=True, lower=False, transpose_a=True)
    x = triangular_solve(lu, x, left_side=True, lower=True, transpose_a=True,
                         unit_diagonal=True)
    return permute_rows(perm, x, inverse=True)


def _diag(x: Any) -> Any:
    """The diagonal of square matrices."""
    return sum(where(np.eye(x.shape[-1], dtype=bool), x, 0), axis=-1)


def symmetrize(x: Any) -> Any:
    return (x + mT(x)) / 2


# --- decompositions ------------------------------------------------------------------------------

def cholesky(a: Any, *, upper: bool = False, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor (upper with ``upper=True``) of symmetric positive-definite
    matrices ``[..., n, n]``; NaNs where the factorisation fails."""
    (a,) = inexact("cholesky", a)
    square("cholesky", a)
    low = bind(_prims["cholesky"], symmetrize(a) if symmetrize_input else a)
    return mT(low) if upper else low


def qr(a: Any, mode: str = "reduced") -> Any:
    (a,) = inexact("qr", a)
    if mode == "raw":
        raise ValueError("qr: mode='raw' is not supported by spmdc; use 'reduced', "
                         "'complete' or 'r'")
    if mode not in ("reduced", "complete", "r", "full"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if a.ndim < 2:
        raise ValueError(f"qr: the argument must have shape [..., m, n], got {a.shape}")
    q, r = bind(_prims["qr"], a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


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
        vh = mT(u * expand_dims(_take_last(sign(w), order), -2))
        return SVDResult(u, s, vh)
    if compute_uv:
        s, u, vt = bind(_prims["svd"], a, full_matrices=bool(full_matrices), compute_uv=True)
        return SVDResult(u, s, vt)
    (s,) = bind(_prims["svd"], a, full_matrices=bool(full_matrices), compute_uv=False)
    return s


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


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> Any:  # noqa: N803
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices."""
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    (a,) = inexact("eigh", a)
    square("eigh", a)
    v, w = bind(_prims["eigh"], symmetrize(a) if symmetrize_input else a, lower=UPLO != "U")
    return EighResult(w, v)


def eigvalsh(a: Any, UPLO: str | None = "L", *, symmetrize_input: bool = True) -> Any:  # noqa: N803
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


# --- solving -------------------------------------------------------------------------------------

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
    lu, _, perm = lu_factor(a)
    x = lu_solve_factored(lu, perm, b)
    return x[..., 0] if vector else x


def inv(a: Any) -> Any:
    (a,) = inexact("inv", a)
    square("inv", a)
    return solve(a, broadcast_to(eye(a.shape[-1], dtype=a.dtype), a.shape))


def _slogdet_lu(a: Any) -> tuple[Any, Any]:
    lu, pivots, _ = lu_factor(a)
    diag = _diag(lu)
    is_zero = _any(diag == 0, axis=-1)
    parity = sum(pivots != np.arange(a.shape[-1], dtype=np.int32), axis=-1) + \
        sum(diag < 0, axis=-1)
    s = where(is_zero, 0, 1 - 2 * (parity % 2)).astype(a.dtype)
    logdet = where(is_zero, -np.inf, sum(log(abs(diag)), axis=-1))
    return s, logdet


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


def det(a: Any) -> Any:
    """Determinants of ``[..., n, n]`` matrices: closed forms for n <= 3, else from LU."""
    (a,) = inexact("det", a)
    square("det", a)
    if a.shape[-1] == 0:
        return broadcast_to(np.ones((), a.dtype), a.shape[:-2])
    if a.shape[-1] <= 3:
        return _det_small(a)
    s, logdet = _slogdet_lu(a)
    from .core import exp
    return s * exp(logdet)


def lstsq(a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False) -> Any:
    """Least squares ``(x, residuals, rank, s)`` of a 2-D ``a`` through its SVD, as JAX."""
    a, b = inexact("lstsq", a, b)
    if a.ndim != 2:
        raise TypeError(f"lstsq: a must be two-dimensional, got shape {a.shape}")
    vector = b.ndim == 1
    if vector:
        b = expand_dims(b, -1)
    if b.ndim != 2 or b.shape[0] != a.shape[0]:
        raise TypeError(f"lstsq: leading dimensions of a {a.shape} and b {b.shape} differ")
    m, n = a.shape
    eps = float(np.finfo(a.dtype).eps)
    if a.size == 0:
        s = asarray(np.zeros(0, a.dtype))
        rank = asarray(np.int32(0))
        x = asarray(np.zeros((n, b.shape[1]), a.dtype))
    else:
        cut = eps * builtins.max(n, m) if rcond is None else where(asarray(rcond) < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = s >= asarray(cut).astype(s.dtype) * s[0]
        rank = sum(mask)
        s_inv = expand_dims(where(mask, 1 / where(mask, s, 1), 0), -1)
        x = matmul(mT(vt), s_inv * matmul(mT(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = asarray(np.zeros(0, a.dtype))
    else:
        resid = norm(b - matmul(a, x), axis=0) ** 2
    return (ravel(x) if vector else x), resid, rank, s


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
    return matmul(mT(vh), mT(u) / expand_dims(s, -1))


# --- norms and the rest --------------------------------------------------------------------------

def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    (x,) = inexact("vector_norm", x)
    if axis is None:
        result = vector_norm(ravel(x), axis=0, ord=ord)
        return result.reshape((1,) * x.ndim) if keepdims else result
    if ord is None or ord == 2:
        return sqrt(sum(x * x, axis=axis, keepdims=keepdims))
    if ord == np.inf:
        return _max(abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return _min(abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum(x != 0, dtype=x.dtype, axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    p = np.asarray(ord, x.dtype)
    return power(sum(power(abs(x), p), axis=axis, keepdims=keepdims), 1 / p)


def _axis(a: int, ndim: int) -> int:
    if not -ndim <= a < ndim:
        raise ValueError(f"norm: axis {a} is out of bounds for an array of dimension {ndim}")
    return a % ndim


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector norms (one axis) and matrix norms (two axes) of every ``ord`` NumPy has:
    None/2, inf, -inf, 0, 1, p for vectors; None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf
    for matrices."""
    (x,) = inexact("norm", x)
    if axis is None:
        if ord is None:
            return sqrt(sum(x * x, keepdims=keepdims))
        axis = tuple(range(x.ndim))
    elif isinstance(axis, tuple):
        axis = tuple(_axis(a, x.ndim) for a in axis)
    else:
        axis = (_axis(operator.index(axis), x.ndim),)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise ValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis to "
                         "compute a vector-norm, or two axes to compute a matrix-norm.")
    row, col = axis
    if ord is None or ord in ("f", "fro"):
        return sqrt(sum(x * x, axis=axis, keepdims=keepdims))
    if ord in (1, -1, np.inf, -np.inf):
        inner_axis, outer_axis = (row, col) if ord in (1, -1) else (col, row)
        if not keepdims and outer_axis > inner_axis:
            outer_axis -= 1
        sums = sum(abs(x), axis=inner_axis, keepdims=keepdims)
        if ord in (1, np.inf):
            return _max(sums, axis=outer_axis, keepdims=keepdims, initial=0)
        return _min(sums, axis=outer_axis, keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        s = svd(moveaxis(x, axis, (-2, -1)), compute_uv=False)
        y = _max(s, axis=-1, initial=0) if ord == 2 else \
            _min(s, axis=-1) if ord == -2 else sum(s, axis=-1)
        return expand_dims(y, axis) if keepdims else y
    raise ValueError(f"Invalid order '{ord}' for matrix norm.")


def matrix_norm(x: Any, /, *, keepdims: bool = False, ord: Any = "fro") -> Any:
    return norm(x, ord=ord, keepdims=keepdims, axis=(-2, -1))


def matrix_power(a: Any, n: int) -> Any:
    a = asarray(a)
    if a.ndim < 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be at least "
                        "two-dimensional")
    if a.shape[-2] != a.shape[-1]:
        raise TypeError("Last 2 dimensions of the array must be square")
    try:
        n = operator.index(n)
    except TypeError as err:
        raise TypeError(f"exponent must be an integer, got {n}") from err
    if n == 0:
        return broadcast_to(eye(a.shape[-2], dtype=a.dtype), a.shape)
    if n < 0:
        a, n = inv(a), -n
    if n == 1:
        return a
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n > 0:
        z = a if z is None else matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False,  # noqa: N803
                tol: Any = None) -> Any:
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (M,) = inexact("matrix_rank", M)
    if M.ndim < 2:
        return _any(M != 0).astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = _max(s, axis=-1) * np.asarray(builtins.max(M.shape[-2:]), s.dtype) * \
            np.finfo(s.dtype).eps
    rtol = asarray(rtol)
    return sum(s > expand_dims(rtol, rtol.ndim), axis=-1)


def cond(x: Any, p: Any = None) -> Any:
    (x,) = inexact("cond", x)
    if x.ndim < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got {x.shape}")
    if 0 in x.shape[-2:]:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got {x.shape}")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if x.shape[-2] != x.shape[-1]:
            raise ValueError(f"jnp.linalg.cond: for p={p}, array must be square; "
                             f"got {x.shape}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return where(isnan(r) & ~_any(isnan(x), axis=(-2, -1)), np.inf, r)


def multi_dot(arrays: Any, *, precision: Any = None) -> Any:
    """The product of a chain of matrices (the first may be 1-D, and the last), evaluated
    in the order that needs the fewest multiplications."""
    from .products import check_precision
    check_precision("multi_dot", precision)
    arrays = [asarray(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("multi_dot: expecting at least two arrays")
    first_vec, last_vec = arrays[0].ndim == 1, arrays[-1].ndim == 1
    if first_vec:
        arrays[0] = arrays[0][None, :]
    if last_vec:
        arrays[-1] = arrays[-1][:, None]
    for a in arrays:
        if a.ndim != 2:
            raise ValueError(f"multi_dot: arrays must be 2-D (the first and last may be "
                             f"1-D), got shape {a.shape}")
    dims = [arrays[0].shape[0]] + [a.shape[1] for a in arrays]
    k = len(arrays)
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = builtins.min(
                (cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1], s)
                for s in range(i, j))[0]
            split[i][j] = builtins.min(
                (cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1], s)
                for s in range(i, j))[1]

    def chain(i: int, j: int) -> Any:
        return arrays[i] if i == j else matmul(chain(i, split[i][j]), chain(split[i][j] + 1, j))
    out = chain(0, k - 1)
    if first_vec:
        out = out[0]
    if last_vec:
        out = out[..., 0]
    return out


def cross(x1: Any, x2: Any, /, *, axis: int = -1) -> Any:
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but "
                         f"they have {x1.shape[axis]=} and {x2.shape[axis]=}")
    a, b = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    from .shape_ops import stack
    out = stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                 a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                 a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)
    return moveaxis(out, -1, axis)


def outer(x1: Any, x2: Any, /) -> Any:
    x1, x2 = asarray(x1), asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are {x1.ndim=} "
                         f"{x2.ndim=}")
    return _outer(x1, x2)


def trace(x: Any, /, *, offset: int = 0, dtype: Any = None) -> Any:
    out = _trace(x, offset=offset, axis1=-2, axis2=-1)
    return out if dtype is None else out.astype(dtype)


def matrix_transpose(x: Any, /) -> Any:
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions; got {x.ndim=}")
    return mT(x)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    from .products import check_precision
    check_precision("vecdot", precision)
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with "
                         f"{axis=}")
    out = sum(moveaxis(x1, axis, -1) * moveaxis(x2, axis, -1), axis=-1)
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def diagonal(x: Any, /, *, offset: int = 0) -> Any:
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal requires at least 2 dimensions; got {x.ndim=}")
    m, n = x.shape[-2:]
    rows = np.arange(builtins.max(0, -offset), builtins.min(m, n - offset))
    if rows.size == 0:
        return asarray(np.zeros((*x.shape[:-2], 0), x.dtype))
    mask = np.zeros((m, n), bool)
    mask[rows, rows + offset] = True
    picked = where(mask, x, 0)
    return sum(picked, axis=-1)[..., rows]


def tensorinv(a: Any, ind: int = 2) -> Any:
    """The inverse of ``a`` seen as a linear map from its last dimensions to its first
    ``ind`` ones."""
    a = asarray(a)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got {ind=}")
    contracting, batch = a.shape[:ind], a.shape[ind:]
    rows, cols = int(np.prod(contracting)), int(np.prod(batch))
    if rows != cols:
        raise ValueError("tensorinv is only possible when the product of the first `ind` "
                         f"dimensions equals that of the remaining dimensions; got "
                         f"a.shape={a.shape} with {ind=}.")
    return inv(a.reshape((rows, cols))).reshape((*batch, *contracting))


def tensorsolve(a: Any, b: Any, axes: Any = None) -> Any:
    """``x`` with ``tensordot(a, x, x.ndim) == b``."""
    a, b = asarray(a), asarray(b)
    if axes is not None:
        axes = tuple(axes)
        a = moveaxis(a, axes, len(axes) * (a.ndim - 1,))
    out_shape = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape:
        raise ValueError("After moving axes to end, leading shape of a must match shape of "
                         f"b. got a.shape={a.shape}, b.shape={b.shape}")
    if b.size != int(np.prod(out_shape)):
        raise ValueError("Input arrays must have prod(a.shape[:b.ndim]) == "
                         f"prod(a.shape[b.ndim:]); got a.shape={a.shape}, b.ndim={b.ndim}.")
    return solve(a.reshape((b.size, int(np.prod(out_shape)))), ravel(b)).reshape(out_shape)
