"""The BCOO operations that move stored elements: ``bcoo_slice``, ``bcoo_dynamic_slice``,
``bcoo_concatenate``, ``bcoo_reshape``, ``bcoo_squeeze``, ``bcoo_rev``,
``bcoo_broadcast_in_dim`` and ``bcoo_update_layout``.

Note [structural ops keep nse]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
As in JAX, these never look at values to decide a size: a slice keeps ``nse`` stored
entries (or merges them into the slice's number of sparse positions when that is fewer)
and sends those outside the slice to the out-of-range coordinate (the new sparse shape)
with value 0, a reshape re-indexes sparse coordinates through their row-major
position, and a concatenation along a sparse axis stacks the stored entries (``nse`` adds
up) with the later operands' coordinates offset. Batch and dense dimensions are ordinary
array dimensions of ``data`` (and ``indices``), so those parts are NumPy's own slices,
reshapes and concatenations.
"""
from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.abstract import ShapeDtypeStruct
from spmdc.core.tracing import where
from spmdc.experimental.sparse.bcoo import BCOO, bcoo_sum_duplicates, in_range
from spmdc.experimental.sparse.util import (
    SparseEfficiencyError,
    SparseEfficiencyWarning,
    broadcast_batch,
    split_shape,
)
from spmdc.transforms.eval_shape import eval_shape

__all__ = ["bcoo_slice", "bcoo_dynamic_slice", "bcoo_concatenate", "bcoo_reshape",
           "bcoo_squeeze", "bcoo_rev", "bcoo_broadcast_in_dim", "bcoo_update_layout"]


def _check_bcoo(mat: Any, name: str) -> None:
    if not isinstance(mat, BCOO):
        raise TypeError(f"{name}: input should be a BCOO array, got {type(mat).__name__}"
                        f"{where()}")


def _full(mat: BCOO) -> tuple[Any, Any]:
    return broadcast_batch(mat.data, mat.indices, mat.shape[:mat.n_batch])


def _select(mat: BCOO, data: Any, indices: Any, keep: Any, sparse_shape: Sequence[int],
            shape: Sequence[int]) -> BCOO:
    """Entries where ``keep`` is false sent to the out-of-range coordinate with value 0."""
    sentinel = np.asarray(sparse_shape, indices.dtype)
    indices = jnp.where(keep[..., None], indices, sentinel)
    data = jnp.where(keep.reshape(keep.shape + (1,) * mat.n_dense), data, 0)
    out = BCOO((data, indices), shape=tuple(shape))
    # as JAX: no more entries than the slice's sparse positions
    if mat.n_sparse and mat.nse > math.prod(sparse_shape):
        out = bcoo_sum_duplicates(out, nse=math.prod(sparse_shape))
    return out


