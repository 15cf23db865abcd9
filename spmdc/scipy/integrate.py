"""``spmdc.scipy.integrate`` (JAX's ``jax.scipy.integrate``): ``trapezoid``, the trapezoidal
rule (``spmdc.numpy.trapezoid``) under SciPy's name."""
from __future__ import annotations

from typing import Any

import spmdc.numpy as jnp

__all__ = ["trapezoid"]


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The integral of ``y`` along ``axis`` by the trapezoidal rule, at the points ``x``
    (or ``dx`` apart)."""
    return jnp.trapezoid(y, x, dx, axis)
