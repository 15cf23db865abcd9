"""``spmdc.scipy``: SciPy's names on spmdc arrays (JAX's ``jax.scipy``): ``special``,
``stats``, ``linalg``, ``fft``, ``sparse.linalg``."""
from spmdc.scipy import fft, linalg, sparse, special, stats  # noqa: F401
