"""Samplers that transform uniform, normal or integer draws: truncated_normal, bernoulli,
randint, exponential, gumbel, laplace, logistic, cauchy, rademacher, categorical (with
replacement) and choice (with replacement). Same conventions as distributions.py: check
at the user's call, then a jitted body that does what JAX 0.10.2 does, in its order.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..transforms.jit import jit
from . import threefry
from .distributions import (
    UINT_DTYPES,
    broadcast_to_rank,
    canonical_shape,
    check_shape,
    float_dtype,
    uniform_body,
)
from .keys import check_key
from .placement import placed, takes_out_sharding


def _finfo(dtype: np.dtype) -> Any:
    return dtypes.finfo(dtype)


def _split2(data: Any) -> tuple[Any, Any]:
    keys = threefry.split(data, (2,))
    return keys[0], keys[1]


def _shape_or_params(name: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """``shape`` checked against the parameters' shapes, or their broadcast if None."""
    shapes = [np.shape(p) for p in params]
    if shape is None:
        return tuple(jnp.broadcast_shapes(*shapes)) if shapes else ()
    shape = canonical_shape(name, shape)
    check_shape(name, shape, *shapes)
    return shape


# --- truncated normal ------------------------------------------------------------------------

def _truncated_normal(data: Any, lower: Any, upper: Any, shape: tuple[int, ...],
                      dtype: np.dtype) -> Any:
    sqrt2 = np.asarray(np.sqrt(2), dtype)
    lower, upper = jnp.asarray(lower).astype(dtype), jnp.asarray(upper).astype(dtype)
    a = lax.erf(jnp.divide(lower, sqrt2))
    b = lax.erf(jnp.divide(upper, sqrt2))
    u = uniform_body(data, a, b, shape, dtype)
    out = jnp.multiply(sqrt2, lax.erf_inv(u))
    # keep the draw inside the open interval (lower, upper) despite rounding
    inf = np.asarray(np.inf, dtype)
    low = lax.nextafter(jnp.stop_gradient(lower), inf)
    high = lax.nextafter(jnp.stop_gradient(upper), -inf)
    return jnp.minimum(jnp.maximum(out, low), high)


_truncated_normal_jit = jit(_truncated_normal, static_argnums=(3, 4))


@takes_out_sharding
def truncated_normal(key: Any, lower: Any, upper: Any, shape: Any = None,
                     dtype: Any = None) -> Any:
    """Standard normal values truncated to (lower, upper)."""
    data, _ = check_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    shape = _shape_or_params("truncated_normal", shape, lower, upper)
    return _truncated_normal_jit(data, lower, upper, shape, dtype)


# --- bernoulli and rademacher -----------------------------------------------------------------

def _bernoulli(data: Any, p: Any, shape: tuple[int, ...], mode: str) -> Any:
    dtype = p.dtype
    if mode == "high":
        both = uniform_body(data, 0.0, 1.0, (2, *shape), dtype)
        u1, u2 = both[0], both[1]
        u2 = jnp.multiply(u2, np.asarray(2.0 ** -_finfo(dtype).nmant, dtype))
        return jnp.less(u2, jnp.subtract(p, u1))
    return jnp.less(uniform_body(data, 0.0, 1.0, shape, dtype), p)


_bernoulli_jit = jit(_bernoulli, static_argnums=(2, 3))


def bernoulli(key: Any, p: Any = 0.5, shape: Any = None, mode: str = "low", *,
              out_sharding: Any = None) -> Any:
    """Booleans that are True with probability ``p``, laid out by ``out_sharding`` (a
    NamedSharding or PartitionSpec; None or a sharding over a mesh without axes: as the
    partitioner places it)."""
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    data, _ = check_key("bernoulli", key)
    p = jnp.asarray(p)
    if not dtypes.is_float(p.dtype):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got "
                        f"{p.dtype}.")
    shape = _shape_or_params("bernoulli", shape, p)
    return placed(lambda: _bernoulli_jit(data, p, shape, mode), out_sharding)


