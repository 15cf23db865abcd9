"""Floating-point ufuncs composed of the elementwise ones in ufuncs.py: logaddexp and
logaddexp2, hypot, the angle conversions (deg2rad, rad2deg, radians, degrees), fabs,
fmax/fmin, heaviside, sinc, nan_to_num, modf, float_power, copysign, i0 and ldexp.

Note [logaddexp gradient]
~~~~~~~~~~~~~~~~~~~~~~~~~
For real floats, ``logaddexp(x, y)`` is computed as JAX computes it, operation for
operation, so its value has JAX's bits (NumPyro's NUTS adds tree weights with it, and a
one-ulp difference changes the chain): ``max(x, y) + log1p(exp(-|x - y|))``, and
``x + y`` where ``x - y`` is NaN (a NaN operand, or infinities of the same sign). Its
derivative is JAX's custom JVP: the softmax ``tx e^(x - out) + ty e^(y - out)`` (with
``+inf`` read as 0 in the exponents, so ``inf - inf`` never appears), right also where
x == y, where differentiating the formula would give 0 for the ``|x - y|`` term. For
complex operands, ``m + log1p(exp(x - m) + exp(y - m) - 1)`` with ``m = max(x, y)``
held constant for differentiation (the result does not depend on m), m replaced by 0
where infinite.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..transforms.custom_derivatives import custom_jvp
from .comparisons import signbit, where
from .core import _no_out, asarray, check_flag, pi
from .ufuncs import (
    _floats,
    abs,
    exp,
    isfinite,
    isinf,
    isnan,
    isneginf,
    isposinf,
    log1p,
    maximum,
    minimum,
    power,
    sin,
    sqrt,
    stop_gradient,
    trunc,
)


@custom_jvp
def _logaddexp_real(x1: Any, x2: Any) -> Any:
    delta = x1 - x2
    return where(isnan(delta), x1 + x2, maximum(x1, x2) + log1p(exp(-abs(delta))))


def _no_posinf(x: Any) -> Any:
    return where(isposinf(x), np.zeros((), x.dtype), x)


@_logaddexp_real.defjvp
def _logaddexp_real_jvp(primals: Any, tangents: Any) -> Any:
    (x1, x2), (t1, t2) = primals, tangents
    out = _logaddexp_real(x1, x2)
    return out, (t1 * exp(_no_posinf(x1) - _no_posinf(out))
                 + t2 * exp(_no_posinf(x2) - _no_posinf(out)))


def logaddexp(x1: Any, x2: Any) -> Any:
    """``log(exp(x1) + exp(x2))`` without overflow. See Note [logaddexp gradient]."""
    x1, x2 = _floats(x1, x2)
    if dtypes.kind(x1.dtype) == "f":
        return _logaddexp_real(x1, x2)
    m = stop_gradient(maximum(x1, x2))
    m = where(isfinite(m), m, np.zeros((), m.dtype))
    return m + log1p(exp(x1 - m) + exp(x2 - m) - 1)


def logaddexp2(x1: Any, x2: Any) -> Any:
    """``log2(2**x1 + 2**x2)``."""
    x1, x2 = _floats(x1, x2)
    ln2 = np.log(2.0)
    return logaddexp(x1 * ln2, x2 * ln2) / ln2


def hypot(x1: Any, x2: Any) -> Any:
    """``sqrt(x1**2 + x2**2)``, scaled by the larger magnitude so it does not overflow."""
    x1, x2 = _floats(x1, x2)
    a, b = abs(x1), abs(x2)
    big, small = maximum(a, b), minimum(a, b)
    safe = where(big == 0, np.ones((), big.dtype), big)
    ratio = small / safe
    out = where(big == 0, np.zeros((), big.dtype), big * sqrt(1 + ratio * ratio))
    return where(isinf(a) | isinf(b), np.asarray(np.inf, big.dtype), out)


def deg2rad(x: Any) -> Any:
    (x,) = _floats(x)
    return x * (pi / 180)


def rad2deg(x: Any) -> Any:
    (x,) = _floats(x)
    return x * (180 / pi)


radians, degrees = deg2rad, rad2deg


def fabs(x: Any) -> Any:
    (x,) = _floats(x)
    return abs(x)


def fmax(x1: Any, x2: Any) -> Any:
    """Elementwise maximum that ignores a NaN (NaN only where both are)."""
    x1, x2 = asarray(x1), asarray(x2)
    return where(isnan(x1) & ~isnan(x2), x2, where(isnan(x2), x1, maximum(x1, x2)))


def fmin(x1: Any, x2: Any) -> Any:
    """Elementwise minimum that ignores a NaN (NaN only where both are)."""
    x1, x2 = asarray(x1), asarray(x2)
    return where(isnan(x1) & ~isnan(x2), x2, where(isnan(x2), x1, minimum(x1, x2)))


def heaviside(x1: Any, x2: Any) -> Any:
    """0 where x1 < 0, ``x2`` where x1 == 0, 1 where x1 > 0, NaN where x1 is NaN."""
    x1, x2 = _floats(x1, x2)
    zero, one = np.zeros((), x1.dtype), np.ones((), x1.dtype)
    return where(x1 < 0, zero, where(x1 > 0, one, where(isnan(x1), x1, x2)))


def sinc(x: Any) -> Any:
    """``sin(pi x) / (pi x)``, 1 at 0 (with derivative 0 there)."""
    (x,) = _floats(x)
    zero = x == 0
    safe = where(zero, np.ones((), x.dtype), x)
    return where(zero, np.ones((), x.dtype), sin(pi * safe) / (pi * safe))


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """NaN -> ``nan``, +inf -> ``posinf`` (default the largest finite value), -inf ->
    ``neginf`` (default the most negative); non-float arrays are returned unchanged."""
    check_flag("nan_to_num", "copy", copy)        # arrays are immutable: always a new one
    x = asarray(x)
    if dtypes.kind(x.dtype) not in "f":
        if dtypes.kind(x.dtype) == "c":           # each part on its own, as NumPy and JAX
            from .complex_ops import imag, real
            parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
                     for p in (real(x), imag(x))]
            return lax.complex(*parts)
        return x
    info = dtypes.finfo(x.dtype)                 # bfloat16 too (NumPy's finfo lacks it)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = where(isnan(x), asarray(nan).astype(x.dtype), x)
    x = where(isposinf(x), asarray(posinf).astype(x.dtype), x)
    return where(isneginf(x), asarray(neginf).astype(x.dtype), x)


def modf(x: Any, out: Any = None) -> tuple[Any, Any]:
    """The fractional and integral parts, both with the sign of ``x``."""
    _no_out("modf", out)
    (x,) = _floats(x)
    whole = trunc(x)
    frac = where(isinf(x), np.zeros((), x.dtype), x - whole)
    return copysign(frac, x), whole


def float_power(x1: Any, x2: Any) -> Any:
    """``x1 ** x2`` in the widest float type enabled (float64 only with x64)."""
    wide = dtypes.canonicalize(np.float64)
    return power(asarray(x1).astype(wide), asarray(x2).astype(wide))


def copysign(x1: Any, x2: Any) -> Any:
    """``|x1|`` with the sign of ``x2``."""
    x1, x2 = _floats(x1, x2)
    return where(signbit(x2), -abs(x1), abs(x1))


def i0(x: Any) -> Any:
    """The modified Bessel function of the first kind, order 0: ``exp(|x|) * i0e(x)``."""
    x = asarray(x)
    if dtypes.kind(x.dtype) in "biu":
        x = x.astype(dtypes.default_float())
    if dtypes.kind(x.dtype) == "c":
        raise TypeError("i0: complex arguments are not supported")
    return exp(abs(x)) * lax.bessel_i0e(x)


def ldexp(x1: Any, x2: Any) -> Any:
    """``x1 * 2**x2`` for integer ``x2``."""
    x1, x2 = asarray(x1), asarray(x2)
    if dtypes.kind(x2.dtype) not in "iu":
        raise TypeError(f"ldexp: the exponent must be an integer array, got {x2.dtype}")
    if dtypes.kind(x1.dtype) in "biu":
        x1 = x1.astype(dtypes.default_float())
    return x1 * power(np.asarray(2.0, x1.dtype), x2.astype(x1.dtype))
