"""The Poisson distribution (``scipy.stats.poisson``): the mass function, and the CDF
through the regularized upper incomplete gamma function."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import gammaincc, gammaln, xlogy
from spmdc.scipy.stats._common import const, promote


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
