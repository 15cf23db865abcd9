"""Counting distributions: geometric, binomial and multinomial.

As in distributions.py, arguments are checked at the user's call and a jitted body does
what JAX 0.10.2's does, in its order and dtypes. binomial follows JAX (which follows
TensorFlow): inversion by summing geometric draws where ``n * min(p, 1 - p) <= 10``, the
BTRS transformed rejection of Hörmann otherwise; like poisson, both run over the whole
array at once until every element has accepted. multinomial scans over the categories,
drawing each count as a binomial of what remains. The draws are floats, in ``dtype``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..transforms.jit import jit
from . import threefry
from .distributions import canonical_shape, check_shape, float_dtype, uniform_body
from .gamma import _split
from .keys import check_key
from .placement import takes_out_sharding
from .samplers import _shape_or_params


def _check_arraylike(name: str, *args: Any) -> None:
    for i, arg in enumerate(args):
        if not (np.isscalar(arg) or hasattr(arg, "shape") and hasattr(arg, "dtype")):
            raise TypeError(f"{name} requires ndarray or scalar arguments, got "
                            f"{type(arg).__name__} at position {i}.")


def promote_inexact(*args: Any) -> list[Any]:
    """The arguments in their common dtype, the default float if that is not inexact."""
    dtype = dtypes.result_type(*args)[0]
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    return [jnp.asarray(a).astype(dtype) for a in args]


# --- geometric -----------------------------------------------------------------------------------

def _geometric(data: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    p, = promote_inexact(p)
    u = uniform_body(data, 0.0, 1.0, shape, p.dtype)
    # JAX maps u == 0 to 1 (rather than computing log1p(u - 1)) to keep its draws
    u = jnp.where(u == 0, 1, u)
    log_one_minus_p = jnp.broadcast_to(jnp.log1p(-p), shape)
    return (jnp.floor(jnp.log(u) / log_one_minus_p) + 1).astype(dtype)


_geometric_jit = jit(_geometric, static_argnums=(2, 3))


@takes_out_sharding
def geometric(key: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Geometric(p) random integers: the number of trials up to the first success."""
    data, _ = check_key("geometric", key)
    dtype = dtypes.canonicalize(int if dtype is None else dtype)
    if not dtypes.is_int(dtype) or dtype == np.bool_:
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = _shape_or_params("geometric", shape, p)
    _check_arraylike("geometric", p)
    return _geometric_jit(data, p, shape, dtype)


# --- binomial ------------------------------------------------------------------------------------

_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.0104112652619720, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k: Any) -> Any:
    """log(k!) minus its Stirling approximation: a table for k <= 9, else the series.
    As JAX, the series is evaluated at k clamped to [0, 9] (so it is the k = 9 term)."""
    table = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    use_table = k <= 9
    k = lax.clamp(np.asarray(0.0, k.dtype), k, np.asarray(9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return lax.select(use_table, table[jnp.asarray(k, dtype="int32")], approx)


def _binomial_inversion(data: Any, count: Any, prob: Any, shape: tuple[int, ...],
                        dtype: np.dtype, max_iters: Any) -> Any:
    log1minusprob = jnp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = _split(key, 2)
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform_body(subkey, 0.0, 1.0, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond(carry):
        i, geom_sum = carry[0], carry[2]
        return jnp.any(geom_sum <= count) & (i < max_iters)

    zeros = jnp.zeros(shape, prob.dtype)
    k = lax.while_loop(cond, body, (0, zeros, zeros, data))[1]
    return (k - 1).astype(dtype)


def _btrs(data: Any, count: Any, prob: Any, shape: tuple[int, ...], dtype: np.dtype,
          max_iters: Any) -> Any:
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = _split(key, 3)
        u = uniform_body(subkey_0, 0.0, 1.0, shape, prob.dtype)
        v = uniform_body(subkey_1, 0.0, 1.0, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m)
              + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k)
              - _stirling_approx_tail(count - k))
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, accepted = carry[0], carry[2]
        return jnp.any(~accepted) & (i < max_iters)

    init = (0, jnp.full(shape, -1, prob.dtype), jnp.zeros(shape, np.bool_), data)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def binomial_body(data: Any, count: Any, prob: Any, shape: tuple[int, ...] | None,
                  dtype: np.dtype) -> Any:
    if shape is None:
        shape = tuple(jnp.broadcast_shapes(np.shape(count), np.shape(prob)))
    else:
        check_shape("binomial", shape, np.shape(count), np.shape(prob))
    prob, = promote_inexact(prob)
    count = jnp.broadcast_to(jnp.asarray(count).astype(prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, jnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)        # as np.random.binomial treats a float count
    count_inv = lax.select(use_inversion, count, jnp.full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, jnp.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, jnp.full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(use_inversion,
                         _binomial_inversion(data, count_inv, q, shape, dtype, max_iters),
                         _btrs(data, count_btrs, q_btrs, shape, dtype, max_iters))
    # a NaN q or a NaN or negative count gives NaN, an infinite count infinity
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & ~invalid, jnp.full_like(samples, np.inf, dtype),
                         samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                      count.astype(dtype) - samples)


_binomial_jit = jit(binomial_body, static_argnums=(3, 4))


def binomial(key: Any, n: Any, p: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Binomial(n, p) random counts, as floats of ``dtype``."""
    data, _ = check_key("binomial", key)
    _check_arraylike("binomial", n, p)
    dtype = float_dtype("binomial", dtype)
    if shape is not None:
        shape = canonical_shape("binomial", shape)
    return _binomial_jit(data, n, p, shape, dtype)


# --- multinomial ----------------------------------------------------------------------

def _multinomial(data: Any, n: Any, p: Any, shape: tuple[int, ...] | None, dtype: np.dtype,
                 unroll: int | bool) -> Any:
    n, p = promote_inexact(n, p)
    if shape is None:
        shape = tuple(p.shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = threefry.split(data, (ratios.shape[0],))

    def step(remainder, ratio_key):
        ratio, key = ratio_key
        count = binomial_body(key, remainder, jnp.clip(ratio, 0, 1), None, remainder.dtype)
        return remainder - count, count

    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)


_multinomial_jit = jit(_multinomial, static_argnums=(3, 4, 5))


def multinomial(key: Any, n: Any, p: Any, *, shape: Any = None, dtype: Any = None,
                unroll: int | bool = 1) -> Any:
    """Multinomial counts of ``n`` trials over the categories of ``p``'s last axis.
    ``shape``, as in JAX, is the whole result shape, categories last (default
    ``p.shape``)."""
    data, _ = check_key("multinomial", key)
    _check_arraylike("multinomial", n, p)
    dtype = dtypes.canonicalize(float if dtype is None else dtype)
    if shape is not None:
        shape = canonical_shape("multinomial", shape)
    return _multinomial_jit(data, n, p, shape, dtype, unroll)
