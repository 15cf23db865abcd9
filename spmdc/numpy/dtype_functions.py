"""Functions on dtypes and conversions between them: astype, copy, promote_types, can_cast,
isdtype, isrealobj, isscalar, iterable.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import where as _where
from .complex_ops import iscomplexobj
from .core import _is_array, asarray, check_flag, copied, result_type


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device: Any = None) -> Any:
    if device is not None:
        raise ValueError("astype: device= is not supported")
    check_flag("astype", "copy", copy)             # arrays are immutable: either way
    return asarray(x).astype(dtype)


def copy(a: Any, order: Any = None) -> Any:
    """``a`` as a new array, in a buffer of its own (Note [copies are new buffers] in
    numpy/core.py)."""
    if order not in (None, "K", "C"):
        raise ValueError(f"copy: order {order!r} is not supported")
    return copied(asarray(a))


def promote_types(a: Any, b: Any) -> np.dtype:
    """The dtype both promote to, by JAX's promotion table; the Python types ``int``,
    ``float`` and ``complex`` are weak, as in JAX (float16 with float is float16)."""
    def operand(t: Any) -> Any:
        return t if t in (builtins.int, builtins.float, builtins.complex) \
            else np.empty((), np.dtype(t))
    return result_type(operand(a), operand(b))


def can_cast(from_: Any, to: Any, casting: str = "safe") -> builtins.bool:
    from_ = from_.dtype if _is_array(from_) or isinstance(from_, np.ndarray) else from_
    return builtins.bool(np.can_cast(np.dtype(from_), np.dtype(to), casting))


def isrealobj(x: Any) -> builtins.bool:
    return not iscomplexobj(x)


def isscalar(element: Any) -> builtins.bool:
    """True for Python and NumPy scalars and 0-d arrays (JAX's definition)."""
    if _is_array(element):
        return element.ndim == 0
    return builtins.bool(np.isscalar(element)) or (isinstance(element, np.ndarray)
                                                    and element.ndim == 0)


_KINDS = {
    "bool": lambda d: d == np.bool_,
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: dtypes.is_float(d),
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iuc" or dtypes.is_float(d),
}


def isdtype(dtype: Any, kind: Any) -> bool:
    """The array API's isdtype: whether ``dtype`` is of ``kind`` (a name such as "integral"
    or "real floating", a dtype, or a tuple of those)."""
    d = np.dtype(dtypes.canonicalize(dtype)) if not isinstance(dtype, np.dtype) else dtype
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r}; use one of "
                                 f"{sorted(_KINDS)}, a dtype, or a tuple{_where()}")
            if _KINDS[k](d):
                return True
        elif np.dtype(k) == d:
            return True
    return False


def iterable(y: Any) -> bool:
    try:
        iter(y)
    except TypeError:
        return False
    return True
