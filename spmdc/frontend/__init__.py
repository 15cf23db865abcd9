"""The frontend: what user code touches (tracing, transformations, pytrees, dtypes, jnp)."""
