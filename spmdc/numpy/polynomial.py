"""Polynomials as JAX writes them: ``polyval``, ``polyadd``, ``polysub``, ``polymul``,
``polyder``, ``polyint``, ``vander``, ``poly``
(coefficients from roots, or a square matrix's characteristic polynomial), ``polydiv``,
``polyfit`` (least squares on a scaled Vandermonde matrix, with ``full``, weights and the
covariance) and ``roots`` (the eigenvalues of the companion matrix)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import Tracer
from ..core.tracing import where as _where
from .array_creation import ones, zeros
from .convolve import convolve
from .core import asarray, broadcast_shapes, result_type
from .linalg import inv, lstsq
from .shape_ops import atleast_1d, concatenate, reshape
from .tensor_contractions import dot, outer
from .ufuncs import sqrt

__all__ = ["poly", "polydiv", "polyfit", "roots"]


def _inexact(*xs: Any) -> list[Any]:
    xs = [asarray(x) for x in xs]
    dtype = result_type(*xs)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return [x.astype(dtype) for x in xs]


def poly(seq_of_zeros: Any) -> Any:
    """The coefficients (highest power first) of the monic polynomial with these roots."""
    (zs,) = _inexact(seq_of_zeros)
    zs = atleast_1d(zs)
    if zs.ndim == 2 and zs.shape[0] == zs.shape[1] and zs.shape[0] != 0:
        from .linalg import eigvals
        zs = eigvals(zs)
    if zs.ndim != 1:
        raise ValueError(f"poly: the input must be 1-d or a non-empty square matrix, got "
                         f"shape {zs.shape}{_where()}")
    if zs.shape[0] == 0:
        return ones((), zs.dtype)
    a = ones((1,), zs.dtype)
    for k in range(zs.shape[0]):
        factor = asarray([1, 0], zs.dtype).at[1].set(-zs[k])
        a = convolve(a, factor, mode="full")
    return a


def polydiv(u: Any, v: Any, *, trim_leading_zeros: bool = False) -> tuple[Any, Any]:
    """The quotient and remainder of ``u / v`` (the remainder as long as ``u``, unless
    ``trim_leading_zeros``, which needs concrete values)."""
    u, v = _inexact(u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = zeros(max(m - n + 1, 1), u.dtype)
    for k in range(0, m - n + 1):
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        if isinstance(u, Tracer):
            raise TypeError(f"polydiv: trim_leading_zeros=True gives a value-dependent "
                            f"shape; call it outside jit{_where()}")
        values = np.asarray(u)
        tol = np.sqrt(np.finfo(values.dtype).eps)
        big = np.flatnonzero(np.abs(values) >= tol)
        u = u[int(big[0]) if big.size else values.shape[0]:]
    return q, u


def polyfit(x: Any, y: Any, deg: int, rcond: float | None = None, full: bool = False,
            w: Any = None, cov: Any = False) -> Any:
    """The least-squares polynomial of degree ``deg`` through ``(x, y)`` (``y`` may hold
    several data sets as columns); ``full``: also the residuals, rank, singular values
    and rcond; ``cov``: also the coefficients' covariance ("unscaled" leaves out the
    residual variance)."""
    x, y = asarray(x), asarray(y)
    deg = operator.index(deg)
    order = deg + 1
    if deg < 0:
        raise ValueError(f"polyfit: deg must be >= 0, got {deg}{_where()}")
    if x.ndim != 1:
        raise TypeError(f"polyfit: x must be 1-d, got shape {x.shape}{_where()}")
    if x.size == 0:
        raise TypeError(f"polyfit: x must not be empty{_where()}")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError(f"polyfit: y must be 1-d or 2-d, got shape {y.shape}{_where()}")
    if x.shape[0] != y.shape[0]:
        raise TypeError(f"polyfit: x and y must have the same length, got {x.shape[0]} "
                        f"and {y.shape[0]}{_where()}")
    if rcond is None:
        rcond = x.shape[0] * float(np.finfo(_inexact(x)[0].dtype).eps)
    rcond = float(rcond)
    lhs, rhs = vander(x, order), y
    if w is not None:
        (w,) = _inexact(w)
        if w.ndim != 1:
            raise TypeError(f"polyfit: w must be 1-d, got shape {w.shape}{_where()}")
        if w.shape[0] != y.shape[0]:
            raise TypeError(f"polyfit: w and y must have the same length{_where()}")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, asarray(rcond)
    if not cov:
        return c
    base = inv(dot(lhs.T, lhs)) / outer(scale, scale)
    if cov == "unscaled":
        fac = asarray(1.0)
    else:
        if x.shape[0] <= order:
            raise ValueError(f"polyfit: the number of data points must exceed order to "
                             f"scale the covariance matrix{_where()}")
        fac = resids / (x.shape[0] - order)
    if y.ndim == 1:
        return c, base * atleast_1d(fac)[None]
    return c, base[:, :, None] * atleast_1d(fac)[None, None, :]


def _roots_no_zeros(p: Any) -> Any:
    from .array_creation import diag
    from .linalg import eigvals
    c = np.complex128 if p.dtype in (np.float64, np.complex128) else np.complex64
    if p.shape[0] < 2:
        return asarray(np.zeros((0,), c))
    companion = diag(ones((p.shape[0] - 2,), p.dtype), -1)
    companion = companion.at[0, :].set(-p[1:] / p[0])
    return eigvals(companion)


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial with coefficients ``p`` (highest power first), complex.
    Leading zeros are stripped (reading ``p``'s values); with ``strip_zeros=False`` (for
    use under jit) each leading zero gives a NaN root instead."""
    from .comparisons import where
    from .reductions import all as jnp_all
    from .reductions import argmin
    from .sorting import argsort
    (p,) = _inexact(p)
    p = atleast_1d(p)
    if p.ndim != 1:
        raise ValueError(f"roots: the coefficients must be 1-d, got shape {p.shape}{_where()}")
    c = np.complex128 if p.dtype in (np.float64, np.complex128) else np.complex64
    if p.shape[0] < 2:
        return asarray(np.zeros((0,), c))
    leading = where(jnp_all(p == 0), p.shape[0], argmin(p == 0))
    if strip_zeros:
        if isinstance(p, Tracer):
            raise TypeError(f"roots: stripping leading zeros reads the coefficients' values;"
                            f" under jit pass strip_zeros=False (leading zeros then give "
                            f"NaN roots){_where()}")
        return _roots_no_zeros(p[int(leading):])
    from .rearranging import roll
    p = where(p.shape[0] == leading, 1.0, p)
    r = _roots_no_zeros(roll(p, -leading))
    r = r[argsort(r == 0, stable=True)]
    return where(np.arange(r.shape[0]) < r.shape[0] - leading, r,
                 asarray(complex(np.nan, np.nan), r.dtype))


