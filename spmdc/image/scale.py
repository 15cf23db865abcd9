"""Resampling images: ``resize``, ``scale_and_translate`` and ``ResizeMethod``
(JAX's ``jax.image``), written with spmdc.numpy.

Every method but nearest-neighbour is separable and linear in the image: along each
resized dimension, an (input size x output size) weight matrix, built from the method's
kernel, is contracted with the image (one einsum over all of them). So the result
differentiates and batches like any einsum, with respect to the image and to ``scale``
and ``translation`` (through the weights). See Note [resampling weights].
"""
from __future__ import annotations

import enum
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """How ``resize`` and ``scale_and_translate`` sample the image. NEAREST: the nearest
    pixel (resize only). LINEAR: the triangle kernel. LANCZOS3 / LANCZOS5: the Lanczos
    kernel of radius 3 / 5. CUBIC: the Keys cubic kernel. CUBIC_PYTORCH: PyTorch's bicubic
    (OpenCV's kernel, edges repeated; CUBIC when antialiasing). AREA: each output pixel
    averages the input it covers (a box filter when upsampling, as TensorFlow's)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a name means ('bilinear' is LINEAR, 'bicubic' is CUBIC, ...)."""
        method = _NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"; use one of '
                             + ", ".join(repr(n) for n in _NAMES))
        return method


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    **dict.fromkeys(["linear", "bilinear", "trilinear", "triangle"], ResizeMethod.LINEAR),
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    **dict.fromkeys(["cubic", "bicubic", "tricubic"], ResizeMethod.CUBIC),
    **dict.fromkeys(["cubic-pytorch", "bicubic-pytorch"], ResizeMethod.CUBIC_PYTORCH),
    "area": ResizeMethod.AREA,
}


# Note [resampling weights]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# As in JAX (and TensorFlow's scale_and_translate): pixels are half-centred, so output
# pixel j of a dimension samples the input at s_j = (j + 0.5 - translation) / scale - 0.5.
# Input pixel i weighs kernel(|s_j - i| / kernel_scale), where kernel_scale is 1/scale
# when antialiasing a downsampling (the kernel widens to cover the pixels each output
# pixel spans) and 1 otherwise. Each output pixel's weights are normalised to sum to 1
# (weights summing to almost nothing become 0), and an output pixel whose sample falls
# outside [-0.5, size - 0.5] gets no weight at all (it is 0 in the result).
# CUBIC_PYTORCH without antialiasing repeats the edge instead: the kernel is evaluated on
# ``radius`` extra pixels beyond each edge, whose weights go to the edge pixel, and no
# output pixel is zeroed. AREA weighs input pixel i by the length of the overlap of
# [i, i + 1) with the output pixel's span [(j - translation) / scale, ... + 1 / scale),
# then normalises. Weights are computed in the dtype of scale and translation and cast
# to the image's.

def _lanczos(radius: float) -> Callable[[Any], Any]:
    def kernel(x: Any) -> Any:
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)),
                        1)
        return jnp.where(x > radius, 0., out)
    return kernel


def _keys_cubic(x: Any) -> Any:                     # Keys' kernel, a = -0.5
    out = ((1.5 * x - 2.5) * x) * x + 1.
    out = jnp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
    return jnp.where(x >= 2., 0., out)


def _opencv_cubic(x: Any) -> Any:                   # OpenCV's (and PyTorch's), a = -0.75
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return jnp.where(x >= 2.0, 0.0, out)


def _triangle(x: Any) -> Any:
    return jnp.maximum(0, 1 - jnp.abs(x))


# method -> (kernel radius, kernel); AREA's weights are overlaps, not a kernel (None).
_KERNELS: dict[ResizeMethod, tuple[int, Callable[[Any], Any] | None]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, None),
}


def _normalised(weights: Any) -> Any:
    total = jnp.sum(weights, axis=0, keepdims=True)
    return jnp.where(jnp.abs(total) > 1000. * float(np.finfo(np.float32).eps),
                     jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)


