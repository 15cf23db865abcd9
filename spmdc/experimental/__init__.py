"""``spmdc.experimental``: names JAX keeps under ``jax.experimental``."""
from ..callbacks import io_callback

__all__ = ["io_callback"]
