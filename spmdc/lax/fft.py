"""``lax.fft`` and ``lax.FftType``: the FFT primitive (compiler/primitives/fft.py) with
JAX's conversions (spmdc.numpy.fft.transform): RFFT takes a real operand (integers
become floats), the others a complex one (real operands become complex)."""
from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import Any

from ..core.tracing import where
from ..numpy.fft import transform

__all__ = ["FftType", "fft"]


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
