"""The samplers built on linear algebra: ``orthogonal`` (Haar-distributed orthogonal
matrices, from the QR decomposition of a normal draw) and ``multivariate_normal`` (a
normal draw times a factor of the covariance). Both follow JAX 0.10.2's formulas step for
step, so the same key gives the same values (the QR, Cholesky, eigh and SVD run on the
same LAPACK kernels)."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import numpy as jnp
from ..core import dtypes
from ..numpy import linalg as jnp_linalg
from ..transforms.jit import jit
from .distributions import canonical_shape, check_shape, float_dtype, normal
from .keys import check_key
from .placement import takes_out_sharding

__all__ = ["orthogonal", "multivariate_normal"]


def _orthogonal_body(key: Any, n: int, m: int, shape: tuple[int, ...], dtype: Any) -> Any:
    z = normal(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = jnp_linalg.qr(z)
    x = q * jnp.expand_dims(jnp.sign(jnp_linalg.diagonal(r)), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


_orthogonal = jit(_orthogonal_body, static_argnums=(1, 2, 3, 4))


@takes_out_sharding
def orthogonal(key: Any, n: int, shape: Any = (), dtype: Any = None,
               m: int | None = None) -> Any:
    """Uniformly (Haar) distributed ``n x m`` matrices with orthonormal columns (rows when
    ``n < m``), batched over ``shape``."""
    data, _ = check_key("orthogonal", key)
    try:
        n = operator.index(n)
        m = n if m is None else operator.index(m)
    except TypeError:
        raise TypeError("orthogonal: n and m must be concrete integers, got "
                        f"n={n!r}, m={m!r}") from None
    shape = canonical_shape("orthogonal", shape)
    return _orthogonal(data, n, m, shape, float_dtype("orthogonal", dtype))


def _multivariate_normal_body(key: Any, mean: Any, cov: Any, shape: tuple[int, ...],
                              dtype: Any, method: str) -> Any:
    if method == "svd":
        u, s, _ = jnp_linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp_linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp_linalg.cholesky(cov)
    samples = normal(key, shape + mean.shape[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)


_multivariate_normal = jit(_multivariate_normal_body, static_argnums=(3, 4, 5))


@takes_out_sharding
def multivariate_normal(key: Any, mean: Any, cov: Any, shape: Any = None, dtype: Any = None,
                        method: str = "cholesky") -> Any:
    """Draws from N(mean, cov) (batched over ``shape``, which the batch dimensions of
    ``mean[..., n]`` and ``cov[..., n, n]`` must broadcast to), through the Cholesky
    factor of ``cov`` (or ``method='eigh'``/``'svd'``)."""
    data, _ = check_key("multivariate_normal", key)
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    common, _ = dtypes.result_type(mean, cov)
    if not dtypes.is_inexact(common):
        common = dtypes.default_float()
    mean, cov = mean.astype(common), cov.astype(common)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else dtypes.canonicalize(dtype)
    if not dtypes.is_float(dtype):
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, "
                         f"got {np.dtype(dtype)}")
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {cov.shape}.")
    if shape is None:
        shape = jnp.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
    else:
        shape = canonical_shape("multivariate_normal", shape)
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    return _multivariate_normal(data, mean, cov, tuple(shape), np.dtype(dtype), method)
