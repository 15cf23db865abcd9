"""``spmdc.scipy``: SciPy's names on spmdc arrays (JAX's ``jax.scipy``): ``special``,
``stats``, ``linalg``, ``fft``, ``sparse.linalg``, ``optimize``, ``signal``."""
from spmdc.scipy import fft, linalg, optimize, signal, sparse, special, stats  # noqa: F401
