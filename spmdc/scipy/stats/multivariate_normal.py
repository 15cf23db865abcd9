"""The multivariate normal distribution (``scipy.stats.multivariate_normal``): log-density
and density through the Cholesky factor of the covariance, as JAX computes them."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.numpy import linalg as jnp_linalg
from spmdc.numpy.linalg_solve import triangular_solve
from spmdc.scipy.stats._common import promote


def logpdf(x: Any, mean: Any, cov: Any, allow_singular: None = None) -> Any:
    """``log N(x; mean, cov)``; ``cov`` may be a scalar (times the identity) or
    ``[..., n, n]``; a scalar ``mean`` makes the distribution one-dimensional."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote(x, mean, cov)
    if not mean.shape:
        return (-1 / 2 * jnp.square(x - mean) / cov
                - 1 / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    n = mean.shape[-1]
    if not cov.shape:
        y = x - mean
        return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    low = jnp_linalg.cholesky(cov)
    y = x - mean
    batch = jnp.broadcast_shapes(low.shape[:-2], y.shape[:-1])
    low = jnp.broadcast_to(low, (*batch, n, n))
    y = jnp.broadcast_to(y, (*batch, n))
    # y L^-T as a row vector: the solve JAX's logpdf makes (L^-1 y)
    y = triangular_solve(low, jnp.expand_dims(y, -2), left_side=False, lower=True,
                         transpose_a=True)[..., 0, :]
    return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) - n / 2 * jnp.log(2 * np.pi)
            - jnp.sum(jnp.log(jnp_linalg.diagonal(low)), axis=-1))


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    return jnp.exp(logpdf(x, mean, cov))
