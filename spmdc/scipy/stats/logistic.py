"""The logistic distribution (``scipy.stats.logistic``)."""
from __future__ import annotations

from typing import Any

import spmdc.numpy as jnp
from spmdc.scipy.special import expit, logit
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    half = (x - loc) / scale / const(x, 2)
    # logaddexp(h, -h) = |h| + log1p(exp(-2|h|))
    log_cosh_sum = jnp.abs(half) + jnp.log1p(jnp.exp(-2 * jnp.abs(half)))
    return const(x, -2) * log_cosh_sum - jnp.log(scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return expit((x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return expit(-(x - loc) / scale)


def ppf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return logit(x) * scale + loc


def isf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return -logit(x) * scale + loc
