"""spmdc.extend: JAX's extension API (``jax.extend``) for library authors: defining a
primitive with its rules (``core``), function-transformation plumbing (``linear_util``),
StableHLO portable artifacts (``mlir``), the PJRT client (``backend``), passes over
XLA's HLO (``xla``), key building blocks (``random``), XLA's sharding protos
(``sharding``) and where operations come from (``source_info_util``, which also gives
jaxpr equations JAX's ``source_info``)."""
from . import (  # noqa: F401
    backend,
    core,
    linear_util,
    lowering,
    mlir,
    random,
    sharding,
    source_info_util,
    xla,
)
