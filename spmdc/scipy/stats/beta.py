"""The beta distribution (``scipy.stats.beta``): densities, and the CDF and survival
function through the regularized incomplete beta function (lax/special.py)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import betainc, betaln, xlog1py, xlogy
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote(x, a, b, loc, scale)
    one = const(x, 1)
    y = (x - loc) / scale
    log_linear = xlogy(a - one, y) + xlog1py(b - one, -y)
    log_probs = -betaln(a, b) + log_linear - jnp.log(scale)
    result = jnp.where((x > loc + scale) | (x < loc), const(x, -np.inf), log_probs)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), const(x, np.nan), result)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, a, b, loc, scale))


def _unit(x: Any, loc: Any, scale: Any) -> Any:
    return jnp.clip((x - loc) / scale, const(x, 0), const(x, 1))


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote(x, a, b, loc, scale)
    return betainc(a, b, _unit(x, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.log(cdf(x, a, b, loc, scale))


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote(x, a, b, loc, scale)
    return betainc(b, a, const(x, 1) - _unit(x, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.log(sf(x, a, b, loc, scale))
