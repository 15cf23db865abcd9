"""Samplers with rejection loops: gamma, loggamma, beta, dirichlet, poisson, and the two
built on gamma, generalized_normal and ball.

gamma follows JAX 0.10.2's lowering: one key per element (``split(key, a.size)``) and
Marsaglia and Tsang's method vmapped over the elements, each a ``while_loop`` (a
batched loop runs until every element has accepted; finished elements keep their
values). poisson loops over the whole array at once (Knuth's method below 10, Hörmann's
transformed rejection above), as JAX does.

Gradients: as JAX, by implicit reparameterisation. A draw x ~ Gamma(a) is held at its
place in the distribution, P(a, x) = u fixed, so dx/da = -(dP/da)(a, x) / p(a, x), with
P the regularized incomplete gamma function and p the density; P's derivative in a comes
from lax/special.py (its series and continued fraction carried in dual numbers,
where JAX has a dedicated ``random_gamma_grad`` kernel for the same quantity). The loops
of the sampler are never differentiated: the draw is a custom JVP whose tangent is that
formula. loggamma's tangent is dx/da / x. beta, dirichlet, generalized_normal and ball
inherit it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..transforms.custom_derivatives import SymbolicZero, custom_jvp
from ..transforms.jit import jit
from ..transforms.vmap import vmap
from . import threefry
from .distributions import canonical_shape, check_shape, float_dtype, normal_real_body
from .distributions import uniform_body as _uniform
from .keys import check_key
from .placement import takes_out_sharding
from .samplers import _exponential, _rademacher, _shape_or_params


def _split(data: Any, n: int) -> list[Any]:
    keys = threefry.split(data, (n,))
    return [keys[i] for i in range(n)]


def _gamma_one(data: Any, alpha: Any, log_space: bool) -> Any:
    """One Gamma(alpha) draw (a rank-0 alpha) by Marsaglia and Tsang's method."""
    dtype = alpha.dtype

    def c(v: float) -> Any:
        return np.asarray(v, dtype)[()]

    zero, one = c(0), c(1)
    # alpha < 1: draw Gamma(alpha + 1) and scale by U^(1/alpha)
    boost_mask = jnp.greater_equal(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, jnp.add(alpha, one))
    d = jnp.subtract(alpha, c(1 / 3))
    scale = jnp.divide(c(1 / 3), jnp.sqrt(d))

    def cond(state):
        _, x, v, u = state
        squeeze = jnp.greater_equal(u, jnp.subtract(one, jnp.multiply(c(0.0331),
                                                                      jnp.multiply(x, x))))
        log_test = jnp.greater_equal(jnp.log(u), jnp.add(
            jnp.multiply(x, c(0.5)),
            jnp.multiply(d, jnp.add(jnp.subtract(one, v), jnp.log(v)))))
        return jnp.logical_and(squeeze, log_test)

    def next_xv(state):
        key, _, _ = state
        key, sub = _split(key, 2)
        x = normal_real_body(sub, (), dtype)
        return key, x, jnp.add(one, jnp.multiply(x, scale))

    def body(state):
        key = state[0]
        key, x_key, u_key = _split(key, 3)
        _, x, v = lax.while_loop(lambda s: jnp.less_equal(s[2], zero), next_xv,
                                 (x_key, zero, c(-1)))
        big_x = jnp.multiply(x, x)
        big_v = jnp.multiply(jnp.multiply(v, v), v)
        return key, big_x, big_v, _uniform(u_key, 0.0, 1.0, (), dtype)

    key, sub = _split(data, 2)
    _, _, v, _ = lax.while_loop(cond, body, (key, zero, one, c(2)))
    if log_space:
        log_samples = jnp.negative(_exponential(sub, (), dtype))
        log_boost = lax.select(jnp.logical_or(boost_mask, jnp.equal(log_samples, zero)),
                               zero, jnp.multiply(log_samples, jnp.divide(one, alpha_orig)))
        return jnp.add(jnp.add(jnp.log(d), jnp.log(v)), log_boost)
    samples = jnp.subtract(one, _uniform(sub, 0.0, 1.0, (), dtype))
    boost = lax.select(boost_mask, one, jnp.power(samples, jnp.divide(one, alpha_orig)))
    return jnp.multiply(jnp.multiply(d, v), boost)


def gamma_body(data: Any, a: Any, shape: tuple[int, ...], dtype: np.dtype,
               log_space: bool) -> Any:
    a = jnp.broadcast_to(jnp.asarray(a).astype(dtype), shape)
    size = int(np.prod(shape, dtype=np.int64))
    if size == 0:
        return jnp.zeros(shape, dtype)
    return _reparameterised[log_space](data, a)


def _draw(data: Any, a: Any, log_space: bool) -> Any:
    size = int(np.prod(a.shape, dtype=np.int64))
    keys = threefry.split(data, (size,))
    samples = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, jnp.reshape(a, (size,)))
    return jnp.reshape(samples, a.shape)


