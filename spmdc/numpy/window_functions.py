"""Window functions: bartlett, blackman, hamming, hanning, kaiser (NumPy's formulas,
computed in the default float type).

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from .array_creation import zeros
from .core import _iota, asarray, pi
from .float_ufuncs import i0
from .ufuncs import abs as jnp_abs
from .ufuncs import cos, sqrt


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
    return 1 - jnp_abs(n - half) / half


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


def kaiser(M: int, beta: Any) -> Any:
    """The Kaiser window of M points with shape parameter ``beta``."""
    n = _window("kaiser", M)
    if n is None or int(M) == 1:
        return _short(M)
    alpha = (int(M) - 1) / 2.0
    beta = asarray(beta).astype(dtypes.default_float())
    ratio = (n - alpha) / alpha
    return i0(beta * sqrt(1 - ratio * ratio)) / i0(beta)
