"""lax.real, lax.imag, lax.conj, lax.complex (Note [complex derivatives] in
compiler/primitives/complex_parts.py)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiler.primitives.complex_parts import complex_dtype, complex_p, conj_p, imag_p, real_p
from ..core.operands import asarray
from ..core.tracing import bind

__all__ = ["real", "imag", "conj", "complex"]


def _complex_operand(op: str, x: Any) -> Any:
    x = asarray(x)
    if np.dtype(x.dtype).kind != "c":
        raise TypeError(f"lax.{op} requires a complex operand, got {x.dtype}")
    return x


def real(x: Any) -> Any:
    """The real part of a complex ``x``."""
    x = _complex_operand("real", x)
    return bind(real_p, x, weak=x.weak)


def imag(x: Any) -> Any:
    """The imaginary part of a complex ``x``."""
    x = _complex_operand("imag", x)
    return bind(imag_p, x, weak=x.weak)


def conj(x: Any) -> Any:
    """The complex conjugate; a real ``x`` is made complex first, as in JAX."""
    x = asarray(x)
    if np.dtype(x.dtype).kind != "c":
        x = x.astype(complex_dtype(x.dtype if x.dtype == np.float64 else np.float32))
    return bind(conj_p, x, weak=x.weak)


def complex(x: Any, y: Any) -> Any:  # noqa: A001  (JAX's name)
    """``x + i y`` for float arrays of one dtype."""
    x, y = asarray(x), asarray(y)
    if x.dtype != y.dtype:
        raise TypeError(f"lax.complex requires arguments to have the same dtypes, got "
                        f"{x.dtype} and {y.dtype}")
    return bind(complex_p, x, y, weak=x.weak and y.weak)
