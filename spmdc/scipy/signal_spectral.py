"""The spectral functions of ``spmdc.scipy.signal``: ``stft``, ``istft``, ``csd`` and
``welch``, with JAX 0.10.2's defaults and results.

All four cut the signal into windowed segments of ``nperseg`` samples, ``noverlap`` apart
(half a segment by default), and take each segment's FFT (Note [spectral segments]).
The window is a NumPy array computed on the host: ``'hann'`` directly, any other name or
tuple by SciPy's ``get_window``, or the 1-D array given.
"""
from __future__ import annotations

import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core.operands import inexact
from spmdc.scipy.signal import detrend

__all__ = ["csd", "istft", "stft", "welch"]

# Note [spectral segments]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# Segment k holds samples ``k * step ... k * step + nperseg - 1`` (``step = nperseg -
# noverlap``), gathered at once with a (segments, nperseg) index array, so the program's
# size does not grow with the number of segments; ``istft`` adds the segments back with one
# scatter-add at the same indices (overlap-add) and divides by the overlap-added squared
# window. Before segmenting, ``boundary`` extends the signal by half a segment at each end
# and ``padded`` zero-pads it to a whole number of steps, as SciPy and JAX do.


def _complex_of(dtype: Any) -> np.dtype:
    """The complex dtype of a real or complex ``dtype``'s precision."""
    return np.result_type(dtype, np.complex64)


def _hann(n: int) -> np.ndarray:
    return np.ones(1) if n == 1 else np.sin(np.linspace(0, np.pi, n, endpoint=False)) ** 2


def _named_window(window: Any, n: int) -> np.ndarray:
    if isinstance(window, str) and window == "hann":
        return _hann(n)
    from scipy.signal import get_window
    return get_window(window, n)


def _window(window: Any, nperseg: int | None, length: int, dtype: Any) -> tuple[Any, int]:
    if isinstance(window, (str, tuple)):
        n = length if nperseg is None else int(nperseg)
        if n > length:
            warnings.warn(f"nperseg={n} is greater than input_length={length}, using "
                          f"nperseg={length}", stacklevel=3)
            n = length
        return jnp.asarray(_named_window(window, n), dtype), n
    win = jnp.asarray(window, dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError(f"window must be 1-D, got shape {win.shape}")
    if length < win.size:
        raise ValueError(f"window is longer than input signal ({win.size} > {length})")
    if n != win.size:
        raise ValueError(f"value specified for nperseg ({n}) is different from length of "
                         f"window ({win.size})")
    return win, n


def _odd_extension(x: Any, n: int) -> Any:
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
    left, right = x[..., :1], x[..., -1:]
    return jnp.concatenate([2 * left - jnp.flip(x[..., 1:n + 1], -1), x,
                            2 * right - jnp.flip(x[..., -n - 1:-1], -1)], axis=-1)


def _even_extension(x: Any, n: int) -> Any:
    """Mirrored about the end samples (NumPy's 'reflect' padding)."""
    if n < 1:
        return x
    return jnp.concatenate([jnp.flip(x[..., 1:n + 1], -1), x, jnp.flip(x[..., -n - 1:-1], -1)],
                           axis=-1)


def _constant_extension(x: Any, n: int) -> Any:
    """The end samples repeated (NumPy's 'edge' padding)."""
    left = jnp.broadcast_to(x[..., :1], x.shape[:-1] + (n,))
    right = jnp.broadcast_to(x[..., -1:], x.shape[:-1] + (n,))
    return jnp.concatenate([left, x, right], axis=-1)


def _zero_extension(x: Any, n: int) -> Any:
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)])


BOUNDARIES: dict[Any, Callable[[Any, int], Any]] = {
    "even": _even_extension, "odd": _odd_extension, "constant": _constant_extension,
    "zeros": _zero_extension, None: lambda x, n: x,
}


def _segment_ffts(x: Any, win: Any, detrend_func: Callable[[Any], Any], nperseg: int,
                  noverlap: int, nfft: int, twosided: bool) -> Any:
    step = nperseg - noverlap
    starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
    segments = x[..., starts[:, None] + np.arange(nperseg)[None, :]]
    segments = detrend_func(segments)
    if jnp.iscomplexobj(win):
        segments = segments.astype(_complex_of(segments.dtype))
    segments = win * segments
    return jnp.fft.fft(segments, n=nfft) if twosided else jnp.fft.rfft(segments.real, n=nfft)


