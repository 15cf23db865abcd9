"""The generalized normal distribution (``scipy.stats.gennorm``): density proportional
to ``exp(-|x|**beta)``; ``beta = 2`` is a normal, ``beta = 1`` a Laplace distribution."""
from __future__ import annotations

from typing import Any

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.scipy.special import gammainc
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, beta: Any) -> Any:
    x, beta = promote(x, beta)
    return jnp.log(const(beta, 0.5) * beta) - lax.lgamma(1 / beta) - jnp.abs(x) ** beta


def pdf(x: Any, beta: Any) -> Any:
    return jnp.exp(logpdf(x, beta))


def cdf(x: Any, beta: Any) -> Any:
    x, beta = promote(x, beta)
    mass = gammainc(1 / beta, jnp.abs(x) ** beta)   # of |X| <= |x|
    return const(x, 0.5) * (1 + jnp.sign(x) * mass)
