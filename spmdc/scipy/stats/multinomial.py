"""The multinomial distribution (``scipy.stats.multinomial``): the mass function of
integer counts ``x`` (last axis) of ``n`` draws with probabilities ``p``."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core import dtypes
from spmdc.scipy.special import gammaln, xlogy
from spmdc.scipy.stats._common import const, promote


def logpmf(x: Any, n: Any, p: Any) -> Any:
    (p,) = promote(p)
    x, n = jnp.asarray(x), jnp.asarray(n)
    dtype = jnp.result_type(x, n)
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"multinomial.logpmf: x and n must be of integer type; got "
                         f"x.dtype={x.dtype}, n.dtype={n.dtype} (pass counts as integers)")
    x, n = x.astype(p.dtype), n.astype(p.dtype)
    log_probs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return jnp.where(jnp.sum(x) == n, log_probs, const(log_probs, -np.inf))


def pmf(x: Any, n: Any, p: Any) -> Any:
    return jnp.exp(logpmf(x, n, p))
