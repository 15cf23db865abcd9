"""The right-skewed Gumbel distribution (``scipy.stats.gumbel_r``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import xlogy
from spmdc.scipy.stats._common import const, promote


def _log1mexp(x: Any) -> Any:
    """``log(1 - exp(-x))`` (``spmdc.nn.log1mexp``; spmdc.nn imports this package)."""
    return jnp.where(x < np.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    z = (x - loc) / scale
    log_pdf = xlogy(const(x, -1), scale) + -(z + jnp.exp(-z))
    return jnp.where(scale > 0, log_pdf, const(x, np.nan))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, loc, scale))


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    z = (x - loc) / scale
    return jnp.where(scale > 0, -jnp.exp(-z), const(x, np.nan))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logcdf(x, loc, scale))


def ppf(p: Any, loc: Any = 0, scale: Any = 1) -> Any:
    p, loc, scale = promote(p, loc, scale)
    quantile = loc - scale * jnp.log(xlogy(const(p, -1), p))
    return jnp.where((p > 0) & (p < 1), quantile, const(p, np.nan))


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    neg_z = (loc - x) / scale
    value = const(x, 1) - jnp.exp(-jnp.exp(neg_z))
    return jnp.where(scale > 0, value, const(x, np.nan))


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    neg_z = (loc - x) / scale
    return jnp.where(scale > 0, _log1mexp(jnp.exp(neg_z)), const(x, np.nan))