def _spectral(x: Any, y: Any, fs: Any, window: Any, nperseg: int | None,
              noverlap: int | None, nfft: int | None, detrend_type: Any,
              return_onesided: bool, scaling: str, axis: int, mode: str,
              boundary: str | None = None, padded: bool = False) -> tuple[Any, Any, Any]:
    if boundary not in BOUNDARIES:
        raise ValueError(f"Unknown boundary option {boundary!r}, must be one of: "
                         f"{list(BOUNDARIES)}")
    axis = operator.index(axis)
    if y is None:
        (x,) = inexact(x)
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for an array of dimension "
                             f"{x.ndim}")
    else:
        x, y = inexact(x, y)
        if x.ndim != y.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs "
                             f"{y.ndim}).")
    axis %= x.ndim
    result_dtype = _complex_of(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype
    if nperseg is not None and int(nperseg) < 1:
        raise ValueError(f"nperseg must be a positive integer, got {nperseg}")
    win, nperseg = _window(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)
    if x.size == 0 or (y is not None and y.size == 0):
        shape = x.shape if y is None else x.shape[:axis] + (
            min(x.shape[axis], y.shape[axis]),) + x.shape[axis + 1:]
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype))
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        y = jnp.moveaxis(y, axis, -1) if y.ndim > 1 else y
        longest = max(x.shape[-1], y.shape[-1])
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, longest - x.shape[-1])])
        y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, longest - y.shape[-1])])
    if nfft < nperseg:
        raise ValueError(f"nfft ({nfft}) must be greater than or equal to nperseg "
                         f"({nperseg}).")
    if noverlap >= nperseg:
        raise ValueError(f"noverlap ({noverlap}) must be less than nperseg ({nperseg}).")
    step = nperseg - noverlap
    extend = BOUNDARIES[boundary]
    x = extend(x, nperseg // 2)
    y = None if y is None else extend(y, nperseg // 2)
    if padded:
        extra = (-(x.shape[-1] - nperseg) % step) % nperseg
        x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, extra)])
        y = None if y is None else jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, extra)])
    if isinstance(detrend_type, str):
        def detrend_func(d):
            return detrend(d, type=detrend_type, axis=-1)
    elif callable(detrend_type):
        detrend_func = detrend_type
    elif not detrend_type:
        def detrend_func(d):
            return d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type!r}")
    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling!r}; use 'density' or 'spectrum'")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    twosided = not return_onesided
    if return_onesided and (jnp.iscomplexobj(x) or (y is not None and jnp.iscomplexobj(y))):
        twosided = True
        warnings.warn("Input data is complex, switching to return_onesided=False",
                      stacklevel=3)
    freqs = (jnp.fft.fftfreq(nfft, 1 / fs, dtype=freq_dtype) if twosided
             else jnp.fft.rfftfreq(nfft, 1 / fs, dtype=freq_dtype))
    result = _segment_ffts(x, win, detrend_func, nperseg, noverlap, nfft, twosided)
    if y is not None:
        result = jnp.conjugate(result) * _segment_ffts(y, win, detrend_func, nperseg,
                                                       noverlap, nfft, twosided)
    elif mode == "psd":
        result = jnp.conjugate(result) * result
    result = result * jnp.asarray(scale).astype(_complex_of(jnp.asarray(scale).dtype))
    if not twosided and mode == "psd":
        end = None if nfft % 2 else -1
        result = result.at[..., 1:end].multiply(2)
    time = jnp.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, step,
                      dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = result.real
    return freqs, time, jnp.moveaxis(result, -1, axis)


