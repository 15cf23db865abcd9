"""``COO``, JAX's legacy two-dimensional coordinate format (``data``, ``row``, ``col``), and
``coo_fromdense`` / ``coo_todense`` / ``coo_matvec`` / ``coo_matmat``. The arithmetic is
BCOO's (a COO is a BCOO whose coordinate columns are kept apart); only the layout is
COO's: as in JAX, ``fromdense`` pads with entries at ``(0, 0)`` holding 0."""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core.tracing import where
from spmdc.errors import ConcretizationTypeError
from spmdc.experimental.sparse.base import JAXSparse
from spmdc.experimental.sparse.bcoo import BCOO
from spmdc.experimental.sparse.bcoo_dot import bcoo_dot_general
from spmdc.tree_util import register_pytree_node_class

__all__ = ["COO", "coo_fromdense", "coo_todense", "coo_matvec", "coo_matmat",
           "nonzero_coordinates"]


@register_pytree_node_class
class COO(JAXSparse):
    """A two-dimensional sparse matrix from ``(data, row, col)`` and its ``shape``."""

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int],
                 rows_sorted: bool = False, cols_sorted: bool = False):
        self.data, self.row, self.col = (jnp.asarray(a) for a in args)
        self.shape = tuple(operator.index(s) for s in shape)
        if len(self.shape) != 2:
            raise ValueError(f"COO must have ndim=2; got shape={self.shape}{where()}")
        if not self.data.shape == self.row.shape == self.col.shape or self.data.ndim != 1:
            raise ValueError(f"COO: data, row and col must be one-dimensional arrays of one "
                             f"length, got {self.data.shape}, {self.row.shape}, "
                             f"{self.col.shape}{where()}")
        self._rows_sorted, self._cols_sorted = rows_sorted, cols_sorted

    @property
    def nse(self) -> int:
        return self.data.shape[0]

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    def tree_flatten(self) -> tuple[tuple[Any, Any, Any], tuple[tuple[int, ...], bool, bool]]:
        return (self.data, self.row, self.col), (self.shape, self._rows_sorted,
                                                 self._cols_sorted)

    @classmethod
    def tree_unflatten(cls, aux_data: tuple[tuple[int, ...], bool, bool], children: Any) -> COO:
        out = cls.__new__(cls)
        out.data, out.row, out.col = children
        out.shape, out._rows_sorted, out._cols_sorted = aux_data
        return out

    def _with(self, data: Any) -> COO:
        return COO((data, self.row, self.col), shape=self.shape, rows_sorted=self._rows_sorted,
                   cols_sorted=self._cols_sorted)

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> COO:
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def _bcoo(self) -> BCOO:
        return BCOO((self.data, jnp.stack([self.row, self.col], axis=1)), shape=self.shape)

    def todense(self) -> Any:
        return coo_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> COO:
        if axes is not None and tuple(axes) != (1, 0):
            raise ValueError(f"COO.transpose: a matrix's only axes permutation is (1, 0), "
                             f"got {tuple(axes)}{where()}")
        return COO((self.data, self.col, self.row), shape=self.shape[::-1],
                   rows_sorted=self._cols_sorted, cols_sorted=self._rows_sorted)

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = jnp.asarray(other)
        if other.ndim == 1:
            return coo_matvec(self, other)
        if other.ndim == 2:
            return coo_matmat(self, other)
        raise NotImplementedError(f"matmul with object of shape {other.shape}")


def nonzero_coordinates(mat: Any, nse: int | None, name: str) -> tuple[int, Any, Any, Any]:
    """``nse`` and the first ``nse`` non-zeros of a matrix in row-major order (padding at
    ``(0, 0)`` with value 0, JAX's legacy layout): ``(nse, data, row, col)``."""
    mat = jnp.asarray(mat)
    if mat.ndim != 2:
        raise ValueError(f"{name}: mat must be two-dimensional, got shape {mat.shape}"
                         f"{where()}")
    if nse is None:
        try:
            nse = int(jnp.count_nonzero(mat))
        except ConcretizationTypeError as error:
            raise ConcretizationTypeError(
                f"{name}: the number of stored elements depends on the values of the matrix, "
                f"which are not known inside jit; pass nse= (a Python int){where()}") from error
    nse = operator.index(nse)
    row, col = jnp.nonzero(mat, size=nse)
    true_nonzeros = jnp.arange(nse) < jnp.count_nonzero(mat)
    data = jnp.where(true_nonzeros, mat[row, col], 0)
    return nse, data, row, col


def coo_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> COO:
    """The non-zeros of a matrix as a COO (``nse`` required under jit)."""
    _, data, row, col = nonzero_coordinates(mat, nse, "coo_fromdense")
    return COO((data, row.astype(index_dtype), col.astype(index_dtype)),
               shape=jnp.shape(mat), rows_sorted=True)


def coo_todense(mat: COO) -> Any:
    """The dense matrix (duplicates added)."""
    return mat._bcoo().todense()


def coo_matvec(mat: COO, v: Any, transpose: bool = False) -> Any:
    """``mat @ v`` (``mat.T @ v`` with ``transpose``) for a dense vector ``v``."""
    v = jnp.asarray(v)
    if v.ndim != 1:
        raise ValueError(f"coo_matvec: v must be a vector, got shape {v.shape}{where()}")
    return _product(mat, v, transpose)


def coo_matmat(mat: COO, B: Any, *, transpose: bool = False) -> Any:     # noqa: N803 (JAX's)
    """``mat @ B`` (``mat.T @ B`` with ``transpose``) for a dense matrix ``B``."""
    B = jnp.asarray(B)                                                     # noqa: N806
    if B.ndim != 2:
        raise ValueError(f"coo_matmat: B must be a matrix, got shape {B.shape}{where()}")
    return _product(mat, B, transpose)


def _product(mat: COO, other: Any, transpose: bool) -> Any:
    sparse = mat._bcoo()
    contract = 0 if transpose else 1
    return bcoo_dot_general(sparse, other, dimension_numbers=(((contract,), (0,)), ((), ())))
