"""``spmdc.scipy``: SciPy's special functions and distributions on spmdc arrays (JAX's
``jax.scipy``): ``special`` and ``stats``."""
from spmdc.scipy import linalg, special, stats  # noqa: F401
