"""The ``jax._src`` names that JAX's libraries read directly, each module mapping them to
spmdc's real objects (docs/ecosystem.md lists which library needs which, and why).
``xla_bridge``, ``distributed`` and ``tree_util`` are imported here because chex and Orbax
read them as attributes (``jax._src.xla_bridge._backends``,
``jax._src.distributed.global_state``, ``jax._src.tree_util.flatten_one_level``) without
importing them."""
from . import distributed, tree_util, xla_bridge  # noqa: F401  (read as attributes of jax._src)
