"""Helpers shared by the distributions: argument promotion and constants."""
from __future__ import annotations

from typing import Any

import numpy as np

from spmdc.core.operands import inexact as promote  # noqa: F401  (re-exported)


def const(x: Any, value: float) -> Any:
    """``value`` as a rank-0 constant of ``x``'s dtype."""
    return np.asarray(value, x.dtype)
