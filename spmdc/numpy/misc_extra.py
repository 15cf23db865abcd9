"""Small remaining pieces of spmdc.numpy, composed from the other modules: window
functions (bartlett, blackman, hamming, hanning, kaiser), i0, ldexp, bitwise_count,
geomspace, resize, piecewise, trim_zeros, iscomplex/isreal."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.tracing import Tracer
from .array_creation import zeros
from .comparisons import where
from .core import _iota, asarray, pi
from .shape_ops import ravel, reshape
from .ufuncs import abs, cos, exp, log, sqrt

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser", "i0", "ldexp",
           "bitwise_count", "geomspace", "resize", "piecewise", "trim_zeros"]


def _window(op: str, M: int) -> Any | None:
    """The sample positions 0..M-1 as floats, or None for M < 2 (handled by the caller)."""
    M = int(M)
    if M < 1:
        return None
    return _iota(dtypes.default_float(), (M,), 0)


def _short(M: int) -> Any:
    return asarray(np.ones((max(int(M), 0),), dtypes.default_float()))


def bartlett(M: int) -> Any:
    """The triangular window of M points."""
    n = _window("bartlett", M)
    if n is None or int(M) == 1:
        return _short(M)
    half = (int(M) - 1) / 2.0
    return 1 - abs(n - half) / half


def _cosine_window(M: int, *coefficients: float) -> Any:
    n = _window("window", M)
    if n is None or int(M) == 1:
        return _short(M)
    out = zeros((int(M),), dtypes.default_float())
    for k, c in enumerate(coefficients):
        out = out + ((-1) ** k) * c * cos(2 * pi * k * n / (int(M) - 1))
    return out


def blackman(M: int) -> Any:
    return _cosine_window(M, 0.42, 0.5, 0.08)


def hamming(M: int) -> Any:
    return _cosine_window(M, 0.54, 0.46)


def hanning(M: int) -> Any:
    return _cosine_window(M, 0.5, 0.5)


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind, order 0: ``exp(|x|) * i0e(x)``."""
    x = asarray(x)
    if x.dtype.kind in "biu":
        x = x.astype(dtypes.default_float())
    if x.dtype.kind == "c":
        raise TypeError("i0: complex arguments are not supported")
    return exp(abs(x)) * lax.bessel_i0e(x)


def kaiser(M: int, beta: Any) -> Any:
    """The Kaiser window of M points with shape parameter ``beta``."""
    n = _window("kaiser", M)
    if n is None or int(M) == 1:
        return _short(M)
    alpha = (int(M) - 1) / 2.0
    beta = asarray(beta).astype(dtypes.default_float())
    ratio = (n - alpha) / alpha
    return i0(beta * sqrt(1 - ratio * ratio)) / i0(beta)


def ldexp(x1: Any, x2: Any) -> Any:
    """``x1 * 2**x2`` for integer ``x2``."""
    x1, x2 = asarray(x1), asarray(x2)
    if x2.dtype.kind not in "iu":
        raise TypeError(f"ldexp: the exponent must be an integer array, got {x2.dtype}")
    if x1.dtype.kind in "biu":
        x1 = x1.astype(dtypes.default_float())
    from .ufuncs import power
    return x1 * power(np.asarray(2.0, x1.dtype), x2.astype(x1.dtype))


def bitwise_count(x: Any) -> Any:
    """The number of 1 bits in ``|x|`` (as NumPy 2: the sign is ignored), as uint8."""
    x = asarray(x)
    if x.dtype.kind not in "biu":
        raise TypeError(f"bitwise_count: needs an integer or boolean array, got {x.dtype}")
    if x.dtype == np.bool_:
        return x.astype(np.uint8)
    magnitude = abs(x) if x.dtype.kind == "i" else x
    count = lax.population_count(magnitude)
    return count.astype(np.uint8)


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> Any:
    """``num`` numbers spaced evenly on a log scale from ``start`` to ``stop`` (both of one
    sign, not zero)."""
    from .array_creation import linspace
    if axis != 0:
        raise ValueError("geomspace: only axis=0 is supported")
    start = asarray(start).astype(dtypes.default_float())
    stop = asarray(stop).astype(dtypes.default_float())
    if not isinstance(start, Tracer) and not isinstance(stop, Tracer):
        if float(start) == 0 or float(stop) == 0:
            raise ValueError("geomspace: start and stop must be non-zero")
    sign = where(start < 0, -1.0, 1.0).astype(start.dtype)
    out = sign * exp(linspace(log(abs(start)), log(abs(stop)), num, endpoint))
    if num > 0:               # the ends exactly, as NumPy returns them
        out = out.at[0].set(start)
        if endpoint and num > 1:
            out = out.at[-1].set(stop)
    return out if dtype is None else out.astype(dtype)


def resize(a: Any, new_shape: Any) -> Any:
    """``a`` flattened, repeated cyclically to fill ``new_shape``."""
    a = ravel(asarray(a))
    shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(s) for s in new_shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"resize: all elements of new_shape must be non-negative, got {shape}")
    size = int(np.prod(shape, dtype=np.int64))
    if a.shape[0] == 0 or size == 0:
        return zeros(shape, a.dtype)
    positions = np.arange(size) % a.shape[0]
    return reshape(a[asarray(positions.astype(dtypes.default_int()))], shape)


def piecewise(x: Any, condlist: Any, funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """``funclist[i](x)`` (or the constant ``funclist[i]``) where ``condlist[i]`` holds, the
    last condition winning; one extra function is the default where none holds."""
    x = asarray(x)
    conds = [asarray(c) for c in ([condlist] if asarray(condlist).ndim == x.ndim
                                  and not isinstance(condlist, (list, tuple)) else condlist)]
    if len(funclist) not in (len(conds), len(conds) + 1):
        raise ValueError(f"piecewise: {len(funclist)} functions for {len(conds)} conditions "
                         f"(give one per condition, plus an optional default)")

    def value(f: Callable[..., Any] | Any) -> Any:
        return asarray(f(x, *args, **kw) if callable(f) else f).astype(x.dtype)
    out = value(funclist[-1]) if len(funclist) == len(conds) + 1 else zeros(x.shape, x.dtype)
    out = out + zeros(x.shape, x.dtype)
    for cond, f in zip(conds, funclist[:len(conds)], strict=True):
        out = where(cond, value(f), out)
    return out


def trim_zeros(filt: Any, trim: str = "fb") -> Any:
    """``filt`` without its leading ('f') and/or trailing ('b') zeros; the result's length
    depends on the values, so ``filt`` must be concrete (not traced)."""
    if isinstance(filt, Tracer):
        raise TypeError("trim_zeros: the result's shape depends on the values of a traced "
                        "array; call it outside jit")
    values = np.asarray(filt)
    if values.ndim != 1:
        raise ValueError(f"trim_zeros: filt must be 1-d, got shape {values.shape}")
    nonzero = np.flatnonzero(values)
    if nonzero.size == 0:
        return asarray(values[:0])
    start = nonzero[0] if "f" in trim.lower() else 0
    stop = nonzero[-1] + 1 if "b" in trim.lower() else values.shape[0]
    return asarray(filt)[int(start):int(stop)]


__all__ += ["iscomplex", "isreal"]


def iscomplex(x: Any) -> Any:
    """Elementwise: whether the imaginary part is non-zero (False for real arrays)."""
    from .complex_ops import imag
    return imag(asarray(x)) != 0


def isreal(x: Any) -> Any:
    """Elementwise: whether the imaginary part is zero (True for real arrays)."""
    from .complex_ops import imag
    return imag(asarray(x)) == 0
