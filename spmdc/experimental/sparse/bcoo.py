"""``BCOO``, JAX's batched-coordinate sparse array, with its conversions and the
operations that keep the stored elements where they are: ``bcoo_todense``,
``bcoo_fromdense``, ``bcoo_extract``, ``bcoo_sum_duplicates``, ``bcoo_sort_indices``,
``bcoo_transpose`` and ``bcoo_reduce_sum``. The operations that move elements (slices,
reshapes, concatenation) are in bcoo_structure.py, the products in bcoo_dot.py, and the
arithmetic operators (``@``, ``*``, ``+``, ``sum``, ...) in transform.py, through
``sparsify`` as in JAX.

Note [BCOO layout]
~~~~~~~~~~~~~~~~~~
A BCOO of shape ``batch + sparse + dense`` (``n_batch``, ``n_sparse``, ``n_dense``
dimensions) stores ``data`` of shape ``batch + (nse,) + dense`` and ``indices`` of shape
``batch + (nse, n_sparse)`` (integers): in each batch, element ``i`` is the dense block
``data[..., i, :]`` at the sparse coordinates ``indices[..., i, :]``. A batch dimension of
``data`` or ``indices`` may be 1 (shared by every batch). As in JAX, duplicate coordinates
add up, and padding entries (``fromdense`` with an ``nse`` above the number of non-zeros)
sit at the out-of-range coordinate ``sparse shape`` with value 0: every operation drops
out-of-range entries, so padding never shows. The static part (``shape``, and the hints
``indices_sorted`` and ``unique_indices``) is the pytree's auxiliary data; ``data`` and
``indices`` are its leaves, so ``grad`` differentiates the stored values, and the
derivative of ``fromdense`` lives on the sparsity pattern (zero elsewhere), as in JAX.

Note [BCOO under vmap]
~~~~~~~~~~~~~~~~~~~~~~
``vmap`` maps a BCOO through its leaves: ``in_axes=0`` takes the leading batch dimension
off ``data`` and ``indices`` (it must be a batch dimension, as in JAX), and a BCOO result
gets the mapped dimension as a new leading batch dimension. The static ``shape`` does not
pass through the map, so ``tree_unflatten`` reads it off the buffers: the layout they
describe (``n_batch`` from ``indices``, ``n_dense`` from ``data``) has ``k`` dimensions
more or fewer than the recorded shape, and those are the leading batch dimensions.

Everything is written with gathers and scatter-adds of spmdc.numpy on the unbatched layout,
mapped over batch dimensions by vmap (Note [batch dimensions by vmap] in util.py).
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core.tracing import where
from spmdc.errors import ConcretizationTypeError
from spmdc.experimental.sparse.base import JAXSparse
from spmdc.experimental.sparse.util import broadcast_batch, nfold_vmap, split_shape
from spmdc.tree_util import register_pytree_node_class

__all__ = ["BCOO", "bcoo_fromdense", "bcoo_todense", "bcoo_extract", "bcoo_sum_duplicates",
           "bcoo_sort_indices", "bcoo_transpose", "bcoo_reduce_sum", "in_range"]


@register_pytree_node_class
class BCOO(JAXSparse):
    """A sparse array from ``(data, indices)`` and its ``shape``. See Note [BCOO layout]."""

    def __init__(self, args: tuple[Any, Any], *, shape: Sequence[int],
                 indices_sorted: bool = False, unique_indices: bool = False):
        data, indices = args
        data, indices = jnp.asarray(data), jnp.asarray(indices)
        shape = tuple(operator.index(s) for s in shape)
        if not jnp.issubdtype(indices.dtype, np.integer):
            raise TypeError(f"BCOO: indices must be integers, got {indices.dtype}{where()}")
        if indices.ndim < 2:
            raise ValueError(f"BCOO: indices must have shape batch + (nse, n_sparse); got "
                             f"{indices.shape}{where()}")
        n_batch, (nse, n_sparse) = indices.ndim - 2, indices.shape[-2:]
        n_dense = len(shape) - n_batch - n_sparse
        if n_dense < 0 or data.ndim != n_batch + 1 + n_dense:
            raise ValueError(f"BCOO: data of shape {data.shape} and indices of shape "
                             f"{indices.shape} do not describe an array of shape {shape}: "
                             f"data must have shape batch + (nse,) + dense = "
                             f"{shape[:n_batch]} + ({nse},) + "
                             f"{shape[n_batch + n_sparse:] if n_dense >= 0 else '?'}{where()}")
        for name, arr in (("data", data), ("indices", indices)):
            if any(b not in (1, s) for b, s in zip(arr.shape[:n_batch], shape[:n_batch],
                                                   strict=True)):
                raise ValueError(f"BCOO: {name} batch dimensions {arr.shape[:n_batch]} are "
                                 f"not compatible with the shape's {shape[:n_batch]}{where()}")
        if data.shape[n_batch] != nse or data.shape[n_batch + 1:] != shape[n_batch + n_sparse:]:
            raise ValueError(f"BCOO: data of shape {data.shape} does not match nse={nse} "
                             f"and dense shape {shape[n_batch + n_sparse:]}{where()}")
        self.data, self.indices, self.shape = data, indices, shape
        self.indices_sorted, self.unique_indices = indices_sorted, unique_indices

    # --- the pytree and the array attributes -------------------------------------------------

    def tree_flatten(self) -> tuple[tuple[Any, Any], tuple[tuple[int, ...], bool, bool]]:
        return (self.data, self.indices), (self.shape, self.indices_sorted,
                                           self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux_data: tuple[tuple[int, ...], bool, bool],
                       children: Any) -> BCOO:
        out = cls.__new__(cls)
        out.data, out.indices = children
        out.shape, out.indices_sorted, out.unique_indices = aux_data
        out.shape = _mapped_shape(out.shape, out.data, out.indices)
        return out

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def nse(self) -> int:
        """The number of stored elements per batch (padding included)."""
        return self.indices.shape[-2]

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 2

    @property
    def n_sparse(self) -> int:
        return self.indices.shape[-1]

    @property
    def n_dense(self) -> int:
        return self.data.ndim - 1 - self.n_batch

    def __repr__(self) -> str:
        extra = f", nse={self.nse}"
        if self.n_batch:
            extra += f", n_batch={self.n_batch}"
        if self.n_dense:
            extra += f", n_dense={self.n_dense}"
        return f"BCOO({np.dtype(self.dtype).name}{list(self.shape)}{extra})"

    # --- conversions ---------------------------------------------------------------------------

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32,
                  n_dense: int = 0, n_batch: int = 0) -> BCOO:
        """The non-zeros of ``mat``; ``nse`` (required under ``jit``) sets how many
        entries are stored per batch: fewer drops the last non-zeros, more pads."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat: Any, *, index_dtype: Any = None, n_dense: int = 0,
                          n_batch: int = 0) -> BCOO:
        """A ``scipy.sparse`` matrix as a BCOO (``n_batch = n_dense = 0`` only, as JAX)."""
        if n_dense or n_batch:
            raise NotImplementedError("BCOO.from_scipy_sparse: only n_batch=0, n_dense=0")
        mat = mat.tocoo()
        indices = np.stack([mat.row, mat.col], axis=1).astype(index_dtype or np.int32)
        return cls((jnp.asarray(mat.data), indices), shape=mat.shape)

    def todense(self) -> Any:
        """The dense array (duplicates added, padding dropped)."""
        return bcoo_todense(self)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCOO:
        """Duplicates added, indices sorted (and explicit zeros removed by default)."""
        return bcoo_sum_duplicates(self, nse=nse, remove_zeros=remove_zeros)

    def sort_indices(self) -> BCOO:
        return bcoo_sort_indices(self)

    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        """The axes permuted (reversed by default); batch, sparse and dense dimensions
        each stay among their kind, as in JAX."""
        axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
        return bcoo_transpose(self, permutation=axes)

    def update_layout(self, *, n_batch: int | None = None, n_dense: int | None = None,
                      on_inefficient: str | None = "error") -> BCOO:
        from spmdc.experimental.sparse.bcoo_structure import bcoo_update_layout
        return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense,
                                  on_inefficient=on_inefficient)

    def _with(self, data: Any = None, indices: Any = None, **hints: bool) -> BCOO:
        """A copy with new buffers (``None``: keep) and hints (default: kept)."""
        return BCOO((self.data if data is None else data,
                     self.indices if indices is None else indices), shape=self.shape,
                    indices_sorted=hints.get("indices_sorted", self.indices_sorted),
                    unique_indices=hints.get("unique_indices", self.unique_indices))


