"""``lax.fft`` and ``lax.FftType``: the FFT primitive (compiler/primitives/fft.py) with
JAX's conversions (``transform``, which spmdc.numpy.fft composes): RFFT takes a real
operand (integers become floats), the others a complex one (real operands become
complex)."""
from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.primitives.fft import fft_p
from ..core import dtypes
from ..core.operands import asarray
from ..core.tracing import bind, where

__all__ = ["FftType", "fft"]


def transform(x: Any, fft_type: str, lengths: tuple[int, ...]) -> Any:
    """The FFT primitive of ``fft_type`` ("FFT", "IFFT", "RFFT", "IRFFT") over the
    trailing ``len(lengths)`` (at most 3) dimensions, after JAX's conversions of ``x``:
    RFFT takes a real operand (integers become the default float), the others a complex
    one (``fft`` below, after checking its arguments)."""
    x = asarray(x)
    if fft_type == "RFFT":
        if x.dtype.kind == "c":
            raise ValueError(f"rfft: the input must be real, got {x.dtype}{where()}")
        if not dtypes.is_inexact(x.dtype):
            x = x.astype(dtypes.default_float())
    elif x.dtype.kind != "c":
        x = x.astype(np.complex128 if x.dtype == np.float64 else
                     np.complex64 if dtypes.is_float(x.dtype) else dtypes.default_complex())
    if not lengths:
        return x
    return bind(fft_p, x, fft_type=fft_type, fft_lengths=tuple(lengths))


class FftType(enum.IntEnum):
    """Which transform ``lax.fft`` computes."""
    FFT = 0       # complex to complex
    IFFT = 1      # its inverse
    RFFT = 2      # real to complex (half the spectrum)
    IRFFT = 3     # its inverse, complex to real


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """The ``fft_type`` transform of ``x`` over its trailing ``len(fft_lengths)`` (at
    most 3) dimensions; IRFFT's output has ``fft_lengths`` as its trailing shape."""
    if isinstance(fft_type, str) and fft_type.upper() in FftType.__members__:
        fft_type = FftType[fft_type.upper()]
    if not isinstance(fft_type, FftType):
        raise ValueError(f"lax.fft: unknown fft_type {fft_type!r}; use an FftType or one "
                         f"of 'fft', 'ifft', 'rfft', 'irfft'{where()}")
    try:
        lengths = tuple(operator.index(n) for n in fft_lengths)
    except TypeError:
        raise TypeError(f"lax.fft: fft_lengths must be a sequence of ints, got "
                        f"{fft_lengths!r}{where()}") from None
    if len(lengths) > 3:
        raise ValueError(f"lax.fft: at most 3 fft_lengths, got {lengths}{where()}; "
                         "jnp.fft.fftn transforms more axes")
    return transform(x, fft_type.name, lengths)