def polyval(p: Any, x: Any, *, unroll: int = 16) -> Any:
    """``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's rule (``unroll`` is accepted for
    JAX's signature; the loop is unrolled at trace time, so it changes nothing). As JAX's,
    ``p`` may have trailing dimensions: each ``p[i]`` broadcasts against ``x`` (Diffrax
    evaluates the polynomials of every state component at once)."""
    if isinstance(unroll, bool) or not isinstance(unroll, (int, np.integer)) or unroll < 1:
        raise TypeError(f"polyval: unroll must be a positive int, got {unroll!r}")
    p, x = asarray(p), asarray(x)
    if p.ndim < 1:
        raise ValueError(f"polyval: coefficients must be at least 1-d, got shape {p.shape}")
    dtype = result_type(p, x)
    p, x = p.astype(dtype), x.astype(dtype)
    out = zeros(broadcast_shapes(p.shape[1:], x.shape), dtype)
    for i in range(p.shape[0]):
        out = out * x + p[i]
    return out


def _poly(op: str, p: Any) -> Any:
    p = asarray(p)
    if p.ndim != 1:
        raise ValueError(f"{op}: coefficients must be 1-d, got shape {p.shape}")
    return p


def _aligned(a1: Any, a2: Any, op: str) -> tuple[Any, Any]:
    from .shape_ops import pad
    a1, a2 = _poly(op, a1), _poly(op, a2)
    dtype = result_type(a1, a2)
    a1, a2 = a1.astype(dtype), a2.astype(dtype)
    n = max(a1.shape[0], a2.shape[0])
    return pad(a1, (n - a1.shape[0], 0)), pad(a2, (n - a2.shape[0], 0))


