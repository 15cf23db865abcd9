"""Shuffles: permutation, choice without replacement, categorical without replacement.

Note [sort shuffle]
~~~~~~~~~~~~~~~~~~~
JAX shuffles by sorting: each round draws fresh 32-bit keys for the elements (from the
second key of ``split(key)``, the first carried to the next round) and stable-sorts the
array by them. ``ceil(3 ln(n) / ln(2**32 - 1))`` rounds (one for any n below 2**10.7,
two below 2**21.3, ...) make colliding keys unlikely to bias the result. Weighted
sampling without replacement is the Gumbel top-k trick: the ``k`` largest of
``log p + Gumbel noise``, ties to the lower index. Both are reproduced here exactly,
so a permutation is the same as JAX's for the same key.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..transforms.jit import jit
from . import threefry
from .keys import check_key
from .placement import takes_out_sharding
from .samplers import _axis, _gumbel, _take


def _shuffle(data: Any, x: Any, axis: int) -> Any:
    rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        keys = threefry.split(data, (2,))
        data, sub = keys[0], keys[1]
        sort_keys = threefry.random_bits(sub, 32, tuple(x.shape))
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


_shuffle_jit = jit(_shuffle, static_argnums=(2,))


def _permutation(data: Any, x: Any, axis: int, independent: bool) -> Any:
    if independent or x.ndim == 1:
        return _shuffle(data, x, axis)
    order = _shuffle(data, jnp.arange(x.shape[axis]), 0)
    return _take(x, order, axis)


_permutation_jit = jit(_permutation, static_argnums=(2, 3))


@takes_out_sharding
def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of ``arange(x)`` (an int ``x``) or of ``x``'s slices along
    ``axis`` (each 1-D slice on its own when ``independent``). See Note [sort shuffle]."""
    data, _ = check_key("permutation", key)
    if np.ndim(x) == 0:
        if not (isinstance(x, (int, np.integer)) or
                np.issubdtype(getattr(x, "dtype", np.float64), np.integer)) or \
                isinstance(x, bool):
            raise TypeError("x must be an integer or at least 1-dimensional")
        _axis(axis, 1, "permutation")
        return _shuffle_jit(data, jnp.arange(int(x)), 0)
    x = jnp.asarray(x)
    return _permutation_jit(data, x, _axis(axis, x.ndim, "permutation"), bool(independent))


def top_k_indices(x: Any, k: int) -> Any:
    """Indices of the ``k`` largest entries along the last axis, largest first, ties to
    the lower index (as lax.top_k orders them)."""
    n = x.shape[-1]
    index = lax.broadcasted_iota(np.int32, tuple(x.shape), x.ndim - 1) \
        if hasattr(lax, "broadcasted_iota") else \
        jnp.broadcast_to(jnp.arange(n, dtype=np.int32), tuple(x.shape))
    _, order = lax.sort_key_val(jnp.negative(x), index, x.ndim - 1)
    return order[..., :k]


def _choice_weighted(data: Any, p: Any, n_draws: int, mode: str) -> Any:
    g = jnp.add(_gumbel(data, tuple(p.shape), p.dtype, mode), jnp.log(p))
    return top_k_indices(g, n_draws).astype(dtypes.default_int())


_choice_weighted_jit = jit(_choice_weighted, static_argnums=(2, 3))


def choice_without_replacement(data: Any, arr: Any, a: Any, shape: tuple[int, ...], p: Any,
                               axis: int, mode: str | None, n_inputs: int,
                               n_draws: int) -> Any:
    """random.choice(..., replace=False): see Note [sort shuffle]."""
    if p is None:
        source = jnp.arange(n_inputs) if arr.ndim == 0 else arr
        shuffled = _permutation_jit(data, source, axis if arr.ndim else 0, False)
        result = shuffled[(slice(None),) * axis + (slice(n_draws),)] if arr.ndim else \
            shuffled[:n_draws]
    else:
        mode = "low" if mode is None else mode
        if mode not in ("high", "low"):
            raise ValueError(f"choice: mode must be 'high' or 'low', got {mode!r}")
        p_arr = jnp.asarray(p)
        if not dtypes.is_inexact(p_arr.dtype):
            p_arr = p_arr.astype(dtypes.default_float())
        if tuple(p_arr.shape) != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {tuple(p_arr.shape)} and "
                             f"a.shape[axis] is {n_inputs}.")
        ind = _choice_weighted_jit(data, p_arr, n_draws, mode)
        result = ind if arr.ndim == 0 else _take(arr, ind, axis)
    return jnp.reshape(result, shape if arr.ndim == 0 else
                       tuple(arr.shape[:axis]) + shape + tuple(arr.shape[axis + 1:]))


def _categorical_no_replace(data: Any, logits: Any, shape: tuple[int, ...], axis: int,
                            mode: str) -> Any:
    batch_ndim = logits.ndim - 1
    prefix = shape[:len(shape) - batch_ndim]
    logits = jnp.add(logits, _gumbel(data, tuple(logits.shape), logits.dtype, mode))
    k = math.prod(prefix)
    indices = top_k_indices(jnp.moveaxis(logits, axis, -1), k)
    # (batch..., k) -> (k, batch...) -> shape
    indices = jnp.moveaxis(indices, -1, 0)
    return jnp.reshape(indices, shape)


categorical_no_replace = jit(_categorical_no_replace, static_argnums=(2, 3, 4))
