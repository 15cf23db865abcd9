"""``logsumexp`` (JAX's ``jax.nn.logsumexp`` and ``jax.scipy.special.logsumexp``)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.scipy._lax import inexact


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"logsumexp: axis {a} is out of bounds for an array of rank {ndim}")
        out.append(int(a) % max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"logsumexp: repeated axis in {axis!r}")
    return tuple(out)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """``log(sum(b * exp(a), axis))`` without overflow: the maximum (where finite) is
    taken out before ``exp`` and added back, under ``stop_gradient`` so that gradients
    are exact and finite. With ``b``, a negative sum gives NaN unless ``return_sign``,
    which returns ``(log|sum|, sign(sum))``. ``where`` masks entries out of the sum."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = inexact(a, b)
        a = jnp.where(b != 0, a, -np.inf)
    else:
        (a,) = inexact(a)
    axes = _axes(axis, a.ndim)
    masked = a if where is None else jnp.where(where, a, -np.inf)
    if any(a.shape[i] == 0 for i in axes):
        amax = jnp.max(masked, axes, keepdims=True, initial=-np.inf)
    else:
        amax = jnp.max(masked, axes, keepdims=True)
    amax = lax.stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0))
    exp_a = jnp.exp(a - amax)
    if b is not None:
        exp_a = exp_a * b
    sumexp = jnp.sum(exp_a, axes, keepdims=True, where=where)
    sign = jnp.sign(sumexp)
    out = jnp.log(jnp.abs(sumexp)) + amax
    if not keepdims:
        out, sign = jnp.squeeze(out, axes), jnp.squeeze(sign, axes)
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(sign < 0, np.nan, out)
    return out
