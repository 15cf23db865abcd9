"""``bcoo_gather``: ``lax.gather`` of a BCOO (what integer-array indexing of a BCOO traces
to), as JAX computes it: one ``bcoo_dynamic_slice`` per index vector, mapped with vmap, whose
results stack along a new leading batch dimension; then the index batch shape is restored
and the window dimensions moved to ``offset_dims``."""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.abstract import ShapeDtypeStruct
from spmdc.core.tracing import where
from spmdc.experimental.sparse.bcoo import BCOO, bcoo_transpose
from spmdc.experimental.sparse.bcoo_structure import (
    bcoo_dynamic_slice,
    bcoo_reshape,
    bcoo_squeeze,
    bcoo_update_layout,
)
from spmdc.transforms.eval_shape import eval_shape
from spmdc.transforms.vmap import vmap

__all__ = ["bcoo_gather"]


def bcoo_gather(operand: BCOO, start_indices: Any, dimension_numbers: Any,
                slice_sizes: Sequence[int], *, unique_indices: bool = False,
                indices_are_sorted: bool = False, mode: Any = None,
                fill_value: Any = None) -> BCOO:
    """``lax.gather`` of a BCOO, for indices promised in bounds (JAX's only mode; the
    ``unique_indices``/``indices_are_sorted`` promises change no value)."""
    del unique_indices, indices_are_sorted       # promises that only speed up XLA
    promise = lax.GatherScatterMode.PROMISE_IN_BOUNDS
    if mode is not None and lax.GatherScatterMode.from_any(mode) != promise:
        raise NotImplementedError(f"bcoo_gather: mode={mode} not yet supported.")
    dn = dimension_numbers
    if getattr(dn, "operand_batching_dims", ()):
        raise NotImplementedError(f"bcoo_gather: operand_batching_dims "
                                  f"{dn.operand_batching_dims} are not supported{where()}")
    start_indices = jnp.asarray(start_indices)
    sizes = tuple(int(s) for s in slice_sizes)
    out_shape = eval_shape(
        lambda op, idx: lax.gather(op, idx, dn, sizes, mode=mode, fill_value=fill_value),
        ShapeDtypeStruct(operand.shape, operand.dtype),
        ShapeDtypeStruct(start_indices.shape, start_indices.dtype)).shape
    full_starts: list[Any] = [np.zeros((), start_indices.dtype)] * operand.ndim
    full_sizes = list(operand.shape)
    in_axes: list[int | None] = [None] * operand.ndim
    for i, j in enumerate(dn.start_index_map):
        full_starts[j] = start_indices[..., i].ravel()
        full_sizes[j] = sizes[j]
        in_axes[j] = 0
    collapsed = tuple(dn.collapsed_slice_dims)
    window_shape = tuple(s for d, s in enumerate(full_sizes) if d not in collapsed)

    def window(*starts: Any) -> tuple[Any, Any]:
        piece = bcoo_squeeze(bcoo_dynamic_slice(operand, starts, full_sizes),
                             dimensions=collapsed)
        return piece.data, piece.indices
    data, indices = vmap(window, in_axes=tuple(in_axes))(*full_starts)
    count = math.prod(start_indices.shape[:-1])
    result = BCOO((data, indices), shape=(count,) + window_shape)
    result = bcoo_reshape(result, new_sizes=start_indices.shape[:-1] + window_shape)
    if result.ndim:
        offset_dims = tuple(dn.offset_dims)
        batch_dims = tuple(d for d in range(len(out_shape)) if d not in offset_dims)
        permutation = np.zeros(result.ndim, dtype=int)
        permutation[np.array(batch_dims + offset_dims, dtype=int)] = np.arange(result.ndim)
        if set(permutation[:len(batch_dims)]) != set(range(len(batch_dims))):
            result = bcoo_update_layout(result, n_batch=0)
        result = bcoo_transpose(result, permutation=tuple(int(p) for p in permutation))
    if result.shape != tuple(out_shape):
        result = bcoo_reshape(result, new_sizes=out_shape)
    return result
