"""``spmdc.scipy.sparse`` (JAX's ``jax.scipy.sparse``): the iterative solvers of
``linalg``."""
from spmdc.scipy.sparse import linalg  # noqa: F401
