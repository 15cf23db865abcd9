"""SciPy's special-matrix constructors, as JAX has them: ``toeplitz``, ``hankel``,
``circulant``, ``companion``, ``fiedler``, ``fiedler_companion``, ``leslie``,
``convolution_matrix``, ``hadamard``, ``helmert``, ``hilbert``, ``invhilbert``,
``pascal``, ``invpascal``, ``dft``. The formulas are JAX's, so are the values (``pascal``
and ``invhilbert`` are computed through ``lgamma`` in floating point, as in JAX)."""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from .. import numpy as jnp
from ..core import dtypes
from ..core.tracing import where as _where
from . import special

__all__ = ["toeplitz", "hankel", "circulant", "companion", "fiedler", "fiedler_companion",
           "leslie", "convolution_matrix", "hadamard", "helmert", "hilbert", "invhilbert",
           "pascal", "invpascal", "dft"]


def _inexact(x: Any) -> Any:
    x = jnp.asarray(x)
    return x if dtypes.is_inexact(x.dtype) else x.astype(dtypes.default_float())


def _from_diagonals(c: Any, r: Any) -> Any:
    """The matrix with first column ``c`` and first row ``r`` constant along diagonals."""
    ncols, nrows = c.shape[0], r.shape[0]
    dtype = jnp.result_type(c, r)
    if ncols == 0 or nrows == 0:
        return jnp.zeros((ncols, nrows), dtype)
    elems = jnp.concatenate([c[::-1].astype(dtype), r[1:].astype(dtype)])
    idx = (ncols - 1) - np.arange(ncols)[:, None] + np.arange(nrows)[None, :]
    return elems[idx]


def toeplitz(c: Any, r: Any = None) -> Any:
    """The Toeplitz matrix with first column ``c`` and first row ``r`` (default
    ``conj(c)``); ``r[0]`` is ignored, as in SciPy."""
    c = jnp.atleast_1d(jnp.asarray(c))
    r = jnp.conj(c) if r is None else jnp.atleast_1d(jnp.asarray(r))
    if c.ndim != 1 or r.ndim != 1:
        raise ValueError(f"toeplitz: c and r must be 1-d, got shapes {c.shape} and "
                         f"{r.shape}{_where()}")
    return _from_diagonals(c, r)


def hankel(c: Any, r: Any = None) -> Any:
    """The Hankel matrix with first column ``c`` and last row ``r`` (default zeros);
    ``r[0]`` is ignored."""
    c = jnp.asarray(c)
    r = jnp.zeros_like(c) if r is None else jnp.asarray(r)
    if c.ndim == 0 or r.ndim == 0:
        raise ValueError(f"hankel: c and r must be at least 1-d{_where()}")
    if c.ndim != 1 or r.ndim != 1:
        raise ValueError(f"hankel: c and r must be 1-d, got shapes {c.shape} and "
                         f"{r.shape}{_where()}")
    ncols, nrows = c.shape[0], r.shape[0]
    dtype = jnp.result_type(c, r)
    if ncols == 0 or nrows == 0:
        return jnp.zeros((ncols, nrows), dtype)
    v = jnp.concatenate([c.astype(dtype), r[1:].astype(dtype)])
    return v[np.arange(ncols)[:, None] + np.arange(nrows)[None, :]]


def circulant(c: Any) -> Any:
    """The circulant matrix whose first column is ``c``."""
    c = jnp.atleast_1d(jnp.asarray(c))
    n = c.shape[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % n]


def companion(a: Any) -> Any:
    """The companion matrix of the polynomial with coefficients ``a``."""
    a = jnp.atleast_1d(_inexact(a))
    if a.shape[-1] < 2:
        raise ValueError(f"companion: a needs at least 2 coefficients, got shape {a.shape}"
                         f"{_where()}")
    first_row = -a[1:] / a[0]
    m = a.shape[0] - 1
    return jnp.eye(m, m, k=-1, dtype=first_row.dtype).at[0].set(first_row)


def fiedler(a: Any) -> Any:
    """The symmetric matrix ``|a[i] - a[j]|``."""
    arr = jnp.atleast_1d(jnp.asarray(a))
    return jnp.abs(arr[..., None] - arr[..., None, :])


def fiedler_companion(a: Any) -> Any:
    """Fiedler's pentadiagonal companion matrix of the polynomial ``a``."""
    a = jnp.atleast_1d(_inexact(a))
    if a.shape[-1] == 0:
        raise ValueError(f"fiedler_companion: a must not be empty{_where()}")
    n = a.shape[0] - 1
    if n == 0:
        return jnp.zeros((0, 0), a.dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    super_val = -a[np.minimum(i + 2, n)]
    sub_val = -a[np.minimum(i + 1, n)]
    even, odd = i % 2 == 0, i % 2 == 1
    one, zero = jnp.asarray(1, a.dtype), jnp.asarray(0, a.dtype)
    conditions = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & even,
                  (j == i + 2) & even, (j == i - 1) & even & (i >= 2),
                  (j == i - 2) & odd & (i >= 3)]
    return jnp.select(conditions, [-a[1], one, super_val, one, sub_val, one], default=zero)


