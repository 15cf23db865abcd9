"""``jax._src.state``: the types of JAX's mutable array references, on spmdc's refs
(spmdc/core/refs.py; Note [refs as threaded state] there)."""
from . import primitives, types  # noqa: F401  (read as attributes of jax._src.state)
from .types import AbstractRef

__all__ = ["AbstractRef"]
