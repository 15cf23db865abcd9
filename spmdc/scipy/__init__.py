"""``spmdc.scipy``: SciPy's names on spmdc arrays (JAX's ``jax.scipy``): ``special``,
``stats``, ``linalg``, ``fft``."""
from spmdc.scipy import fft, linalg, special, stats  # noqa: F401
