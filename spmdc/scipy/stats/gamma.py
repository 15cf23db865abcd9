"""The gamma distribution (``scipy.stats.gamma``): densities, and the CDF and survival
function through the regularized incomplete gamma function (lax/special.py)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import gammainc, gammaincc, gammaln, xlogy
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


def cdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = promote(x, a, loc, scale)
    return gammainc(a, jnp.clip((x - loc) / scale, const(x, 0), const(x, np.inf)))


def logcdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.log(cdf(x, a, loc, scale))


def sf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, loc, scale = promote(x, a, loc, scale)
    y = (x - loc) / scale
    return jnp.where(y < const(y, 0), const(y, 1), gammaincc(a, y))


def logsf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.log(sf(x, a, loc, scale))
