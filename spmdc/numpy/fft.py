"""spmdc.numpy.fft (JAX's ``jax.numpy.fft``): NumPy's discrete Fourier transforms on
``lax.fft``'s transform (the FFT primitive, StableHLO's ``fft``), with JAX 0.10.2's
signatures and semantics: ``n``/``s`` crop or zero-pad the input, ``axes`` may be any
(distinct) axes, ``norm`` is "backward" (default), "ortho" or "forward", and inputs are
promoted as JAX does (integers to the default float, reals to complex, so a float32 input
gives complex64). More than three axes are transformed three (or two) at a time.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import where
from ..lax.fft import transform
from .array_creation import arange
from .complex_ops import conj
from .core import asarray
from .shape_ops import moveaxis, pad

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
           "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]


def _norm_factor(s: Sequence[int], name: str, norm: str, dtype: np.dtype) -> Any:
    """What the transform is multiplied by for ``norm`` (None: nothing)."""
    if norm == "backward":
        return None
    n = np.prod(np.asarray(s, dtype))
    if norm == "ortho":
        return np.sqrt(n) if name.startswith("i") else 1 / np.sqrt(n)
    if norm == "forward":
        return n if name.startswith("i") else 1 / n
    raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or '
                     f'"forward"{where()}')


def _transform_nd(x: Any, fft_type: str, s: Sequence[int]) -> Any:
    """``transform`` over the trailing ``len(s)`` axes, any number of them."""
    if len(s) <= 3:
        return transform(x, fft_type, tuple(s))
    n = 2 if len(s) == 4 else 3
    src = tuple(range(x.ndim - len(s), x.ndim - n))
    dst = tuple(range(x.ndim - len(s) + n, x.ndim))
    if fft_type in ("RFFT", "FFT"):
        x = transform(x, fft_type, tuple(s)[-n:])
        x = moveaxis(x, src, dst)
        x = _transform_nd(x, "FFT", s[:-n])
        return moveaxis(x, dst, src)
    x = moveaxis(x, src, dst)
    x = _transform_nd(x, "IFFT", s[:-n])
    x = moveaxis(x, dst, src)
    return transform(x, fft_type, tuple(s)[-n:])


def _core(name: str, fft_type: str, a: Any, s: Sequence[int] | None,
          axes: Sequence[int] | None, norm: str | None) -> Any:
    full = f"jnp.fft.{name}"
    arr = asarray(a)
    if s is not None:
        try:
            s = tuple(operator.index(n) for n in s)
        except TypeError:
            raise TypeError(f"{full}: s (or n) must be ints, got {s!r}{where()}") from None
        if any(n <= 0 for n in s):
            raise ValueError(f"{full}: the transform's shape must be positive, got "
                             f"{s}{where()}")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError(f"{full}: s and axes have different lengths ({len(s)} and "
                         f"{len(axes)}){where()}")
    orig_axes = axes
    if axes is None:
        axes = tuple(range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim))
    else:
        axes = tuple(operator.index(a) for a in axes)
        bad = [a for a in axes if not -arr.ndim <= a < arr.ndim]
        if bad:
            raise ValueError(f"{full}: axis {bad[0]} is out of range for an array of "
                             f"{arr.ndim} dimensions{where()}")
        if len({a % arr.ndim for a in axes}) != len(axes):
            raise ValueError(f"{full} does not support repeated axes, got axes "
                             f"{list(orig_axes)}{where()}")
        orig_axes = axes
        axes = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = moveaxis(arr, orig_axes, axes)
    if s is not None:
        in_s = list(arr.shape)
        for axis, n in zip(axes, s, strict=True):
            in_s[axis] = n
        if fft_type == "IRFFT":
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in in_s)]
        arr = pad(arr, [(0, n - m) for n, m in zip(in_s, arr.shape, strict=True)])
    elif fft_type == "IRFFT":
        s = [arr.shape[axis] for axis in axes[:-1]]
        if axes:
            s.append(max(0, 2 * (arr.shape[axes[-1]] - 1)))
    else:
        s = [arr.shape[axis] for axis in axes]
    out = _transform_nd(arr, fft_type, s)
    if norm is not None:
        factor = _norm_factor(s, name, norm, out.dtype)
        if factor is not None:
            out = out * asarray(factor, out.dtype)
    if orig_axes is not None:
        out = moveaxis(out, axes, orig_axes)
    return out


def _one_axis(name: str, axis: Any) -> list[int]:
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"jnp.fft.{name} does not support multiple axes; use "
                         f"jnp.fft.{name}n. Got axis={axis!r}{where()}")
    return [axis]


def _core_1d(name: str, fft_type: str, a: Any, n: int | None, axis: int,
             norm: str | None) -> Any:
    return _core(name, fft_type, a, None if n is None else [n], _one_axis(name, axis), norm)


def _core_2d(name: str, fft_type: str, a: Any, s: Sequence[int] | None,
             axes: Sequence[int], norm: str | None) -> Any:
    if len(axes) != 2:
        raise ValueError(f"jnp.fft.{name} only supports 2 axes, got axes={axes!r}{where()}")
    return _core(name, fft_type, a, s, axes, norm)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The one-dimensional discrete Fourier transform along ``axis``."""
    return _core_1d("fft", "FFT", a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of ``fft``."""
    return _core_1d("ifft", "IFFT", a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """``fft`` of a real input, its ``n // 2 + 1`` non-negative frequency terms."""
    return _core_1d("rfft", "RFFT", a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of ``rfft``: ``n`` real values (default ``2 * (m - 1)``)."""
    return _core_1d("irfft", "IRFFT", a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The FFT of a signal with Hermitian symmetry, given by its first half: real."""
    conj_a = conj(asarray(a))
    _one_axis("hfft", axis)
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return _core_1d("hfft", "IRFFT", conj_a, n, axis, norm) * nn


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None) -> Any:
    """The inverse of ``hfft``."""
    _one_axis("ihfft", axis)
    arr = asarray(a)
    nn = arr.shape[axis] if n is None else n
    return conj(_core_1d("ihfft", "RFFT", arr, n, axis, norm)) * (1 / nn)


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
         norm: str | None = None) -> Any:
    """``fftn`` over two axes (the last two by default)."""
    return _core_2d("fft2", "FFT", a, s, axes, norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """``ifftn`` over two axes (the last two by default)."""
    return _core_2d("ifft2", "IFFT", a, s, axes, norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
          norm: str | None = None) -> Any:
    """``rfftn`` over two axes (the last two by default)."""
    return _core_2d("rfft2", "RFFT", a, s, axes, norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: str | None = None) -> Any:
    """``irfftn`` over two axes (the last two by default)."""
    return _core_2d("irfft2", "IRFFT", a, s, axes, norm)


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: str | None = None) -> Any:
    """The n-dimensional discrete Fourier transform over ``axes`` (default all, or the
    last ``len(s)``)."""
    return _core("fftn", "FFT", a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """The inverse of ``fftn``."""
    return _core("ifftn", "IFFT", a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: str | None = None) -> Any:
    """``fftn`` of a real input; the last axis keeps its non-negative frequencies."""
    return _core("rfftn", "RFFT", a, s, axes, norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: str | None = None) -> Any:
    """The inverse of ``rfftn``."""
    return _core("irfftn", "IRFFT", a, s, axes, norm)


def _freq_args(name: str, n: Any, d: Any) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"jnp.fft.{name}: n must be an int, got n = {list(n)}{where()}")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"jnp.fft.{name}: d must be a single value, got d = "
                         f"{list(d)}{where()}")


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``."""
    _freq_args("fftfreq", n, d)
    out_dtype = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float()
    dtype = dtypes.finfo(out_dtype if dtypes.is_inexact(out_dtype)
                         else dtypes.default_float()).dtype
    i = arange(n, dtype=dtype)
    k = (i + n // 2) % n - n // 2
    out = (k.astype(dtype) / asarray(d * n, dtype)).astype(out_dtype)
    return _placed(out, device)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The non-negative sample frequencies of ``rfft`` (``n // 2 + 1`` of them)."""
    _freq_args("rfftfreq", n, d)
    dtype = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float()
    k = arange(0, n // 2 + 1 if n % 2 == 0 else (n - 1) // 2 + 1, dtype=dtype)
    return _placed(k / asarray(d * n, dtype), device)


def _placed(x: Any, device: Any) -> Any:
    if device is None:
        return x
    from ..core.devices import device_put
    return device_put(x, device)


def _shifted(name: str, x: Any, axes: Any, sign: int) -> Any:
    from .rearranging import roll
    x = asarray(x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift: Any = [sign * (n // 2) for n in x.shape]
    elif isinstance(axes, int):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return roll(x, shift, axes)


def fftshift(x: Any, axes: Any = None) -> Any:
    """Move the zero-frequency term to the centre (along ``axes``, default all)."""
    return _shifted("fftshift", x, axes, 1)


def ifftshift(x: Any, axes: Any = None) -> Any:
    """The inverse of ``fftshift``."""
    return _shifted("ifftshift", x, axes, -1)

