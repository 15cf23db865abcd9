"""Finite differences, second moments and polynomials for spmdc.numpy, composed from
other functions: gradient, cov, corrcoef, cross, polyadd/polysub/polymul/polyder/polyint,
and the functional forms of in-place writes (fill_diagonal, put_along_axis)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from .comparisons import where
from .core import asarray, result_type
from .reductions import mean
from .shape_ops import _axes, _axis, atleast_2d, concatenate, moveaxis, stack
from .ufuncs import sqrt

__all__ = ["gradient", "cov", "corrcoef", "cross"]


def _along(a: Any, axis: int, start: int | None, stop: int | None) -> Any:
    index = [slice(None)] * a.ndim
    index[axis] = slice(start, stop)
    return a[tuple(index)]


def gradient(f: Any, *varargs: Any, axis: Any = None, edge_order: Any = None) -> Any:
    """Central differences inside, one-sided differences at the two ends, along each axis
    (a list of arrays for several axes). Spacings are scalars (uniform grids);
    ``edge_order`` (second-order ends) and coordinate arrays are not supported."""
    if edge_order is not None:
        raise NotImplementedError("gradient: edge_order is not supported (as in JAX)")
    f = asarray(f)
    if f.dtype.kind in "biu":
        f = f.astype(dtypes.default_float())
    axes = _axes(axis, f.ndim, "gradient") if axis is not None else tuple(range(f.ndim))
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"gradient: {len(varargs)} spacings for {len(axes)} axes")
    for h in spacing:
        if np.ndim(h) != 0:
            raise NotImplementedError("gradient: only scalar spacings are supported; pass "
                                      "one number per axis")
    out = []
    for ax, h in zip(axes, spacing, strict=True):
        if f.shape[ax] < 2:
            raise ValueError(f"gradient: axis {ax} has {f.shape[ax]} element(s); it needs "
                             "at least 2")
        inner = (_along(f, ax, 2, None) - _along(f, ax, None, -2)) / (2.0 * h)
        first = (_along(f, ax, 1, 2) - _along(f, ax, 0, 1)) / h
        last = (_along(f, ax, -1, None) - _along(f, ax, -2, -1)) / h
        out.append(concatenate([first, inner, last], axis=ax))
    return out[0] if len(out) == 1 else out


def cov(m: Any, y: Any = None, rowvar: bool = True, bias: bool = False, ddof: Any = None,
        fweights: Any = None, aweights: Any = None) -> Any:
    """The covariance matrix of the variables in the rows of ``m`` (columns if not
    ``rowvar``). Weights are not supported (an error)."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("cov: fweights and aweights are not supported")
    x = atleast_2d(asarray(m))
    if x.ndim > 2:
        raise ValueError(f"cov: m has more than 2 dimensions ({x.shape})")
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        yy = atleast_2d(asarray(y))
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x = concatenate([x, yy], axis=0)
    dtype = result_type(x)
    dtype = dtypes.default_float() if dtype.kind in "biu" else dtype
    x = x.astype(dtype)
    ddof = (0 if bias else 1) if ddof is None else int(ddof)
    n = x.shape[1]
    x = x - mean(x, axis=1, keepdims=True)
    xt = x.T.conj() if dtype.kind == "c" else x.T
    c = (x @ xt) / max(n - ddof, 0)
    return c[0, 0] if c.shape == (1, 1) else c


def corrcoef(x: Any, y: Any = None, rowvar: bool = True) -> Any:
    """Pearson correlation coefficients (cov normalised by the standard deviations)."""
    from .arrays_extra import diag
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return c / c
    d = diag(c)
    stddev = sqrt(d.real if d.dtype.kind == "c" else d)
    c = c / stddev[:, None] / stddev[None, :]
    if c.dtype.kind != "c":
        one = np.ones((), c.dtype)
        c = where(c > 1, one, where(c < -1, -one, c))
    return c


def cross(a: Any, b: Any, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None) -> Any:
    """Cross products of 2- or 3-vectors along the given axes (2-vectors have z = 0; two
    2-vectors give the scalar z component)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = asarray(a), asarray(b)
    a = moveaxis(a, _axis(axisa, a.ndim, "cross"), -1)
    b = moveaxis(b, _axis(axisb, b.ndim, "cross"), -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(f"cross: vector dimensions must be 2 or 3, got {a.shape[-1]} and "
                         f"{b.shape[-1]}")
    dtype = result_type(a, b)
    a, b = a.astype(dtype), b.astype(dtype)
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    a2 = a[..., 2] if a.shape[-1] == 3 else np.zeros((), dtype)
    b2 = b[..., 2] if b.shape[-1] == 3 else np.zeros((), dtype)
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z], axis=-1)
    return moveaxis(out, -1, _axis(axisc, out.ndim, "cross"))


__all__ += ["polyadd", "polysub", "polymul", "polyder", "polyint", "fill_diagonal",
            "put_along_axis"]


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
    from .misc_extra import trim_zeros
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


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True) -> Any:
    """``a`` with its main diagonal set to ``val`` (repeated cyclically). spmdc arrays are
    immutable, so ``inplace=False`` is required (as in JAX)."""
    if inplace:
        raise ValueError("fill_diagonal: spmdc arrays are immutable; pass inplace=False and "
                         "use the returned array")
    if wrap:
        raise NotImplementedError("fill_diagonal: wrap=True is not supported")
    a = asarray(a)
    if a.ndim < 2 or (a.ndim > 2 and len(set(a.shape)) != 1):
        raise ValueError(f"fill_diagonal: array must be at least 2-d with equal dimensions "
                         f"beyond 2-d, got shape {a.shape}")
    n = min(a.shape)
    if n == 0:
        return a
    flat_positions = [sum(i * int(np.prod(a.shape[d + 1:])) for d in range(a.ndim))
                      for i in range(n)]
    values = asarray(val).astype(a.dtype).reshape((-1,))
    if values.shape[0] == 0:
        return a
    values = values[np.arange(n) % values.shape[0]]
    flat = a.reshape((-1,)).at[np.asarray(flat_positions, dtypes.default_int())].set(values)
    return flat.reshape(a.shape)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int | None,
                   inplace: bool = True, *, mode: Any = None) -> Any:
    """``arr`` with ``values`` written at ``indices`` along ``axis`` (the index counterpart
    of take_along_axis). ``inplace=False`` is required (as in JAX)."""
    if inplace:
        raise ValueError("put_along_axis: spmdc arrays are immutable; pass inplace=False and "
                         "use the returned array")
    from .core import _iota, broadcast_to
    arr, indices = asarray(arr), asarray(indices)
    if axis is None:
        flat = put_along_axis(arr.reshape((-1,)), indices.reshape((-1,)), values, 0,
                              inplace=False, mode=mode)
        return flat.reshape(arr.shape)
    if arr.ndim != indices.ndim:
        raise ValueError(f"put_along_axis: indices of rank {indices.ndim} for an array of "
                         f"rank {arr.ndim}")
    axis = _axis(axis, arr.ndim, "put_along_axis")
    shape = tuple(max(s, i) if d != axis else i
                  for d, (s, i) in enumerate(zip(arr.shape, indices.shape, strict=True)))
    index = tuple(broadcast_to(indices, shape) if d == axis else _iota(
        dtypes.default_int(), shape, d) for d in range(arr.ndim))
    return arr.at[index].set(broadcast_to(asarray(values).astype(arr.dtype), shape), mode=mode)
