"""spmdc.interpreters: JAX's rule tables (``jax.interpreters.ad``, ``batching``, ``mlir``,
``partial_eval``), each an adapter onto the tables spmdc's passes own."""
