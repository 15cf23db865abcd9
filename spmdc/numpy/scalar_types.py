"""``jnp.float32``, ``jnp.bool_`` and the other scalar types, as JAX has them.

Note [jnp scalar types]
~~~~~~~~~~~~~~~~~~~~~~~
JAX's ``jnp.float32`` is not NumPy's: it is a class (of the metaclass ``_ScalarMeta``)
standing for the dtype, so that ``jnp.float32.dtype`` is ``dtype('float32')`` (Equinox's
abstract evaluation rules build ``ShapedArray((), jnp.bool_.dtype)``), and calling it
makes an spmdc array (``jnp.float32(x)`` of a traced value is a traced value; NumPy's
would try to read it). It still compares and hashes as NumPy's type (``jnp.float32 ==
np.float32``, a dict keyed by NumPy's types finds it), NumPy reads it as its dtype
(``np.dtype(jnp.float32)``, through ``__numpy_dtype__`` or ``.dtype``), and
``isinstance(x, jnp.float32)`` is ``isinstance(x, np.float32)``. It is not an array:
``jnp.asarray(jnp.float32)`` is a TypeError, as in JAX. The abstract scalar classes
(``jnp.floating``, ``jnp.integer``, ...) are NumPy's, as in JAX.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

__all__ = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "bfloat16", "complex64", "complex128",
           "int2", "int4", "uint2", "uint4", "float4_e2m1fn", "float8_e3m4", "float8_e4m3",
           "float8_e8m0fnu", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
           "float8_e5m2", "float8_e5m2fnuz"]


class _ScalarMeta(type):
    """The metaclass of jnp's scalar types (Note [jnp scalar types])."""
    dtype: np.dtype

    @property
    def __numpy_dtype__(cls) -> np.dtype:
        return cls.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: Any) -> bool:
        return not cls == other

    def __call__(cls, x: Any) -> Any:
        from .core import asarray
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)


def _scalar_type(np_type: type) -> _ScalarMeta:
    name = np.dtype(np_type).name if np_type is not np.bool_ else "bool_"
    t = _ScalarMeta(name, (object,), {"dtype": np.dtype(np_type)})
    t.__module__ = "spmdc.numpy"
    t.__doc__ = (f"A scalar constructor of type {name}: spmdc, as JAX, represents scalars "
                 "as zero-dimensional arrays.")
    return t


bool_ = _scalar_type(np.bool_)
int8, int16, int32, int64 = map(_scalar_type, (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = map(_scalar_type, (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = map(_scalar_type, (np.float16, np.float32, np.float64))
bfloat16 = _scalar_type(ml_dtypes.bfloat16)
complex64, complex128 = map(_scalar_type, (np.complex64, np.complex128))
# The narrow types (Note [narrow dtypes] in core/dtypes.py).
int2, int4, uint2, uint4 = map(_scalar_type, (ml_dtypes.int2, ml_dtypes.int4, ml_dtypes.uint2,
                                              ml_dtypes.uint4))
float4_e2m1fn = _scalar_type(ml_dtypes.float4_e2m1fn)
float8_e3m4, float8_e4m3, float8_e8m0fnu, float8_e4m3b11fnuz = map(_scalar_type, (
    ml_dtypes.float8_e3m4, ml_dtypes.float8_e4m3, ml_dtypes.float8_e8m0fnu,
    ml_dtypes.float8_e4m3b11fnuz))
float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz = map(_scalar_type, (
    ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2,
    ml_dtypes.float8_e5m2fnuz))
