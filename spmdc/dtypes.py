"""spmdc.dtypes: dtype helpers under JAX's names (``jax.dtypes``), with JAX's classes for
extended dtypes.

Note [extended dtypes]
~~~~~~~~~~~~~~~~~~~~~~
JAX gives values that are not plain numbers (PRNG keys, Flax's fp8 metadata) an
*extended* dtype: an ``ExtendedDType`` instance whose ``type`` is a subclass of the
abstract scalar class ``extended`` (``prng_key`` for keys), so that
``issubdtype(key.dtype, dtypes.extended)`` holds. spmdc's IR has no extended dtypes (a
typed key is a Python object around its uint32 data, Note [typed keys] in
random/keys.py), but the classes are real: spmdc's key dtype is an ``ExtendedDType`` of
type ``prng_key``, libraries subclass them at import, and ``issubdtype`` and
``canonicalize_dtype`` treat them as JAX's do.
"""
from __future__ import annotations

import abc
from typing import Any

import ml_dtypes
import numpy as np

from .core import dtypes as _dtypes
from .core.abstract import extended_dtype_classes
from .errors import TypePromotionError
from .transforms.forward import float0

__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo",
           "float0", "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type",
           "scalar_type_of"]

bfloat16 = ml_dtypes.bfloat16
finfo = _dtypes.finfo
iinfo = _dtypes.iinfo


class extended(np.generic):         # noqa: N801  (JAX's name)
    """The abstract scalar class of extended dtypes, for ``issubdtype`` (never
    instantiated). See Note [extended dtypes]."""


class prng_key(extended):           # noqa: N801
    """The abstract scalar class of PRNG key dtypes, for ``issubdtype``."""


class ExtendedDType(abc.ABC):
    """The base of extended dtypes: ``type`` is the scalar class (a subclass of
    ``extended``); ``_rules`` holds a library's rules for it."""
    _rules: Any = None

    @property
    @abc.abstractmethod
    def type(self) -> type: ...



extended_dtype_classes.append(ExtendedDType)   # a ShapedArray may have one


def issubdtype(a: Any, b: Any) -> bool:
    """``np.issubdtype`` knowing bfloat16 is floating and extended dtypes' classes."""
    a_extended, b_extended = isinstance(a, ExtendedDType), isinstance(b, ExtendedDType)
    if a_extended or b_extended:
        if a_extended and b_extended:
            return a == b
        return a_extended and isinstance(b, type) and issubclass(a.type, b)
    if isinstance(b, type) and issubclass(b, extended):
        return isinstance(a, type) and issubclass(a, b)
    return _dtypes.issubdtype(a, b)


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> Any:
    """The dtype spmdc computes in for ``dtype`` (64-bit types narrow without x64); an
    extended dtype is its own, where ``allow_extended_dtype`` says it may come."""
    if isinstance(dtype, ExtendedDType):
        if not allow_extended_dtype:
            raise ValueError(f"canonicalize_dtype got the extended dtype {dtype}; pass "
                             "allow_extended_dtype=True where one may come")
        return dtype
    return _dtypes.canonicalize(dtype)


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The promoted dtype of ``args`` under JAX's lattice (weak Python scalars included)."""
    dtype, weak = _dtypes.result_type(*args)
    return (dtype, weak) if return_weak_type_flag else dtype


def itemsize_bits(dtype: Any) -> int:
    """The size of one element of ``dtype`` in bits (4 for int4 and float4_e2m1fn, 2 for
    int2: their width, not NumPy's one byte of storage)."""
    d = np.dtype(dtype)
    if d in _dtypes.NARROW_INTS:
        return ml_dtypes.iinfo(d).bits
    if d in _dtypes.NARROW_FLOATS:
        return ml_dtypes.finfo(d).bits
    return d.itemsize * 8


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