def polyadd(a1: Any, a2: Any) -> Any:
    """The sum of two polynomials (coefficients highest power first)."""
    x, y = _aligned(a1, a2, "polyadd")
    return x + y


def polysub(a1: Any, a2: Any) -> Any:
    x, y = _aligned(a1, a2, "polysub")
    return x - y


def polymul(a1: Any, a2: Any, *, trim_leading_zeros: bool = False) -> Any:
    """The product of two polynomials; ``trim_leading_zeros`` needs concrete inputs."""
    from .convolve import convolve
    from .editing import trim_zeros
    a1, a2 = _poly("polymul", a1), _poly("polymul", a2)
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    dtype = result_type(a1, a2)
    if a1.shape[0] == 0 or a2.shape[0] == 0:
        return asarray(np.zeros((0,), dtype))
    return convolve(a1.astype(dtype), a2.astype(dtype))


def polyder(p: Any, m: int = 1) -> Any:
    """The ``m``-th derivative of a polynomial."""
    p = _poly("polyder", p)
    if int(m) < 0:
        raise ValueError(f"polyder: order m must be non-negative, got {m}")
    if p.dtype.kind in "b":
        p = p.astype(dtypes.default_int())
    for _ in range(int(m)):
        n = p.shape[0]
        if n <= 1:
            return asarray(np.zeros((0,), p.dtype))
        p = p[:-1] * np.arange(n - 1, 0, -1).astype(p.dtype)
    return p


def polyint(p: Any, m: int = 1, k: Any = None) -> Any:
    """The ``m``-th antiderivative of a polynomial, with integration constants ``k``
    (a scalar or one per integration, the first integration's first; default 0)."""
    p = _poly("polyint", p)
    m = int(m)
    if m < 0:
        raise ValueError(f"polyint: order m must be non-negative, got {m}")
    dtype = result_type(p, 1.0) if k is None else result_type(p, asarray(k), 1.0)
    p = p.astype(dtype)
    ks = [0.0] * m if k is None else list(np.broadcast_to(np.asarray(k), (m,))) \
        if np.ndim(k) == 0 else list(asarray(k)[i] for i in range(asarray(k).shape[0]))
    if len(ks) != m:
        raise ValueError(f"polyint: {len(ks)} constants for {m} integrations")
    for i in range(m):
        n = p.shape[0]
        p = concatenate([p / np.arange(n, 0, -1).astype(dtype),
                         asarray(ks[i]).astype(dtype).reshape((1,))])
    return p


def vander(x: Any, N: int | None = None, increasing: bool = False) -> Any:
    """Columns ``x**(N-1), ..., x, 1`` (reversed if ``increasing``)."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError(f"vander: x must be 1-d, got shape {x.shape}")
    n = x.shape[0] if N is None else int(N)
    columns = []
    power = None
    for _ in range(n):
        power = (x * 0 + 1) if power is None else power * x
        columns.append(power)
    from .shape_ops import stack
    out = stack(columns, axis=1) if columns else reshape(x[:0], (x.shape[0], 0))
    return out if increasing or not columns else out[:, ::-1]
