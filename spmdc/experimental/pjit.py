"""``jax.experimental.pjit``: the older name of jit with shardings (``pjit`` takes the
same arguments as ``spmdc.jit``)."""
from ..transforms.jit import jit as pjit

__all__ = ["pjit"]
