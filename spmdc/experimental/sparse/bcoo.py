"""``BCOO``, JAX's batched-coordinate sparse array, in its unbatched form: the stored
values and their coordinates as two arrays, a pytree, so it passes through ``jit`` and
``grad`` as JAX's does.

Note [BCOO layout]
~~~~~~~~~~~~~~~~~~
An ``N``-dimensional array with ``nse`` stored elements is ``data`` of shape ``(nse,)``
and ``indices`` of shape ``(nse, N)`` (integers): element ``i`` is ``data[i]`` at
``indices[i]``. As in JAX, duplicate coordinates add up, and padding entries (from
``fromdense`` with an ``nse`` above the number of non-zeros) sit at the out-of-range
coordinate ``shape`` with value 0: every operation drops out-of-range entries, so padding never
shows. The static part (``shape``, and the hints ``indices_sorted`` and
``unique_indices`` handed to the scatters) is the pytree's auxiliary data; ``data`` and
``indices`` are its leaves, so ``grad`` differentiates the stored values, and the
derivative of ``fromdense`` lives on the sparsity pattern (zero elsewhere), as in JAX.

Everything is written with gathers and scatter-adds of spmdc.numpy: ``todense`` scatters
the values into zeros, ``sparse @ dense`` gathers the rows of the dense operand at the
column coordinates and scatter-adds the products into the output rows (a segment sum),
``dense @ sparse`` is the same through the transpose, and a sum over axes scatter-adds
into the remaining coordinates. spmdc's ``BCOO`` has only sparse dimensions: JAX's batch
and dense dimensions (``n_batch``, ``n_dense`` above 0) are not provided, so ``data`` must
be one-dimensional, and ``fromdense`` takes no ``n_batch``/``n_dense``.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core.tracing import where
from spmdc.errors import ConcretizationTypeError
from spmdc.tree_util import register_pytree_node_class

__all__ = ["BCOO", "bcoo_fromdense", "bcoo_todense"]


@register_pytree_node_class
class BCOO:
    """A sparse array from ``(data, indices)`` and its ``shape``. See Note [BCOO layout]."""

    def __init__(self, args: tuple[Any, Any], *, shape: Sequence[int],
                 indices_sorted: bool = False, unique_indices: bool = False):
        data, indices = args
        data, indices = jnp.asarray(data), jnp.asarray(indices)
        shape = tuple(operator.index(s) for s in shape)
        if not shape:
            raise ValueError(f"BCOO: the shape must have at least one dimension{where()}")
        if data.ndim != 1:
            raise ValueError(f"BCOO: data must be one-dimensional (nse,): spmdc's BCOO has no "
                             f"batch or dense dimensions; got data of shape {data.shape}"
                             f"{where()}")
        if indices.ndim != 2 or indices.shape != (data.shape[0], len(shape)):
            raise ValueError(f"BCOO: indices must have shape (nse, ndim) = "
                             f"({data.shape[0]}, {len(shape)}) for data of shape {data.shape} "
                             f"and shape {shape}; got {indices.shape}{where()}")
        if not jnp.issubdtype(indices.dtype, np.integer):
            raise TypeError(f"BCOO: indices must be integers, got {indices.dtype}{where()}")
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
        return out

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def nse(self) -> int:
        """The number of stored elements (padding included)."""
        return self.data.shape[0]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    n_batch = 0
    n_dense = 0
    # NumPy operands defer to BCOO's reflected operators (``u @ s`` with ``u`` a NumPy array)
    __array_ufunc__ = None

    @property
    def n_sparse(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        dims = ", ".join(map(str, self.shape))
        return f"BCOO({np.dtype(self.dtype).name}[{dims}], nse={self.nse})"

    def block_until_ready(self) -> BCOO:
        for leaf in (self.data, self.indices):
            if hasattr(leaf, "block_until_ready"):
                leaf.block_until_ready()
        return self

    # --- conversions ---------------------------------------------------------------------------

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None,
                  index_dtype: Any = np.int32) -> BCOO:
        """The non-zeros of ``mat``; ``nse`` (required under ``jit``) sets how many
        entries are stored: fewer drops the last non-zeros, more pads."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def todense(self) -> Any:
        """The dense array (duplicates added, padding dropped)."""
        return bcoo_todense(self)

    def astype(self, dtype: Any) -> BCOO:
        return BCOO((self.data.astype(dtype), self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    # --- structure -----------------------------------------------------------------------------

    def transpose(self, axes: Sequence[int] | None = None) -> BCOO:
        """The axes permuted (reversed by default): the coordinate columns reordered."""
        axes = tuple(reversed(range(self.ndim))) if axes is None else \
            tuple(operator.index(a) % self.ndim for a in axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"BCOO.transpose: axes {axes} are not a permutation of "
                             f"{tuple(range(self.ndim))}{where()}")
        indices = self.indices[:, np.asarray(axes, dtype=int)]
        return BCOO((self.data, indices), shape=tuple(self.shape[a] for a in axes),
                    unique_indices=self.unique_indices)

    @property
    def T(self) -> BCOO:                                 # noqa: N802  (NumPy's name)
        return self.transpose()

    def sum(self, axis: int | Sequence[int] | None = None) -> Any:
        """The sum over ``axis`` (all axes by default): a dense scalar for a full sum,
        else a ``BCOO`` over the remaining axes, as in JAX."""
        if axis is None:
            return jnp.sum(self.data * self._in_range())
        axes = (axis,) if isinstance(axis, int) else tuple(axis)
        axes = tuple(sorted({operator.index(a) % self.ndim for a in axes}))
        kept = [a for a in range(self.ndim) if a not in axes]
        sum_dtype = jnp.sum(jnp.zeros((1,), self.dtype)).dtype     # jnp.sum's promotion
        data = jnp.where(self._in_range(), self.data, 0).astype(sum_dtype)
        indices = self.indices[:, np.asarray(kept, dtype=int)]
        # padding stays out of range: its kept coordinates are the shape's
        return BCOO((data, indices), shape=tuple(self.shape[a] for a in kept))

    def _in_range(self) -> Any:
        return jnp.all((self.indices >= 0) & (self.indices < np.asarray(self.shape)), axis=1)

    # --- arithmetic ----------------------------------------------------------------------------

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, BCOO):
            other = other.todense()
        return _sparse_dense_matmul(self, jnp.asarray(other))

    def __rmatmul__(self, other: Any) -> Any:
        other = jnp.asarray(other)
        if other.ndim == 1:
            return _sparse_dense_matmul(self.T, other)
        if self.ndim == 1:
            return _sparse_dense_matmul(self, other.T)
        return _sparse_dense_matmul(self.T, other.T).T

    def __mul__(self, other: Any) -> BCOO:
        if np.ndim(other) != 0:
            raise TypeError(f"BCOO * operand: only a scalar multiplies a BCOO in spmdc "
                            f"(got shape {np.shape(other)}); use x.todense() * other"
                            f"{where()}")
        return BCOO((self.data * other, self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    __rmul__ = __mul__

    def __neg__(self) -> BCOO:
        return self * -1

    def __truediv__(self, other: Any) -> BCOO:
        if np.ndim(other) != 0:
            raise TypeError(f"BCOO / operand: only a scalar divides a BCOO in spmdc (got "
                            f"shape {np.shape(other)}); use x.todense() / other{where()}")
        return BCOO((self.data / other, self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)


def bcoo_todense(mat: BCOO) -> Any:
    """``mat`` as a dense array. See Note [BCOO layout]."""
    columns = tuple(mat.indices[:, i] for i in range(mat.ndim))
    if mat.dtype == np.bool_:       # duplicates combine by "or": count, then compare
        counts = jnp.zeros(mat.shape, np.int32).at[columns].add(
            mat.data.astype(np.int32), mode="drop")
        return counts > 0
    return jnp.zeros(mat.shape, mat.dtype).at[columns].add(
        mat.data, mode="drop", indices_are_sorted=mat.indices_sorted,
        unique_indices=mat.unique_indices)


def bcoo_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> BCOO:
    """The non-zeros of ``mat`` as a ``BCOO`` (``BCOO.fromdense``)."""
    mat = jnp.asarray(mat)
    if not mat.ndim:
        raise ValueError(f"BCOO.fromdense: mat must have at least one dimension{where()}")
    if nse is None:
        try:
            nse = int(jnp.count_nonzero(mat))
        except ConcretizationTypeError as error:
            raise ConcretizationTypeError(
                f"BCOO.fromdense: the number of stored elements depends on the values of the "
                f"array, which are not known inside jit; pass nse= (a Python int) to use "
                f"BCOO.fromdense in traced code{where()}") from error
    nse = operator.index(nse)
    coordinates = jnp.nonzero(mat, size=nse, fill_value=tuple(mat.shape))
    indices = jnp.stack(coordinates, axis=1).astype(index_dtype)
    data = mat.at[coordinates].get(mode="fill", fill_value=0)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def _sparse_dense_matmul(sparse: BCOO, dense: Any) -> Any:
    """``sparse @ dense`` for a 1-d or 2-d ``sparse``: gather the rows of ``dense`` at the
    column coordinates, scale them, scatter-add into the output rows."""
    if sparse.ndim not in (1, 2) or dense.ndim not in (1, 2):
        raise ValueError(f"BCOO @ array: spmdc multiplies 1-d or 2-d operands, got shapes "
                         f"{sparse.shape} and {dense.shape}{where()}")
    inner = sparse.shape[-1]
    if dense.shape[0] != inner:
        raise TypeError(f"dot_general requires contracting dimensions to have the same "
                        f"shape, got ({inner},) and ({dense.shape[0]},){where()}")
    dtype = jnp.result_type(sparse.data, dense)
    rows = dense.at[sparse.indices[:, -1]].get(mode="fill", fill_value=0)
    scaled = (sparse.data.reshape((-1,) + (1,) * (dense.ndim - 1)) * rows).astype(dtype)
    if sparse.ndim == 1:
        in_range = (sparse.indices[:, 0] >= 0) & (sparse.indices[:, 0] < inner)
        mask = in_range.reshape((-1,) + (1,) * (dense.ndim - 1))
        return jnp.sum(jnp.where(mask, scaled, 0), axis=0)
    out = jnp.zeros((sparse.shape[0],) + dense.shape[1:], dtype)
    # sorted coordinates (row-major) have sorted rows; unique ones need not have unique rows
    return out.at[sparse.indices[:, 0]].add(scaled, mode="drop",
                                            indices_are_sorted=sparse.indices_sorted)
