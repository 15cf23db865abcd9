"""``spmdc.scipy.signal`` (JAX's ``jax.scipy.signal``): N-dimensional convolution and
correlation, directly (``lax.conv_general_dilated``) or by FFT, and ``detrend``.

As in JAX, ``convolve2d``/``correlate2d`` take only ``boundary='fill'`` with
``fillvalue=0`` (NotImplementedError otherwise), ``method='auto'`` is the direct
convolution, and ``mode='valid'`` needs one input at least as large as the other in every
dimension. The spectral functions (``stft``, ``istft``, ``csd``, ``welch``) are in
signal_spectral.py.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.operands import inexact
from spmdc.transforms.vmap import vmap

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]

MODES = ("full", "same", "valid")


def _check_mode(function: str, mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"{function}: mode must be one of ['full', 'same', 'valid'], got "
                         f"{mode!r}")


def _ordered(function: str, in1: Any, in2: Any, message: str) -> bool:
    """Whether the inputs are swapped for the convolution: ``in1`` must be the larger in
    every dimension (or the smaller in every one, then they swap)."""
    larger = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    smaller = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    if not (larger or smaller):
        raise ValueError(f"{function}: {message}; got shapes {in1.shape} and {in2.shape}")
    return smaller


def _convolve_nd(function: str, in1: Any, in2: Any, mode: str, precision: Any) -> Any:
    _check_mode(function, mode)
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise ValueError(f"{function}: in1 and in2 must have the same number of dimensions, "
                         f"got {in1.ndim} and {in2.ndim}")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"{function}: zero-size arrays are not supported in convolutions, "
                         f"got shapes {in1.shape} and {in2.shape}")
    in1, in2 = inexact(in1, in2)
    original_kernel = in2.shape
    if _ordered(function, in1, in2, "one input must be smaller than the other in every "
                                    "dimension"):
        in1, in2 = in2, in1
    kernel = in2.shape
    if mode == "valid":
        padding = [(0, 0)] * len(kernel)
    elif mode == "same":
        padding = [(s - 1 - (s0 - 1) // 2, s - s0 + (s0 - 1) // 2)
                   for s, s0 in zip(kernel, original_kernel, strict=True)]
    else:
        padding = [(s - 1, s - 1) for s in kernel]
    out = lax.conv_general_dilated(in1[None, None], jnp.flip(in2)[None, None],
                                   (1,) * len(kernel), padding, precision=precision)
    return out[0, 0]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
             precision: Any = None) -> Any:
    """The N-dimensional convolution of ``in1`` and ``in2``."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _convolve_nd("convolve", in1, in2, mode, precision)
    raise ValueError(f"convolve: got method={method!r}; expected 'auto', 'fft', or 'direct'")


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto",
              precision: Any = None) -> Any:
    """The N-dimensional cross-correlation: the convolution with ``in2`` flipped and
    conjugated."""
    return convolve(in1, jnp.flip(jnp.asarray(in2).conj()), mode, method=method,
                    precision=precision)


def _check_2d(function: str, in1: Any, in2: Any, boundary: str, fillvalue: float) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{function}() only supports boundary='fill', "
                                  f"fillvalue=0; got boundary={boundary!r}, "
                                  f"fillvalue={fillvalue!r}")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{function}() only supports 2-dimensional inputs, got "
                         f"{np.ndim(in1)} and {np.ndim(in2)} dimensions")


def convolve2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
               fillvalue: float = 0, precision: Any = None) -> Any:
    """The two-dimensional convolution (zero-filled boundary)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd("convolve2d", in1, in2, mode, precision)


def correlate2d(in1: Any, in2: Any, mode: str = "full", boundary: str = "fill",
                fillvalue: float = 0, precision: Any = None) -> Any:
    """The two-dimensional cross-correlation (zero-filled boundary), laid out as SciPy's
    when the inputs swap."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    same_shape = in1.shape == in2.shape

    def flipped_input():
        return jnp.flip(_convolve_nd("correlate2d", jnp.flip(in1), in2.conj(), mode,
                                     precision))

    if mode == "same" or not swap or (mode == "valid" and same_shape):
        return flipped_input()
    result = _convolve_nd("correlate2d", jnp.flip(in2), in1.conj(), mode, precision)
    return result if mode == "valid" else result.conj()