def _mapped_shape(shape: tuple[int, ...], data: Any, indices: Any) -> tuple[int, ...]:
    """``shape`` adjusted to buffers that vmap mapped or stacked. See Note [BCOO under
    vmap]."""
    if not (hasattr(data, "ndim") and hasattr(indices, "ndim")) or indices.ndim < 2:
        return shape
    n_batch, n_dense = indices.ndim - 2, data.ndim - indices.ndim + 1
    k = n_batch + indices.shape[-1] + n_dense - len(shape)
    if k > 0 and k <= n_batch:
        return tuple(max(d, i) for d, i in zip(data.shape[:k], indices.shape[:k],
                                                strict=True)) + shape
    if k < 0:
        return shape[-k:]
    return shape


def in_range(indices: Any, sparse_shape: Sequence[int]) -> Any:
    """Whether each stored coordinate lies inside ``sparse_shape`` (last axis reduced)."""
    return jnp.all((indices >= 0) & (indices < np.asarray(sparse_shape, indices.dtype)),
                   axis=-1)


def _mapped(mat: BCOO, kernel: Any, *extra: Any) -> Any:
    """``kernel(data, indices, *extra)`` on the unbatched layout, mapped over ``mat``'s
    batch dimensions. See Note [batch dimensions by vmap]."""
    data, indices = broadcast_batch(mat.data, mat.indices, mat.shape[:mat.n_batch])
    in_axes = (0, 0) + (None,) * len(extra)
    return nfold_vmap(kernel, mat.n_batch, in_axes)(data, indices, *extra)


