"""The chi-squared distribution (``scipy.stats.chi2``): densities, and the CDF and
survival function through the regularized incomplete gamma function."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import gammainc, gammaincc, gammaln
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote(x, df, loc, scale)
    one, two = const(x, 1), const(x, 2)
    y = (x - loc) / scale
    half_df = df / two
    kernel = (half_df - one) * jnp.log(y) - y / two
    normalizer = -(gammaln(half_df) + jnp.log(two) * df / two)
    log_probs = normalizer - jnp.log(scale) + kernel
    return jnp.where(x < loc, const(x, -np.inf), log_probs)


def pdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, df, loc, scale))


def _half_y(x: Any, df: Any, loc: Any, scale: Any) -> Any:
    two = const(x, 2)
    return df / two, jnp.clip((x - loc) / (scale * two), const(x, 0), const(x, np.inf))


def cdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote(x, df, loc, scale)
    return gammainc(*_half_y(x, df, loc, scale))


def logcdf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.log(cdf(x, df, loc, scale))


def sf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, df, loc, scale = promote(x, df, loc, scale)
    return gammaincc(*_half_y(x, df, loc, scale))


def logsf(x: Any, df: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.log(sf(x, df, loc, scale))