def stft(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int = 256,
         noverlap: int | None = None, nfft: int | None = None, detrend: Any = False,
         return_onesided: bool = True, boundary: str | None = "zeros", padded: bool = True,
         axis: int = -1) -> tuple[Any, Any, Any]:
    """``(frequencies, segment times, STFT)``, the STFT scaled as SciPy's 'spectrum'."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                     return_onesided, "spectrum", axis, "stft", boundary, padded)


def csd(x: Any, y: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
        noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
        return_onesided: bool = True, scaling: str = "density", axis: int = -1,
        average: str = "mean") -> tuple[Any, Any]:
    """``(frequencies, cross spectral density)`` by Welch's method: the segments' cross
    spectra, averaged by ``average`` ('mean' or 'median')."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                n = pxy.shape[-1]
                bias = 1 + np.sum(1.0 / (np.arange(2.0, n, 2) + 1) - 1.0 / np.arange(2.0, n, 2))
                if jnp.iscomplexobj(pxy):
                    pxy = jnp.median(pxy.real, axis=-1) + 1j * jnp.median(pxy.imag, axis=-1)
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / np.asarray(bias).astype(pxy.dtype)
            elif average == "mean":
                pxy = pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average!r}')
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,
          noverlap: int | None = None, nfft: int | None = None, detrend: Any = "constant",
          return_onesided: bool = True, scaling: str = "density", axis: int = -1,
          average: str = "mean") -> tuple[Any, Any]:
    """``(frequencies, power spectral density)`` by Welch's method."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, pxx.real


def _overlap_add(frames: Any, step: int) -> Any:
    """Frames ``(..., n, length)`` added at ``step`` apart into ``(..., out)``."""
    n, length = frames.shape[-2:]
    out = jnp.zeros(frames.shape[:-2] + (step * (n - 1) + length,), frames.dtype)
    index = np.arange(n)[:, None] * step + np.arange(length)[None, :]
    return out.at[..., index].add(frames)


def istft(Zxx: Any, fs: Any = 1.0, window: Any = "hann", nperseg: int | None = None,  # noqa: N803
          noverlap: int | None = None, nfft: int | None = None, input_onesided: bool = True,
          boundary: bool = True, time_axis: int = -1, freq_axis: int = -2) -> tuple[Any, Any]:
    """``(times, signal)``: the inverse of ``stft`` by weighted overlap-add."""
    z = jnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError(f"Input stft must be at least 2d! Got shape {z.shape}")
    for name, value in (("freq_axis", freq_axis), ("time_axis", time_axis)):
        if not -z.ndim <= value < z.ndim:
            raise ValueError(f"istft: {name} {value} is out of bounds for an array of "
                             f"dimension {z.ndim}")
    freq_axis, time_axis = freq_axis % z.ndim, time_axis % z.ndim
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    z = z.astype(_complex_of(z.dtype))
    n_default = 2 * (z.shape[freq_axis] - 1) if input_onesided else z.shape[freq_axis]
    nperseg = int(nperseg or n_default)
    if nperseg < 1:
        raise ValueError(f"nperseg must be a positive integer, got {nperseg}")
    if nfft is None:
        nfft_int = n_default + 1 if input_onesided and nperseg == n_default + 1 \
            else n_default
    else:
        nfft_int = int(nfft)
    if nfft_int < nperseg:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg}).")
    noverlap = int(noverlap or nperseg // 2)
    if noverlap >= nperseg:
        raise ValueError(f"noverlap ({noverlap}) must be less than nperseg ({nperseg}).")
    step = nperseg - noverlap
    if time_axis != z.ndim - 1 or freq_axis != z.ndim - 2:
        outer = tuple(i for i in range(z.ndim) if i not in (time_axis, freq_axis))
        z = jnp.transpose(z, outer + (freq_axis, time_axis))
    inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    # JAX passes the nfft argument itself (None: the axis's natural length) to the IFFT.
    frames = inverse(z, axis=-2, n=nfft)[..., :nperseg, :]
    if isinstance(window, (str, tuple)):
        win = jnp.asarray(_named_window(window, nperseg), frames.dtype)
    else:
        win = jnp.asarray(window)
        if win.ndim != 1:
            raise ValueError(f"window must be 1-D, got shape {win.shape}")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}, got {win.shape[0]}")
    frames = frames * win.sum()
    x = _overlap_add(jnp.swapaxes(frames * win[:, None], -2, -1), step)
    squared = jnp.broadcast_to(win * win, (frames.shape[-1], nperseg))
    norm = _overlap_add(squared, step)
    if boundary:
        x = x[..., nperseg // 2:-(nperseg // 2)]
        norm = norm[..., nperseg // 2:-(nperseg // 2)]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != z.ndim - 1:
        x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    time = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x
