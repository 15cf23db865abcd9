"""spmdc.numpy.linalg (JAX's ``jax.numpy.linalg``): decompositions over the LAPACK-backed
primitives of compiler/primitives/linalg.py and linalg_decomp.py, and the functions built
on them, with JAX 0.10.2's signatures and formulas.

float32, float64, complex64 and complex128 matrices (integers become the default float;
other float dtypes are a clear error, LAPACK having no kernels for them). ``eig`` and
``eigvals`` give complex results; their eigenvalues are differentiable, the eigenvectors
of ``eig`` are not (as JAX's: lax.linalg.eig's ``enable_eigvec_derivs`` opts in).
Missing: ``qr(mode='raw')`` (a clear error).
"""
from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.precision import check_precision
from ..lax import linalg as lax_linalg
from ..transforms.eager import library_jit  # See Note [library functions run as one program]
from .array_creation import eye
from .comparisons import where
from .complex_ops import conj, real
from .core import asarray, broadcast_to
from .linalg_solve import (  # noqa: F401  (re-exported)
    EighResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    det,
    eigh,
    eigvalsh,
    inv,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
)
from .linalg_solve import inexact as _inexact
from .linalg_solve import mH as _mH
from .linalg_solve import mT as _mT
from .reductions import any as _any
from .reductions import max as _max
from .reductions import min as _min
from .reductions import sum
from .shape_ops import expand_dims, moveaxis, ravel
from .tensor_contractions import matmul, tensordot  # noqa: F401  (re-exported)
from .tensor_contractions import outer as _outer
from .tensor_contractions import trace as _trace
from .ufuncs import abs, isnan, power, sqrt

__all__ = ["EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "qr", "svd",
           "svdvals", "eigh", "eigvalsh", "inv", "solve", "det", "slogdet", "lstsq", "pinv",
           "norm", "vector_norm", "matrix_norm", "matrix_power", "matrix_rank", "cond",
           "multi_dot", "cross", "outer", "tensordot", "trace", "matmul", "matrix_transpose",
           "vecdot", "diagonal", "tensorinv", "tensorsolve", "eig", "eigvals"]


def lstsq(a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False) -> Any:
    """Least squares ``(x, residuals, rank, s)`` of a 2-D ``a`` through its SVD, as JAX.
    One program (``rcond`` traced) but with ``numpy_resid=True``, whose residuals depend
    on the rank's value, as in JAX."""
    if numpy_resid:
        return _lstsq(a, b, rcond, numpy_resid=True)
    return _lstsq_program(a, b, rcond)


