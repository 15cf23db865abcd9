"""``spmdc.scipy.optimize`` (JAX's ``jax.scipy.optimize``): ``minimize`` with BFGS and the
experimental L-BFGS, returning ``OptimizeResults``."""
from spmdc.scipy.optimize.minimize import OptimizeResults, minimize  # noqa: F401

__all__ = ["minimize", "OptimizeResults"]
