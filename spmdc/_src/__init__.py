"""The ``jax._src`` names that JAX's libraries read directly, each module mapping them to
spmdc's real objects (docs/ecosystem.md lists which library needs which, and why)."""
