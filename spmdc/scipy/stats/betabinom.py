"""The beta-binomial distribution (``scipy.stats.betabinom``): the mass function, with
``k`` rounded down as JAX does; NaN for ``n < 0``, ``a <= 0`` or ``b <= 0``."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import betaln
from spmdc.scipy.stats._common import const, promote
from spmdc.transforms.eager import library_jit  # See Note [library functions run as one program]


@library_jit
def logpmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    k, n, a, b, loc = promote(k, n, a, b, loc)
    y = jnp.floor(k) - loc
    log_choose = -(jnp.log1p(n) + betaln(n - y + 1, y + 1))
    log_probs = log_choose + betaln(y + a, n - y + b) - betaln(a, b)
    log_probs = jnp.where((y == 0) & (n == 0), const(log_probs, 0), log_probs)
    outside = (y < -loc) | (y > n) | (y + a <= 0)
    log_probs = jnp.where(outside, const(log_probs, -np.inf), log_probs)
    return jnp.where((n < 0) | (a <= 0) | (b <= 0), const(log_probs, np.nan), log_probs)


def pmf(k: Any, n: Any, a: Any, b: Any, loc: Any = 0) -> Any:
    return jnp.exp(logpmf(k, n, a, b, loc))
