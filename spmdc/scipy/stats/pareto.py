"""The Pareto distribution (``scipy.stats.pareto``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = promote(x, b, loc, scale)
    scaled = (x - loc) / scale
    log_probs = -(jnp.log(scale / b) + (b + const(x, 1)) * jnp.log(scaled))
    return jnp.where(x < loc + scale, const(x, -np.inf), log_probs)


def pdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, b, loc, scale))


def cdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = promote(x, b, loc, scale)
    value = const(x, 1) - jnp.power((x - loc) / scale, -b)
    return jnp.where(x < loc + scale, const(x, 0), value)


def logcdf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = promote(x, b, loc, scale)
    value = jnp.log1p(-jnp.power((x - loc) / scale, -b))
    return jnp.where(x < loc + scale, const(x, -np.inf), value)


def logsf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, b, loc, scale = promote(x, b, loc, scale)
    value = -(b * jnp.log((x - loc) / scale))
    return jnp.where(x < loc + scale, const(x, 0), value)


def sf(x: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logsf(x, b, loc, scale))


def ppf(q: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, b, loc, scale = promote(q, b, loc, scale)
    value = loc + scale * jnp.power(const(q, 1) - q, -(const(q, 1) / b))
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), const(q, np.nan), value)
