"""The sine and cosine integrals of ``spmdc.scipy.special`` (``sici``), as JAX 0.10.2
computes them from Cephes' sici.c. See Note [sine and cosine integrals]."""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc.core import dtypes
from spmdc.core.operands import inexact
from spmdc.transforms.custom_derivatives import custom_jvp
from spmdc.transforms.eager import library_jit  # See Note [library functions run as one program]

# Note [sine and cosine integrals]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# On |x| <= 4, Si and Ci are rational functions of x^2 (Ci adds euler_gamma + log x); on
# 4 < |x| <= 1e9 they come from the auxiliary functions f and g (rational in 1/x^2, one
# fit below 8 and one above): Si = pi/2 - f cos x - g sin x, Ci = f sin x - g cos x; past
# 1e9, f = 1/x and g = 0. Si is odd; Ci of negative x is Ci(|x|), the real part of the
# complex value (SciPy's answer too), and Ci(-inf) is NaN.
# The derivatives are JAX's: Si' = sinc(x/pi) = sin(x)/x, Ci' = cos(x)/x.

_SN = (
    -8.39167827910303881427E-11, 4.62591714427012837309E-8, -9.75759303843632795789E-6,
    9.76945438170435310816E-4, -4.13470316229406538752E-2, 1.00000000000000000302E0,)

_SD = (
    2.03269266195951942049E-12, 1.27997891179943299903E-9, 4.41827842801218905784E-7,
    9.96412122043875552487E-5, 1.42085239326149893930E-2, 9.99999999999999996984E-1,)

_CN = (
    2.02524002389102268789E-11, -1.35249504915790756375E-8, 3.59325051419993077021E-6,
    -4.74007206873407909465E-4, 2.89159652607555242092E-2, -1.00000000000000000080E0,)

_CD = (
    4.07746040061880559506E-12, 3.06780997581887812692E-9, 1.23210355685883423679E-6,
    3.17442024775032769882E-4, 5.10028056236446052392E-2, 4.00000000000000000080E0,)

_FN4 = (
    4.23612862892216586994E0, 5.45937717161812843388E0, 1.62083287701538329132E0,
    1.67006611831323023771E-1, 6.81020132472518137426E-3, 1.08936580650328664411E-4,
    5.48900223421373614008E-7,)

_FD4 = (
    1, 8.16496634205391016773E0, 7.30828822505564552187E0, 1.86792257950184183883E0,
    1.78792052963149907262E-1, 7.01710668322789753610E-3, 1.10034357153915731354E-4,
    5.48900252756255700982E-7,)

_GN4 = (
    8.71001698973114191777E-2, 6.11379109952219284151E-1, 3.97180296392337498885E-1,
    7.48527737628469092119E-2, 5.38868681462177273157E-3, 1.61999794598934024525E-4,
    1.97963874140963632189E-6, 7.82579040744090311069E-9,)

_GD4 = (
    1, 1.64402202413355338886E0, 6.66296701268987968381E-1, 9.88771761277688796203E-2,
    6.22396345441768420760E-3, 1.73221081474177119497E-4, 2.02659182086343991969E-6,
    7.82579218933534490868E-9,)

_FN8 = (
    4.55880873470465315206E-1, 7.13715274100146711374E-1, 1.60300158222319456320E-1,
    1.16064229408124407915E-2, 3.49556442447859055605E-4, 4.86215430826454749482E-6,
    3.20092790091004902806E-8, 9.41779576128512936592E-11, 9.70507110881952024631E-14,)

_FD8 = (
    1.0, 9.17463611873684053703E-1, 1.78685545332074536321E-1, 1.22253594771971293032E-2,
    3.58696481881851580297E-4, 4.92435064317881464393E-6, 3.21956939101046018377E-8,
    9.43720590350276732376E-11, 9.70507110881952025725E-14,)

_GN8 = (
    6.97359953443276214934E-1, 3.30410979305632063225E-1, 3.84878767649974295920E-2,
    1.71718239052347903558E-3, 3.48941165502279436777E-5, 3.47131167084116673800E-7,
    1.70404452782044526189E-9, 3.85945925430276600453E-12, 3.14040098946363334640E-15,)

_GD8 = (
    1.0, 1.68548898811011640017E0, 4.87852258695304967486E-1, 4.67913194259625806320E-2,
    1.90284426674399523638E-3, 3.68475504442561108162E-5, 3.57043223443740838771E-7,
    1.72693748966316146736E-9, 3.87830166023954706752E-12, 3.14040098946363335242E-15,)


def _poly(coefficients: tuple[float, ...], x: Any) -> Any:
    return jnp.polyval(np.asarray(coefficients, x.dtype), x)


def _sici_series(x: Any) -> tuple[Any, Any]:
    t = x * x
    si = (x * _poly(_SN, t)) / _poly(_SD, t)
    ci = np.euler_gamma + jnp.log(x) + t * _poly(_CN, t) / _poly(_CD, t)
    return jnp.where(x == 0, 0.0, si), jnp.where(x == 0, -np.inf, ci)


def _sici_asymptotic(x: Any) -> tuple[Any, Any]:
    s, c = jnp.sin(x), jnp.cos(x)
    z = 1.0 / (x * x)
    f4 = _poly(_FN4, z) / (x * _poly(_FD4, z))
    g4 = z * _poly(_GN4, z) / _poly(_GD4, z)
    f8 = _poly(_FN8, z) / (x * _poly(_FD8, z))
    g8 = z * _poly(_GN8, z) / _poly(_GD8, z)
    below_8 = x < 8.0
    f, g = jnp.where(below_8, f4, f8), jnp.where(below_8, g4, g8)
    return (np.pi / 2) - f * c - g * s, f * s - g * c


def _sici_far(x: Any) -> tuple[Any, Any]:
    si = (np.pi / 2) - jnp.cos(x) / x
    ci = jnp.sin(x) / x
    return jnp.where(jnp.isposinf(x), np.pi / 2, si), jnp.where(jnp.isposinf(x), 0.0, ci)


@custom_jvp
def sici(x: Any) -> tuple[Any, Any]:
    """The sine and cosine integrals (Si(x), Ci(x)): the integral of sin(t)/t from 0 to x,
    and euler_gamma + log(x) + the integral of (cos(t) - 1)/t from 0 to x."""
    (x,) = inexact(x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    ax = jnp.abs(x)
    si_series, ci_series = _sici_series(ax)
    si_asymptotic, ci_asymptotic = _sici_asymptotic(ax)
    si_far, ci_far = _sici_far(ax)
    near, middle = ax <= 4, (ax > 4) & (ax <= 1e9)
    si = jnp.select([near, middle], [si_series, si_asymptotic], si_far)
    ci = jnp.select([near, middle], [ci_series, ci_asymptotic], ci_far)
    return jnp.sign(x) * si, jnp.where(jnp.isneginf(x), np.nan, ci)


@sici.defjvp
def _sici_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (t,) = primals, tangents
    return sici(x), (jnp.sinc(x / np.pi) * t, jnp.cos(x) / x * t)
sici = library_jit(sici)     # the custom_jvp above, run as one program
