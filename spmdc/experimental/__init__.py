"""``spmdc.experimental``: names JAX keeps under ``jax.experimental`` (``io_callback``,
``ode.odeint``, ``checkify``, the older ``shard_map``, ``pjit`` and ``mesh_utils``
modules)."""
from ..callbacks import io_callback
from .hitypes import cur_qdd

__all__ = ["io_callback", "cur_qdd"]
