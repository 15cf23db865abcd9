"""The format-independent functions of ``spmdc.experimental.sparse``: ``todense`` (any
sparse array, or a dense one unchanged), ``empty`` and ``eye`` in every format."""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core.tracing import where
from spmdc.experimental.sparse.base import JAXSparse
from spmdc.experimental.sparse.bcoo import BCOO, bcoo_fromdense
from spmdc.experimental.sparse.bcsr import BCSR
from spmdc.experimental.sparse.coo import COO
from spmdc.experimental.sparse.csr import CSC, CSR
from spmdc.experimental.sparse.util import split_shape

__all__ = ["todense", "empty", "eye"]


def todense(arr: Any) -> Any:
    """``arr`` as a dense array: a sparse array densified, anything else unchanged."""
    return arr.todense() if isinstance(arr, JAXSparse) else arr


def _empty_bcoo(shape: tuple[int, ...], dtype: Any, index_dtype: Any, n_dense: int = 0,
                n_batch: int = 0, nse: int = 0) -> BCOO:
    n_sparse = len(shape) - n_dense - n_batch
    if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
        raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, "
                         f"n_batch={n_batch}, nse={nse}{where()}")
    batch, sparse, dense = split_shape(shape, n_batch, n_dense)
    data = jnp.zeros((*batch, nse, *dense), dtype)
    indices = jnp.full((*batch, nse, n_sparse), np.asarray(sparse, index_dtype), index_dtype)
    return BCOO((data, indices), shape=shape, indices_sorted=True, unique_indices=True)


def _empty_bcsr(shape: tuple[int, ...], dtype: Any, index_dtype: Any, n_dense: int = 0,
                n_batch: int = 0, nse: int = 0) -> BCSR:
    if n_dense < 0 or n_batch < 0 or nse < 0:
        raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, "
                         f"n_batch={n_batch}, nse={nse}{where()}")
    if len(shape) - n_dense - n_batch != 2:
        raise ValueError(f"BCSR sparse.empty: must have 2 sparse dimensions{where()}")
    batch, sparse, dense = split_shape(shape, n_batch, n_dense)
    data = jnp.zeros((*batch, nse, *dense), dtype)
    indices = jnp.full((*batch, nse), sparse[1], index_dtype)
    indptr = jnp.zeros((*batch, sparse[0] + 1), index_dtype)
    return BCSR((data, indices, indptr), shape=shape, indices_sorted=True, unique_indices=True)


def _matrix(shape: tuple[int, ...], name: str) -> None:
    if len(shape) != 2:
        raise ValueError(f"{name} must have ndim=2; got shape={shape}{where()}")


def empty(shape: Sequence[int], dtype: Any = None, index_dtype: Any = "int32",
          sparse_format: str = "bcoo", **kwds: Any) -> JAXSparse:
    """A sparse array of ``shape`` with no stored values (or ``nse`` padding entries);
    ``n_batch``/``n_dense``/``nse`` keywords for ``bcoo`` and ``bcsr``."""
    shape = tuple(operator.index(s) for s in shape)
    dtype = jnp.dtype(dtype if dtype is not None else jnp.zeros(()).dtype)
    if sparse_format == "bcoo":
        return _empty_bcoo(shape, dtype, index_dtype, **kwds)
    if sparse_format == "bcsr":
        return _empty_bcsr(shape, dtype, index_dtype, **kwds)
    if sparse_format in ("coo", "csr", "csc"):
        if kwds:
            raise TypeError(f"sparse.empty: the {sparse_format} format takes no keywords "
                            f"{sorted(kwds)}{where()}")
        _matrix(shape, sparse_format.upper())
        data, index = jnp.zeros(0, dtype), jnp.zeros(0, index_dtype)
        if sparse_format == "coo":
            return COO((data, index, index), shape=shape, rows_sorted=True, cols_sorted=True)
        rows = shape[0] if sparse_format == "csr" else shape[1]
        indptr = jnp.zeros(rows + 1, index_dtype)
        cls = CSR if sparse_format == "csr" else CSC
        return cls((data, index, indptr), shape=shape)
    raise ValueError(f"sparse_format={sparse_format!r} not recognized; must be one of "
                     f"['bcsr', 'bcoo', 'coo', 'csr', 'csc']{where()}")


def eye(N: int, M: int | None = None, k: int = 0, dtype: Any = None,      # noqa: N803 (JAX's)
        index_dtype: Any = "int32", sparse_format: str = "bcoo", **kwds: Any) -> JAXSparse:
    """The ``N x M`` sparse matrix with ones on the ``k``-th diagonal."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    k = operator.index(k)
    dtype = jnp.dtype(dtype if dtype is not None else jnp.zeros(()).dtype)
    if sparse_format not in ("bcoo", "coo", "csr", "csc"):
        raise KeyError(sparse_format)
    diagonal = np.eye(n, m, k, dtype=bool)
    if sparse_format == "bcoo":
        n_batch, n_dense = kwds.pop("n_batch", 0), kwds.pop("n_dense", 0)
        if kwds:
            raise TypeError(f"sparse.eye: unexpected keywords {sorted(kwds)}{where()}")
        if 2 - n_batch - n_dense < 0 or n_batch < 0 or n_dense < 0:
            raise ValueError(f"Invalid inputs: shape={(n, m)}, n_dense={n_dense}, "
                             f"n_batch={n_batch}{where()}")
        if not diagonal.any():
            return _empty_bcoo((n, m), dtype, index_dtype, n_dense=n_dense, n_batch=n_batch)
        mask = diagonal.any(axis=tuple(range(2 - n_dense, 2))) if n_dense else diagonal
        nse = int(mask.reshape(mask.shape[:n_batch] + (-1,)).sum(-1).max())
        return bcoo_fromdense(jnp.eye(n, m, k, dtype=dtype), nse=nse, n_batch=n_batch,
                              n_dense=n_dense, index_dtype=index_dtype)
    if kwds:
        raise TypeError(f"sparse.eye: the {sparse_format} format takes no keywords "
                        f"{sorted(kwds)}{where()}")
    rows, cols = np.nonzero(diagonal)
    data = jnp.ones(len(rows), dtype)
    if sparse_format == "coo":
        return COO((data, rows.astype(index_dtype), cols.astype(index_dtype)), shape=(n, m),
                   rows_sorted=True, cols_sorted=True)
    if sparse_format == "csr":
        indptr = np.concatenate([[0], np.cumsum(diagonal.sum(1))]).astype(index_dtype)
        return CSR((data, cols.astype(index_dtype), indptr), shape=(n, m))
    indptr = np.concatenate([[0], np.cumsum(diagonal.sum(0))]).astype(index_dtype)
    return CSC((data, rows[np.argsort(cols, kind="stable")].astype(index_dtype), indptr),
               shape=(n, m))