def leslie(f: Any, s: Any) -> Any:
    """The Leslie matrix: fecundities ``f`` in the first row, survivals ``s`` below the
    diagonal."""
    f, s = jnp.atleast_1d(jnp.asarray(f)), jnp.atleast_1d(jnp.asarray(s))
    if f.shape[-1] < 2:
        raise ValueError(f"leslie: f needs at least 2 entries, got shape {f.shape}{_where()}")
    if s.shape[-1] != f.shape[-1] - 1:
        raise ValueError(f"leslie: s must be one shorter than f, got shapes {s.shape} and "
                         f"{f.shape}{_where()}")
    dtype = jnp.result_type(f, s)
    return jnp.diag(s.astype(dtype), k=-1).at[0].set(f.astype(dtype))


def convolution_matrix(a: Any, n: int, mode: str = "full") -> Any:
    """The matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for ``v`` of length ``n``."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"convolution_matrix: n must be positive, got {n}{_where()}")
    a = jnp.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"convolution_matrix: a must be 1-d, got shape {a.shape}{_where()}")
    m = a.shape[-1]
    if m < 1:
        raise ValueError(f"convolution_matrix: a must not be empty{_where()}")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"convolution_matrix: mode must be 'full', 'valid' or 'same', got "
                         f"{mode!r}{_where()}")
    az = jnp.pad(a, (0, n - 1))
    raz = jnp.pad(a[::-1], (0, n - 1))
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb = trim // 2
        te = trim - tb
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    return toeplitz(az[tb:length - te], raz[length - n - tb:length - tb])


def hadamard(n: int, dtype: Any = int) -> Any:
    """The Hadamard matrix of order ``n`` (a power of 2), Sylvester's construction."""
    n = operator.index(n)
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"hadamard: n must be a positive power of 2, got {n}{_where()}")
    h = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = jnp.block([[h, h], [h, -h]])
    return h


def helmert(n: int, full: bool = False) -> Any:
    """The Helmert matrix of order ``n`` (without its first row unless ``full``)."""
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"helmert: n must be positive, got {n}{_where()}")
    i, j = jnp.arange(n - 1)[:, None], jnp.arange(n)[None, :]
    k = (i + 1).astype(dtypes.default_float())
    denom = jnp.sqrt(k * (k + 1))
    h = jnp.where(j <= i, 1.0 / denom, jnp.where(j == i + 1, -k / denom, jnp.zeros_like(denom)))
    if full:
        first = jnp.full((1, n), 1.0 / np.sqrt(n), dtype=h.dtype)
        h = jnp.concatenate([first, h], axis=0)
    return h


def hilbert(n: int) -> Any:
    """The Hilbert matrix ``1 / (i + j + 1)``."""
    a = jnp.arange(n, dtype=dtypes.default_float())[:, None]
    return 1 / (a + a.T + 1)


def invhilbert(n: int) -> Any:
    """The inverse of the Hilbert matrix, from its closed form (binomials in floats)."""
    a = jnp.arange(n, dtype=dtypes.default_float())
    i, j = a[:, None], a[None, :]
    s = i + j
    return ((-1.0) ** s * (s + 1.0) * special.comb(n + i, n - j - 1)
            * special.comb(n + j, n - i - 1) * special.comb(s, i) ** 2)


def _binomial(n: Any, k: Any) -> Any:
    return jnp.exp(special.gammaln(n + 1.0) - special.gammaln(n - k + 1.0)
                   - special.gammaln(k + 1.0))


def _kind(op: str, kind: str | None) -> str:
    kind = "symmetric" if kind is None else kind
    if kind not in ("symmetric", "lower", "upper"):
        raise ValueError(f"{op}: kind must be 'symmetric', 'lower' or 'upper', got {kind!r}"
                         f"{_where()}")
    return kind


def pascal(n: int, kind: str | None = None) -> Any:
    """The Pascal matrix ("symmetric", or its "lower"/"upper" Cholesky factor)."""
    kind = _kind("pascal", kind)
    a = jnp.arange(n, dtype=np.float32)
    lower = _binomial(a[:, None], a[None, :])
    if kind == "lower":
        return lower
    return lower.T if kind == "upper" else jnp.dot(lower, lower.T)


def invpascal(n: int, kind: str | None = None) -> Any:
    """The inverse of ``pascal(n, kind)``."""
    kind = _kind("invpascal", kind)
    a = jnp.arange(n, dtype=dtypes.default_float())
    i, j = a[:, None], a[None, :]
    lower_inv = ((-1.0) ** (i - j)) * _binomial(i, j)
    if kind == "lower":
        return lower_inv
    return lower_inv.T if kind == "upper" else jnp.dot(lower_inv.T, lower_inv)


def dft(n: int, scale: str | None = None, *, dtype: Any = None) -> Any:
    """The discrete Fourier transform matrix (``scale``: None, "sqrtn" or "n")."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"dft: scale must be None, 'sqrtn' or 'n', got {scale!r}{_where()}")
    dtype = dtypes.default_complex() if dtype is None else dtypes.canonicalize(dtype)
    if np.dtype(dtype).kind != "c":
        raise ValueError(f"dft: dtype must be complex, got {np.dtype(dtype)}{_where()}")
    a = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        return omegas / jnp.sqrt(n)
    return omegas / n if scale == "n" else omegas
