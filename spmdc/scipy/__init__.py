"""``spmdc.scipy``: SciPy's names on spmdc arrays (JAX's ``jax.scipy``): ``special``,
``stats``, ``linalg``, ``fft``, ``sparse.linalg``, ``optimize``."""
from spmdc.scipy import fft, linalg, optimize, sparse, special, stats  # noqa: F401
