"""spmdc.extend: JAX's extension API (``jax.extend``) for library authors: defining a
primitive with its rules (``core``), function-transformation plumbing (``linear_util``),
StableHLO portable artifacts (``mlir``), the PJRT client (``backend``) and passes over
XLA's HLO (``xla``)."""
from . import backend, core, linear_util, lowering, mlir, xla  # noqa: F401  (the submodules)
