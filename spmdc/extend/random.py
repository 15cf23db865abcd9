"""``jax.extend.random``: the key implementation's building blocks for libraries that
make keys and bits themselves: ``random_seed`` (typed keys from an array of integer
seeds) and ``threefry_2x32`` (the threefry2x32 hash of an array of counters). spmdc has
one key implementation, threefry2x32 (Note [threefry bits] in spmdc/random/threefry.py):
JAX's implementation objects and the other implementations are absent."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..random import PRNGKeyArray, key_dtype, threefry
from ..transforms.vmap import vmap

__all__ = ["random_seed", "threefry_2x32"]


def random_seed(seeds: Any, impl: Any) -> PRNGKeyArray:
    """A typed key array of ``seeds``' shape, the key at each index seeded from the
    integer there (as ``jax.random.key`` seeds one). ``impl`` names the key
    implementation: ``'threefry2x32'`` or its key dtype, the one spmdc has."""
    if impl is None:
        raise TypeError("random_seed: impl must name the key implementation "
                        "('threefry2x32' or jax.random.key_dtype())")
    key_dtype(impl)                 # refuses another implementation, as random.key does
    arr = jnp.asarray(np.int64(seeds)) if isinstance(seeds, int) else jnp.asarray(seeds)
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"random_seed: seeds must be integers, got an array of dtype "
                        f"{arr.dtype}")
    seed = threefry.seed
    for _ in range(arr.ndim):
        seed = vmap(seed)
    return PRNGKeyArray._wrap(seed(arr))


def threefry_2x32(keypair: Any, count: Any) -> Any:
    """The threefry2x32 hash of the uint32 counters ``count`` under the key
    ``keypair`` (two uint32 scalars): a uint32 array of ``count``'s shape. The flat
    counters, padded with a zero to an even number, are hashed as two halves."""
    key1, key2 = keypair
    dtypes = [np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)
              for x in (key1, key2, count)]
    if any(d != np.uint32 for d in dtypes):
        raise TypeError(f"threefry_2x32 requires uint32 arguments, got {dtypes}")
    flat = jnp.ravel(count)
    odd = flat.shape[0] % 2
    if odd:
        flat = jnp.concatenate([flat, jnp.zeros((1,), np.uint32)])
    half = flat.shape[0] // 2
    x1, x2 = threefry.threefry2x32(key1, key2, flat[:half], flat[half:])
    out = jnp.concatenate([x1, x2])
    return lax.reshape(out[:-1] if odd else out, np.shape(count))