def _lstsq(a: Any, b: Any, rcond: Any, *, numpy_resid: bool) -> Any:
    a, b = _inexact("lstsq", a, b)
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
        s_inv = expand_dims(where(mask, 1 / where(mask, s, 1), 0), -1).astype(a.dtype)
        x = matmul(_mH(vt), s_inv * matmul(_mH(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = asarray(np.zeros(0, a.dtype))
    else:
        resid = norm(b - matmul(a, x), axis=0) ** 2
    return (ravel(x) if vector else x), resid, rank, s


@library_jit
def _lstsq_program(a: Any, b: Any, rcond: Any) -> Any:
    return _lstsq(a, b, rcond, numpy_resid=False)


# --- norms and the rest --------------------------------------------------------------------------

def _norm_operand(op: str, x: Any) -> Any:
    """A norm's operand: norms but the SVD-based ones need no LAPACK kernel, so every
    float dtype (bfloat16 and float16 too, as JAX) and complex dtype stays as it is; other
    dtypes go through linalg_solve's ``inexact`` (integers become the default float)."""
    x = asarray(x)
    return x if dtypes.is_float(x.dtype) or dtypes.is_complex(x.dtype) else \
        _inexact(op, x)[0]


def _part_dtype(x: Any) -> np.dtype:
    """The dtype of a norm of ``x``: its own, or its parts' for a complex ``x``."""
    if x.dtype.kind != "c":
        return x.dtype
    return np.dtype(np.float64 if x.dtype == np.complex128 else np.float32)


def _sum_of_squares(x: Any, axis: Any, keepdims: bool = False) -> Any:
    """``sum |x|^2`` over ``axis``, real for a complex ``x`` (as JAX's ``x * conj(x)``)."""
    return sum(real(x * conj(x)) if x.dtype.kind == "c" else x * x, axis=axis,
               keepdims=keepdims)


def vector_norm(x: Any, /, *, axis: Any = None, keepdims: bool = False, ord: Any = 2) -> Any:
    x = _norm_operand("vector_norm", x)
    if axis is None:
        result = vector_norm(ravel(x), axis=0, ord=ord)
        return result.reshape((1,) * x.ndim) if keepdims else result
    if ord is None or ord == 2:
        return sqrt(_sum_of_squares(x, axis, keepdims))
    if ord == np.inf:
        return _max(abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -np.inf:
        return _min(abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum(x != 0, dtype=_part_dtype(x), axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(abs(x), axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    p = np.asarray(ord, _part_dtype(x))
    return power(sum(power(abs(x), p), axis=axis, keepdims=keepdims), 1 / p)


def _axis(a: int, ndim: int) -> int:
    if not -ndim <= a < ndim:
        raise ValueError(f"norm: axis {a} is out of bounds for an array of dimension {ndim}")
    return a % ndim


@library_jit(static_argnames=("ord", "axis", "keepdims"))
def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Vector norms (one axis) and matrix norms (two axes) of every ``ord`` NumPy has:
    None/2, inf, -inf, 0, 1, p for vectors; None/'fro', 'nuc', 1, -1, 2, -2, inf, -inf
    for matrices."""
    x = _norm_operand("norm", x)
    if axis is None:
        if ord is None:
            return sqrt(_sum_of_squares(x, None, keepdims))
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
        return sqrt(_sum_of_squares(x, axis, keepdims))
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


@library_jit(static_argnames=("n",))
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


@library_jit(static_argnames=("hermitian",))
def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False,  # noqa: N803
                tol: Any = None) -> Any:
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (M,) = _inexact("matrix_rank", M)
    if M.ndim < 2:
        return _any(M != 0).astype(np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = _max(s, axis=-1) * np.asarray(builtins.max(M.shape[-2:]), s.dtype) * \
            np.finfo(s.dtype).eps
    rtol = asarray(rtol)
    return sum(s > expand_dims(rtol, rtol.ndim), axis=-1)


@library_jit(static_argnames=("p",))
def cond(x: Any, p: Any = None) -> Any:
    (x,) = _inexact("cond", x)
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
    check_precision("multi_dot", precision)         # checked here, honoured by each matmul
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
        return arrays[i] if i == j else matmul(chain(i, split[i][j]),
                                               chain(split[i][j] + 1, j), precision=precision)
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
    return _mT(x)


def vecdot(x1: Any, x2: Any, /, *, axis: int = -1, precision: Any = None,
           preferred_element_type: Any = None) -> Any:
    from .einsum import einsum
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with "
                         f"{axis=}")
    # NumPy's vecdot conjugates the first operand
    x1, x2 = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    if np.issubdtype(x1.dtype, np.complexfloating):
        from .complex_ops import conj
        x1 = conj(x1)
    return einsum("...i,...i->...", x1, x2, precision=precision,
                  preferred_element_type=preferred_element_type)


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


def _eig_operand(op: str, a: Any) -> Any:
    a = asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{op}: the argument must have shape [..., n, n], got {a.shape}")
    if not dtypes.is_inexact(a.dtype):
        a = a.astype(dtypes.default_float())
    return a


def eig(a: Any) -> tuple[Any, Any]:
    """The eigenvalues and right eigenvectors (columns) of general square matrices,
    complex (LAPACK's geev). As JAX's, differentiating the eigenvectors is refused: use
    lax.linalg.eig with ``enable_eigvec_derivs=True``, or eigvals for the eigenvalues."""
    w, v = lax_linalg.eig(_eig_operand("eig", a), compute_left_eigenvectors=False)
    return w, v


def eigvals(a: Any) -> Any:
    """The (complex) eigenvalues of general square matrices."""
    (w,) = lax_linalg.eig(_eig_operand("eigvals", a), compute_left_eigenvectors=False,
                          compute_right_eigenvectors=False)
    return w
