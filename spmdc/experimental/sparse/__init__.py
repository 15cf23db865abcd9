"""``spmdc.experimental.sparse`` (JAX's ``jax.experimental.sparse``): the ``BCOO`` and
``BCSR`` sparse arrays with their ``bcoo_*``/``bcsr_*`` functions, the legacy ``COO``,
``CSR`` and ``CSC`` formats, ``sparsify``, the sparse-aware ``grad`` family,
``random_bcoo``, ``empty``/``eye``/``todense``, and ``linalg.spsolve``. Everything is
composed from spmdc.numpy and lax (gathers, scatter-adds, sorts), so it runs under jit,
grad and vmap of its buffers like any other spmdc code."""
from spmdc.experimental.sparse import ad, api, bcoo, bcsr, coo, csr, linalg, random, transform, util
from spmdc.experimental.sparse.ad import grad, jacfwd, jacobian, jacrev, value_and_grad
from spmdc.experimental.sparse.api import empty, eye, todense
from spmdc.experimental.sparse.base import JAXSparse
from spmdc.experimental.sparse.bcoo import (
                                       BCOO,
                                       bcoo_extract,
                                       bcoo_fromdense,
                                       bcoo_reduce_sum,
                                       bcoo_sort_indices,
                                       bcoo_sum_duplicates,
                                       bcoo_todense,
                                       bcoo_transpose,
)
from spmdc.experimental.sparse.bcoo_conv import bcoo_conv_general_dilated
from spmdc.experimental.sparse.bcoo_dot import (
                                       bcoo_dot_general,
                                       bcoo_dot_general_sampled,
                                       bcoo_multiply_dense,
                                       bcoo_multiply_sparse,
)
from spmdc.experimental.sparse.bcoo_gather import bcoo_gather
from spmdc.experimental.sparse.bcoo_structure import (
                                       bcoo_broadcast_in_dim,
                                       bcoo_concatenate,
                                       bcoo_dynamic_slice,
                                       bcoo_reshape,
                                       bcoo_rev,
                                       bcoo_slice,
                                       bcoo_squeeze,
                                       bcoo_update_layout,
)
from spmdc.experimental.sparse.bcsr import (
                                       BCSR,
                                       bcsr_broadcast_in_dim,
                                       bcsr_concatenate,
                                       bcsr_dot_general,
                                       bcsr_extract,
                                       bcsr_fromdense,
                                       bcsr_sum_duplicates,
                                       bcsr_todense,
)
from spmdc.experimental.sparse.coo import COO, coo_fromdense, coo_matmat, coo_matvec, coo_todense
from spmdc.experimental.sparse.csr import (
                                       CSC,
                                       CSR,
                                       csr_fromdense,
                                       csr_matmat,
                                       csr_matvec,
                                       csr_todense,
)
from spmdc.experimental.sparse.random import random_bcoo
from spmdc.experimental.sparse.transform import sparsify
from spmdc.experimental.sparse.util import (
                                       CuSparseEfficiencyWarning,
                                       SparseEfficiencyError,
                                       SparseEfficiencyWarning,
)

__all__ = [
    "BCOO", "BCSR", "COO", "CSC", "CSR", "JAXSparse",
    "CuSparseEfficiencyWarning", "SparseEfficiencyError", "SparseEfficiencyWarning",
    "ad", "api", "bcoo", "bcsr", "coo", "csr", "linalg", "random", "transform", "util",
    "bcoo_broadcast_in_dim", "bcoo_concatenate", "bcoo_conv_general_dilated", "bcoo_dot_general",
    "bcoo_dot_general_sampled", "bcoo_dynamic_slice", "bcoo_extract", "bcoo_fromdense",
    "bcoo_gather",
    "bcoo_multiply_dense", "bcoo_multiply_sparse", "bcoo_reduce_sum", "bcoo_reshape",
    "bcoo_rev", "bcoo_slice", "bcoo_sort_indices", "bcoo_squeeze", "bcoo_sum_duplicates",
    "bcoo_todense", "bcoo_transpose", "bcoo_update_layout",
    "bcsr_broadcast_in_dim", "bcsr_concatenate", "bcsr_dot_general", "bcsr_extract",
    "bcsr_fromdense", "bcsr_sum_duplicates", "bcsr_todense",
    "coo_fromdense", "coo_matmat", "coo_matvec", "coo_todense",
    "csr_fromdense", "csr_matmat", "csr_matvec", "csr_todense",
    "empty", "eye", "todense", "grad", "value_and_grad", "jacfwd", "jacrev", "jacobian",
    "random_bcoo", "sparsify",
]
