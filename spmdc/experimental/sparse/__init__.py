"""``spmdc.experimental.sparse`` (JAX's ``jax.experimental.sparse``): the ``BCOO`` sparse
array with its sparse dimensions only, and the ``bcoo_fromdense``/``bcoo_todense``
conversions."""
from spmdc.experimental.sparse.bcoo import BCOO, bcoo_fromdense, bcoo_todense

__all__ = ["BCOO", "bcoo_fromdense", "bcoo_todense"]
