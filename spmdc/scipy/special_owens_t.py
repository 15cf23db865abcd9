"""Owen's T function of ``spmdc.scipy.special``, computed as JAX 0.10.2 computes it.

    T(h, a) = 1/(2 pi) * integral from 0 to a of exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx

See Note [Owen's T].
"""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.operands import inexact
from spmdc.transforms.custom_derivatives import custom_jvp
from spmdc.transforms.eager import library_jit  # See Note [library functions run as one program]

# Note [Owen's T]
# ~~~~~~~~~~~~~~~
# For |a| <= 1 the integral is a 13-point Gauss-type quadrature (Patefield and Tandy
# 2000, method T5): after the substitution x^2 = a^2 t the 1/(2 pi) and the Jacobian
# are part of the tabulated weights, so
#     T(h, a) ~ a * sum_i w_i exp(-h^2 (1 + a^2 t_i) / 2) / (1 + a^2 t_i).
# For |a| > 1 the quadrature runs at (|a| h, 1/|a|) and the identity (h >= 0)
#     T(h, a) + T(a h, 1/a) = Q(h)/2 + Q(a h)/2 - Q(h) Q(a h),   Q(x) = erfc(x/sqrt 2)/2,
# gives the value; where a h <= 0.67 its other form 1/4 (1 - erf(h/sqrt 2) erf(a h/sqrt 2))
# is used, which keeps the digits the erfc form loses. T is even in h and odd in a; h = 0
# (arctan(a) / (2 pi)) and a = 1 (Q(h) (1 - Q(h)) / 2) are exact, and a NaN operand
# gives NaN. JAX evaluates every region and selects (one program, no data-dependent
# branch), as here. The derivatives are the closed forms
#     dT/dh = -exp(-h^2/2) erf(a h/sqrt 2) / (2 sqrt(2 pi)),
#     dT/da = exp(-(1 + a^2) h^2 / 2) / (2 pi (1 + a^2)).

_NODES = (0.0035082039676451715, 0.031279042338030754, 0.085266826283219451,
          0.16245071730812277, 0.25851196049125435, 0.36807553840697534,
          0.48501092905604697, 0.60277514152618577, 0.71477884217753227,
          0.81475510988760099, 0.89711029755948966, 0.95723808085944262,
          0.99178832974629704)
_WEIGHTS = (0.018831438115323503, 0.018567086243977649, 0.018042093461223386,
            0.017263829606398753, 0.016243219975989857, 0.014994592034116705,
            0.013535474469662088, 0.011886351605820165, 0.010070377242777432,
            0.0081130545742299587, 0.0060419009528470239, 0.0038862217010742058,
            0.0016793031084546090)


def _quadrature(h: Any, a: Any) -> Any:
    """Method T5 for 0 <= a <= 1 (Note [Owen's T])."""
    t = jnp.asarray(np.array(_NODES), h.dtype)
    w = jnp.asarray(np.array(_WEIGHTS), h.dtype)
    r = (a * a)[..., None] * t
    terms = jnp.exp(-0.5 * (h * h)[..., None] * (1.0 + r)) / (1.0 + r)
    return a * jnp.sum(terms * w, axis=-1)


@custom_jvp
def _owens_t(h: Any, a: Any) -> Any:
    h_abs, a_abs = jnp.abs(h), jnp.abs(a)
    small_a = a_abs <= 1.0
    q_a = jnp.where(small_a, a_abs, 1.0 / a_abs)       # the quadrature's arguments
    q_h = jnp.where(small_a, h_abs, a_abs * h_abs)
    t = _quadrature(q_h, q_a)
    t = jnp.where(q_h == 0.0, jnp.arctan(q_a) / (2 * np.pi), t)
    sqrt2 = np.sqrt(2.0)
    t = jnp.where(q_a == 1.0, 0.125 * lax.erfc(-q_h / sqrt2) * lax.erfc(q_h / sqrt2), t)
    erfc_h, erfc_ah = lax.erfc(h_abs / sqrt2), lax.erfc(a_abs * h_abs / sqrt2)
    near = 0.25 - 0.25 * lax.erf(h_abs / sqrt2) * lax.erf(a_abs * h_abs / sqrt2) - t
    far = 0.25 * (erfc_h + erfc_ah - erfc_h * erfc_ah) - t
    t = jnp.where(small_a, t, jnp.where(a_abs * h_abs <= 0.67, near, far))
    t = jnp.sign(a) * t
    return jnp.where(jnp.isnan(h) | jnp.isnan(a), np.nan, t)


@_owens_t.defjvp
def _owens_t_jvp(primals: Any, tangents: Any) -> Any:
    h, a = primals
    dh, da = tangents
    d_h = (-jnp.exp(-0.5 * h * h) * lax.erf(a * h / np.sqrt(2.0))
           / (2.0 * np.sqrt(2.0 * np.pi)))
    d_a = jnp.exp(-0.5 * (1.0 + a * a) * h * h) / (2.0 * np.pi * (1.0 + a * a))
    out = _owens_t(h, a)
    return out, (d_h * dh + d_a * da).astype(out.dtype)


@library_jit
def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function T(h, a) of real arguments (Note [Owen's T])."""
    h, a = inexact(h, a)
    if jnp.issubdtype(h.dtype, jnp.complexfloating):
        raise TypeError(f"owens_t: h and a must be real, got dtype {h.dtype}")
    return _owens_t(*jnp.broadcast_arrays(h, a))
