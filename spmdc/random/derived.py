"""Continuous distributions derived from uniform, normal and gamma draws: pareto, t,
chisquare, f, maxwell, double_sided_maxwell, weibull_min, rayleigh, wald, triangular and
lognormal.

Same conventions as distributions.py: the arguments are checked at the user's call, then a
jitted body computes what JAX 0.10.2's does, operation for operation, in the same dtype and
with the same key splits, so that a key gives JAX's bits. Parameters travel into the body as
jit arguments (a Python number stays weakly typed there, as under JAX's jit). Gradients
with respect to the parameters come from the operations themselves and, for t, chisquare
and f, from gamma's implicit reparameterisation (gamma.py).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..errors import TypePromotionError
from ..transforms.jit import jit
from .distributions import canonical_shape, float_dtype, normal_body, uniform_body
from .gamma import _split, gamma_body
from .keys import check_key
from .placement import takes_out_sharding
from .samplers import _exponential, _rademacher, _shape_or_params


def check_safe_casts(name: str, dtype: np.dtype, *args: Any) -> None:
    """JAX refuses a parameter whose dtype does not promote to the sample's (a float32
    array for a float16 draw): casting it would lose precision silently."""
    for arg in args:
        if dtypes.result_type(arg, dtype)[0] != dtype:
            got = dtypes.dtype_and_weak(arg)[0]
            raise TypePromotionError(f"In arguments to {name}, cannot safely cast argument "
                                     f"of type {got} to {dtype}")


def _checked(name: str, key: Any, shape: Any, dtype: Any, *params: Any,
             inexact: bool = False) -> tuple[Any, tuple[int, ...], np.dtype]:
    """Key data, result shape (the parameters' broadcast when ``shape`` is None) and
    float dtype, checked as JAX checks them."""
    data, _ = check_key(name, key)
    dtype = float_dtype(name, dtype, inexact=inexact)
    shape = _shape_or_params(name, shape, *params)
    check_safe_casts(name, dtype, *params)
    return data, shape, dtype


def _cast(x: Any, dtype: np.dtype) -> Any:
    return jnp.asarray(x).astype(dtype)


# --- pareto, rayleigh, weibull_min: transforms of one uniform draw ------------------------------

def _pareto(data: Any, b: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    b = _cast(b, dtype)
    return jnp.exp(jnp.divide(_exponential(data, shape, dtype), b))


_pareto_jit = jit(_pareto, static_argnums=(2, 3))


@takes_out_sharding
def pareto(key: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Pareto(b) random values: density b / x^(b + 1) on x >= 1."""
    data, shape, dtype = _checked("pareto", key, shape, dtype, b)
    return _pareto_jit(data, b, shape, dtype)


def _rayleigh(data: Any, scale: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    u = uniform_body(data, 0.0, 1.0, shape, dtype)
    scale = jnp.broadcast_to(_cast(scale, dtype), shape)
    root = jnp.sqrt(jnp.multiply(jnp.log(u), np.asarray(-2, dtype)))
    return jnp.multiply(scale, root)


_rayleigh_jit = jit(_rayleigh, static_argnums=(2, 3))


@takes_out_sharding
def rayleigh(key: Any, scale: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Rayleigh(scale) random values: density x exp(-x^2 / (2 scale^2)) on x >= 0."""
    data, shape, dtype = _checked("rayleigh", key, shape, dtype, scale)
    return _rayleigh_jit(data, scale, shape, dtype)


def _weibull_min(data: Any, scale: Any, concentration: Any, shape: tuple[int, ...],
                 dtype: np.dtype) -> Any:
    u = uniform_body(data, 0, 1, shape, dtype)
    # the inverse of Weibull's CDF
    exponent = 1.0 / jnp.asarray(concentration)
    if dtypes.dtype_and_weak(concentration)[1]:
        # JAX's 1.0 / c of a weak c is weak, and power casts it to the draw's dtype
        exponent = exponent.astype(dtype)
    return jnp.power(-jnp.log1p(-u), exponent) * scale


_weibull_min_jit = jit(_weibull_min, static_argnums=(3, 4))


def weibull_min(key: Any, scale: Any, concentration: Any, shape: Any = (),
                dtype: Any = None) -> Any:
    """Weibull random values: density ~ x^(c - 1) exp(-(x / scale)^c) on x > 0. The result
    has shape ``shape`` broadcast with the parameters' (JAX does not check them)."""
    data, _ = check_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    return _weibull_min_jit(data, scale, concentration,
                            canonical_shape("weibull_min", shape), dtype)


# --- maxwell and double_sided_maxwell: norms of normal draws ------------------------------------

def _maxwell(data: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    x = normal_body(data, (*shape, 3), dtype)
    # jnp.linalg.norm(x, axis=-1) as JAX's program rounds it on XLA:CPU in float32: the
    # squares added in order, (x0^2 + x1^2) + x2^2, where a reduction of spmdc's may take
    # another; float16 and bfloat16 accumulate in float32. In float64 JAX's program rounds
    # some elements as this order does and some as x0^2 + (x1^2 + x2^2) (XLA's fusion, not
    # an order we can reproduce): one unit in the last place apart at most.
    wide = np.dtype(np.float32) if dtype in (np.float16, dtypes.bfloat16) else dtype
    sq = jnp.multiply(x, x).astype(wide)
    total = jnp.add(jnp.add(sq[..., 0], sq[..., 1]), sq[..., 2])
    return jnp.sqrt(total.astype(dtype))


_maxwell_jit = jit(_maxwell, static_argnums=(1, 2))


@takes_out_sharding
def maxwell(key: Any, shape: Any = (), dtype: Any = None) -> Any:
    """One-sided Maxwell random values: density ~ x^2 exp(-x^2 / 2) on x >= 0."""
    data, _ = check_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    return _maxwell_jit(data, canonical_shape("maxwell", shape), dtype)


def _double_sided_maxwell(data: Any, loc: Any, scale: Any, shape: tuple[int, ...],
                          dtype: np.dtype) -> Any:
    params = tuple(jnp.broadcast_shapes(np.shape(loc), np.shape(scale)))
    # as JAX: an empty shape means the parameters' shape, and the parameters' shape is
    # then appended to it (so a non-scalar parameter with shape () gives params + params)
    shape = (shape or params) + params
    maxwell_key, sign_key = _split(data, 2)
    magnitude = _maxwell(maxwell_key, shape, dtype)
    sign = _rademacher(sign_key, shape, dtype)
    return sign * magnitude * scale + loc


_double_sided_maxwell_jit = jit(_double_sided_maxwell, static_argnums=(3, 4))


def double_sided_maxwell(key: Any, loc: Any, scale: Any, shape: Any = (),
                         dtype: Any = None) -> Any:
    """Double-sided Maxwell random values: density ~ z^2 exp(-z^2 / 2), z = (x - loc) /
    scale, of shape ``shape + broadcast(loc, scale).shape``."""
    data, _ = check_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    return _double_sided_maxwell_jit(data, loc, scale,
                                     canonical_shape("double_sided_maxwell", shape), dtype)


# --- wald, triangular, lognormal ---------------------------------------------------------------

def _wald(data: Any, mean: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    k1, k2 = _split(data, 2)
    mean = jnp.broadcast_to(_cast(mean, dtype), shape)
    v = normal_body(k1, shape, dtype)
    z = uniform_body(k2, 0.0, 1.0, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = jnp.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(z <= mean / (mean + x), x, mean_sq / x)


_wald_jit = jit(_wald, static_argnums=(2, 3))


@takes_out_sharding
def wald(key: Any, mean: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Wald (inverse Gaussian) random values with the given mean (and shape parameter 1)."""
    data, shape, dtype = _checked("wald", key, shape, dtype, mean)
    return _wald_jit(data, mean, shape, dtype)


def _triangular(data: Any, left: Any, mode: Any, right: Any, shape: tuple[int, ...],
                dtype: np.dtype) -> Any:
    left = jnp.broadcast_to(_cast(left, dtype), shape)
    right = jnp.broadcast_to(_cast(right, dtype), shape)
    mode = jnp.broadcast_to(_cast(mode, dtype), shape)
    fc = (mode - left) / (right - left)
    u = uniform_body(data, 0.0, 1.0, shape, dtype)
    below = left + jnp.sqrt(u * (right - left) * (mode - left))
    above = right - jnp.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, below, above)


_triangular_jit = jit(_triangular, static_argnums=(4, 5))


@takes_out_sharding
def triangular(key: Any, left: Any, mode: Any, right: Any, shape: Any = None,
               dtype: Any = None) -> Any:
    """Triangular random values on [left, right] with its peak at ``mode``."""
    data, shape, dtype = _checked("triangular", key, shape, dtype, left, mode, right)
    return _triangular_jit(data, left, mode, right, shape, dtype)


def _lognormal(data: Any, sigma: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    return jnp.exp(normal_body(data, shape, dtype) * _cast(sigma, dtype))


_lognormal_jit = jit(_lognormal, static_argnums=(2, 3))


_UNIT_SIGMA = np.float32(1)


@takes_out_sharding
def lognormal(key: Any, sigma: Any = _UNIT_SIGMA, shape: Any = None,
              dtype: Any = None) -> Any:
    """exp(sigma * N(0, 1)) random values (a float or complex dtype). The default sigma is
    a float32 one, as in JAX: a float16 draw needs a float16 (or Python) sigma."""
    data, shape, dtype = _checked("lognormal", key, shape, dtype, sigma, inexact=True)
    return _lognormal_jit(data, sigma, shape, dtype)


# --- t, chisquare, f: built on gamma draws -----------------------------------------------------

def _t(data: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    df = _cast(df, dtype)
    key_n, key_g = _split(data, 2)
    n = normal_body(key_n, shape, dtype)
    half_df = jnp.divide(df, np.asarray(2, dtype))
    g = gamma_body(key_g, half_df, shape, dtype, False)
    return n * jnp.sqrt(half_df / g)


_t_jit = jit(_t, static_argnums=(2, 3))


@takes_out_sharding
def t(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Student's t random values with ``df`` degrees of freedom."""
    data, shape, dtype = _checked("t", key, shape, dtype, df)
    return _t_jit(data, df, shape, dtype)


def _chisquare(data: Any, df: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    df = _cast(df, dtype)
    two = np.asarray(2, dtype)
    log_g = gamma_body(data, lax.div(df, two), shape, dtype, True)
    return lax.mul(jnp.exp(log_g), two)


_chisquare_jit = jit(_chisquare, static_argnums=(2, 3))


@takes_out_sharding
def chisquare(key: Any, df: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Chi-square random values with ``df`` degrees of freedom."""
    data, shape, dtype = _checked("chisquare", key, shape, dtype, df)
    return _chisquare_jit(data, df, shape, dtype)


def _f(data: Any, dfnum: Any, dfden: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    dfden = _cast(dfden, dtype)
    dfnum = _cast(dfnum, dtype)
    key_dfd, key_dfn = _split(data, 2)
    chi2_dfn = _chisquare(key_dfn, dfnum, shape, dtype)
    chi2_dfd = _chisquare(key_dfd, dfden, shape, dtype)
    # lax's division, as JAX's: a parameter array of another rank than the draws is an
    # error there (a scalar parameter or one of the draws' shape is what works)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


_f_jit = jit(_f, static_argnums=(3, 4))


@takes_out_sharding
def f(key: Any, dfnum: Any, dfden: Any, shape: Any = None, dtype: Any = None) -> Any:
    """F-distribution random values with ``dfnum`` and ``dfden`` degrees of freedom."""
    data, shape, dtype = _checked("f", key, shape, dtype, dfnum, dfden)
    return _f_jit(data, dfnum, dfden, shape, dtype)
