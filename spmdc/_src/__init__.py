"""The ``jax._src`` names that JAX's libraries read directly, each module mapping them to
spmdc's real objects (docs/ecosystem.md lists which library needs which, and why).
``xla_bridge`` is imported here because chex reads it as an attribute
(``jax._src.xla_bridge._backends``) without importing it."""
from . import xla_bridge  # noqa: F401  (read as an attribute of jax._src)
