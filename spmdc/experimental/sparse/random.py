"""``random_bcoo``: a random BCOO array, drawn as JAX draws it (one key per batch for the
coordinates, chosen among the sparse positions, and one for the values), so a key gives
JAX's array."""
from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import random
from spmdc.core.tracing import where
from spmdc.experimental.sparse.bcoo import BCOO, bcoo_sort_indices
from spmdc.experimental.sparse.util import split_shape
from spmdc.transforms.vmap import vmap

__all__ = ["random_bcoo"]


def random_bcoo(key: Any, shape: Sequence[int], *, dtype: Any = None,
                indices_dtype: Any = None, nse: float | int = 0.2, n_batch: int = 0,
                n_dense: int = 0, unique_indices: bool = True, sorted_indices: bool = False,
                generator: Callable[..., Any] = random.uniform, **kwds: Any) -> BCOO:
    """A BCOO of ``shape`` with ``nse`` stored elements per batch (a fraction of the sparse
    size when ``0 < nse < 1``), values from ``generator(key, shape=, dtype=, **kwds)``."""
    shape = tuple(map(operator.index, shape))
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape={shape}"
                         f"{where()}")
    n_sparse = len(shape) - n_batch - n_dense
    batch_shape, sparse_shape, dense_shape = split_shape(shape, n_batch, n_dense)
    batch_size, sparse_size = math.prod(batch_shape), math.prod(sparse_shape)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"got nse={nse}, expected to be between 0 and {sparse_size}"
                         f"{where()}")
    if 0 < nse < 1:
        nse = int(math.ceil(nse * sparse_size))
    nse = operator.index(nse)
    dtype = jnp.zeros(()).dtype if dtype is None else dtype
    indices_dtype = jnp.zeros((), int).dtype if indices_dtype is None else indices_dtype
    if sparse_size > np.iinfo(indices_dtype).max:
        raise ValueError(f"indices_dtype={np.dtype(indices_dtype).name} does not have enough "
                         f"range to generate sparse indices of size {sparse_size}{where()}")

    def draw_indices(key: Any) -> Any:
        if not sparse_shape:
            return jnp.zeros((nse, n_sparse), indices_dtype)
        flat = random.choice(key, sparse_size, shape=(nse,),
                             replace=not unique_indices).astype(indices_dtype)
        return jnp.stack(jnp.unravel_index(flat, sparse_shape), axis=1)

    keys = random.split(key, batch_size + 1)
    data_key, index_keys = keys[0], keys[1:]
    data = generator(data_key, shape=batch_shape + (nse,) + dense_shape, dtype=dtype, **kwds)
    indices = vmap(draw_indices)(index_keys).reshape(batch_shape + (nse, n_sparse))
    mat = BCOO((data, indices), shape=shape)
    return bcoo_sort_indices(mat) if sorted_indices else mat
