"""spmdc.extend: JAX's extension API (``jax.extend``) for library authors: defining a
primitive with its rules (``core``), function-transformation plumbing (``linear_util``),
StableHLO portable artifacts (``mlir``), the PJRT client (``backend``), passes over
XLA's HLO (``xla``), key building blocks (``random``) and XLA's sharding protos
(``sharding``)."""
from . import backend, core, linear_util, lowering, mlir, random, sharding, xla  # noqa: F401