def bcoo_todense(mat: BCOO) -> Any:
    """``mat`` as a dense array. See Note [BCOO layout]."""
    _, sparse_shape, dense_shape = split_shape(mat.shape, mat.n_batch, mat.n_dense)

    def kernel(data: Any, indices: Any) -> Any:
        if not sparse_shape:
            return jnp.sum(data, axis=0, dtype=data.dtype)
        columns = tuple(indices[:, i] for i in range(len(sparse_shape)))
        if data.dtype == np.bool_:      # duplicates combine by "or": count, then compare
            counts = jnp.zeros(sparse_shape + dense_shape, np.int32).at[columns].add(
                data.astype(np.int32), mode="drop")
            return counts > 0
        return jnp.zeros(sparse_shape + dense_shape, data.dtype).at[columns].add(
            data, mode="drop", indices_are_sorted=mat.indices_sorted,
            unique_indices=mat.unique_indices)
    return _mapped(mat, kernel)


def _nonzero_mask(mat: Any, n_dense: int) -> Any:
    mask = mat != 0
    return jnp.any(mask, axis=tuple(range(mat.ndim - n_dense, mat.ndim))) if n_dense else mask


def bcoo_fromdense(mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype: Any = np.int32) -> BCOO:
    """The non-zeros of ``mat`` as a ``BCOO`` (``BCOO.fromdense``). See Note [BCOO layout]."""
    mat = jnp.asarray(mat)
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > mat.ndim:
        raise ValueError(f"BCOO.fromdense: invalid n_batch={n_batch}, n_dense={n_dense} for "
                         f"an array of shape {mat.shape}{where()}")
    _, sparse_shape, _ = split_shape(mat.shape, n_batch, n_dense)
    mask = _nonzero_mask(mat, n_dense)
    if nse is None:
        counts = jnp.sum(mask, axis=tuple(range(n_batch, mask.ndim)))
        try:
            nse = int(jnp.max(counts)) if counts.size else 0
        except ConcretizationTypeError as error:
            raise ConcretizationTypeError(
                f"BCOO.fromdense: the number of stored elements depends on the values of the "
                f"array, which are not known inside jit; pass nse= (a Python int) to use "
                f"BCOO.fromdense in traced code{where()}") from error
    nse = operator.index(nse)

    def kernel(m: Any, mask: Any) -> tuple[Any, Any]:
        if not sparse_shape:
            return m[None], jnp.zeros((nse, 0), index_dtype)
        coordinates = jnp.nonzero(mask, size=nse, fill_value=sparse_shape)
        indices = jnp.stack(coordinates, axis=1).astype(index_dtype)
        return m.at[coordinates].get(mode="fill", fill_value=0), indices
    data, indices = nfold_vmap(kernel, n_batch)(mat, mask)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_extract(sparr: BCOO, arr: Any, *, assume_unique: bool | None = None) -> BCOO:
    """The values of the dense ``arr`` at ``sparr``'s stored coordinates, as a BCOO with
    ``sparr``'s indices (a duplicate coordinate gets the value once, unless
    ``assume_unique``)."""
    arr = jnp.asarray(arr)
    if arr.shape != sparr.shape:
        raise ValueError(f"bcoo_extract: arr of shape {arr.shape} must have the sparse "
                         f"array's shape {sparr.shape}{where()}")
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    if not assume_unique:
        sparr = bcoo_sum_duplicates(sparr, nse=sparr.nse, remove_zeros=False)
    _, sparse_shape, _ = split_shape(sparr.shape, sparr.n_batch, sparr.n_dense)
    batch_shape = sparr.shape[:sparr.n_batch]
    _, indices = broadcast_batch(sparr.data, sparr.indices, batch_shape)

    def kernel(indices: Any, arr: Any) -> Any:
        columns = tuple(indices[:, i] for i in range(len(sparse_shape)))
        if not columns:
            return arr[None]
        return arr.at[columns].get(mode="fill", fill_value=0)
    data = nfold_vmap(kernel, sparr.n_batch)(indices, arr)
    return BCOO((data, indices), shape=sparr.shape, indices_sorted=sparr.indices_sorted,
                unique_indices=sparr.unique_indices)


