"""Complex parts: real, imag, conj/conjugate, angle, iscomplexobj (the primitives and
their derivatives are in compiler/primitives/complex_parts.py; see Note [complex
derivatives] there)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from .array_creation import zeros_like
from .core import asarray
from .ufuncs import arctan2

__all__ = ["real", "imag", "conj", "conjugate", "angle", "iscomplexobj"]


def _is_complex(x: Any) -> bool:
    return np.dtype(x.dtype).kind == "c"


def real(val: Any) -> Any:
    """The real part (a real input is returned as it is)."""
    x = asarray(val)
    return lax.real(x) if _is_complex(x) else x


def imag(val: Any) -> Any:
    """The imaginary part (zeros for a real input)."""
    x = asarray(val)
    return lax.imag(x) if _is_complex(x) else zeros_like(x)


def conj(x: Any) -> Any:
    """The complex conjugate (a real input is returned as it is)."""
    x = asarray(x)
    return lax.conj(x) if _is_complex(x) else x


conjugate = conj


def angle(z: Any, deg: bool = False) -> Any:
    """The argument of ``z`` in radians (degrees with ``deg``), as ``arctan2(imag, real)``."""
    z = asarray(z)
    if not _is_complex(z) and z.dtype.kind != "f":
        z = z.astype(np.float32)
    out = arctan2(imag(z), real(z))
    return out * (180.0 / np.pi) if deg else out


def iscomplexobj(x: Any) -> bool:
    """Whether ``x`` has a complex dtype (its values are not looked at). A scalar type
    (``jnp.complex64``, spmdc's being NumPy's class) is the dtype it names, as JAX's
    scalar types are: their class ``dtype`` is a descriptor, not a dtype."""
    if isinstance(x, type) and issubclass(x, np.generic):
        return np.dtype(x).kind == "c"
    dtype = getattr(x, "dtype", None)
    return np.dtype(dtype if dtype is not None else np.asarray(x).dtype).kind == "c"
