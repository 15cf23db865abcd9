"""Error-function relatives of ``spmdc.scipy.special``: ``erfcx`` (the scaled
complementary error function) and ``dawsn`` (Dawson's integral) of real arguments,
computed as JAX 0.10.2 computes them, with its derivative rules. See Note [scaled error
functions].
"""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core import dtypes
from spmdc.core.operands import inexact
from spmdc.transforms.custom_derivatives import custom_jvp
from spmdc.transforms.eager import library_jit  # See Note [library functions run as one program]

# Note [scaled error functions]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# erfcx(x) = exp(x^2) erfc(x) is that product while exp(x^2) stays finite, and beyond
# x = sqrt(log(finfo.max)) the asymptotic series (1/(sqrt(pi) x)) sum_k c_k x^(-2k),
# c_k = (-1)^k (2k-1)!!/2^k, with 5 terms in float32 and 9 in float64 (the first omitted
# term is far below the dtype's epsilon there). dawsn(x) is Cody, Paciorek and Thacher's
# rational approximations on |x| in [0, 3.25), [3.25, 6.25) and beyond, each evaluated at
# a harmless stand-in argument outside its region so that no NaN of an unused branch
# reaches the select (or its gradient). float16 and bfloat16 are computed in float32.
# Derivatives are JAX's: erfcx' = 2 x erfcx(x) - 2/sqrt(pi) and dawsn' = 1 - 2 x dawsn(x).
# erfcx of a complex argument is the Faddeeva function's w(iz), as in JAX (Note [Faddeeva
# function] in special_faddeeva.py); dawsn of one is rejected with a ValueError, as JAX
# supports real arguments only there too.

# Asymptotic coefficients c_8, ..., c_0 (highest power of 1/x^2 first).
_ERFCX_ASYMPTOTIC = (7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875,
                     .75, -.5, 1.)

_DAWSN_AN = (
    1.13681498971755972054e-11, 8.49262267667473811108e-10, 1.94434204175553054283e-8,
    9.53151741254484363489e-7, 3.07828309874913200438e-6, 3.52513368520288738649e-4,
    -8.50149846724410912031e-4, 4.22618223005546594270e-2, -9.17480371773452345351e-2,
    9.99999999999999994612e-1,)

_DAWSN_AD = (
    2.40372073066762605484e-11, 1.48864681368493396752e-9, 5.21265281010541664570e-8,
    1.27258478273186970203e-6, 2.32490249820789513991e-5, 3.25524741826057911661e-4,
    3.48805814657162590916e-3, 2.79448531198828973716e-2, 1.58874241960120565368e-1,
    5.74918629489320327824e-1, 1.00000000000000000539e0,)

_DAWSN_BN = (
    5.08955156417900903354e-1, -2.44754418142697847934e-1, 9.41512335303534411857e-2,
    -2.18711255142039025206e-2, 3.66207612329569181322e-3, -4.23209114460388756528e-4,
    3.59641304793896631888e-5, -2.14640351719968974225e-6, 9.10010780076391431042e-8,
    -2.40274520828250956942e-9, 3.59233385440928410398e-11,)

_DAWSN_BD = (
    1.00000000000000000000e0, -6.31839869873368190192e-1, 2.36706788228248691528e-1,
    -5.31806367003223277662e-2, 8.48041718586295374409e-3, -9.47996768486665330168e-4,
    7.81025592944552338085e-5, -4.55875153252442634831e-6, 1.89100358111421846170e-7,
    -4.91324691331920606875e-9, 7.18466403235734541950e-11,)

_DAWSN_CN = (
    -5.90592860534773254987e-1, 6.29235242724368800674e-1, -1.72858975380388136411e-1,
    1.64837047825189632310e-2, -4.86827613020462700845e-4,)

_DAWSN_CD = (
    1.00000000000000000000e0, -2.69820057197544900361e0, 1.73270799045947845857e0,
    -3.93708582281939493482e-1, 3.44278924041233391079e-2, -9.73655226040941223894e-4,)


def _c(x: Any, value: float) -> Any:
    return np.asarray(value, x.dtype)


def _real(name: str, x: Any) -> Any:
    (x,) = inexact(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"{name} of complex values is not supported; pass real values")
    return x


def _in_float32_if_narrow(impl: Any, x: Any) -> Any:
    if x.dtype in (np.float32, np.float64):
        return impl(x)
    return impl(x.astype(np.float32)).astype(x.dtype)


@library_jit
def erfcx(x: Any) -> Any:
    """The scaled complementary error function exp(x**2) * erfc(x), finite for large x;
    of a complex x through the Faddeeva function (Note [Faddeeva function] in
    special_faddeeva.py)."""
    (x,) = inexact(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        from .special_faddeeva import complex_erfcx
        return complex_erfcx(x)
    return _erfcx(x)


@custom_jvp
def _erfcx(x: Any) -> Any:
    return _in_float32_if_narrow(_erfcx_impl, x)


_erfcx.defjvps(lambda g, ans, x: g * (_c(x, 2.0) * x * ans - _c(x, 2.0 / np.sqrt(np.pi))))


def _erfcx_impl(x: Any) -> Any:
    nterms = 9 if x.dtype == np.float64 else 5
    large = x > _c(x, np.sqrt(np.log(dtypes.finfo(x.dtype).max)))
    safe_x = jnp.where(large, _c(x, 1.0), x)
    direct = jnp.exp(safe_x * safe_x) * lax.erfc(safe_x)
    t = _c(x, 1.0) / (x * x)
    series = jnp.polyval(np.asarray(_ERFCX_ASYMPTOTIC[-nterms:], x.dtype), t)
    return jnp.where(large, series / (x * _c(x, np.sqrt(np.pi))), direct)


@library_jit
def dawsn(x: Any) -> Any:
    """Dawson's integral exp(-x**2) * (the integral of exp(t**2) from 0 to x)."""
    return _dawsn(_real("dawsn", x))


@custom_jvp
def _dawsn(x: Any) -> Any:
    return _in_float32_if_narrow(_dawsn_impl, x)


_dawsn.defjvps(lambda g, ans, x: g * (_c(x, 1.0) - _c(x, 2.0) * x * ans))


def _ratio(numerator: Any, denominator: Any, t: Any) -> Any:
    return (jnp.polyval(np.asarray(numerator, t.dtype), t)
            / jnp.polyval(np.asarray(denominator, t.dtype), t))


def _dawsn_impl(x: Any) -> Any:
    ax = jnp.abs(x)
    one = _c(x, 1.0)
    t = one / (ax * ax)
    first = ax < _c(x, 3.25)
    second = (ax >= _c(x, 3.25)) & (ax < _c(x, 6.25))
    third = ax >= _c(x, 6.25)
    ax1 = jnp.where(first, ax, one)
    value1 = ax1 * _ratio(_DAWSN_AN, _DAWSN_AD, ax1 * ax1)
    t2, ax2 = jnp.where(second, t, one), jnp.where(second, ax, one)
    value2 = (_c(x, 0.5) / ax2) * (one + t2 * _ratio(_DAWSN_BN, _DAWSN_BD, t2))
    t3, ax3 = jnp.where(third, t, one), jnp.where(third, ax, one)
    value3 = (_c(x, 0.5) / ax3) * (one + t3 * _ratio(_DAWSN_CN, _DAWSN_CD, t3))
    return jnp.sign(x) * jnp.where(first, value1, jnp.where(ax < _c(x, 6.25), value2, value3))
