"""``gcd`` and ``lcm`` of integer arrays, elementwise and broadcast, by Euclid's
algorithm unrolled for as many steps as the dtype can need (so they trace to a fixed
program, as JAX's do).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import where as _where
from .array_creation import ones, zeros
from .comparisons import where
from .core import asarray, result_type
from .shape_ops import broadcast_arrays
from .ufuncs import abs

__all__ = ["gcd", "lcm"]


def _integers(op: str, x1: Any, x2: Any) -> tuple[Any, Any]:
    x1, x2 = asarray(x1), asarray(x2)
    dtype = result_type(x1, x2)
    if not dtypes.is_int(dtype):
        raise ValueError(f"{op}: the arguments must be integers, got {np.dtype(dtype).name}"
                         f"{_where()}")
    x1, x2 = broadcast_arrays(x1.astype(dtype), x2.astype(dtype))
    return x1, x2


def gcd(x1: Any, x2: Any) -> Any:
    """The greatest common divisor of ``|x1|`` and ``|x2|`` (Euclid's algorithm, run for
    as many steps as the dtype's widest inputs can need)."""
    a, b = _integers("gcd", x1, x2)
    a, b = abs(a), abs(b)
    # Lame: Euclid takes fewer than 1.45 * bits + 2 steps; later steps change nothing
    for _ in range(int(1.45 * np.dtype(a.dtype).itemsize * 8) + 2):
        nonzero_b = b != 0
        safe = where(nonzero_b, b, ones((), b.dtype))
        a, b = where(nonzero_b, b, a), where(nonzero_b, a % safe, zeros((), b.dtype))
    return a


def lcm(x1: Any, x2: Any) -> Any:
    """The least common multiple of ``|x1|`` and ``|x2|`` (0 if either is 0)."""
    a, b = _integers("lcm", x1, x2)
    a, b = abs(a), abs(b)
    d = gcd(a, b)
    return where(d == 0, zeros((), d.dtype), a * (b // where(d == 0, ones((), d.dtype), d)))
