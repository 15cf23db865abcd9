"""``BCSR``, JAX's batched compressed-sparse-row array, and the ``bcsr_*`` functions.

Note [BCSR as compressed BCOO]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A BCSR has two sparse dimensions (rows, columns) after ``n_batch`` batch dimensions and
before ``n_dense`` dense ones. Per batch it stores ``data`` (``(nse,) + dense``), the column
of each entry in ``indices`` (``(nse,)``) and ``indptr`` (``(rows + 1,)``): the entries of row
``r`` are ``indptr[r]:indptr[r + 1]``, so entries are grouped by row in order. As in JAX,
padding entries come after ``indptr[-1]``, with column ``columns`` (out of range) and value
0. Everything but the layout itself goes through BCOO: ``to_bcoo`` expands each entry's
row from ``indptr`` (a sorted search of its position), and ``from_bcoo`` sorts a BCOO's
entries by coordinates and counts the entries per row.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core.tracing import where
from spmdc.experimental.sparse.base import JAXSparse
from spmdc.experimental.sparse.bcoo import (
    BCOO,
    bcoo_extract,
    bcoo_fromdense,
    bcoo_sort_indices,
    bcoo_sum_duplicates,
    in_range,
)
from spmdc.experimental.sparse.bcoo_dot import bcoo_dot_general
from spmdc.experimental.sparse.bcoo_structure import bcoo_broadcast_in_dim, bcoo_concatenate
from spmdc.experimental.sparse.util import broadcast_batch, nfold_vmap
from spmdc.tree_util import register_pytree_node_class

__all__ = ["BCSR", "bcsr_fromdense", "bcsr_todense", "bcsr_extract", "bcsr_dot_general",
           "bcsr_broadcast_in_dim", "bcsr_concatenate", "bcsr_sum_duplicates"]


@register_pytree_node_class
class BCSR(JAXSparse):
    """A sparse array from ``(data, indices, indptr)`` and its ``shape``. See Note [BCSR as
    compressed BCOO]."""

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int],
                 indices_sorted: bool = False, unique_indices: bool = False):
        data, indices, indptr = (jnp.asarray(a) for a in args)
        shape = tuple(operator.index(s) for s in shape)
        for name, arr in (("indices", indices), ("indptr", indptr)):
            if not jnp.issubdtype(arr.dtype, np.integer):
                raise TypeError(f"BCSR: {name} must be integers, got {arr.dtype}{where()}")
        n_batch = indices.ndim - 1
        n_dense = data.ndim - n_batch - 1
        if (n_batch < 0 or n_dense < 0 or len(shape) != n_batch + 2 + n_dense
                or indptr.ndim != n_batch + 1
                or indptr.shape[-1] != shape[n_batch] + 1
                or data.shape[n_batch] != indices.shape[-1]
                or data.shape[n_batch + 1:] != shape[n_batch + 2:]):
            raise ValueError(f"BCSR: data {data.shape}, indices {indices.shape} and indptr "
                             f"{indptr.shape} do not describe an array of shape {shape} "
                             f"(data: batch + (nse,) + dense, indices: batch + (nse,), "
                             f"indptr: batch + (rows + 1,)){where()}")
        self.data, self.indices, self.indptr, self.shape = data, indices, indptr, shape
        self.indices_sorted, self.unique_indices = indices_sorted, unique_indices

    def tree_flatten(self) -> tuple[tuple[Any, Any, Any], tuple[tuple[int, ...], bool, bool]]:
        return (self.data, self.indices, self.indptr), (self.shape, self.indices_sorted,
                                                        self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux_data: tuple[tuple[int, ...], bool, bool],
                       children: Any) -> BCSR:
        out = cls.__new__(cls)
        out.data, out.indices, out.indptr = children
        out.shape, out.indices_sorted, out.unique_indices = aux_data
        return out

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def nse(self) -> int:
        return self.indices.shape[-1]

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 1

    n_sparse = 2

    @property
    def n_dense(self) -> int:
        return self.data.ndim - 1 - self.n_batch

    def __repr__(self) -> str:
        extra = f", nse={self.nse}"
        if self.n_batch:
            extra += f", n_batch={self.n_batch}"
        if self.n_dense:
            extra += f", n_dense={self.n_dense}"
        return f"BCSR({np.dtype(self.dtype).name}{list(self.shape)}{extra})"

    def _with(self, data: Any = None, **hints: bool) -> BCSR:
        return BCSR((self.data if data is None else data, self.indices, self.indptr),
                    shape=self.shape,
                    indices_sorted=hints.get("indices_sorted", self.indices_sorted),
                    unique_indices=hints.get("unique_indices", self.unique_indices))

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32,
                  n_dense: int = 0, n_batch: int = 0) -> BCSR:
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> BCSR:
        """The BCSR form of a BCOO with two sparse dimensions."""
        if not isinstance(arr, BCOO) or arr.n_sparse != 2:
            raise NotImplementedError(f"BCSR.from_bcoo requires a BCOO with n_sparse=2, got "
                                      f"{arr!r}{where()}")
        return _from_bcoo(arr)

    @classmethod
    def from_scipy_sparse(cls, mat: Any, *, index_dtype: Any = None, n_dense: int = 0,
                          n_batch: int = 0) -> BCSR:
        """A ``scipy.sparse`` matrix as a BCSR (``n_batch = n_dense = 0`` only, as JAX)."""
        if n_dense or n_batch:
            raise NotImplementedError("BCSR.from_scipy_sparse: only n_batch=0, n_dense=0")
        mat = mat.tocsr()
        index_dtype = index_dtype or np.int32
        return cls((jnp.asarray(mat.data), mat.indices.astype(index_dtype),
                    mat.indptr.astype(index_dtype)), shape=mat.shape)

    def to_bcoo(self) -> BCOO:
        """The BCOO form: each entry's row read off ``indptr``."""
        batch = self.shape[:self.n_batch]
        data = jnp.broadcast_to(self.data, batch + self.data.shape[self.n_batch:])
        indices = jnp.broadcast_to(self.indices, batch + self.indices.shape[self.n_batch:])
        indptr = jnp.broadcast_to(self.indptr, batch + self.indptr.shape[self.n_batch:])

        def kernel(indices: Any, indptr: Any) -> Any:
            position = jnp.arange(indices.shape[0], dtype=indptr.dtype)
            rows = jnp.searchsorted(indptr, position, side="right") - 1
            rows = jnp.where(position < indptr[-1], rows, indptr.shape[0] - 1)
            return jnp.stack([rows.astype(indices.dtype), indices], axis=-1)
        coordinates = nfold_vmap(kernel, self.n_batch)(indices, indptr)
        return BCOO((data, coordinates), shape=self.shape, indices_sorted=self.indices_sorted,
                    unique_indices=self.unique_indices)

    def todense(self) -> Any:
        return self.to_bcoo().todense()

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> BCSR:
        return bcsr_sum_duplicates(self, nse=nse, remove_zeros=remove_zeros)

    def sum(self, *args: Any, **kwargs: Any) -> Any:
        return self.to_bcoo().sum(*args, **kwargs)

    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        """The transpose, as a BCOO (its rows are no longer grouped)."""
        return self.to_bcoo().transpose(axes)