def bcoo_sum_duplicates(mat: BCOO, nse: int | None = None, *,
                        remove_zeros: bool = False) -> BCOO:
    """Duplicate coordinates added into one entry, indices sorted, out-of-range entries
    (and, with ``remove_zeros``, explicit zeros) dropped; ``nse`` (required under jit)
    sets the stored count."""
    _, sparse_shape, _ = split_shape(mat.shape, mat.n_batch, mat.n_dense)
    sentinel = np.asarray(sparse_shape, mat.indices.dtype)

    def marked(data: Any, indices: Any) -> Any:
        keep = in_range(indices, sparse_shape)
        if remove_zeros:
            keep = keep & _nonzero_mask(data, data.ndim - 1)
        return jnp.where(keep[:, None], indices, sentinel)

    if nse is None:
        def count(data: Any, indices: Any) -> Any:
            unique = jnp.unique(marked(data, indices), axis=0, size=mat.nse,
                                fill_value=sentinel)
            return jnp.sum(in_range(unique, sparse_shape))
        try:
            nse = int(jnp.max(_mapped(mat, count))) if mat.nse else 0
        except ConcretizationTypeError as error:
            raise ConcretizationTypeError(
                f"bcoo_sum_duplicates: the number of distinct coordinates depends on the "
                f"values of the indices, which are not known inside jit; pass nse= (a Python "
                f"int){where()}") from error
    nse = operator.index(nse)

    def kernel(data: Any, indices: Any) -> tuple[Any, Any]:
        if not sparse_shape:
            return jnp.sum(data, axis=0, keepdims=True), indices[:1]
        unique, inverse = jnp.unique(marked(data, indices), axis=0, size=nse,
                                     fill_value=sentinel, return_inverse=True)
        inverse = inverse.reshape(-1)
        summed = jnp.zeros((nse,) + data.shape[1:], data.dtype).at[inverse].add(
            data, mode="drop")
        valid = in_range(unique, sparse_shape).reshape((nse,) + (1,) * (data.ndim - 1))
        return jnp.where(valid, summed, 0), unique
    data, indices = _mapped(mat, kernel)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """The stored entries reordered so the coordinates are in row-major order."""
    if mat.n_sparse == 0:
        return mat._with(indices_sorted=True)

    def kernel(data: Any, indices: Any) -> tuple[Any, Any]:
        order = jnp.lexsort(tuple(indices[:, i] for i in reversed(range(mat.n_sparse))))
        return data[order], indices[order]
    data, indices = _mapped(mat, kernel)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True,
                unique_indices=mat.unique_indices)


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """``mat`` with its axes permuted; the permutation must map batch, sparse and dense
    dimensions among themselves (JAX's ``ValueError`` otherwise)."""
    permutation = tuple(operator.index(p) for p in permutation)
    if sorted(permutation) != list(range(mat.ndim)):
        raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, "
                        f"got permutation {permutation} for shape {mat.shape}{where()}")
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    batch_perm = permutation[:n_batch]
    sparse_perm = [p - n_batch for p in permutation[n_batch:n_batch + n_sparse]]
    dense_perm = [p - n_batch - n_sparse for p in permutation[n_batch + n_sparse:]]
    if (sorted(batch_perm) != list(range(n_batch))
            or sorted(sparse_perm) != list(range(n_sparse))
            or sorted(dense_perm) != list(range(mat.n_dense))):
        raise NotImplementedError(
            f"bcoo_transpose: the permutation {permutation} mixes batch, sparse and dense "
            f"dimensions (n_batch={n_batch}, n_sparse={n_sparse}, n_dense={mat.n_dense}); "
            f"transpose within each kind{where()}")
    data = mat.data.transpose((*batch_perm, n_batch, *(n_batch + 1 + d for d in dense_perm)))
    indices = mat.indices.transpose((*batch_perm, n_batch, n_batch + 1))
    indices = indices[..., np.asarray(sparse_perm, dtype=int)]
    keeps_order = sparse_perm == sorted(sparse_perm)
    return BCOO((data, indices), shape=tuple(mat.shape[p] for p in permutation),
                indices_sorted=mat.indices_sorted and keeps_order,
                unique_indices=mat.unique_indices)


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """The sum over ``axes`` as a BCOO over the remaining axes: dense axes summed in
    ``data``, sparse axes dropped from ``indices`` (entries then add up as duplicates),
    batch axes folded into the stored elements."""
    axes = tuple(sorted({operator.index(a) % max(mat.ndim, 1) for a in axes}))
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    batch_shape, sparse_shape, _ = split_shape(mat.shape, n_batch, mat.n_dense)
    data, indices = broadcast_batch(mat.data, mat.indices, batch_shape)
    # out-of-range entries must stay dropped once their coordinate column is gone
    data = jnp.where(in_range(indices, sparse_shape).reshape(
        indices.shape[:-1] + (1,) * mat.n_dense), data, 0)
    dense_axes = tuple(a - n_batch - n_sparse + n_batch + 1 for a in axes
                       if a >= n_batch + n_sparse)
    if dense_axes:
        data = jnp.sum(data, axis=dense_axes)
    kept_sparse = [d for d in range(n_sparse) if n_batch + d not in axes]
    indices = indices[..., np.asarray(kept_sparse, dtype=int)]
    batch_axes = [a for a in axes if a < n_batch]
    if batch_axes:                       # fold summed batch dimensions into nse
        kept_batch = [b for b in range(n_batch) if b not in batch_axes]
        order = (*kept_batch, *batch_axes, n_batch)
        data = data.transpose(order + tuple(range(n_batch + 1, data.ndim)))
        indices = indices.transpose(order + (n_batch + 1,))
        new_batch = tuple(batch_shape[b] for b in kept_batch)
        nse = mat.nse
        for b in batch_axes:
            nse *= batch_shape[b]
        # explicit sizes: with no sparse dimension left, indices has a 0-sized axis
        data = data.reshape(new_batch + (nse,) + data.shape[n_batch + 1:])
        indices = indices.reshape(new_batch + (nse, indices.shape[-1]))
    shape = tuple(s for i, s in enumerate(mat.shape) if i not in axes)
    return BCOO((data, indices), shape=shape)

