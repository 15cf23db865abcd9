"""Functions of a float's bits: ``frexp``, ``nextafter``, ``spacing`` (with their JAX
semantics), written with bitcasts to the same-width integer type. XLA on CPU treats
subnormal operands of arithmetic and comparisons as zero, so for subnormal inputs these
follow XLA rather than NumPy (as JAX's do)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.tracing import where as _where
from .comparisons import where
from .core import asarray, result_type
from .shape_ops import broadcast_arrays
from .ufuncs import isinf, isnan, stop_gradient

__all__ = ["frexp", "nextafter", "spacing"]

_INT_OF_WIDTH = {2: np.int16, 4: np.int32, 8: np.int64}


def _bitcast(x: Any, dtype: Any) -> Any:
    return lax.bitcast_convert_type(x, np.dtype(dtype))


def _floats(op: str, *xs: Any) -> list[Any]:
    xs = [asarray(x) for x in xs]
    dtype = result_type(*xs)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    if np.dtype(dtype).kind == "c":
        raise TypeError(f"{op}: complex inputs are not supported{_where()}")
    return [x.astype(dtype) for x in xs]


def nextafter(x1: Any, x2: Any, /) -> Any:
    """The next representable float after ``x1`` towards ``x2`` (``x2`` if equal, NaN if
    either is NaN; from zero, the smallest subnormal with ``x2``'s sign)."""
    x, y = _floats("nextafter", x1, x2)
    x, y = broadcast_arrays(x, y)
    itype = _INT_OF_WIDTH[x.dtype.itemsize]
    bits = _bitcast(x, itype)
    step = where((y > x) == (x > 0), 1, -1).astype(itype)
    tiny = _bitcast(asarray(1, itype), x.dtype)           # the smallest subnormal
    moved = _bitcast(bits + step, x.dtype)
    from_zero = where(y > 0, tiny, -tiny)
    out = where(x == 0, from_zero, moved)
    out = where(x == y, y, out)
    return where(isnan(x) | isnan(y), x + y, out)


def spacing(x: Any, /) -> Any:
    """The distance from ``x`` to the next float away from zero (as JAX computes it)."""
    (x,) = _floats("spacing", x)
    inf = asarray(np.inf, x.dtype)
    if x.dtype == np.float16:
        return nextafter(x, inf) - x
    signed_inf = where(_signbit(x), -inf, inf)
    result = nextafter(x, signed_inf) - x
    tiny = _bitcast(asarray(1, _INT_OF_WIDTH[x.dtype.itemsize]), x.dtype)
    return where(result == 0, where(_signbit(x), -tiny, tiny), result)


def _signbit(x: Any) -> Any:
    return _bitcast(x, _INT_OF_WIDTH[x.dtype.itemsize]) < 0


def frexp(x: Any, /) -> tuple[Any, Any]:
    """``x`` as ``m * 2**e`` with ``0.5 <= |m| < 1`` (``m = x, e = 0`` for 0, inf, NaN);
    ``e`` is int32. The derivative of ``m`` is ``2**-e``, as in JAX."""
    (x,) = _floats("frexp", x)
    info = dtypes.finfo(x.dtype)                 # bfloat16 too (NumPy's finfo lacks it)
    itype = _INT_OF_WIDTH[x.dtype.itemsize]
    nmant, nexp, bias = int(info.nmant), int(info.nexp), 1 - int(info.minexp)
    subnormal = abs(x) < asarray(info.tiny, x.dtype)
    scaled = where(subnormal, x * asarray(2.0 ** nmant, x.dtype), x)
    e_shift = where(subnormal, -nmant, 0).astype(itype)
    bits = _bitcast(stop_gradient(scaled), itype)
    field = asarray((1 << nexp) - 1, itype)
    e = ((bits >> nmant) & field) - (bias - 1) + e_shift
    m_bits = (bits & ~(field << nmant)) | asarray((bias - 1) << nmant, itype)
    m = _bitcast(m_bits, x.dtype)
    special = isinf(x) | isnan(x) | (x == 0)
    e = where(special, 0, e).astype(np.int32)
    # m's derivative 2**-e, carried by a term that is exactly zero (two finite factors)
    half = (-e // 2).astype(x.dtype)
    carrier = ((x - stop_gradient(x)) * (2.0 ** half)) * (2.0 ** ((-e).astype(x.dtype) - half))
    return where(special, x, m + carrier), e
