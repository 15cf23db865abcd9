"""Helpers shared by the sparse formats of ``spmdc.experimental.sparse``: JAX's sparse
exception and warning classes, the n-fold ``vmap`` that maps an unbatched sparse kernel over
a BCOO's batch dimensions, and the splitting of a shape into its batch, sparse and dense
parts.

Note [batch dimensions by vmap]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A BCOO with ``n_batch`` leading batch dimensions is ``prod(batch)`` independent unbatched
sparse arrays that share ``nse``. Every kernel here is written for the unbatched layout
(``data (nse, *dense)``, ``indices (nse, n_sparse)``) and mapped over the batch dimensions
with ``nfold_vmap``. As in JAX, a batch dimension of ``data`` or ``indices`` may have size
1 where the array's has more (one index set shared by every batch): ``broadcast_batch``
makes them full before the map.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import spmdc.numpy as jnp
from spmdc.errors import (  # noqa: F401  (JAX's module defines them here)
    CuSparseEfficiencyWarning,
    SparseEfficiencyError,
    SparseEfficiencyWarning,
)
from spmdc.transforms.vmap import vmap

__all__ = ["SparseEfficiencyError", "SparseEfficiencyWarning", "CuSparseEfficiencyWarning",
           "nfold_vmap", "split_shape", "broadcast_batch"]


def nfold_vmap(fun: Callable[..., Any], n: int,
               in_axes: Sequence[int | None] | int = 0) -> Callable[..., Any]:
    """``fun`` mapped ``n`` times over leading axes (``None`` in ``in_axes`` leaves an
    operand unmapped). See Note [batch dimensions by vmap]."""
    for _ in range(n):
        fun = vmap(fun, in_axes=in_axes if isinstance(in_axes, int) else tuple(in_axes))
    return fun


def split_shape(shape: Sequence[int], n_batch: int,
                n_dense: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """``shape`` as (batch, sparse, dense) parts."""
    shape = tuple(shape)
    n_sparse = len(shape) - n_batch - n_dense
    return shape[:n_batch], shape[n_batch:n_batch + n_sparse], shape[n_batch + n_sparse:]


def broadcast_batch(data: Any, indices: Any, batch_shape: Sequence[int]) -> tuple[Any, Any]:
    """``data`` and ``indices`` with their batch dimensions broadcast to ``batch_shape``."""
    n_batch = len(batch_shape)
    data = jnp.broadcast_to(data, tuple(batch_shape) + data.shape[n_batch:])
    indices = jnp.broadcast_to(indices, tuple(batch_shape) + indices.shape[n_batch:])
    return data, indices
