"""``spmdc.scipy``: SciPy's names on spmdc arrays (JAX's ``jax.scipy``): ``special``,
``stats``, ``linalg``, ``fft``, ``sparse.linalg``, ``optimize``, ``signal``, ``ndimage``,
``integrate``, ``cluster.vq``."""
from spmdc.scipy import (  # noqa: F401
    cluster,
    fft,
    integrate,
    linalg,
    ndimage,
    optimize,
    signal,
    sparse,
    special,
    stats,
)
