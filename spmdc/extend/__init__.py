"""spmdc.extend: JAX's extension API (``jax.extend``) for library authors: defining a
primitive with its rules (``core``), function-transformation plumbing (``linear_util``),
StableHLO portable artifacts (``mlir``) and the PJRT client (``backend``)."""
from . import backend, core, linear_util, lowering, mlir  # noqa: F401  (the submodules)
