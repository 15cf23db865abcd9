"""``spmdc.nn.initializers`` (JAX's ``jax.nn.initializers``): functions
``init(key, shape, dtype=None) -> array`` for parameters, drawn with ``spmdc.random``
exactly as JAX draws them, so the same key gives JAX's parameters bit for bit.

Each takes JAX's ``out_sharding`` too: the array laid out by a NamedSharding or a
PartitionSpec (over Explicit mesh axes its type says so), as ``spmdc.random``'s samplers.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

import spmdc.numpy as jnp
from spmdc import random
from spmdc.random.placement import placed

__all__ = ["Initializer", "zeros", "ones", "constant", "uniform", "normal", "truncated_normal",
           "variance_scaling", "glorot_uniform", "glorot_normal", "xavier_uniform",
           "xavier_normal", "lecun_uniform", "lecun_normal", "he_uniform", "he_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "delta_orthogonal"]


@runtime_checkable
class Initializer(Protocol):
    def __call__(self, key: Any, shape: Any, dtype: Any = None,
                 out_sharding: Any = None) -> Any:
        ...


def _laid_out(draw: Callable[[Any, Any, Any], Any], default_dtype: Any) -> Initializer:
    """``draw(key, shape, dtype)`` as JAX's ``init(key, shape, dtype, out_sharding)``: the
    array laid out by ``out_sharding`` (a NamedSharding, or a PartitionSpec over the mesh
    in context), as ``spmdc.random``'s samplers lay theirs out."""
    def init(key: Any, shape: Any, dtype: Any = default_dtype,
             out_sharding: Any = None) -> Any:
        return placed(lambda: draw(key, shape, dtype), out_sharding)
    return init


def _float_dtype(name: str, dtype: Any, complex_ok: bool = False) -> np.dtype:
    if dtype is None:
        return jnp.zeros((), float).dtype
    dtype = np.dtype(dtype)
    if complex_ok and jnp.issubdtype(dtype, np.complexfloating):
        return dtype
    if not jnp.issubdtype(dtype, np.floating):
        kind = "real floating or complex" if complex_ok else "real floating"
        raise TypeError(f"nn.initializers.{name}: dtype must be a {kind} type, got "
                        f"{dtype.name}")
    return dtype


def zeros(key: Any, shape: Any, dtype: Any = None, out_sharding: Any = None) -> Any:
    """An array of zeros (the key is not used), laid out by ``out_sharding``."""
    dtype = jnp.zeros((), float).dtype if dtype is None else dtype
    return placed(lambda: jnp.zeros(shape, dtype), out_sharding)


