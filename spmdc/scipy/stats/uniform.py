"""The uniform distribution on ``[loc, loc + scale]`` (``scipy.stats.uniform``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    outside = (x > loc + scale) | (x < loc)
    return jnp.where(outside, const(x, -np.inf), -jnp.log(scale) + jnp.zeros_like(x))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    inside = jnp.where(x <= loc + scale, (x - loc) / scale, const(x, np.nan))
    return jnp.where(x < loc, const(x, 0), jnp.where(x > loc + scale, const(x, 1), inside))


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    q, loc, scale = promote(q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), const(q, np.nan), loc + scale * q)
