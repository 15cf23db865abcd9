"""The Laplace distribution (``scipy.stats.laplace``)."""
from __future__ import annotations

from typing import Any

import spmdc.numpy as jnp
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    return -(jnp.abs(x - loc) / scale + jnp.log(const(x, 2) * scale))


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    x, loc, scale = promote(x, loc, scale)
    diff = (x - loc) / scale
    half = const(x, 0.5)
    return jnp.where(diff <= 0, half * jnp.exp(diff), const(x, 1) - half * jnp.exp(-diff))
