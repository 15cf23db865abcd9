"""The von Mises distribution on the circle (``scipy.stats.vonmises``): densities."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import i0e
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, kappa: Any) -> Any:
    x, kappa = promote(x, kappa)
    value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * i0e(kappa))
    return jnp.where(kappa > 0, value, const(x, np.nan))


def pdf(x: Any, kappa: Any) -> Any:
    return jnp.exp(logpdf(x, kappa))
