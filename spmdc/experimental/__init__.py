"""``spmdc.experimental``: names JAX keeps under ``jax.experimental`` (``io_callback``,
``ode.odeint``, the older ``shard_map``, ``pjit`` and ``mesh_utils`` modules)."""
from ..callbacks import io_callback

__all__ = ["io_callback"]
