"""spmdc.dtypes: dtype helpers under JAX's names (``jax.dtypes``)."""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from .core import dtypes as _dtypes
from .transforms.forward import float0

__all__ = ["bfloat16", "canonicalize_dtype", "finfo", "float0", "iinfo", "issubdtype",
           "itemsize_bits", "result_type", "scalar_type_of"]

bfloat16 = ml_dtypes.bfloat16
finfo = _dtypes.finfo
iinfo = _dtypes.iinfo
issubdtype = _dtypes.issubdtype


def canonicalize_dtype(dtype: Any) -> np.dtype:
    """The dtype spmdc computes in for ``dtype`` (64-bit types narrow without x64)."""
    return _dtypes.canonicalize(dtype)


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The promoted dtype of ``args`` under JAX's lattice (weak Python scalars included)."""
    dtype, weak = _dtypes.result_type(*args)
    return (dtype, weak) if return_weak_type_flag else dtype


def itemsize_bits(dtype: Any) -> int:
    return np.dtype(dtype).itemsize * 8


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float or complex) matching ``x``'s dtype."""
    dtype = _dtypes.dtype_and_weak(x)[0]
    if dtype == np.bool_:
        return bool
    if _dtypes.is_int(dtype):
        return int
    if _dtypes.is_complex(dtype):
        return complex
    return float
