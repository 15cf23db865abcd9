"""spmdc.extend: JAX's extension API (``jax.extend``) for library authors: defining a
primitive with its rules (``core``), and function-transformation plumbing
(``linear_util``)."""
from . import core, linear_util  # noqa: F401  (the submodules)