def _dx_da(a: Any, drawn: Any, log_space: bool) -> Any:
    """The implicit reparameterisation gradient of a draw (module docstring)."""
    from ..lax import special
    from ..lax.special import _igamma
    log_x = drawn if log_space else jnp.log(drawn)
    x = jnp.exp(log_x)
    _, dp_da = _igamma(a, x, False, True)
    log_density = (a - np.asarray(1, a.dtype)) * log_x - x - special.lgamma(a)
    ok = x > 0
    dx = jnp.where(ok, -dp_da * jnp.exp(-jnp.where(ok, log_density, 0)), jnp.zeros_like(x))
    return jnp.where(ok, dx / jnp.where(ok, x, 1), jnp.zeros_like(x)) if log_space else dx


def _make_reparameterised(log_space: bool) -> Any:
    @custom_jvp
    def draw(data, a):
        return _draw(data, a, log_space)

    def rule(primals, tangents):
        data, a = primals
        _, ta = tangents
        drawn = _draw(data, a, log_space)
        if isinstance(ta, SymbolicZero):
            return drawn, jnp.zeros_like(drawn)
        return drawn, _dx_da(a, drawn, log_space) * ta
    draw.defjvp(rule, symbolic_zeros=True)
    return draw


_reparameterised = {False: _make_reparameterised(False), True: _make_reparameterised(True)}


_gamma_jit = jit(gamma_body, static_argnums=(2, 3, 4))


def _gamma_args(name: str, key: Any, a: Any, shape: Any, dtype: Any) -> tuple:
    data, _ = check_key(name, key)
    dtype = float_dtype(name, dtype)
    if shape is None:
        shape = tuple(np.shape(a))
    else:
        shape = canonical_shape(name, shape)
        check_shape(name, shape, np.shape(a))
    return data, shape, dtype


@takes_out_sharding
def gamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Gamma(a, 1) random values."""
    data, shape, dtype = _gamma_args("gamma", key, a, shape, dtype)
    return _gamma_jit(data, a, shape, dtype, False)


@takes_out_sharding
def loggamma(key: Any, a: Any, shape: Any = None, dtype: Any = None) -> Any:
    """log of Gamma(a, 1) random values, accurate for small ``a``."""
    data, shape, dtype = _gamma_args("loggamma", key, a, shape, dtype)
    return _gamma_jit(data, a, shape, dtype, True)


# --- beta and dirichlet ------------------------------------------------------------------

def _beta(data: Any, a: Any, b: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    key_a, key_b = _split(data, 2)
    log_a = gamma_body(key_a, a, shape, dtype, True)
    log_b = gamma_body(key_b, b, shape, dtype, True)
    # gamma_a / (gamma_a + gamma_b) without losing precision
    log_max = jnp.maximum(log_a, log_b)
    scaled_a = jnp.exp(jnp.subtract(log_a, log_max))
    scaled_b = jnp.exp(jnp.subtract(log_b, log_max))
    return jnp.divide(scaled_a, jnp.add(scaled_a, scaled_b))


_beta_jit = jit(_beta, static_argnums=(3, 4))


@takes_out_sharding
def beta(key: Any, a: Any, b: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Beta(a, b) random values."""
    data, _ = check_key("beta", key)
    dtype = float_dtype("beta", dtype)
    shape = _shape_or_params("beta", shape, a, b)
    return _beta_jit(data, a, b, shape, dtype)


def upcast_sum(x: Any, axis: int) -> Any:
    """jnp.sum as JAX computes it: float16 and bfloat16 accumulate in float32."""
    if x.dtype in (np.float16, dtypes.bfloat16):
        return jnp.sum(x.astype(np.float32), axis=axis, keepdims=True).astype(x.dtype)
    return jnp.sum(x, axis=axis, keepdims=True)


