"""Spence's function (the real dilogarithm) of ``spmdc.scipy.special``, as JAX 0.10.2
computes it: Cephes' rational approximation in w = x - 1 (or -x, or 1/x - 1), folded
with the reflection formulas; NaN for x < 0 (where SciPy has complex values)."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp

_SPENCE_A = (4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
             8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
             3.29771340985225106936E0, 1.00000000000000000126E0)
_SPENCE_B = (6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
             1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
             3.54771340985225096217E0, 9.99999999999999998740E-1)


def _spence_poly(w: Any) -> Any:
    return (-w * jnp.polyval(jnp.array(_SPENCE_A, dtype=w.dtype), w)
            / jnp.polyval(jnp.array(_SPENCE_B, dtype=w.dtype), w))


def _spence_calc(x: Any) -> Any:
    above_2 = x > 2.0
    x = jnp.piecewise(x, [above_2], [lambda x: 1.0 / x, lambda x: x])
    above_1_5 = x > 1.5
    below_0_5 = x < 0.5
    reflected = above_2 | above_1_5
    w = jnp.piecewise(x, [above_1_5, below_0_5],
                      [lambda x: 1.0 / x - 1.0, lambda x: -x, lambda x: x - 1.0])
    y = _spence_poly(w)
    y = jnp.where(below_0_5, np.pi ** 2 / 6.0 - jnp.log(x) * jnp.log(1.0 - x) - y, y)
    return jnp.where(reflected, -0.5 * jnp.log(x) ** 2 - y, y)


def spence(x: Any) -> Any:
    """Spence's function, the integral of log(t)/(1 - t) from 1 to x, for x >= 0."""
    x = jnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"spence: x.dtype={x.dtype} is not supported; pass float32 or "
                        "float64 values")
    return jnp.piecewise(x, [x < 0.0, x == 1.0, x == 0.0],
                         [np.nan, 0, np.pi ** 2 / 6, _spence_calc])
