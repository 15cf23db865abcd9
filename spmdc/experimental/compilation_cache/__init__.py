"""``jax.experimental.compilation_cache``: its ``compilation_cache`` module."""
