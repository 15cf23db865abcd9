"""The Dirichlet distribution (``scipy.stats.dirichlet``): densities. ``x`` holds the
categories along its first axis (all of them, or all but the last)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.scipy.special import gammaln, xlogy
from spmdc.scipy.stats._common import const, promote


def logpdf(x: Any, alpha: Any) -> Any:
    x, alpha = promote(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.ndim == 0 or x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    one = const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, one - jnp.sum(x, 0, keepdims=True)], axis=0)
    normalize = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    alpha = jnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    log_probs = jnp.sum(xlogy(alpha - one, x), axis=0) - normalize
    simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)
    return jnp.where(simplex, log_probs, const(x, -np.inf))


def pdf(x: Any, alpha: Any) -> Any:
    return jnp.exp(logpdf(x, alpha))
