"""The Poisson distribution (``scipy.stats.poisson``): the mass function, the CDF
through the regularized upper incomplete gamma function, and the entropy."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import entr, gammaincc, gammaln, xlogy
from spmdc.scipy.stats._common import const, promote
from spmdc.transforms.eager import library_jit  # See Note [library functions run as one program]


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = promote(k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), const(k, -np.inf), log_probs)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k, mu, loc = promote(k, mu, loc)
    x = k - loc
    return jnp.where(x < const(x, 0), const(x, 0), gammaincc(jnp.floor(const(x, 1) + x), mu))


@library_jit
def entropy(mu: Any, loc: Any = 0) -> Any:
    """The entropy of Poisson(mu) (``loc`` shifts the support, not the entropy): summed over
    the support below ``mu + 20`` for mu < 10 and below ``mu + 10 sqrt(mu) + 20`` for
    mu < 100 (static bounds of 35 and 250 terms), the asymptotic series beyond."""
    mu, loc = promote(mu, loc)
    shape = jnp.broadcast_shapes(mu.shape, loc.shape)
    flat = jnp.ravel(mu)
    small = _entropy_by_sum(flat, 35, jnp.ceil(flat + 20))
    medium = _entropy_by_sum(flat, 250, jnp.ceil(flat + 10 * jnp.sqrt(flat) + 20))
    large = const(flat, 0.5) * jnp.log(const(flat, 2 * np.pi * np.e) * flat) - 1 / (12 * flat)
    value = jnp.where(flat < 10, small, jnp.where(flat < 100, medium, large))
    value = jnp.where(flat == 0, jnp.zeros_like(flat), value)
    return jnp.broadcast_to(value.reshape(mu.shape), shape)


def _entropy_by_sum(mu: Any, terms: int, bound: Any) -> Any:
    k = jnp.arange(terms, dtype=mu.dtype)[:, None]
    probs = jnp.where(k < bound[None, :], pmf(k, mu, 0), const(mu, 0))
    return jnp.sum(entr(probs), axis=0)
