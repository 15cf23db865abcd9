"""The exponential integrals of ``spmdc.scipy.special``: ``expi`` (Ei), ``exp1`` (E1) and
``expn`` (E_n), computed as JAX 0.10.2 computes them, which ports Cephes' ``ei.c`` and
``expn.c`` (rational approximations on octaves of x for Ei; a power series, a continued
fraction and an asymptotic expansion for E_n). See Note [exponential integrals].
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
from spmdc.transforms.jit import jit

# Note [exponential integrals]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Ei(x) for x > 0 is a rational function of x on (0, 2] and, on the octaves (2, 4], ...,
# (32, 64] and beyond, exp(x)/x * (1 + w R(w)) with w = 1/x (Cephes ei.c); Ei(x) for x < 0
# is -E1(-x). E_n(x) (Cephes expn.c) is the power series for x <= 1, the continued fraction
# for x > 1 (both run as while loops until the term falls below the dtype's epsilon) and an
# asymptotic expansion for n >= 5000. Every piece is evaluated in the argument's dtype, with
# the coefficients rounded to it, as JAX does, so float32 values match JAX's float32 values
# (not float64 values rounded). The derivatives are JAX's rules: Ei'(x) = exp(x)/x and
# d/dx E_n(x) = -E_{n-1}(x); E_n is not differentiable in n.

_EI_0_2 = ((-5.350447357812542947283e0, 2.185049168816613393830e2, -4.176572384826693777058e3,
            5.541176756393557601232e4, -3.313381331178144034309e5, 1.592627163384945414220e6),
           (1.0, -5.250547959112862969197e1, 1.259616186786790571525e3,
            -1.756549581973534652631e4, 1.493062117002725991967e5, -7.294949239640527645655e5,
            1.592627163384945429726e6))

# (numerator, denominator) in w = 1/x on (2, 4], (4, 8], (8, 16], (16, 32], (32, 64], (64, inf).
_EI_OCTAVES = (
    ((1.981808503259689673238e-2, -1.271645625984917501326e0, -2.088160335681228318920e0,
      2.755544509187936721172e0, -4.409507048701600257171e-1, 4.665623805935891391017e-2,
      -1.545042679673485262580e-3, 7.059980605299617478514e-5),
     (1.0, 1.476498670914921440652e0, 5.629177174822436244827e-1, 1.699017897879307263248e-1,
      2.291647179034212017463e-2, 4.450150439728752875043e-3, 1.727439612206521482874e-4,
      3.953167195549672482304e-5)),
    ((-1.373215375871208729803e0, -7.084559133740838761406e-1, 1.580806855547941010501e0,
      -2.601500427425622944234e-1, 2.994674694113713763365e-2, -1.038086040188744005513e-3,
      4.371064420753005429514e-5, 2.141783679522602903795e-6),
     (1.0, 8.585231423622028380768e-1, 4.483285822873995129957e-1, 7.687932158124475434091e-2,
      2.449868241021887685904e-2, 8.832165941927796567926e-4, 4.590952299511353531215e-4,
      -4.729848351866523044863e-6, 2.665195537390710170105e-6)),
    ((-2.106934601691916512584e0, 1.732733869664688041885e0, -2.423619178935841904839e-1,
      2.322724180937565842585e-2, 2.372880440493179832059e-4, -8.343219561192552752335e-5,
      1.363408795605250394881e-5, -3.655412321999253963714e-7, 1.464941733975961318456e-8,
      6.176407863710360207074e-10),
     (1.0, -2.298062239901678075778e-1, 1.105077041474037862347e-1, -1.566542966630792353556e-2,
      2.761106850817352773874e-3, -2.089148012284048449115e-4, 1.708528938807675304186e-5,
      -4.459311796356686423199e-7, 1.394634930353847498145e-8, 6.150865933977338354138e-10)),
    ((-2.458119367674020323359e-1, -1.483382253322077687183e-1, 7.248291795735551591813e-2,
      -1.348315687380940523823e-2, 1.342775069788636972294e-3, -7.942465637159712264564e-5,
      2.644179518984235952241e-6, -4.239473659313765177195e-8),
     (1.0, -1.044225908443871106315e-1, -2.676453128101402655055e-1, 9.695000254621984627876e-2,
      -1.601745692712991078208e-2, 1.496414899205908021882e-3, -8.462452563778485013756e-5,
      2.728938403476726394024e-6, -4.239462431819542051337e-8)),
    ((1.212561118105456670844e-1, -5.823133179043894485122e-1, 2.348887314557016779211e-1,
      -3.040034318113248237280e-2, 1.510082146865190661777e-3, -2.523137095499571377122e-5),
     (1.0, -1.002252150365854016662e0, 2.928709694872224144953e-1, -3.337004338674007801307e-2,
      1.560544881127388842819e-3, -2.523137093603234562648e-5)),
    ((-7.657847078286127362028e-1, 6.886192415566705051750e-1, -2.132598113545206124553e-1,
      3.346107552384193813594e-2, -3.076541477344756050249e-3, 1.747119316454907477380e-4,
      -6.103711682274170530369e-6, 1.218032765428652199087e-7, -1.086076102793290233007e-9),
     (1.0, -1.888802868662308731041e0, 1.066691687211408896850e0, -2.751915982306380647738e-1,
      3.930852688233823569726e-2, -3.414684558602365085394e-3, 1.866844370703555398195e-4,
      -6.345146083130515357861e-6, 1.239754287483206878024e-7, -1.086076102793126632978e-9)),
)


def _c(x: Any, value: float) -> Any:
    """``value`` as a rank-0 constant of ``x``'s dtype."""
    return np.asarray(value, x.dtype)