def _weight_matrix(input_size: int, output_size: int, scale: Any, translation: Any,
                   dtype: np.dtype, method: ResizeMethod, antialias: bool,
                   edge_padding: bool) -> Any:
    """The (input_size, output_size) weights of one dimension. See Note [resampling
    weights]."""
    radius, kernel = _KERNELS[method]
    inv_scale = 1. / scale
    kernel_scale = jnp.maximum(inv_scale, 1.) if antialias else 1.
    sample = ((jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale
              - translation * inv_scale - 0.5)
    pad = radius if edge_padding else 0
    pixels = jnp.arange(-pad, input_size + pad, dtype=dtype)
    if kernel is None:                                            # AREA: overlaps
        left = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
        right = left + inv_scale
        pixel_left = jnp.arange(input_size, dtype=dtype)
        weights = jnp.maximum(0.0, jnp.minimum(right[None, :], pixel_left[:, None] + 1.0)
                              - jnp.maximum(left[None, :], pixel_left[:, None]))
    else:
        weights = kernel(jnp.abs(sample[None, :] - pixels[:, None]) / kernel_scale)
    if edge_padding:          # the weights of the pixels beyond an edge go to the edge
        clamped = jnp.clip(pixels.astype(np.int32), 0, input_size - 1)
        columns = lax.broadcast_in_dim(jnp.arange(output_size),
                                       (pixels.shape[0], output_size), (1,))
        weights = jnp.zeros((input_size, output_size), dtype).at[
            clamped[:, None], columns].add(weights)
        return _normalised(weights)
    inside = jnp.logical_and(sample >= -0.5, sample <= input_size - 0.5)
    return jnp.where(inside[None, :], _normalised(weights), 0)


def _resample(image: Any, shape: tuple[int, ...], spatial_dims: Sequence[int],
              scales: Sequence[Any], translations: Sequence[Any], dtype: np.dtype,
              method: ResizeMethod, antialias: bool, precision: Any) -> Any:
    """One einsum of the image with a weight matrix per dimension in ``spatial_dims``."""
    if not spatial_dims:
        return image
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
    operands: list[Any] = [image, list(range(image.ndim))]
    out_axes = list(range(image.ndim))
    for i, (d, scale, translation) in enumerate(
            zip(spatial_dims, scales, translations, strict=True)):
        weights = _weight_matrix(image.shape[d], shape[d], scale, translation, dtype,
                                 method, antialias, edge_padding)
        operands += [weights.astype(image.dtype), [d, image.ndim + i]]
        out_axes[d] = image.ndim + i
    return jnp.einsum(*operands, out_axes, precision=precision)


def _shape(image: Any, shape: Any, name: str) -> tuple[int, ...]:
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a sequence of ints, got {shape!r}") from None
    if len(shape) != image.ndim:
        raise ValueError(f"{name}: shape must have length equal to the number of dimensions "
                         f"of the image; {shape} vs {image.shape}")
    if any(n < 0 for n in shape):
        raise ValueError(f"{name}: shape must not be negative, got {shape}")
    return shape


def _method(method: Any) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"method must be a ResizeMethod or its name, got {method!r}")
    return method


def _inexact(x: Any) -> Any:
    x = jnp.asarray(x)
    return x if dtypes.is_inexact(x.dtype) else x.astype(dtypes.default_float())


def _resize_nearest(image: Any, shape: tuple[int, ...]) -> Any:
    """Output pixel j of a resized dimension reads input pixel floor((j + 0.5) m / n)."""
    for d, (m, n) in enumerate(zip(image.shape, shape, strict=True)):
        if m == n:
            continue
        offsets = (jnp.arange(n, dtype=np.float32) + 0.5) * np.float32(m) / np.float32(n)
        index = [slice(None)] * image.ndim
        index[d] = jnp.floor(offsets).astype(np.int32)
        image = image[tuple(index)]
    return image


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod,
           antialias: bool = True, precision: Any = lax.Precision.HIGHEST) -> Any:
    """``image`` resampled to ``shape`` (every dimension: keep a batch or channel
    dimension's size to leave it alone). NEAREST keeps the dtype; the other methods give
    a floating result, each output pixel a kernel-weighted average of the input
    (``antialias`` widens the kernel when downsampling; ``precision`` is the einsum's).
    See Note [resampling weights]."""
    image = jnp.asarray(image)
    shape = _shape(image, shape, "resize")
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    spatial_dims = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
    return _resample(image, shape, spatial_dims, scales, [0.0] * len(spatial_dims),
                     dtypes.default_float(), method, bool(antialias), precision)


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int],
                        scale: Any, translation: Any, method: str | ResizeMethod,
                        antialias: bool = True,
                        precision: Any = lax.Precision.HIGHEST) -> Any:
    """``image`` resampled to ``shape``, input location x of dimension spatial_dims[k]
    moving to ``x * scale[k] + translation[k]`` (half-centred pixels; output pixels that
    sample outside the input are 0). ``method`` is any ResizeMethod but NEAREST.
    Differentiable in the image, ``scale`` and ``translation``. See Note [resampling
    weights]."""
    image = jnp.asarray(image)
    shape = _shape(image, shape, "scale_and_translate")
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate; use resize(..., 'nearest') or another method")
    spatial_dims = [operator.index(d) for d in spatial_dims]
    for d in spatial_dims:
        if not -image.ndim <= d < image.ndim:
            raise ValueError(f"scale_and_translate: spatial dimension {d} is out of range "
                             f"for an image of {image.ndim} dimensions")
    spatial_dims = [d % image.ndim for d in spatial_dims]
    image = _inexact(image)
    scale, translation = jnp.asarray(scale), jnp.asarray(translation)
    dtype, _ = dtypes.result_type(scale, translation)
    dtype = dtype if dtypes.is_inexact(dtype) else dtypes.default_float()
    scale, translation = scale.astype(dtype), translation.astype(dtype)
    if scale.shape != (len(spatial_dims),) or translation.shape != (len(spatial_dims),):
        raise ValueError("scale_and_translate: scale and translation need one entry per "
                         f"spatial dimension ({len(spatial_dims)}); got shapes "
                         f"{scale.shape} and {translation.shape}")
    return _resample(image, shape, spatial_dims, list(scale), list(translation), dtype,
                     method, bool(antialias), precision)
