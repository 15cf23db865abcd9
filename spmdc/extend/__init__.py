"""spmdc.extend: JAX's extension API (``jax.extend``) for library authors: defining a
primitive with its rules (``core``), function-transformation plumbing (``linear_util``)
and StableHLO portable artifacts (``mlir``)."""
from . import core, linear_util, mlir  # noqa: F401  (the submodules)
