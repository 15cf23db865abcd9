"""The wrapped Cauchy distribution (``scipy.stats.wrapcauchy``) on ``[0, 2*pi]``, with
concentration ``0 < c < 1``: NaN outside that range, as SciPy and JAX."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, c: Any) -> Any:
    x, c = promote(x, c)
    value = (jnp.log(1 - c * c) - const(x, np.log(2 * np.pi))
             - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
    inside = (x >= 0) & (x <= const(x, 2 * np.pi))
    value = jnp.where(inside, value, const(value, -np.inf))
    return jnp.where((c > 0) & (c < 1), value, const(value, np.nan))


def pdf(x: Any, c: Any) -> Any:
    return jnp.exp(logpdf(x, c))
