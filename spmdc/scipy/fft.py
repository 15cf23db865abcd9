"""spmdc.scipy.fft (JAX's ``jax.scipy.fft``): the discrete cosine transform of type 2 and
its inverse, one- and n-dimensional (``dct``, ``idct``, ``dctn``, ``idctn``), equal to
``scipy.fft``'s for the norms ``None``/``"backward"`` and ``"ortho"``.

Note [DCT through the FFT]
~~~~~~~~~~~~~~~~~~~~~~~~~~
Makhoul's reordering (A Fast Cosine Transform in One and Two Dimensions, 1980) turns a
length-N DCT-II into one complex FFT of the same length: put the even-indexed samples
first and the odd-indexed ones after them in reverse order (``v = x[perm]``), take
``V = fft(v)``, then ``X_k = 2 Re(V_k exp(-i pi k / 2N))``. The inverse (scipy's ``idct``
of type 2, a scaled DCT-III) runs the same steps backwards: weigh ``X_k`` by ``1/2`` for
``k = 0`` and ``1`` otherwise, multiply by ``exp(+i pi k / 2N)``, take the real part of the
inverse FFT, and undo the reordering (``x = v[argsort(perm)]``). The reorderings are
gathers by a constant permutation, so both transforms are linear maps that ``grad``,
``vmap`` and ``jit`` go through like any other. The n-dimensional forms apply the
one-dimensional ones axis by axis (separable transforms); a complex input is transformed
as its real and imaginary parts. As in JAX, only type 2 exists; another type raises
``NotImplementedError`` as JAX does, and ``norm="forward"`` a ``ValueError``.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core.operands import inexact
from ..core.tracing import where

__all__ = ["dct", "dctn", "idct", "idctn"]


def _checked(name: str, x: Any, type: int, norm: str | None) -> Any:
    if type != 2:
        raise NotImplementedError(f"jax.scipy.fft.{name}: only DCT type 2 is implemented, "
                                  f"got type={type!r}{where()}")
    if norm not in (None, "backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented; use "
                         f"None, 'backward' or 'ortho'{where()}")
    return jnp.asarray(x)


def _axis(name: str, axis: Any, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"jax.scipy.fft.{name}: axis {axis} is out of range for an array "
                         f"of {ndim} dimensions{where()}")
    return axis % ndim


def _resized(name: str, x: Any, n: int | None, axis: int) -> Any:
    """``x`` truncated or zero-padded to length ``n`` along ``axis``."""
    if n is None:
        return x
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"jax.scipy.fft.{name}: the transform length must be positive, "
                         f"got n={n}{where()}")
    size = x.shape[axis]
    if n < size:
        return lax.slice_in_dim(x, 0, n, axis=axis)
    widths = [(0, n - size if a == axis else 0) for a in range(x.ndim)]
    return jnp.pad(x, widths)


def _along(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-d NumPy vector shaped to broadcast along ``axis`` of an ``ndim``-d array."""
    return values.reshape([-1 if a == axis else 1 for a in range(ndim)])


def _makhoul_order(size: int) -> np.ndarray:
    # See Note [DCT through the FFT]
    return np.concatenate([np.arange(0, size, 2), np.arange(1, size, 2)[::-1]])