def _rademacher(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    flips = _bernoulli(data, jnp.asarray(0.5, dtypes.default_float()), shape, "low")
    return jnp.subtract(jnp.multiply(2, flips.astype(dtype)), 1).astype(dtype)


_rademacher_jit = jit(_rademacher, static_argnums=(1, 2))


@takes_out_sharding
def rademacher(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """-1 or 1 with equal probability (an integer dtype by default)."""
    data, _ = check_key("rademacher", key)
    dtype = dtypes.canonicalize(int if dtype is None else dtype)
    return _rademacher_jit(data, canonical_shape("rademacher", shape), dtype)


# --- randint -------------------------------------------------------------------------------

def _clip_to(val: Any, dtype: np.dtype) -> Any:
    """``val`` (integer) in ``dtype``, clipped to its range rather than wrapped."""
    info, own = np.iinfo(dtype), np.iinfo(val.dtype)
    low = np.asarray(max(info.min, own.min), val.dtype)
    high = np.asarray(min(info.max, own.max), val.dtype)
    return jnp.minimum(jnp.maximum(val, low), high).astype(dtype)


def _randint(data: Any, minval: Any, maxval: Any, shape: tuple[int, ...],
             dtype: np.dtype) -> Any:
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    if not dtypes.is_int(minval.dtype):
        minval = minval.astype(dtypes.default_int())
    if not dtypes.is_int(maxval.dtype):
        maxval = maxval.astype(dtypes.default_int())
    # maxval beyond dtype's range (randint(key, s, 0, 256, uint8)) makes the span one larger
    out_of_range = jnp.greater(maxval, _clip_to(jnp.asarray(np.iinfo(dtype).max, dtype),
                                                maxval.dtype))
    minval = broadcast_to_rank(_clip_to(minval, dtype), len(shape))
    maxval = broadcast_to_rank(_clip_to(maxval, dtype), len(shape))
    out_of_range = broadcast_to_rank(out_of_range, len(shape))
    nbits = np.iinfo(dtype).bits
    k1, k2 = _split2(data)
    higher = threefry.random_bits(k1, nbits, shape)
    lower = threefry.random_bits(k2, nbits, shape)
    unsigned = UINT_DTYPES[nbits]
    span = jnp.subtract(maxval, minval).astype(unsigned)
    one = np.asarray(1, unsigned)
    span = jnp.where(jnp.less_equal(maxval, minval), one, span)     # empty range: minval
    span = jnp.where(jnp.logical_and(out_of_range, jnp.greater(maxval, minval)),
                     jnp.add(span, one), span)
    # (higher * 2**nbits + lower) % span without overflow, from (a b) % n = (a%n)(b%n) % n
    multiplier = _rem(np.asarray(2 ** (nbits // 2), unsigned), span)
    multiplier = _rem(jnp.multiply(multiplier, multiplier), span)
    offset = jnp.add(jnp.multiply(_rem(higher, span), multiplier), _rem(lower, span))
    offset = _rem(offset, span)
    return jnp.add(minval, offset.astype(dtype))


def _rem(x: Any, y: Any) -> Any:
    """C-style remainder of unsigned integers (x % 0 == x, as XLA defines it)."""
    x, y = jnp.asarray(x), jnp.asarray(y)
    shape = jnp.broadcast_shapes(tuple(x.shape), tuple(y.shape))
    x, y = jnp.broadcast_to(x, shape), jnp.broadcast_to(y, shape)
    return lax.rem(x, y)


_randint_jit = jit(_randint, static_argnums=(3, 4))


@takes_out_sharding
def randint(key: Any, shape: Any, minval: Any, maxval: Any, dtype: Any = None) -> Any:
    """Integers uniform in [minval, maxval) (slightly biased unless the span is a power of
    two, as in JAX)."""
    data, _ = check_key("randint", key)
    dtype = dtypes.canonicalize(int if dtype is None else dtype)
    shape = canonical_shape("randint", shape)
    if not dtypes.is_int(dtype) or dtype == np.bool_:
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    info = np.iinfo(dtype)
    if info.bits < 32:          # sample in 32 bits, as JAX does, to limit the bias
        minval = jnp.clip(jnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype(np.int32), int(info.min),
                          int(info.max) + 1)
        return _randint_jit(data, minval, maxval, shape, np.dtype(np.int32)).astype(dtype)
    return _randint_jit(data, minval, maxval, shape, dtype)


# --- one-line transforms of a uniform draw ---------------------------------------------------

def _exponential(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = uniform_body(data, 0.0, 1.0, shape, dtype)
    return jnp.negative(jnp.log1p(jnp.negative(u)))          # -log(1 - u), u in [0, 1)


def _gumbel(data: Any, shape: tuple[int, ...], dtype: np.dtype, mode: str) -> Any:
    info = _finfo(dtype)
    if mode == "high":
        both = uniform_body(data, 0.0, 1.0, (2, *shape), dtype)
        high, low = both[0], both[1]
        x = jnp.where(jnp.greater_equal(high, np.asarray(0.5, dtype)), high,
                      jnp.add(jnp.add(high, jnp.multiply(np.asarray(2.0 ** -info.nmant, dtype),
                                                         low)),
                              np.asarray(info.tiny, dtype)))
        return jnp.negative(jnp.log(jnp.negative(jnp.log1p(jnp.negative(x)))))
    u = uniform_body(data, float(info.tiny), 1.0, shape, dtype)
    return jnp.negative(jnp.log(jnp.negative(jnp.log(u))))


def _laplace(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = uniform_body(data, -1.0 + _finfo(dtype).epsneg, 1.0, shape, dtype)
    return jnp.multiply(jnp.sign(u), jnp.log1p(jnp.negative(jnp.abs(u))))


def _logistic(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    x = uniform_body(data, float(_finfo(dtype).tiny), 1.0, shape, dtype)
    return jnp.subtract(jnp.log(x), jnp.log1p(jnp.negative(x)))


def _cauchy(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = uniform_body(data, float(_finfo(dtype).eps), 1.0, shape, dtype)
    return lax.tan(jnp.multiply(np.asarray(np.pi, dtype), jnp.subtract(u, np.asarray(0.5, dtype))))


def _simple(name: str, body: Any, doc: str) -> Any:
    body_jit = jit(body, static_argnums=(1, 2))

    def sampler(key: Any, shape: Any = (), dtype: Any = None) -> Any:
        data, _ = check_key(name, key)
        return body_jit(data, canonical_shape(name, shape), float_dtype(name, dtype))
    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = doc
    return takes_out_sharding(sampler)


exponential = _simple("exponential", _exponential, "Exponential(1) random values.")
laplace = _simple("laplace", _laplace, "Laplace(0, 1) random values.")
logistic = _simple("logistic", _logistic, "Logistic(0, 1) random values.")
cauchy = _simple("cauchy", _cauchy, "Standard Cauchy random values.")

_gumbel_jit = jit(_gumbel, static_argnums=(1, 2, 3))


@takes_out_sharding
def gumbel(key: Any, shape: Any = (), dtype: Any = None, mode: str | None = None) -> Any:
    """Standard Gumbel random values. ``mode='high'`` uses two uniform draws per value for
    a finer lower tail; ``'highest'`` (float32 only in JAX) is not supported."""
    data, _ = check_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    mode = "low" if mode is None else mode
    if mode == "highest":
        raise ValueError("gumbel: mode='highest' is not supported by spmdc; use 'high' "
                         "or 'low'")
    if mode not in ("high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel_jit(data, canonical_shape("gumbel", shape), dtype, mode)


# --- categorical and choice (with replacement) -------------------------------------------

def _categorical(data: Any, logits: Any, shape: tuple[int, ...], axis: int,
                 mode: str) -> Any:
    batch_ndim = logits.ndim - 1
    prefix = shape[:len(shape) - batch_ndim]
    logits_shape = list(shape[len(shape) - batch_ndim:])
    logits_shape.insert(axis, logits.shape[axis])
    noise = _gumbel(data, (*prefix, *logits_shape), logits.dtype, mode)
    expanded = jnp.reshape(logits, (1,) * len(prefix) + tuple(logits.shape))
    return jnp.argmax(jnp.add(noise, expanded), axis=len(prefix) + axis)


_categorical_jit = jit(_categorical, static_argnums=(2, 3, 4))


@takes_out_sharding
def categorical(key: Any, logits: Any, axis: int = -1, shape: Any = None,
                replace: bool = True, mode: str | None = None) -> Any:
    """Indices drawn from the categorical distribution ``softmax(logits)`` along
    ``axis`` (the Gumbel-max trick)."""
    data, _ = check_key("categorical", key)
    logits = jnp.asarray(logits)
    if logits.ndim == 0:
        raise ValueError("categorical: logits must have at least one dimension")
    axis = _axis(axis, logits.ndim, "categorical")
    batch_shape = tuple(s for i, s in enumerate(logits.shape) if i != axis)
    if shape is None:
        shape = batch_shape
    else:
        shape = canonical_shape("categorical", shape)
        check_shape("categorical", shape, batch_shape)
    mode = "low" if mode is None else mode
    if mode not in ("high", "low"):
        raise ValueError(f"categorical: mode must be 'high' or 'low', got {mode!r}")
    if not replace:
        k = math.prod(shape[:len(shape) - len(batch_shape)])
        if k > logits.shape[axis]:
            raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                             f"number of categories ({logits.shape[axis]}).")
        from .permutations import categorical_no_replace
        return categorical_no_replace(data, logits, shape, axis, mode)
    return _categorical_jit(data, logits, shape, axis, mode)


def _take(x: Any, indices: Any, axis: int) -> Any:
    """``jnp.take(x, indices, axis)`` for in-range indices."""
    return x[(slice(None),) * axis + (indices,)]


def _axis(axis: Any, ndim: int, name: str) -> int:
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension "
                         f"{ndim}")
    return axis % ndim


def _choice_p(data: Any, p: Any, shape: tuple[int, ...]) -> Any:
    p_cuml = jnp.cumsum(p)
    r = jnp.multiply(p_cuml[-1], jnp.subtract(np.asarray(1, p_cuml.dtype)[()],
                                              uniform_body(data, 0.0, 1.0, shape,
                                                           p_cuml.dtype)))
    # searchsorted(p_cuml, r, side='left'): how many cumulative sums lie below r
    below = jnp.less(jnp.reshape(p_cuml, (1,) * len(shape) + (-1,)), jnp.expand_dims(r, -1))
    return jnp.sum(below.astype(dtypes.default_int()), axis=-1)


_choice_p_jit = jit(_choice_p, static_argnums=(2,))


def choice(key: Any, a: Any, shape: Any = (), replace: bool = True, p: Any = None,
           axis: int = 0, mode: str | None = None) -> Any:
    """A random sample from ``a`` (an array, or ``arange(a)`` for an int), with or without
    replacement, uniform or weighted by ``p``."""
    data, _ = check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = canonical_shape("choice", shape)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = _axis(axis, arr.ndim, "choice")
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if not replace:
        from .permutations import choice_without_replacement
        return choice_without_replacement(data, arr, a, shape, p, axis, mode, n_inputs,
                                          n_draws)
    if p is None:
        ind = randint(data, shape, 0, n_inputs)
    else:
        p_arr = jnp.asarray(p)
        if not dtypes.is_inexact(p_arr.dtype):
            p_arr = p_arr.astype(dtypes.default_float())
        if tuple(p_arr.shape) != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {tuple(p_arr.shape)} and "
                             f"a.shape[axis] is {n_inputs}.")
        ind = _choice_p_jit(data, p_arr, shape)
    result = ind if arr.ndim == 0 else _take(arr, ind, axis)
    return jnp.reshape(result, shape if arr.ndim == 0 else
                       tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:]))