def _ratio(coefficients: tuple[tuple[float, ...], tuple[float, ...]], w: Any) -> Any:
    numerator, denominator = coefficients
    return (jnp.polyval(np.asarray(numerator, w.dtype), w)
            / jnp.polyval(np.asarray(denominator, w.dtype), w))


def _expi_small(x: Any) -> Any:
    """Ei(x) on (0, 2]."""
    return x * _ratio(_EI_0_2, x) + np.euler_gamma + jnp.log(x)


def _expi_octave(coefficients: Any) -> Any:
    def ei(x: Any) -> Any:
        one = _c(x, 1.0)
        w = one / x
        return jnp.exp(x) * w * (w * _ratio(coefficients, w) + one)
    return ei


def _expi_pos(x: Any) -> Any:
    conds = [(_c(x, 0) < x) & (x <= _c(x, 2))] + [
        (_c(x, 2 ** i) < x) & (x <= _c(x, 2 ** (i + 1))) for i in range(1, 6)]
    return jnp.piecewise(x, conds, [_expi_small, *map(_expi_octave, _EI_OCTAVES)])


def _expi_neg(x: Any) -> Any:
    return -exp1(-x)


def _real(name: str, *args: Any) -> list[Any]:
    arrays = inexact(*args)
    if dtypes.issubdtype(arrays[0].dtype, np.complexfloating):
        raise ValueError(f"{name} does not support complex-valued inputs; pass real values")
    return arrays


@custom_jvp
@jit
def expi(x: Any) -> Any:
    """The exponential integral Ei(x), the principal value of the integral of exp(t)/t
    from -inf to x."""
    (x,) = _real("expi", x)
    return jnp.piecewise(x, [x < 0], [_expi_neg, _expi_pos])


@expi.defjvp
@jit
def _expi_jvp(primals: Any, tangents: Any) -> Any:
    (x,), (x_dot,) = primals, tangents
    return expi(x), jnp.exp(x) / x * x_dot


def _expn_series(x: Any, n: Any) -> Any:
    """E_n(x) for 0 < x <= 1: the power series (Cephes expn.c)."""
    eps = dtypes.finfo(x.dtype).eps
    zero, one = _c(x, 0.0), _c(x, 1.0)
    # psi(n) = -euler_gamma + sum_{i<n} 1/i, looped with a float counter as JAX's fori_loop
    # over float bounds does.
    _, psi = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + one, c[1] + one / c[0]),
                            (_c(n, 1), -np.euler_gamma - jnp.log(x)))
    n1 = jnp.where(n == _c(n, 1), one + one, n)
    init = dict(x=x, z=-x, xk=zero, yk=one, pk=one - n,
                ans=jnp.where(n == _c(n, 1), zero, one / (one - n1)), t=_c(x, np.inf))

    def body(d: dict[str, Any]) -> dict[str, Any]:
        d = dict(d)
        d["xk"] = d["xk"] + one
        d["yk"] = d["yk"] * (d["z"] / d["xk"])
        d["pk"] = d["pk"] + one
        d["ans"] = d["ans"] + jnp.where(d["pk"] != zero, d["yk"] / d["pk"], zero)
        d["t"] = jnp.where(d["ans"] != zero, jnp.abs(d["yk"] / d["ans"]), one)
        return d

    d = lax.while_loop(lambda d: (d["x"] > zero) & (d["t"] > eps), body, init)
    return d["z"] ** (n - _c(n, 1)) * psi / jnp.exp(lax.lgamma(n)) - d["ans"]


