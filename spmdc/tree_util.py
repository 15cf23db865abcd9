"""spmdc.tree_util: pytrees (flatten, unflatten, map, paths), as jax.tree_util."""
from .core.tree import *  # noqa: F401,F403
from .core.tree import __all__  # noqa: F401
