"""``spmdc.experimental.sparse.linalg``: ``spsolve``, the direct solve of a square CSR system,
and ``lobpcg_standard`` (lobpcg.py), the top eigenpairs of a symmetric operator.

On the CPU, JAX hands the CSR buffers to SciPy's ``spsolve`` (a host callback) and ignores
``tol`` and ``reorder`` there (they select cuSOLVER's QR options on GPU). spmdc solves the
densified matrix with an LU factorisation (``jnp.linalg.solve``), which differentiates
through both the values and the right-hand side; ``tol`` and ``reorder`` are checked as JAX
checks them and, as on JAX's CPU path, do not change the solve."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core.tracing import where
from spmdc.experimental.sparse.bcsr import BCSR
from spmdc.experimental.sparse.lobpcg import lobpcg_standard

__all__ = ["spsolve", "lobpcg_standard"]


def spsolve(data: Any, indices: Any, indptr: Any, b: Any, tol: float = 1e-6,
            reorder: int = 1) -> Any:
    """``x`` with ``A @ x = b`` for the square CSR matrix ``A = (data, indices, indptr)``."""
    data, indices, indptr, b = (jnp.asarray(a) for a in (data, indices, indptr, b))
    if data.dtype != b.dtype:
        raise ValueError(f"data types do not match: data.dtype={data.dtype} "
                         f"b.dtype={b.dtype}{where()}")
    if not (jnp.issubdtype(indices.dtype, np.integer)
            and jnp.issubdtype(indptr.dtype, np.integer)):
        raise ValueError(f"index arrays must be integer typed; got indices.dtype="
                         f"{indices.dtype} indptr.dtype={indptr.dtype}{where()}")
    if not data.ndim == indices.ndim == indptr.ndim == b.ndim == 1:
        raise ValueError(f"Arrays must be one-dimensional. Got data.shape={data.shape} "
                         f"indices.shape={indices.shape} indptr.shape={indptr.shape} "
                         f"b.shape={b.shape}{where()}")
    if indptr.size != b.size + 1 or data.shape != indices.shape:
        raise ValueError(f"Invalid CSR buffer sizes: data.shape={data.shape} indices.shape="
                         f"{indices.shape} indptr.shape={indptr.shape}{where()}")
    if reorder not in (0, 1, 2, 3):
        raise ValueError(f"reorder={reorder} not valid, must be one of [0, 1, 2, 3]{where()}")
    float(tol)
    matrix = BCSR((data, indices, indptr), shape=(b.size, b.size)).todense()
    return jnp.linalg.solve(matrix, b)