def _expn_continued_fraction(x: Any, n: Any) -> Any:
    """E_n(x) for x > 1: the continued fraction (Cephes expn.c), rescaled when it grows."""
    big = _c(x, 1.44115188075855872e17)
    eps = dtypes.finfo(x.dtype).eps
    zero, one = _c(x, 0.0), _c(x, 1.0)
    init = dict(k=_c(n, 1), pkm2=one, qkm2=x, pkm1=one, qkm1=x + n, ans=one / (x + n),
                t=_c(x, np.inf), r=zero, x=x)

    def body(d: dict[str, Any]) -> dict[str, Any]:
        d = dict(d)
        k = d["k"] = d["k"] + _c(n, 1)
        odd = k % _c(k, 2) == _c(k, 1)
        yk = jnp.where(odd, one, d["x"])
        xk = jnp.where(odd, n + (k - _c(k, 1)) / _c(k, 2), k / _c(k, 2))
        pk = d["pkm1"] * yk + d["pkm2"] * xk
        qk = d["qkm1"] * yk + d["qkm2"] * xk
        nonzero = qk != zero
        r = d["r"] = jnp.where(nonzero, pk / qk, d["r"])
        d["t"] = jnp.where(nonzero, jnp.abs((d["ans"] - r) / r), one)
        d["ans"] = jnp.where(nonzero, r, d["ans"])
        d["pkm2"], d["pkm1"], d["qkm2"], d["qkm1"] = d["pkm1"], pk, d["qkm1"], qk
        is_big = jnp.abs(pk) > big
        for key in ("pkm1", "pkm2", "qkm1", "qkm2"):
            d[key] = jnp.where(is_big, d[key] / big, d[key])
        return d

    d = lax.while_loop(lambda d: (d["x"] > zero) & (d["t"] > eps), body, init)
    return d["ans"] * jnp.exp(-x)


def _expn_asymptotic(x: Any, n: Any) -> Any:
    """E_n(x) for n >= 5000: the leading terms of the asymptotic expansion in n."""
    one = _c(x, 1.0)
    xk = x + n
    yk = one / (xk * xk)
    ans = yk * n * (_c(x, 6) * x * x - _c(x, 8) * n * x + n * n)
    ans = yk * (ans + n * (n - _c(x, 2) * x))
    ans = yk * (ans + n)
    return (ans + one) * jnp.exp(-x) / xk


@jit
def _expn_scalar(n: Any, x: Any) -> Any:
    zero, one = _c(x, 0), _c(x, 1)
    n1 = jnp.where(n == _c(n, 1), n + n, n)
    # As in jnp.piecewise, the last condition that holds picks the branch (so n < 0 with
    # x > 1 is the continued fraction, as in JAX); none holding picks the series.
    conds = [(n < _c(n, 0)) | (x < zero), (x == zero) & (n < _c(n, 2)),
             (x == zero) & (n >= _c(n, 2)), (n == _c(n, 0)) & (x >= zero),
             n >= _c(n, 5000), x > one]
    index = jnp.asarray(6, np.int32)
    for i, cond in enumerate(conds):
        index = jnp.where(cond, np.int32(i), index)
    branches = [lambda n, x: jnp.full_like(x, np.nan), lambda n, x: jnp.full_like(x, np.inf),
                lambda n, x: one / n1, lambda n, x: jnp.exp(-x) / x,
                lambda n, x: _expn_asymptotic(x, n), lambda n, x: _expn_continued_fraction(x, n),
                lambda n, x: _expn_series(x, n)]
    return lax.switch(index, branches, n, x)


def _expn(n: Any, x: Any) -> Any:
    n, x = _real("expn", n, x)
    return jnp.vectorize(_expn_scalar)(n, x)


@custom_jvp
def _expn_x(x: Any, n: Any) -> Any:
    return _expn(n, x)


@_expn_x.defjvp
def _expn_x_jvp(primals: Any, tangents: Any) -> Any:
    (x, n), (x_dot, _) = primals, tangents
    n = lax.stop_gradient(n)
    return _expn_x(x, n), -x_dot * _expn_x(x, n - _c(n, 1))


@library_jit
def expn(n: Any, x: Any) -> Any:
    """The generalized exponential integral E_n(x), the integral of exp(-x t) / t**n over
    t from 1 to inf; differentiable in x only."""
    n, x = _real("expn", n, x)
    return _expn_x(x, lax.stop_gradient(n))


def exp1(x: Any) -> Any:
    """The exponential integral E_1(x), the integral of exp(-t)/t from x to inf."""
    (x,) = _real("exp1", x)
    return expn(1, x)
