"""The gamma distribution (``scipy.stats.gamma``): densities only (the CDF needs the
incomplete gamma function, which spmdc does not have yet)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import gammaln, xlogy
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = promote(x, a, loc, scale)
    ok = x >= loc
    one = const(x, 1)
    y = jnp.where(ok, (x - loc) / scale, one)
    log_probs = xlogy(a - one, y) - y - (gammaln(a) + jnp.log(scale))
    return jnp.where(ok, log_probs, const(x, -np.inf))


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, a, loc, scale))
