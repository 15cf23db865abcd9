"""The chi-squared distribution (``scipy.stats.chi2``): densities only (the CDF needs the
incomplete gamma function, which spmdc does not have yet)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import gammaln
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
