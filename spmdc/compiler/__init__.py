"""The compiler: IR in, IR or StableHLO out. Imports nothing else from spmdc.

Importing it registers every primitive family (and with them their rules)."""
from . import builder, ir  # noqa: F401
from .primitives import (  # noqa: F401  (registration)
    attention_cudnn,  # noqa: F401  (registration)
    callbacks,  # noqa: F401  (registration)
    checks,  # noqa: F401  (registration)
    collectives,  # noqa: F401  (registration)
    collectives_nested,  # noqa: F401  (registration)
    complex_parts,  # noqa: F401  (registration)
    control_flow,  # noqa: F401  (registration)
    conv,  # noqa: F401  (registration)
    cumulative,  # noqa: F401  (registration)
    custom_batching,  # noqa: F401  (registration)
    custom_derivatives,  # noqa: F401  (registration)
    dynamic_slicing,  # noqa: F401  (registration)
    elementwise,
    ffi,  # noqa: F401  (registration)
    fft,  # noqa: F401  (registration)
    indexing,  # noqa: F401  (registration)
    linalg,  # noqa: F401  (registration)
    linalg_cuda,  # noqa: F401  (registration; it imports the LAPACK rules it wraps)
    linalg_decomp,  # noqa: F401  (registration)
    linalg_eig,  # noqa: F401  (registration)
    linalg_lapack,  # noqa: F401  (registration)
    linalg_svd_complex,  # noqa: F401  (registration: complex svd derivatives)
    misc,  # noqa: F401  (registration)
    reductions,
    remat,  # noqa: F401  (registration)
    scaled_matmul,  # noqa: F401  (registration)
    scan,  # noqa: F401  (registration)
    shard_map,  # noqa: F401  (registration)
    sharding,  # noqa: F401  (registration)
    sorting,  # noqa: F401  (registration)
    special,  # noqa: F401  (registration)
    structural,
    windowed,  # noqa: F401  (registration)
    windowed_select,  # noqa: F401  (registration)
)
from .primitives.core import registry  # noqa: F401
