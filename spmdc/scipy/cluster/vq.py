"""``spmdc.scipy.cluster.vq`` (JAX's ``jax.scipy.cluster.vq``): ``vq`` assigns each
observation to its nearest code (Euclidean distance)."""
from __future__ import annotations

from typing import Any

import spmdc.numpy as jnp
from spmdc.core.operands import inexact

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True) -> tuple[Any, Any]:
    """``(code, distance)``: for each row of ``obs`` (``(n, features)``, or ``(n,)`` for one
    feature) the index of the nearest row of ``code_book`` and the distance to it.
    ``check_finite`` is accepted for SciPy's signature; spmdc, as JAX, checks nothing."""
    observations, codes = inexact(obs, code_book)
    if observations.ndim != codes.ndim:
        raise ValueError(f"vq: observation and code_book should have the same rank, got "
                         f"{observations.ndim} and {codes.ndim}")
    if observations.ndim == 1:
        observations, codes = observations[:, None], codes[:, None]
    if observations.ndim != 2:
        raise ValueError(f"vq: ndim different than 1 or 2 are not supported, got "
                         f"{observations.ndim}")
    distances = jnp.linalg.norm(observations[:, None, :] - codes[None, :, :], axis=-1)
    code = jnp.argmin(distances, axis=-1)
    return code, jnp.take_along_axis(distances, code[:, None], axis=-1)[:, 0]
