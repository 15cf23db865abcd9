"""``jax._src.dtypes``: the names libraries read from JAX's private dtypes module
(Flax's fp8 ops subclass ``extended`` and ``ExtendedDType`` and annotate with ``DType``;
Equinox catches ``TypePromotionError``), each spmdc.dtypes' own object."""
from __future__ import annotations

import numpy as np

from ..dtypes import (
    ExtendedDType,
    TypePromotionError,
    bfloat16,
    canonicalize_dtype,
    extended,
    finfo,
    iinfo,
    issubdtype,
    prng_key,
    result_type,
)

DType = np.dtype

__all__ = ["DType", "ExtendedDType", "TypePromotionError", "bfloat16", "canonicalize_dtype",
           "extended", "finfo", "iinfo", "issubdtype", "prng_key", "result_type"]