def _fftconvolve_unbatched(in1: Any, in2: Any, mode: str) -> Any:
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    if mode == "valid" and _ordered("fftconvolve", in1, in2, "for 'valid' mode, one input "
                                    "must be at least as large as the other in every "
                                    "dimension"):
        in1, in2 = in2, in1
    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape, strict=True)):
        product = in1 * in2
    elif jnp.iscomplexobj(in1):
        product = jnp.fft.ifftn(jnp.fft.fftn(in1, full_shape) * jnp.fft.fftn(in2, full_shape),
                                full_shape)
    else:
        product = jnp.fft.irfftn(jnp.fft.rfftn(in1, full_shape)
                                 * jnp.fft.rfftn(in2, full_shape), full_shape)
    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape, strict=True))
    starts = tuple((full - out) // 2 for full, out in zip(full_shape, out_shape, strict=True))
    return lax.dynamic_slice(product, starts, out_shape)


def fftconvolve(in1: Any, in2: Any, mode: str = "full",
                axes: Sequence[int] | int | None = None) -> Any:
    """The N-dimensional convolution by FFT, over ``axes`` (all by default; the other axes
    must agree and are mapped over)."""
    in1, in2 = inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError(f"fftconvolve: in1 and in2 should have the same dimensionality, got "
                         f"{in1.ndim} and {in2.ndim}")
    _check_mode("fftconvolve", mode)

    def convolved(a, b):
        return _fftconvolve_unbatched(a, b, mode)

    if axes is None:
        return convolved(in1, in2)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    for axis in axes:
        if not -in1.ndim <= axis < in1.ndim:
            raise ValueError(f"fftconvolve: axis {axis} is out of bounds for arrays of "
                             f"dimension {in1.ndim}")
    axes = tuple(axis % in1.ndim for axis in axes)
    mapped = sorted(set(range(in1.ndim)) - set(axes))
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(f"fftconvolve: mapped axes must have the same shape; got "
                         f"in1.shape={in1.shape} in2.shape={in2.shape} axes={axes}")
    for axis in mapped:
        convolved = vmap(convolved, in_axes=axis, out_axes=axis)
    return convolved(in1, in2)


def detrend(data: Any, axis: int = -1, type: str = "linear",  # noqa: A002 (SciPy's name)
            bp: int | Sequence[int] | np.ndarray = 0, overwrite_data: None = None) -> Any:
    """``data`` less its mean (``type='constant'``) or its least-squares line, fitted
    separately between consecutive breakpoints ``bp`` (``type='linear'``)."""
    if overwrite_data is not None:
        raise NotImplementedError("detrend: overwrite_data is not supported (arrays are "
                                  "immutable); leave it None")
    if type not in ("constant", "linear"):
        raise ValueError(f"detrend: trend type must be 'linear' or 'constant', got {type!r}")
    (x,) = inexact(data)
    if type == "constant":
        return x - x.mean(axis, keepdims=True)
    n = x.shape[axis]
    breaks = np.sort(np.unique(np.r_[0, bp, n]))
    if breaks[0] < 0 or breaks[-1] > n:
        raise ValueError(f"detrend: breakpoints must be non-negative and at most the length "
                         f"of data along the axis ({n}); got {bp!r}")
    x = jnp.moveaxis(x, axis, 0)
    shape = x.shape
    x = x.reshape(n, -1)
    for start, stop in zip(breaks[:-1], breaks[1:], strict=True):
        count = int(stop - start)
        design = jnp.stack([jnp.ones(count, x.dtype),
                            jnp.arange(1, count + 1, dtype=x.dtype) / np.asarray(count, x.dtype)],
                           axis=1)
        coefficients, *_ = jnp.linalg.lstsq(design, x[start:stop])
        x = x.at[start:stop].add(-jnp.matmul(design, coefficients,
                                             precision=lax.Precision.HIGHEST))
    return jnp.moveaxis(x.reshape(shape), 0, axis)


from spmdc.scipy.signal_spectral import csd, istft, stft, welch  # noqa: E402
