"""Samplers built on random bits: bits, uniform, normal, randint and the distributions
derived from them by transforming uniform or normal draws.

Each public sampler checks its arguments at the user's call, then runs a jitted body on
the raw key data with the static parts (shape, dtype) as static arguments: eager calls
compile once per signature, and under jit/vmap/grad/pmap the body is inlined. Each body
computes what JAX 0.10.2's does, operation for operation and in the same dtype, so that
the draws are the same bits (see Note [threefry bits] in threefry.py).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..transforms.jit import jit
from . import threefry
from .keys import check_key
from .placement import takes_out_sharding

UINT_DTYPES = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
               64: np.dtype(np.uint64)}


# --- argument checks ---------------------------------------------------------------------

def canonical_shape(name: str, shape: Any) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(_dim(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shape must be a tuple of non-negative integers, "
                        f"got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{name}: shape must be non-negative, got {out}")
    return out


def _dim(d: Any) -> int:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        if hasattr(d, "__index__") and not hasattr(d, "shape"):
            return int(d.__index__())
        if hasattr(d, "shape") and d.shape == () and np.issubdtype(d.dtype, np.integer):
            return int(d)
        raise TypeError(d)
    return int(d)


def check_shape(name: str, shape: tuple[int, ...], *param_shapes: Sequence[int]) -> None:
    """The parameters must broadcast to ``shape`` exactly (as JAX requires)."""
    if not param_shapes:
        return
    try:
        joined = jnp.broadcast_shapes(shape, *param_shapes)
    except (ValueError, TypeError):
        joined = None
    if joined != tuple(shape):
        raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                         f"argument, and the result of broadcasting the shapes must equal "
                         f"the shape argument, but got result {joined} for shape argument "
                         f"{tuple(shape)}.")


def float_dtype(name: str, dtype: Any, inexact: bool = False) -> np.dtype:
    d = dtypes.canonicalize(float if dtype is None else dtype)
    ok = dtypes.is_inexact(d) if inexact else dtypes.is_float(d)
    if not ok:
        kind = "a float or complex" if inexact else "a float"
        raise ValueError(f"dtype argument to `{name}` must be {kind} dtype, got {d}")
    return d


def _const(value: Any, dtype: np.dtype) -> Any:
    return np.asarray(value, dtype)


def broadcast_to_rank(x: Any, rank: int) -> Any:
    x = jnp.asarray(x)
    extra = rank - x.ndim
    return x if extra <= 0 else jnp.reshape(x, (1,) * extra + tuple(x.shape))



# --- bits ---------------------------------------------------------------------------------

random_bits = jit(threefry.random_bits, static_argnums=(1, 2))


@takes_out_sharding
def bits(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Uniform random bits as unsigned integers (default uint32, uint64 under x64)."""
    data, _ = check_key("bits", key)
    d = dtypes.canonicalize(np.uint64 if dtype is None else dtype)
    if not dtypes.is_unsigned(d):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {d}")
    return random_bits(data, d.itemsize * 8, canonical_shape("bits", shape))


# --- uniform ------------------------------------------------------------------------------

def uniform_body(data: Any, minval: Any, maxval: Any, shape: tuple[int, ...],
                 dtype: np.dtype) -> Any:
    """Uniform floats in [minval, maxval): random mantissa bits under the exponent of 1.0
    give a float in [1, 2); subtract 1, scale and shift, and clip below at minval."""
    minval = broadcast_to_rank(jnp.asarray(minval).astype(dtype), len(shape))
    maxval = broadcast_to_rank(jnp.asarray(maxval).astype(dtype), len(shape))
    info = dtypes.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    rng_bits = 8 if nmant < 8 else nbits
    uint = UINT_DTYPES[nbits]
    raw = threefry.random_bits(data, rng_bits, shape)
    if rng_bits != nbits:
        raw = lax.convert_element_type(raw, uint)
    mantissa = lax.shift_right_logical(raw, uint.type(rng_bits - nmant))
    one_bits = np.asarray(1.0, dtype).view(uint)
    floats = lax.sub(lax.bitcast_convert_type(lax.bitwise_or(mantissa, one_bits[()]), dtype),
                     _const(1.0, dtype)[()])
    scaled = jnp.add(jnp.multiply(floats, jnp.subtract(maxval, minval)), minval)
    return jnp.maximum(minval, jnp.reshape(scaled, shape))


_uniform = jit(uniform_body, static_argnums=(3, 4))


@takes_out_sharding
def uniform(key: Any, shape: Any = (), dtype: Any = None, minval: Any = 0.,
            maxval: Any = 1.) -> Any:
    """Uniform random values in [minval, maxval) with the given shape and float dtype."""
    data, _ = check_key("uniform", key)
    shape = canonical_shape("uniform", shape)
    dtype = float_dtype("uniform", dtype)
    check_shape("uniform", shape, np.shape(minval), np.shape(maxval))
    return _uniform(data, minval, maxval, shape, dtype)


# --- normal -------------------------------------------------------------------------------

def normal_real_body(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    """sqrt(2) erfinv(u) for u uniform in (-1, 1)."""
    low = np.nextafter(np.asarray(-1.0, dtype), np.asarray(0.0, dtype), dtype=dtype)
    u = uniform_body(data, low, np.asarray(1.0, dtype), shape, dtype)
    return jnp.multiply(_const(np.sqrt(2), dtype), lax.erf_inv(u))


def normal_body(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    if not dtypes.is_complex(dtype):
        return normal_real_body(data, shape, dtype)
    real = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
    key_re, key_im = split_body(data, (2,))
    re = normal_real_body(key_re, shape, real).astype(dtype)
    im = normal_real_body(key_im, shape, real).astype(dtype)
    return jnp.divide(jnp.add(re, jnp.multiply(_const(1j, dtype), im)),
                      _const(np.sqrt(2), dtype))


def split_body(data: Any, shape: tuple[int, ...]) -> Any:
    """``shape`` new raw keys, as a list over the first axis when shape is (n,)."""
    keys = threefry.split(data, shape)
    return [keys[i] for i in range(shape[0])] if len(shape) == 1 else keys


_normal = jit(normal_body, static_argnums=(1, 2))


@takes_out_sharding
def normal(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """Standard normal random values with the given shape and float (or complex) dtype."""
    data, _ = check_key("normal", key)
    shape = canonical_shape("normal", shape)
    return _normal(data, shape, float_dtype("normal", dtype, inexact=True))


def _is_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


__all__ = ["bits", "uniform", "normal"]
