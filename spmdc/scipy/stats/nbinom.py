"""The negative binomial distribution (``scipy.stats.nbinom``): the mass function."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import gammaln, xlogy
from spmdc.scipy.stats._common import const, promote


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = promote(k, n, p, loc)
    one = const(k, 1)
    y = k - loc
    comb = gammaln(y + n) - gammaln(n) - gammaln(y + one)
    log_probs = comb + (xlogy(n, p) + xlogy(y, one - p))
    return jnp.where(k < loc, const(k, -np.inf), log_probs)


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    return jnp.exp(logpmf(k, n, p, loc))
