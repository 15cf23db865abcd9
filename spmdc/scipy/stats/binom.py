"""The binomial distribution (``scipy.stats.binom``): the mass function."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import gammaln, xlog1py, xlogy
from spmdc.scipy.stats._common import const, promote


def logpmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    k, n, p, loc = promote(k, n, p, loc)
    y = k - loc
    comb = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
    log_linear = xlogy(y, p) + xlog1py(n - y, -p)
    log_probs = comb + log_linear
    degenerate = ((y == 0) & (n == 0)) | (log_linear == 0)
    log_probs = jnp.where(degenerate, const(k, 0.0), log_probs)
    return jnp.where((k >= loc) & (k < loc + n + 1), log_probs, const(k, -np.inf))


def pmf(k: Any, n: Any, p: Any, loc: Any = 0) -> Any:
    return jnp.exp(logpmf(k, n, p, loc))