def bcoo_slice(mat: BCOO, *, start_indices: Sequence[int], limit_indices: Sequence[int],
               strides: Sequence[int] | None = None) -> BCOO:
    """``lax.slice`` of a BCOO. See Note [structural ops keep nse]."""
    _check_bcoo(mat, "bcoo_slice")
    start, limit = tuple(map(operator.index, start_indices)), tuple(map(operator.index,
                                                                         limit_indices))
    strides = (1,) * mat.ndim if strides is None else tuple(map(operator.index, strides))
    if len(start) != mat.ndim or len(limit) != mat.ndim:
        raise ValueError(f"bcoo_slice: indices must have size mat.ndim={mat.ndim}{where()}")
    if len(strides) != mat.ndim:
        raise ValueError(f"len(strides) = {len(strides)}; expected {mat.ndim}{where()}")
    if any(s <= 0 for s in strides):
        raise ValueError(f"strides must be a sequence of positive integers; got {strides}"
                         f"{where()}")
    if any(not 0 <= a <= b <= n for a, b, n in zip(start, limit, mat.shape, strict=True)):
        raise ValueError(f"bcoo_slice: invalid indices. Got start_indices={start}, "
                         f"limit_indices={limit} and shape={mat.shape}{where()}")
    shape = tuple(-(-(b - a) // s) for a, b, s in zip(start, limit, strides, strict=True))
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    data, indices = _full(mat)
    batch = tuple(slice(a, b, s) for a, b, s in zip(start[:n_batch], limit[:n_batch],
                                                     strides[:n_batch], strict=True))
    dense = tuple(slice(a, b, s) for a, b, s in zip(start[n_batch + n_sparse:],
                                                     limit[n_batch + n_sparse:],
                                                     strides[n_batch + n_sparse:], strict=True))
    data = data[batch + (slice(None),) + dense]
    indices = indices[batch]
    sp = slice(n_batch, n_batch + n_sparse)
    lo, hi, step = (np.asarray(v[sp], indices.dtype) for v in (start, limit, strides))
    keep = jnp.all((indices >= lo) & (indices < hi) & ((indices - lo) % step == 0), axis=-1)
    return _select(mat, data, (indices - lo) // step, keep, shape[sp], shape)


def bcoo_dynamic_slice(mat: BCOO, start_indices: Sequence[Any],
                       slice_sizes: Sequence[int]) -> BCOO:
    """``lax.dynamic_slice`` of a BCOO: starts may be traced, and are clamped so the slice
    fits, as lax's are. See Note [structural ops keep nse]."""
    _check_bcoo(mat, "bcoo_dynamic_slice")
    sizes = tuple(map(operator.index, slice_sizes))
    if len(start_indices) != mat.ndim or len(sizes) != mat.ndim:
        raise ValueError(f"bcoo_dynamic_slice: indices must have size mat.ndim={mat.ndim}"
                         f"{where()}")
    if any(not 0 <= s <= n for s, n in zip(sizes, mat.shape, strict=True)):
        raise TypeError(f"slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {sizes} for operand shape {mat.shape}{where()}")
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    data, indices = _full(mat)
    starts = [jnp.asarray(s).astype(indices.dtype) for s in start_indices]
    # negative starts count from the end, then clamp so the window fits (lax's rule)
    starts = [jnp.clip(jnp.where(s < 0, s + n, s), 0, n - k)
              for s, n, k in zip(starts, mat.shape, sizes, strict=True)]
    zero = jnp.zeros((), indices.dtype)
    data = lax.dynamic_slice(data, [*starts[:n_batch], zero, *starts[n_batch + n_sparse:]],
                             [*sizes[:n_batch], mat.nse, *sizes[n_batch + n_sparse:]])
    indices = lax.dynamic_slice(indices, [*starts[:n_batch], zero, zero],
                                [*sizes[:n_batch], mat.nse, n_sparse])
    lo = jnp.stack(starts[n_batch:n_batch + n_sparse]) if n_sparse else \
        jnp.zeros((0,), indices.dtype)
    indices = indices - lo
    sparse_sizes = sizes[n_batch:n_batch + n_sparse]
    return _select(mat, data, indices, in_range(indices, sparse_sizes), sparse_sizes, sizes)


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """``lax.concatenate`` of BCOO arrays of one layout, along a batch or sparse dimension.
    See Note [structural ops keep nse]."""
    operands = list(operands)
    if not operands or not all(isinstance(op, BCOO) for op in operands):
        raise ValueError(f"bcoo_concatenate: expected operands to be a sequence of BCOO "
                         f"arrays, got {[type(op).__name__ for op in operands]}{where()}")
    dimension = operator.index(dimension)
    out_shape = eval_shape(lambda *xs: lax.concatenate(xs, dimension),
                                 *(ShapeDtypeStruct(op.shape, op.dtype)
                                   for op in operands)).shape
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError(f"bcoo_concatenate requires inputs to have matching n_dense; got "
                         f"{[op.n_dense for op in operands]}{where()}")
    if len({op.n_batch for op in operands}) > 1:
        raise ValueError(f"bcoo_concatenate requires inputs to have matching batch "
                         f"dimensions; got n_batch {[op.n_batch for op in operands]}{where()}")
    n_batch, n_sparse = operands[0].n_batch, operands[0].n_sparse
    dtype = jnp.result_type(*(op.dtype for op in operands))
    full = [_full(op) for op in operands]
    if dimension < n_batch:
        nse = max(op.nse for op in operands)
        padded = []
        for op, (data, indices) in zip(operands, full, strict=True):
            sparse_shape = op.shape[n_batch:n_batch + n_sparse]
            extra = nse - op.nse
            pad_data = [(0, 0)] * data.ndim
            pad_data[n_batch] = (0, extra)
            data = jnp.pad(data.astype(dtype), pad_data)
            filler = jnp.broadcast_to(np.asarray(sparse_shape, indices.dtype),
                                      indices.shape[:n_batch] + (extra, n_sparse))
            padded.append((data, jnp.concatenate([indices, filler], axis=n_batch)))
        data = jnp.concatenate([d for d, _ in padded], axis=dimension)
        indices = jnp.concatenate([i for _, i in padded], axis=dimension)
    elif dimension < n_batch + n_sparse:
        offset, pieces = 0, []
        for op, (data, indices) in zip(operands, full, strict=True):
            sparse_shape = op.shape[n_batch:n_batch + n_sparse]
            valid = in_range(indices, sparse_shape)[..., None]
            shifted = indices.at[..., dimension - n_batch].add(offset)
            # an out-of-range entry stays out of range in the wider result
            out_sparse = np.asarray(out_shape[n_batch:n_batch + n_sparse], indices.dtype)
            pieces.append((data.astype(dtype), jnp.where(valid, shifted, out_sparse)))
            offset += op.shape[dimension]
        data = jnp.concatenate([d for d, _ in pieces], axis=n_batch)
        indices = jnp.concatenate([i for _, i in pieces], axis=n_batch)
    else:
        raise NotImplementedError(f"Concatenation along dense dimensions (dimension="
                                  f"{dimension}, n_batch={n_batch}, n_sparse={n_sparse})"
                                  f"{where()}")
    return BCOO((data, indices), shape=out_shape)


def _cut(new_sizes: Sequence[int], size: int) -> int:
    """How many leading ``new_sizes`` belong to a part of ``size`` elements: JAX's rule,
    which counts every leading prefix whose product does not exceed ``size``."""
    return int(np.searchsorted(np.cumprod(new_sizes), size, side="right"))


def bcoo_reshape(mat: BCOO, *, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None,
                 sharding: Any = None) -> BCOO:
    """``lax.reshape`` of a BCOO whose new shape keeps batch, sparse and dense dimensions
    apart (JAX's rule). See Note [structural ops keep nse]."""
    del sharding                       # a layout hint of JAX's; spmdc's arrays are local
    _check_bcoo(mat, "bcoo_reshape")
    if dimensions is not None:
        from spmdc.experimental.sparse.bcoo import bcoo_transpose
        mat = bcoo_transpose(mat, permutation=dimensions)
    new_sizes = tuple(map(operator.index, new_sizes))
    if math.prod(new_sizes) != mat.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} for "
                        f"shape {mat.shape}{where()}")
    batch_shape, sparse_shape, dense_shape = split_shape(mat.shape, mat.n_batch, mat.n_dense)
    batch_size, sparse_size = math.prod(batch_shape), math.prod(sparse_shape)
    cumulative = list(np.cumprod(new_sizes))
    if batch_size != 1 and batch_size not in cumulative:
        raise ValueError(f"bcoo_reshape: new shape cannot mix batch and sparse dimensions; "
                         f"got shape={mat.shape} new_shape={new_sizes} with n_batch="
                         f"{mat.n_batch}{where()}")
    if sparse_size != 1 and batch_size * sparse_size not in cumulative:
        raise ValueError(f"bcoo_reshape: new shape cannot mix sparse and dense dimensions; "
                         f"got shape={mat.shape} new_shape={new_sizes} with n_dense="
                         f"{mat.n_dense}{where()}")
    i1, i2 = _cut(new_sizes, batch_size), _cut(new_sizes, batch_size * sparse_size)
    new_batch, new_sparse, new_dense = new_sizes[:i1], new_sizes[i1:i2], new_sizes[i2:]
    data, indices = _full(mat)
    data = data.reshape(new_batch + (mat.nse,) + new_dense)
    indices = indices.reshape(new_batch + (mat.nse, mat.n_sparse))
    valid = in_range(indices, sparse_shape)
    if sparse_shape:
        flat = jnp.ravel_multi_index(tuple(indices[..., i] for i in range(mat.n_sparse)),
                                     sparse_shape, mode="clip")
    else:
        flat = jnp.zeros(indices.shape[:-1], indices.dtype)
    columns = jnp.unravel_index(flat, new_sparse) if new_sparse else ()
    new_indices = (jnp.stack(columns, axis=-1).astype(indices.dtype) if columns
                   else jnp.zeros(indices.shape[:-1] + (0,), indices.dtype))
    new_indices = jnp.where(valid[..., None], new_indices,
                            np.asarray(new_sparse, indices.dtype))
    return BCOO((data, new_indices), shape=new_sizes)


def bcoo_squeeze(arr: BCOO, *, dimensions: Sequence[int]) -> BCOO:
    """``lax.squeeze`` of a BCOO: the size-1 ``dimensions`` removed."""
    _check_bcoo(arr, "bcoo_squeeze")
    dims = tuple(sorted({operator.index(d) % arr.ndim for d in dimensions}))
    if any(arr.shape[d] != 1 for d in dims):
        raise ValueError(f"cannot select an axis to squeeze out which has size not equal to "
                         f"one, got shape={arr.shape} and dimensions={dims}{where()}")
    n_batch, n_sparse = arr.n_batch, arr.n_sparse
    batch_dims = tuple(d for d in dims if d < n_batch)
    dense_dims = tuple(d - n_sparse + 1 for d in dims if d >= n_batch + n_sparse)
    kept_sparse = np.asarray([i for i in range(n_sparse) if i + n_batch not in dims], dtype=int)
    data, indices = _full(arr)
    data = jnp.squeeze(data, batch_dims + dense_dims)
    indices = jnp.squeeze(indices[..., kept_sparse], batch_dims)
    return BCOO((data, indices), shape=tuple(s for i, s in enumerate(arr.shape) if i not in dims),
                indices_sorted=arr.indices_sorted, unique_indices=arr.unique_indices)


def bcoo_rev(operand: BCOO, dimensions: Sequence[int]) -> BCOO:
    """``lax.rev`` of a BCOO: the ``dimensions`` reversed."""
    _check_bcoo(operand, "bcoo_rev")
    dims = [operator.index(d) for d in dimensions]
    if any(not 0 <= d < operand.ndim for d in dims) or len(set(dims)) != len(dims):
        raise ValueError(f"rev: dimensions {tuple(dims)} must be distinct axes of an array of "
                         f"rank {operand.ndim}{where()}")
    n_batch, n_sparse = operand.n_batch, operand.n_sparse
    data, indices = _full(operand)
    batch = [d for d in dims if d < n_batch]
    dense = [d + 1 - n_sparse for d in dims if d >= n_batch + n_sparse]
    if batch or dense:
        data = jnp.flip(data, axis=tuple(batch + dense))
    if batch:
        indices = jnp.flip(indices, axis=tuple(batch))
    sparse_dims = [d - n_batch for d in dims if n_batch <= d < n_batch + n_sparse]
    if sparse_dims:
        sparse_shape = np.asarray(operand.shape[n_batch:n_batch + n_sparse], indices.dtype)
        flip = np.zeros(n_sparse, bool)
        flip[sparse_dims] = True
        valid = in_range(indices, sparse_shape)[..., None]
        flipped = jnp.where(flip, sparse_shape - 1 - indices, indices)
        indices = jnp.where(valid, flipped, sparse_shape)
    return BCOO((data, indices), shape=operand.shape)


def bcoo_broadcast_in_dim(mat: BCOO, *, shape: Sequence[int], broadcast_dimensions: Sequence[int],
                          sharding: Any = None) -> BCOO:
    """``lax.broadcast_in_dim`` of a BCOO: new dimensions before the first sparse one become
    batch dimensions, new ones among the sparse ones are size-1 sparse dimensions, and
    dense dimensions broadcast in ``data`` (JAX's rule)."""
    del sharding                       # a layout hint of JAX's; spmdc's arrays are local
    _check_bcoo(mat, "bcoo_broadcast_in_dim")
    shape, dims = tuple(map(operator.index, shape)), tuple(map(operator.index,
                                                                broadcast_dimensions))
    if len(dims) != mat.ndim:
        raise ValueError(f"shape={mat.shape} and broadcast_dimensions={dims} must have the "
                         f"same length{where()}")
    n_batch, n_sparse, n_dense = mat.n_batch, mat.n_sparse, mat.n_dense
    batch_dims, sparse_dims, dense_dims = dims[:n_batch], dims[n_batch:n_batch + n_sparse], \
        dims[n_batch + n_sparse:]
    if max(batch_dims, default=0) > min(sparse_dims, default=len(shape)):
        raise ValueError(f"Cannot mix batch and sparse dimensions during broadcast_in_dim"
                         f"{where()}")
    if max(sparse_dims, default=0) > min(dense_dims, default=len(shape)):
        raise ValueError(f"Cannot mix sparse and dense dimensions during broadcast_in_dim"
                         f"{where()}")
    new_n_batch = min(dims[n_batch:], default=len(shape))
    new_n_dense = n_dense and len(shape) - min(dense_dims)
    new_n_sparse = len(shape) - new_n_batch - new_n_dense
    if math.prod(mat.shape[n_batch:n_batch + n_sparse]) != \
            math.prod(shape[new_n_batch:new_n_batch + new_n_sparse]):
        raise NotImplementedError(f"Adding sparse dimensions with lengths != 1 (shape "
                                  f"{mat.shape} to {shape}){where()}")
    data = lax.broadcast_in_dim(
        mat.data, (*shape[:new_n_batch], mat.nse, *shape[new_n_batch + new_n_sparse:]),
        (*batch_dims, new_n_batch, *(d + 1 - new_n_sparse for d in dense_dims)))
    indices = lax.broadcast_in_dim(mat.indices, (*shape[:new_n_batch], mat.nse, n_sparse),
                                   (*batch_dims, new_n_batch, new_n_batch + 1))
    if new_n_sparse != n_sparse:
        old_sparse = mat.shape[n_batch:n_batch + n_sparse]
        valid = in_range(indices, old_sparse)[..., None]
        columns = np.asarray([d - new_n_batch for d in sparse_dims], dtype=int)
        wide = jnp.zeros(indices.shape[:-1] + (new_n_sparse,), indices.dtype)
        wide = wide.at[..., columns].set(indices)
        indices = jnp.where(valid, wide, np.asarray(
            shape[new_n_batch:new_n_batch + new_n_sparse], indices.dtype))
    return BCOO((data, indices), shape=shape)


def bcoo_update_layout(mat: BCOO, *, n_batch: int | None = None, n_dense: int | None = None,
                       on_inefficient: str | None = "error") -> BCOO:
    """``mat`` with ``n_batch`` and ``n_dense`` changed. Fewer batch or dense dimensions
    turn them into sparse ones (``nse`` grows by their size); more store every candidate
    position, which JAX calls inefficient: ``SparseEfficiencyError`` unless
    ``on_inefficient`` is ``'warn'`` or ``None``."""
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(f"on_inefficient={on_inefficient!r}; expected one of ['error', "
                         f"'warn', None]{where()}")
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > mat.ndim:
        raise ValueError(f"bcoo_update_layout: invalid n_batch={n_batch}, n_dense={n_dense} "
                         f"for an array of rank {mat.ndim}{where()}")
    grows = [d for d in (*mat.shape[mat.n_batch:n_batch], *mat.shape[
        mat.ndim - n_dense:mat.ndim - mat.n_dense]) if d > 1]
    if grows and on_inefficient is not None:
        message = (f"bcoo_update_layout: changing n_batch {mat.n_batch} -> {n_batch} and "
                   f"n_dense {mat.n_dense} -> {n_dense} for shape {mat.shape} stores every "
                   f"position of dimensions of size {grows}; pass on_inefficient=None to "
                   f"allow it")
        if on_inefficient == "error":
            raise SparseEfficiencyError(message + where())
        warnings.warn(message, SparseEfficiencyWarning, stacklevel=2)
    from spmdc.experimental.sparse.layout import change_layout
    return change_layout(mat, n_batch, n_dense)