def _complex_parts(transform: Any, x: Any, **kwargs: Any) -> Any:
    return lax.complex(transform(jnp.real(x), **kwargs), transform(jnp.imag(x), **kwargs))


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
        norm: str | None = None) -> Any:
    """The discrete cosine transform (type 2) of ``x`` along ``axis``, as
    ``scipy.fft.dct``; ``n`` truncates or zero-pads that axis first."""
    x = _checked("dct", x, type, norm)
    if jnp.iscomplexobj(x):
        return _complex_parts(dct, x, type=type, n=n, axis=axis, norm=norm)
    (x,) = inexact(x)
    axis = _axis("dct", axis, x.ndim)
    x = _resized("dct", x, n, axis)
    size = x.shape[axis]
    spectrum = jnp.fft.fft(jnp.take(x, _makhoul_order(size), axis=axis), axis=axis)
    twiddle = np.exp(-0.5j * np.pi * np.arange(size) / size)
    out = 2 * jnp.real(spectrum * _along(twiddle, axis, x.ndim).astype(spectrum.dtype))
    if norm == "ortho":
        scale = np.full(size, np.sqrt(1 / (2 * size)))
        scale[0] = np.sqrt(1 / (4 * size))
        out = out * _along(scale, axis, x.ndim).astype(out.dtype)
    return out


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1,
         norm: str | None = None) -> Any:
    """The inverse of :func:`dct` along ``axis`` (``idct(dct(x, norm=m), norm=m) == x``),
    as ``scipy.fft.idct``; ``n`` truncates or zero-pads that axis first."""
    x = _checked("idct", x, type, norm)
    if jnp.iscomplexobj(x):
        return _complex_parts(idct, x, type=type, n=n, axis=axis, norm=norm)
    (x,) = inexact(x)
    axis = _axis("idct", axis, x.ndim)
    x = _resized("idct", x, n, axis)
    size = x.shape[axis]
    if norm == "ortho":
        weight = np.full(size, np.sqrt(2 * size))
        weight[0] = np.sqrt(size)
    else:
        weight = np.ones(size)
        weight[0] = 0.5
    # See Note [DCT through the FFT]
    twiddle = weight * np.exp(0.5j * np.pi * np.arange(size) / size)
    complex_dtype = np.complex128 if x.dtype == np.float64 else np.complex64
    spectrum = x.astype(complex_dtype) * _along(twiddle, axis, x.ndim).astype(complex_dtype)
    reordered = jnp.real(jnp.fft.ifft(spectrum, axis=axis))
    return jnp.take(reordered, np.argsort(_makhoul_order(size)), axis=axis)


def _shape_and_axes(name: str, x: Any, s: Any, axes: Any) -> tuple[list[int | None],
                                                                   list[int]]:
    """The lengths (``None``: unchanged) and the axes an n-dimensional transform runs
    over, with SciPy's defaults: the last ``len(s)`` axes, or all of them."""
    if s is not None:
        s = [operator.index(m) for m in s] if np.ndim(s) else [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"jax.scipy.fft.{name}: s must have at most x.ndim ({x.ndim}) "
                             f"elements, got {len(s)}{where()}")
    if axes is None:
        axes = list(range(x.ndim) if s is None else range(x.ndim - len(s), x.ndim))
    else:
        axes = [_axis(name, a, x.ndim) for a in (np.atleast_1d(axes).tolist())]
        if len(set(axes)) != len(axes):
            raise ValueError(f"jax.scipy.fft.{name}: repeated axes {axes}{where()}")
    if s is None:
        return [None] * len(axes), axes
    if len(s) != len(axes):
        raise ValueError(f"jax.scipy.fft.{name}: s and axes have different lengths "
                         f"({len(s)} and {len(axes)}){where()}")
    return list(s), axes


def dctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The multidimensional :func:`dct` over ``axes`` (default: the last ``len(s)`` axes,
    or all), each axis first truncated or zero-padded to its length in ``s``."""
    x = _checked("dctn", x, type, norm)
    lengths, axes = _shape_and_axes("dctn", x, s, axes)
    for length, axis in zip(lengths, axes, strict=True):
        x = dct(x, type=type, n=length, axis=axis, norm=norm)
    return inexact(x)[0]


def idctn(x: Any, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None) -> Any:
    """The multidimensional :func:`idct` over ``axes`` (default: the last ``len(s)``
    axes, or all), each axis first truncated or zero-padded to its length in ``s``."""
    x = _checked("idctn", x, type, norm)
    lengths, axes = _shape_and_axes("idctn", x, s, axes)
    for length, axis in zip(lengths, axes, strict=True):
        x = idct(x, type=type, n=length, axis=axis, norm=norm)
    return inexact(x)[0]
