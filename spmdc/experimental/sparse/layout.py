"""Changing a BCOO's layout (``n_batch``, ``n_dense``) without densifying: the data
movement behind ``bcoo_update_layout`` (whose checks are in bcoo_structure.py).

Note [layout changes]
~~~~~~~~~~~~~~~~~~~~~
A layout change goes in two steps. First, batch and dense dimensions that the target has
fewer of become sparse dimensions: a batch dimension of size ``b`` joins the stored
elements (``nse`` times ``b``) with its position as a new leading coordinate column, and a
dense block of size ``d`` splits into ``d`` stored elements with the block position as new
trailing columns. Then sparse dimensions that the target has more batch or dense
dimensions of leave the coordinates: a new batch position keeps the ``nse`` entries with
their other coordinates, and the values of those whose leading coordinate is elsewhere set
to 0 (JAX's layout), and a new dense
dimension holds each entry's value one-hot at its trailing coordinate. Out-of-range
(padding) entries stay out of range, with value 0, at every step.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.experimental.sparse.bcoo import BCOO, in_range
from spmdc.experimental.sparse.util import broadcast_batch, nfold_vmap

__all__ = ["change_layout"]


def change_layout(mat: BCOO, n_batch: int, n_dense: int) -> BCOO:
    """``mat`` with ``n_batch`` batch and ``n_dense`` dense dimensions. See Note [layout
    changes]."""
    data, indices = broadcast_batch(mat.data, mat.indices, mat.shape[:mat.n_batch])
    shape, cur_batch, cur_dense = mat.shape, mat.n_batch, mat.n_dense
    if cur_batch > n_batch:
        data, indices = _batch_to_sparse(data, indices, shape, n_batch, cur_batch, cur_dense)
        cur_batch = n_batch
    if cur_dense > n_dense:
        data, indices = _dense_to_sparse(data, indices, shape, cur_batch, cur_dense - n_dense)
        cur_dense = n_dense
    if n_batch > cur_batch:
        data, indices = _sparse_to_batch(data, indices, shape, cur_batch, n_batch, cur_dense)
        cur_batch = n_batch
    if n_dense > cur_dense:
        data, indices = _sparse_to_dense(data, indices, shape, cur_batch, n_dense - cur_dense)
    return BCOO((data, indices), shape=shape)


def _batch_to_sparse(data: Any, indices: Any, shape: tuple[int, ...], keep: int, n_batch: int,
                     n_dense: int) -> tuple[Any, Any]:
    moved = shape[keep:n_batch]
    nse, n_sparse = indices.shape[-2:]
    positions = jnp.stack(jnp.meshgrid(*(jnp.arange(b, dtype=indices.dtype) for b in moved),
                                       indexing="ij"), axis=-1) if moved else None
    positions = jnp.broadcast_to(positions.reshape(moved + (1, len(moved))),
                                 indices.shape[:n_batch] + (nse, len(moved)))
    # an out-of-range entry keeps its out-of-range column, so it stays out of range
    indices = jnp.concatenate([positions, indices], axis=-1)
    new_nse = math.prod(moved) * nse
    data = data.reshape(shape[:keep] + (new_nse,) + data.shape[n_batch + 1:])
    indices = indices.reshape(shape[:keep] + (new_nse, len(moved) + n_sparse))
    return data, indices


def _dense_to_sparse(data: Any, indices: Any, shape: tuple[int, ...], n_batch: int,
                     count: int) -> tuple[Any, Any]:
    n_sparse = indices.shape[-1]
    moved = shape[n_batch + n_sparse:n_batch + n_sparse + count]
    sparse_shape = shape[n_batch:n_batch + n_sparse]

    def kernel(data: Any, indices: Any) -> tuple[Any, Any]:
        nse, size = data.shape[0], math.prod(moved)
        grid = jnp.stack(jnp.meshgrid(*(jnp.arange(d, dtype=indices.dtype) for d in moved),
                                      indexing="ij"), axis=-1).reshape(size, count)
        old = jnp.broadcast_to(indices[:, None, :], (nse, size, n_sparse))
        new = jnp.concatenate([old, jnp.broadcast_to(grid[None], (nse, size, count))], -1)
        valid = in_range(indices, sparse_shape)[:, None, None]
        new = jnp.where(valid, new, np.asarray(sparse_shape + moved, indices.dtype))
        return (data.reshape((nse * size,) + data.shape[1 + count:]),
                new.reshape(nse * size, n_sparse + count))
    return nfold_vmap(kernel, n_batch)(data, indices)


def _sparse_to_batch(data: Any, indices: Any, shape: tuple[int, ...], n_batch: int,
                     target: int, n_dense: int) -> tuple[Any, Any]:
    count = target - n_batch
    moved = shape[n_batch:target]

    def kernel(data: Any, indices: Any) -> tuple[Any, Any]:
        grid = jnp.stack(jnp.meshgrid(*(jnp.arange(d, dtype=indices.dtype) for d in moved),
                                      indexing="ij"), axis=-1)        # moved + (count,)
        lead = indices[:, :count]
        match = jnp.all(lead[(None,) * count] == grid[..., None, :], axis=-1)
        match = match & in_range(indices, shape[n_batch:len(shape) - n_dense])
        # as JAX: every new batch keeps all coordinates, the others' values set to 0
        new_indices = jnp.broadcast_to(indices[:, count:], moved + indices[:, count:].shape)
        mask = match.reshape(match.shape + (1,) * (data.ndim - 1))
        new_data = jnp.where(mask, jnp.broadcast_to(data, moved + data.shape), 0)
        return new_data, new_indices
    data, indices = nfold_vmap(kernel, n_batch)(data, indices)
    return data, indices


def _sparse_to_dense(data: Any, indices: Any, shape: tuple[int, ...], n_batch: int,
                     count: int) -> tuple[Any, Any]:
    n_sparse = indices.shape[-1]
    keep = n_sparse - count
    moved = shape[n_batch + keep:n_batch + n_sparse]
    sparse_shape = shape[n_batch:n_batch + n_sparse]

    def kernel(data: Any, indices: Any) -> tuple[Any, Any]:
        nse = data.shape[0]
        valid = in_range(indices, sparse_shape)
        block = jnp.zeros((nse,) + moved + data.shape[1:], data.dtype)
        columns = (jnp.arange(nse),) + tuple(indices[:, keep + i] for i in range(count))
        block = block.at[columns].add(jnp.where(
            valid.reshape((nse,) + (1,) * (data.ndim - 1)), data, 0), mode="drop")
        new_indices = jnp.where(valid[:, None], indices[:, :keep],
                                np.asarray(sparse_shape[:keep], indices.dtype))
        return block, new_indices
    return nfold_vmap(kernel, n_batch)(data, indices)
