"""spmdc.interpreters: JAX's rule tables (``jax.interpreters.ad``, ``batching``, ``mlir``,
``partial_eval``), each an adapter onto the tables spmdc's passes own (Note [JAX's rule
tables] in spmdc/interpreters/tables.py), and JAX's compile options and compiled
primitives (``pxla``, ``xla``)."""
from . import ad, batching, mlir, partial_eval, pxla, xla  # noqa: F401  (the submodules)
