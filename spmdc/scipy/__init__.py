"""``spmdc.scipy``: SciPy's names on spmdc arrays (JAX's ``jax.scipy``): ``special``,
``stats``, ``linalg``, ``fft``, ``sparse.linalg``, ``optimize``, ``signal``, ``ndimage``,
``integrate``, ``interpolate``, ``cluster.vq``, ``spatial.transform``."""
from spmdc.scipy import (  # noqa: F401
    cluster,
    fft,
    integrate,
    interpolate,
    linalg,
    ndimage,
    optimize,
    signal,
    sparse,
    spatial,
    special,
    stats,
)
