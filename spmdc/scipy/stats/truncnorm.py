"""The truncated normal distribution (``scipy.stats.truncnorm``): the standard normal
restricted to ``[a, b]`` (in standard deviations from ``loc``), shifted and scaled.

Every function works with log masses of the standard normal between two points, computed
in the left tail where ``log_ndtr`` is accurate (an interval in the right tail is mirrored
into the left one) and, for an interval around 0, as ``log1p`` of the two tails' masses,
as SciPy and JAX do.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import log_ndtr, logsumexp, ndtr
from spmdc.scipy.stats import norm
from spmdc.scipy.stats._common import const, promote


def _log_difference(log_x: Any, log_y: Any) -> Any:
    """``log(exp(log_x) - exp(log_y))``, for ``log_x >= log_y``."""
    stacked = jnp.stack([log_x, log_y])
    signs = jnp.stack([jnp.ones_like(log_x), -jnp.ones_like(log_y)])
    return logsumexp(stacked, b=signs, axis=0)


def _log_mass(a: Any, b: Any) -> Any:
    """The log of the standard normal's mass on ``[a, b]``."""
    a, b = jnp.broadcast_arrays(a, b)
    right = a > 0
    central = ~((b <= 0) | right)
    lower = jnp.where(right, -b, a)
    upper = jnp.where(right, -a, b)
    tail = _log_difference(log_ndtr(upper), log_ndtr(lower))
    middle = jnp.log1p(-ndtr(a) - ndtr(-b))
    return jnp.where(central, middle, tail)


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote(x, a, b, loc, scale)
    value = norm.logpdf(x, loc, scale) - _log_mass(a, b)
    standard = (x - loc) / scale
    value = jnp.where((standard < a) | (standard > b), const(value, -np.inf), value)
    return jnp.where(a >= b, const(value, np.nan), value)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote(x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    x = (x - loc) / scale
    total = _log_mass(a, b)
    below = _log_mass(a, x) - total
    above = _log_mass(x, b) - total
    # Near 1, 1 - sf keeps the digits the difference of masses loses (SciPy's choice).
    value = jnp.select([x >= b, x <= a, below > -0.1, x > a],
                       [const(x, 0), const(x, -np.inf), jnp.log1p(-jnp.exp(above)), below])
    return jnp.where(a >= b, const(value, np.nan), value)


def cdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, a, b, loc, scale = promote(x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logsf(x, a, b, loc, scale))
