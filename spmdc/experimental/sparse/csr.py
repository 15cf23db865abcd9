"""``CSR`` and ``CSC``, JAX's legacy two-dimensional compressed formats, and
``csr_fromdense`` / ``csr_todense`` / ``csr_matvec`` / ``csr_matmat``. A CSR is the
unbatched BCSR layout with JAX's legacy padding (column 0, value 0, after ``indptr[-1]``);
a CSC is the CSR of the transpose. The arithmetic is BCOO's, through the BCSR expansion of
rows (Note [BCSR as compressed BCOO] in bcsr.py)."""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core.tracing import where
from spmdc.experimental.sparse.base import JAXSparse
from spmdc.experimental.sparse.bcoo import BCOO
from spmdc.experimental.sparse.bcoo_dot import bcoo_dot_general
from spmdc.experimental.sparse.bcsr import BCSR
from spmdc.experimental.sparse.coo import nonzero_coordinates
from spmdc.tree_util import register_pytree_node_class

__all__ = ["CSR", "CSC", "csr_fromdense", "csr_todense", "csr_matvec", "csr_matmat"]


class _Compressed(JAXSparse):
    """The buffers shared by CSR and CSC: ``data``, ``indices``, ``indptr``."""

    def __init__(self, args: tuple[Any, Any, Any], *, shape: Sequence[int]):
        self.data, self.indices, self.indptr = (jnp.asarray(a) for a in args)
        self.shape = tuple(operator.index(s) for s in shape)
        name = type(self).__name__
        if len(self.shape) != 2:
            raise ValueError(f"{name} must have ndim=2; got shape={self.shape}{where()}")
        if self.data.ndim != 1 or self.data.shape != self.indices.shape or \
                self.indptr.ndim != 1:
            raise ValueError(f"{name}: data and indices must be one-dimensional arrays of one "
                             f"length and indptr one-dimensional, got {self.data.shape}, "
                             f"{self.indices.shape}, {self.indptr.shape}{where()}")

    @property
    def nse(self) -> int:
        return self.data.shape[0]

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    def tree_flatten(self) -> tuple[tuple[Any, Any, Any], tuple[int, ...]]:
        return (self.data, self.indices, self.indptr), self.shape

    @classmethod
    def tree_unflatten(cls, aux_data: tuple[int, ...], children: Any) -> Any:
        out = cls.__new__(cls)
        out.data, out.indices, out.indptr = children
        out.shape = aux_data
        return out

    def _with(self, data: Any) -> Any:
        return type(self)((data, self.indices, self.indptr), shape=self.shape)

    def _rows_bcoo(self, shape: tuple[int, int]) -> BCOO:
        """The stored entries as a BCOO of ``shape`` (rows compressed in ``indptr``)."""
        return BCSR((self.data, self.indices, self.indptr), shape=shape).to_bcoo()

    def __matmul__(self, other: Any) -> Any:
        if isinstance(other, JAXSparse):
            raise NotImplementedError("matmul between two sparse objects.")
        other = jnp.asarray(other)
        if other.ndim not in (1, 2):
            raise NotImplementedError(f"matmul with object of shape {other.shape}")
        return self._product(other)


@register_pytree_node_class
class CSR(_Compressed):
    """A compressed-sparse-row matrix from ``(data, indices, indptr)``."""

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> CSR:
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    def todense(self) -> Any:
        return csr_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> CSC:
        _check_axes(self, axes)
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def _product(self, other: Any, transpose: bool = False) -> Any:
        contract = 0 if transpose else 1
        return bcoo_dot_general(self._rows_bcoo(self.shape), other,
                                dimension_numbers=(((contract,), (0,)), ((), ())))


@register_pytree_node_class
class CSC(_Compressed):
    """A compressed-sparse-column matrix: the CSR buffers of its transpose."""

    @classmethod
    def fromdense(cls, mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> CSC:
        return csr_fromdense(jnp.asarray(mat).T, nse=nse, index_dtype=index_dtype).T

    def todense(self) -> Any:
        return csr_todense(self.T).T

    def transpose(self, axes: Sequence[int] | None = None) -> CSR:
        _check_axes(self, axes)
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def _product(self, other: Any) -> Any:
        return self.T._product(other, transpose=True)


def _check_axes(mat: Any, axes: Sequence[int] | None) -> None:
    if axes is not None and tuple(axes) != (1, 0):
        raise ValueError(f"{type(mat).__name__}.transpose: a matrix's only axes permutation "
                         f"is (1, 0), got {tuple(axes)}{where()}")


def csr_fromdense(mat: Any, *, nse: int | None = None, index_dtype: Any = np.int32) -> CSR:
    """The non-zeros of a matrix as a CSR (``nse`` required under jit)."""
    mat = jnp.asarray(mat)
    _, data, row, col = nonzero_coordinates(mat, nse, "csr_fromdense")
    counts = jnp.sum(mat != 0, axis=1)
    indptr = jnp.concatenate([jnp.zeros(1, counts.dtype), jnp.cumsum(counts)])
    return CSR((data, col.astype(index_dtype), indptr.astype(index_dtype)), shape=mat.shape)


def csr_todense(mat: CSR) -> Any:
    """The dense matrix (duplicates added)."""
    return mat._rows_bcoo(mat.shape).todense()


def csr_matvec(mat: CSR, v: Any, transpose: bool = False) -> Any:
    """``mat @ v`` (``mat.T @ v`` with ``transpose``) for a dense vector ``v``."""
    v = jnp.asarray(v)
    if v.ndim != 1:
        raise ValueError(f"csr_matvec: v must be a vector, got shape {v.shape}{where()}")
    return mat._product(v, transpose)


def csr_matmat(mat: CSR, B: Any, *, transpose: bool = False) -> Any:     # noqa: N803 (JAX's)
    """``mat @ B`` (``mat.T @ B`` with ``transpose``) for a dense matrix ``B``."""
    B = jnp.asarray(B)                                                     # noqa: N806
    if B.ndim != 2:
        raise ValueError(f"csr_matmat: B must be a matrix, got shape {B.shape}{where()}")
    return mat._product(B, transpose)
