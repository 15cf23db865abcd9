"""The Bernoulli distribution (``scipy.stats.bernoulli``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import xlog1py, xlogy
from spmdc.scipy.stats._common import const, promote


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k, p, loc = promote(k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(const(k, 1) - x, -p)
    return jnp.where((x < 0) | (x > 1), const(k, -np.inf), log_probs)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    return jnp.exp(logpmf(k, p, loc))


def cdf(k: Any, p: Any) -> Any:
    k, p = promote(k, p)
    bad = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
    inside = jnp.where(k >= 1, const(k, 1), const(k, 1) - p)
    return jnp.where(bad, const(k, np.nan), jnp.where(k < 0, const(k, 0), inside))


def ppf(q: Any, p: Any) -> Any:
    q, p = promote(q, p)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return jnp.where(bad, const(q, np.nan),
                     jnp.where(q <= const(q, 1) - p, const(q, 0), const(q, 1)))
