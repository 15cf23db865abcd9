"""spmdc.extend: JAX's extension API (``jax.extend``) for library authors: defining a
primitive with its rules, reading and running jaxprs, linear_util, source info."""