def _dirichlet(data: Any, alpha: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    alpha = jnp.asarray(alpha).astype(dtype)
    log_samples = gamma_body(data, alpha, shape + tuple(alpha.shape[-1:]), dtype, True)
    # softmax over the last axis, as jax.nn.softmax computes it
    shifted = jnp.exp(jnp.subtract(log_samples, jnp.max(log_samples, axis=-1, keepdims=True)))
    return jnp.divide(shifted, upcast_sum(shifted, -1))


_dirichlet_jit = jit(_dirichlet, static_argnums=(2, 3))


@takes_out_sharding
def dirichlet(key: Any, alpha: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Dirichlet(alpha) random vectors (alpha's last axis is the simplex's)."""
    data, _ = check_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    if np.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{np.ndim(alpha)}")
    batch = tuple(np.shape(alpha)[:-1])
    if shape is None:
        shape = batch
    else:
        shape = canonical_shape("dirichlet", shape)
        check_shape("dirichlet", shape, batch)
    return _dirichlet_jit(data, alpha, shape, dtype)


# --- poisson -------------------------------------------------------------------------------

def _poisson_knuth(data: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype,
                   max_iters: Any) -> Any:
    def body(carry):
        i, k, rng, log_prod = carry
        rng, sub = _split(rng, 2)
        k = lax.select(log_prod > -lam, k + 1, k)
        u = _uniform(sub, 0.0, 1.0, shape, np.dtype(np.float32))
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return jnp.logical_and(jnp.any(log_prod > -lam), i < max_iters)

    init = (0, jnp.zeros(shape, dtype), data, jnp.zeros(shape, np.float32))
    k = lax.while_loop(cond, body, init)[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(data: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype,
                       max_iters: Any) -> Any:
    # Hörmann's transformed rejection; the arithmetic is written as JAX writes it, so
    # that it rounds the same way
    log_lam = jnp.log(lam)
    b = 0.931 + 2.53 * jnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, key = carry
        key, sub0, sub1 = _split(key, 3)
        u = _uniform(sub0, 0.0, 1.0, shape, lam.dtype) - 0.5
        v = _uniform(sub1, 0.0, 1.0, shape, lam.dtype)
        u_shifted = 0.5 - jnp.abs(u)
        k = jnp.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = jnp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, key

    def cond(carry):
        i, _, accepted, _ = carry
        return jnp.logical_and(jnp.any(~accepted), i < max_iters)

    init = (0, jnp.full(shape, -1, lam.dtype), jnp.zeros(shape, np.bool_), data)
    return lax.while_loop(cond, body, init)[1].astype(dtype)


def _poisson(data: Any, lam: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    lam = jnp.broadcast_to(jnp.asarray(lam), shape).astype(np.float32)
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, jnp.zeros_like(lam))
    lam_rejection = lax.select(use_knuth, jnp.full_like(lam, 1e5), lam)
    max_iters = dtype.type(np.iinfo(dtype).max)       # never reached in practice
    result = lax.select(use_knuth, _poisson_knuth(data, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(data, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


_poisson_jit = jit(_poisson, static_argnums=(2, 3))


@takes_out_sharding
def poisson(key: Any, lam: Any, shape: Any = None, dtype: Any = None) -> Any:
    """Poisson(lam) random integers."""
    data, _ = check_key("poisson", key)
    dtype = dtypes.canonicalize(int if dtype is None else dtype)
    if not dtypes.is_int(dtype) or dtype == np.bool_:
        raise TypeError(f"poisson: dtype must be an integer dtype, got {dtype}")
    shape = tuple(np.shape(lam)) if shape is None else canonical_shape("poisson", shape)
    jnp.broadcast_shapes(tuple(np.shape(lam)), shape)
    return _poisson_jit(data, lam, shape, dtype)


# --- generalized normal and the Lp ball ------------------------------------------------------

def _generalized_normal(data: Any, p: Any, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    k1, k2 = _split(data, 2)
    g = gamma_body(k1, 1 / p, shape, dtype, False)
    r = _rademacher(k2, shape, dtype)
    return r * g ** _weak_inverse(p, dtype)


def _weak_inverse(p: Any, dtype: np.dtype) -> Any:
    """``1 / p`` as JAX types it for a Python-number ``p``: a weak float, which takes the
    sample's dtype (spmdc's true division of a weak int gives a strong float32)."""
    return jnp.asarray(1 / p).astype(dtype)


_generalized_normal_jit = jit(_generalized_normal, static_argnums=(2, 3))


@takes_out_sharding
def generalized_normal(key: Any, p: float, shape: Any = (), dtype: Any = None) -> Any:
    """Generalized normal random values: density proportional to exp(-|x|^p)."""
    data, _ = check_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    return _generalized_normal_jit(data, p, canonical_shape("generalized_normal", shape),
                                   dtype)


def _ball(data: Any, p: Any, d: int, shape: tuple[int, ...], dtype: np.dtype) -> Any:
    k1, k2 = _split(data, 2)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype)
    norm = jnp.squeeze(upcast_sum(jnp.abs(g) ** p, -1), -1)
    return g / ((norm + e) ** _weak_inverse(p, dtype))[..., None]


_ball_jit = jit(_ball, static_argnums=(2, 3, 4))


@takes_out_sharding
def ball(key: Any, d: int, p: float = 2, shape: Any = (), dtype: Any = None) -> Any:
    """Points uniform in the unit Lp ball of dimension ``d``: shape ``(*shape, d)``."""
    shape = canonical_shape("ball", shape)
    data, _ = check_key("ball", key)
    dtype = float_dtype("ball", dtype)
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 0:
        raise TypeError(f"ball: d must be a non-negative int, got {d!r}")
    return _ball_jit(data, p, int(d), shape, dtype)
