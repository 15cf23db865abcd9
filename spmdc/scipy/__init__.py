"""``spmdc.scipy``: SciPy's names on spmdc arrays (JAX's ``jax.scipy``): ``special``,
``stats``, ``linalg``, ``fft``, ``sparse.linalg``, ``optimize``, ``signal``, ``ndimage``."""
from spmdc.scipy import fft, linalg, ndimage, optimize, signal, sparse, special, stats  # noqa: F401