def _from_bcoo(arr: BCOO) -> BCSR:
    arr = bcoo_sort_indices(arr)
    n_batch = arr.n_batch
    rows, columns = arr.shape[n_batch:n_batch + 2]
    data, indices = broadcast_batch(arr.data, arr.indices, arr.shape[:n_batch])

    def kernel(data: Any, indices: Any) -> tuple[Any, Any, Any]:
        valid = in_range(indices, (rows, columns))
        counts = jnp.zeros(rows, indices.dtype).at[indices[:, 0]].add(
            valid.astype(indices.dtype), mode="drop")
        indptr = jnp.concatenate([jnp.zeros(1, indices.dtype), jnp.cumsum(counts)])
        # sorted: the out-of-range entries are last, after indptr[-1]
        column = jnp.where(valid, indices[:, 1], columns).astype(indices.dtype)
        mask = valid.reshape((-1,) + (1,) * (data.ndim - 1))
        return jnp.where(mask, data, 0), column, indptr.astype(indices.dtype)
    data, column, indptr = nfold_vmap(kernel, n_batch)(data, indices)
    return BCSR((data, column, indptr), shape=arr.shape, indices_sorted=True,
                unique_indices=arr.unique_indices)


def bcsr_fromdense(mat: Any, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype: Any = np.int32) -> BCSR:
    """The non-zeros of ``mat`` as a BCSR (row-major order, padding after them)."""
    mat = jnp.asarray(mat)
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError(f"BCSR.fromdense: a BCSR has 2 sparse dimensions; got an array of "
                         f"shape {mat.shape} with n_batch={n_batch}, n_dense={n_dense}"
                         f"{where()}")
    return _from_bcoo(bcoo_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                     index_dtype=index_dtype))


def bcsr_todense(mat: BCSR) -> Any:
    """``mat`` as a dense array."""
    return mat.todense()


def bcsr_extract(indices: Any, indptr: Any, mat: Any) -> Any:
    """The values of the dense ``mat`` at the coordinates of a BCSR pattern (its data)."""
    mat = jnp.asarray(mat)
    indices, indptr = jnp.asarray(indices), jnp.asarray(indptr)
    n_batch = indices.ndim - 1
    dense_shape = mat.shape[n_batch + 2:]
    zeros = jnp.zeros(indices.shape + dense_shape, mat.dtype)
    pattern = BCSR((zeros, indices, indptr), shape=mat.shape).to_bcoo()
    return bcoo_extract(pattern, mat, assume_unique=True).data


def bcsr_dot_general(lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: Any = None,
                     preferred_element_type: Any = None, out_sharding: Any = None) -> Any:
    """``lax.dot_general`` with BCSR operands (through BCOO). See ``bcoo_dot_general``."""
    lhs = lhs.to_bcoo() if isinstance(lhs, BCSR) else lhs
    rhs = rhs.to_bcoo() if isinstance(rhs, BCSR) else rhs
    return bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
                            preferred_element_type=preferred_element_type,
                            out_sharding=out_sharding)


def bcsr_broadcast_in_dim(mat: BCSR, *, shape: Sequence[int],
                          broadcast_dimensions: Sequence[int], sharding: Any = None) -> BCSR:
    """``lax.broadcast_in_dim`` of a BCSR (new leading dimensions become batch ones)."""
    out = bcoo_broadcast_in_dim(mat.to_bcoo(), shape=shape,
                                broadcast_dimensions=broadcast_dimensions, sharding=sharding)
    return BCSR.from_bcoo(out)


def bcsr_concatenate(operands: Sequence[BCSR], *, dimension: int) -> BCSR:
    """``lax.concatenate`` of BCSR arrays along a batch or sparse dimension."""
    out = bcoo_concatenate([op.to_bcoo() for op in operands], dimension=dimension)
    return BCSR.from_bcoo(out)


def bcsr_sum_duplicates(mat: BCSR, nse: int | None = None, *,
                        remove_zeros: bool = True) -> BCSR:
    """Duplicate coordinates added into one entry (explicit zeros removed by default)."""
    return _from_bcoo(bcoo_sum_duplicates(mat.to_bcoo(), nse=nse, remove_zeros=remove_zeros))
