"""The exponential distribution (``scipy.stats.expon``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    log_probs = -((x - loc) / scale + jnp.log(scale))
    return jnp.where(x < loc, const(x, -np.inf), log_probs)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    neg_scaled = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(neg_scaled), -jnp.expm1(neg_scaled))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    neg_scaled = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(neg_scaled), neg_scaled)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logsf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.log1p(-sf(x, loc, scale))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), const(q, np.nan),
                     loc - scale * jnp.log1p(-q))
