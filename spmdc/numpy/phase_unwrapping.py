"""``unwrap``: a sequence of phases with its jumps larger than half a period (or
``discont``) replaced by their complement, as NumPy and JAX compute it (the corrections
summed with ``cumsum``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import where as _where
from .comparisons import where
from .core import asarray, result_type
from .editing import normalized_axis
from .reductions import cumsum
from .shape_ops import concatenate
from .ufuncs import abs

__all__ = ["unwrap"]


def unwrap(p: Any, discont: Any = None, axis: int = -1, period: Any = 2 * np.pi) -> Any:
    """``p`` with jumps larger than ``discont`` (default ``period / 2``) along ``axis``
    replaced by their ``period`` complement."""
    p = asarray(p)
    dtype = result_type(p, period)
    p, period = p.astype(dtype), asarray(period).astype(dtype)
    if p.dtype.kind == "c":
        raise ValueError(f"unwrap: complex inputs are not supported{_where()}")
    axis = normalized_axis("unwrap", axis, p.ndim)
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    interval = period // 2 if dtypes.is_int(p.dtype) else period / 2
    front = (slice(None),) * axis
    dd = p[front + (slice(1, None),)] - p[front + (slice(None, -1),)]
    ddmod = (dd + interval) % period - interval
    ddmod = where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correct = where(abs(dd) < discont, 0, ddmod - dd)
    return concatenate([p[front + (slice(0, 1),)],
                        p[front + (slice(1, None),)] + cumsum(correct, axis=axis)], axis=axis)