def ones(key: Any, shape: Any, dtype: Any = None, out_sharding: Any = None) -> Any:
    """An array of ones (the key is not used), laid out by ``out_sharding``."""
    dtype = jnp.zeros((), float).dtype if dtype is None else dtype
    return placed(lambda: jnp.ones(shape, dtype), out_sharding)


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling arrays with ``value``."""
    def draw(key: Any, shape: Any, dtype: Any) -> Any:
        return jnp.full(shape, value, jnp.zeros((), float).dtype if dtype is None else dtype)
    return _laid_out(draw, dtype)


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Uniform draws on ``[0, scale)``."""
    def draw(key: Any, shape: Any, dtype: Any) -> Any:
        dtype = _float_dtype("uniform", dtype)
        return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
    return _laid_out(draw, dtype)


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Normal draws with standard deviation ``stddev``."""
    def draw(key: Any, shape: Any, dtype: Any) -> Any:
        dtype = _float_dtype("normal", dtype, complex_ok=True)
        return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
    return _laid_out(draw, dtype)


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0,
                     upper: Any = 2.0) -> Initializer:
    """Normal draws truncated to ``[lower, upper]``, then scaled by ``stddev``."""
    def draw(key: Any, shape: Any, dtype: Any) -> Any:
        dtype = _float_dtype("truncated_normal", dtype)
        return random.truncated_normal(key, lower, upper, shape, dtype) \
            * jnp.array(stddev, dtype)
    return _laid_out(draw, dtype)


def _size(shape: Sequence[int], axis: int | Sequence[int]) -> int:
    if isinstance(axis, int):
        return shape[axis]
    return math.prod(shape[i] for i in axis)


def _compute_fans(shape: Sequence[int], in_axis: Any = -2, out_axis: Any = -1,
                  batch_axis: Any = ()) -> tuple[float, float]:
    """Fan-in and fan-out of a weight of ``shape``: the sizes of the in/out axes times the
    receptive field (every axis that is neither, nor a batch axis)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                         "weights tensor with default in_axis. Must be at least 2D or specify "
                         "in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    batch_size = _size(shape, batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(scale: Any, mode: str, distribution: str, in_axis: Any = -2,
                     out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None
                     ) -> Initializer:
    """Draws with variance ``scale / n`` where ``n`` is the fan-in, fan-out, their mean or
    geometric mean (``mode``), from a truncated normal, normal or uniform ``distribution``.
    """
    if mode not in _MODES:
        raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(f"invalid distribution for variance scaling initializer: "
                         f"{distribution}")

    def draw(key: Any, shape: Any, dtype: Any) -> Any:
        shape = tuple(int(d) for d in ((shape,) if isinstance(shape, int) else shape))
        dtype = _float_dtype("variance_scaling", dtype, complex_ok=True)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = jnp.array(scale / denominator, dtype=dtype)
        is_complex = jnp.issubdtype(dtype, np.complexfloating)
        if distribution == "truncated_normal" and is_complex:
            # 0.9531... is the standard deviation of a complex standard normal whose
            # modulus is truncated to 2
            stddev = jnp.sqrt(variance) / jnp.array(0.95311164380491208, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "truncated_normal":
            # 0.8796... is the standard deviation of a standard normal truncated to [-2, 2]
            stddev = jnp.sqrt(variance) / jnp.array(0.87962566103423978, dtype)
            return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if is_complex:
            return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
        return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
    return _laid_out(draw, dtype)


def _polar(key: Any, shape: tuple[int, ...], dtype: np.dtype,
           radius: Callable[[Any], Any]) -> Any:
    """``radius(u) * exp(i theta)``: ``u`` and ``theta / 2 pi`` uniform on [0, 1) from the
    two halves of ``key`` (the draws JAX's complex initializers make)."""
    key_r, key_theta = random.split(key)
    real = np.dtype(np.float64 if dtype == np.complex128 else np.float32)
    r = radius(random.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_uniform(key: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """Uniform on the disk of radius sqrt(2): mean zero, variance one."""
    return _polar(key, shape, dtype, lambda u: jnp.sqrt(2 * u))


def _complex_truncated_normal(key: Any, upper: float, shape: tuple[int, ...],
                              dtype: np.dtype) -> Any:
    """A complex standard normal (variance one) with its modulus truncated to ``upper``,
    by inverting the modulus' CDF ``1 - exp(-r^2)``."""
    bound = 1 - jnp.exp(jnp.array(-(upper ** 2), dtype))
    return _polar(key, shape, dtype,
                  lambda u: jnp.sqrt(-jnp.log(1 - bound * u.astype(dtype))))


def glorot_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
                   dtype: Any = None) -> Initializer:
    return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype)


def glorot_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
                  dtype: Any = None) -> Initializer:
    return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def lecun_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
                  dtype: Any = None) -> Initializer:
    return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def lecun_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
                 dtype: Any = None) -> Initializer:
    return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


def he_uniform(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
               dtype: Any = None) -> Initializer:
    return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype)


def he_normal(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (),
              dtype: Any = None) -> Initializer:
    return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis,
                            dtype)


xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """A uniformly random orthogonal matrix (``random.orthogonal``) of the shape's
    product of the other axes by ``shape[column_axis]``, reshaped to ``shape`` and scaled
    by ``scale``; shapes need at least two dimensions."""
    def draw(key: Any, shape: Any, dtype: Any) -> Any:
        shape = tuple(int(d) for d in ((shape,) if isinstance(shape, int) else shape))
        dtype = _float_dtype("orthogonal", dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(d == 0 for d in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q
    return _laid_out(draw, dtype)


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1,
                     dtype: Any = None) -> Initializer:
    """For a 3-, 4- or 5-D convolution kernel (spatial dims, in, out): zeros but at the
    kernel's centre, an ``orthogonal`` matrix of shape ``shape[-2:]`` (needs
    ``in <= out``)."""
    def draw(key: Any, shape: Any, dtype: Any) -> Any:
        shape = tuple(int(d) for d in shape)
        dtype = _float_dtype("delta_orthogonal", dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape, "
                             f"got {shape}")
        if shape[-1] < shape[-2]:
            raise ValueError(f"delta_orthogonal: `fan_in` ({shape[-2]}) must be less or "
                             f"equal than `fan_out` ({shape[-1]})")
        matrix = orthogonal(scale, column_axis, dtype)(key, shape[-2:])
        centre = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[centre].set(matrix)
    return _laid_out(draw, dtype)
