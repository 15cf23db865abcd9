"""More of spmdc.numpy's math, composed from the functions of core.py and reductions.py:
logaddexp/logaddexp2, hypot, angle conversions, fmax/fmin, heaviside, sinc, nan_to_num,
the ``nan*`` reductions, average, ptp, count_nonzero, cumulative_sum/prod, and NumPy 2's
array-API aliases (acos, bitwise_invert ...).

Note [logaddexp gradient]
~~~~~~~~~~~~~~~~~~~~~~~~~
``logaddexp(x, y) = m + log1p(exp(x - m) + exp(y - m) - 1)`` with ``m = max(x, y)`` held
constant for differentiation (the result does not depend on m). One of the two
exponentials is exactly 1, so the argument of log1p is exactly the other one: the value
has log1p's accuracy, and the gradient is the softmax ``(e^x, e^y) / (e^x + e^y)``, also
where x == y (differentiating ``max + log1p(exp(-|x - y|))`` instead gives 0 there). An
infinite m is replaced by 0 so that ``inf - inf`` never appears.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..compiler.primitives.complex_parts import complex_p
from ..core import dtypes
from ..core.tracing import bind
from .comparisons import invert, left_shift, right_shift, where
from .core import asarray, broadcast_to, check_flag, pi, result_type
from .reductions import _no_out, cumprod, cumsum, max, mean, min, prod, stop_gradient, sum
from .shape_ops import _axes, atleast_1d, atleast_2d, expand_dims, reshape
from .ufuncs import (
    arccos,
    arccosh,
    arcsin,
    arcsinh,
    arctan,
    arctan2,
    arctanh,
    exp,
    isfinite,
    isinf,
    isnan,
    log1p,
    maximum,
    minimum,
    sin,
    sqrt,
)

__all__ = ["logaddexp", "logaddexp2", "hypot", "deg2rad", "radians", "rad2deg", "degrees",
           "positive", "fabs", "fmax", "fmin", "heaviside", "sinc", "nan_to_num", "isposinf",
           "isneginf", "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd",
           "nanargmax", "nanargmin", "nancumsum", "nancumprod", "cumulative_sum",
           "cumulative_prod", "average", "ptp", "count_nonzero", "atleast_3d", "acos",
           "acosh", "asin", "asinh", "atan", "atanh", "atan2", "bitwise_invert",
           "bitwise_left_shift", "bitwise_right_shift"]

acos, acosh, asin, asinh, atan, atanh, atan2 = (
    arccos, arccosh, arcsin, arcsinh, arctan, arctanh, arctan2)
bitwise_invert, bitwise_left_shift, bitwise_right_shift = invert, left_shift, right_shift


def _floats(*xs: Any) -> list[Any]:
    """The operands promoted together, then to a float type (JAX's promote_args_inexact)."""
    xs = [asarray(x) for x in xs]
    dtype = result_type(*xs)
    if dtype.kind in "biu":
        dtype = dtypes.default_float()
    return [x if x.dtype == dtype else x.astype(dtype) for x in xs]


def logaddexp(x1: Any, x2: Any) -> Any:
    """``log(exp(x1) + exp(x2))`` without overflow. See Note [logaddexp gradient]."""
    x1, x2 = _floats(x1, x2)
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


def positive(x: Any) -> Any:
    x = asarray(x)
    if x.dtype == np.bool_:
        raise TypeError("positive: not defined for booleans (as in NumPy)")
    return x * 1 if x.weak else x + np.zeros((), x.dtype)


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


def isposinf(x: Any) -> Any:
    x = asarray(x)
    return isinf(x) & (x > 0)


def isneginf(x: Any) -> Any:
    x = asarray(x)
    return isinf(x) & (x < 0)


def nan_to_num(x: Any, copy: bool = True, nan: Any = 0.0, posinf: Any = None,
               neginf: Any = None) -> Any:
    """NaN -> ``nan``, +inf -> ``posinf`` (default the largest finite value), -inf ->
    ``neginf`` (default the most negative); non-float arrays are returned unchanged."""
    check_flag("nan_to_num", "copy", copy)        # arrays are immutable: always a new one
    x = asarray(x)
    if x.dtype.kind not in "f" and x.dtype != dtypes.bfloat16:
        if x.dtype.kind == "c":           # each part on its own, as NumPy and JAX
            from .complex_ops import imag, real
            parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
                     for p in (real(x), imag(x))]
            return bind(complex_p, *parts, weak=x.weak)
        return x
    info = np.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    x = where(isnan(x), asarray(nan).astype(x.dtype), x)
    x = where(isposinf(x), asarray(posinf).astype(x.dtype), x)
    return where(isneginf(x), asarray(neginf).astype(x.dtype), x)


def _nan_masked(x: Any, fill: Any) -> Any:
    x = asarray(x)
    if x.dtype.kind not in "fc" and x.dtype != dtypes.bfloat16:
        return x
    return where(isnan(x), asarray(fill).astype(x.dtype), x)


def nansum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    return sum(_nan_masked(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
    return prod(_nan_masked(a, 1), axis, dtype, out, keepdims, initial, where)


def _nan_extremum(op: str, reduce: Any, fill: float, a: Any, axis: Any, out: Any,
                  keepdims: bool, initial: Any, where_: Any) -> Any:
    _no_out(op, out)
    a = asarray(a)
    if a.dtype.kind not in "fc" and a.dtype != dtypes.bfloat16:
        return reduce(a, axis, None, keepdims, initial, where_)
    out = reduce(_nan_masked(a, fill), axis, None, keepdims, initial, where_)
    every_nan = sum(~isnan(a), axis, keepdims=keepdims, where=where_) == 0
    return where(every_nan, np.asarray(np.nan, out.dtype), out)


def nanmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """max ignoring NaNs; NaN where every element is NaN."""
    return _nan_extremum("nanmax", max, -np.inf, a, axis, out, keepdims, initial, where)


def nanmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
           initial: Any = None, where: Any = None) -> Any:
    """min ignoring NaNs; NaN where every element is NaN."""
    return _nan_extremum("nanmin", min, np.inf, a, axis, out, keepdims, initial, where)


def _count(a: Any, axis: Any, keepdims: bool, where_: Any) -> Any:
    return sum(~isnan(a), axis, keepdims=keepdims, where=where_)


def nanmean(a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, where: Any = None) -> Any:
    """mean over the elements that are not NaN."""
    _no_out("nanmean", out)
    a = asarray(a)
    if a.dtype.kind not in "fc" and a.dtype != dtypes.bfloat16:
        return mean(a, axis, dtype, None, keepdims, where=where)
    dtype = dtypes.canonicalize(dtype) if dtype is not None else a.dtype
    total = sum(_nan_masked(a, 0), axis, dtype, None, keepdims, where=where)
    return total / _count(a, axis, keepdims, where).astype(total.dtype)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None) -> Any:
    """var over the elements that are not NaN (``ddof`` subtracted from their count)."""
    _no_out("nanvar", out)
    a = asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(dtypes.default_float())
    if dtype is not None:
        a = a.astype(dtype)
    centre = nanmean(a, axis, keepdims=True, where=where)
    deviation = _nan_masked(a - centre, 0)
    deviation = deviation * deviation.conj() if a.dtype.kind == "c" else deviation * deviation
    total = sum(deviation, axis, None, None, keepdims, where=where)
    count = _count(a, axis, keepdims, where).astype(total.dtype)
    return total / maximum(count - ddof, np.zeros((), total.dtype))


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None) -> Any:
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where))


def _nan_arg(op: str, fill: float, a: Any, axis: Any, keepdims: bool) -> Any:
    from .reductions import argmax, argmin
    a = asarray(a)
    if a.dtype.kind not in "fc" and a.dtype != dtypes.bfloat16:
        return (argmax if op == "nanargmax" else argmin)(a, axis, keepdims=keepdims)
    found = (argmax if op == "nanargmax" else argmin)(_nan_masked(a, fill), axis,
                                                       keepdims=keepdims)
    every_nan = sum(~isnan(a), axis, keepdims=keepdims) == 0
    return where(every_nan, np.asarray(-1, found.dtype), found)


def nanargmax(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """argmax ignoring NaNs; -1 where every element is NaN (as JAX; NumPy raises)."""
    _no_out("nanargmax", out)
    return _nan_arg("nanargmax", -np.inf, a, axis, keepdims)


def nanargmin(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """argmin ignoring NaNs; -1 where every element is NaN (as JAX; NumPy raises)."""
    _no_out("nanargmin", out)
    return _nan_arg("nanargmin", np.inf, a, axis, keepdims)


def nancumsum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    return cumsum(_nan_masked(a, 0), axis, dtype, out)


def nancumprod(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    return cumprod(_nan_masked(a, 1), axis, dtype, out)


def _cumulative(op: str, fn: Any, identity: int, x: Any, axis: Any, dtype: Any,
                include_initial: bool) -> Any:
    from .shape_ops import concatenate
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"{op}: axis must be given for an array of more than one "
                             f"dimension (shape {x.shape})")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{op}: needs an array of at least one dimension")
    out = fn(x, axis, dtype)
    if include_initial:
        (axis,) = _axes(axis, x.ndim, op)
        shape = list(out.shape)
        shape[axis] = 1
        start = asarray(np.full(shape, identity, out.dtype))
        out = concatenate([start, out], axis=axis)
    return out


def cumulative_sum(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                   include_initial: bool = False) -> Any:
    """cumsum in the array API's form: ``axis`` is required beyond 1-d, and
    ``include_initial`` prepends the 0."""
    return _cumulative("cumulative_sum", cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """cumprod in the array API's form (see cumulative_sum)."""
    return _cumulative("cumulative_prod", cumprod, 1, x, axis, dtype, include_initial)


def average(a: Any, axis: Any = None, weights: Any = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """Weighted mean along ``axis``; with ``returned``, also the sum of the weights."""
    a = asarray(a)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        if not returned:
            return avg
        count = a.size if axis is None else int(np.prod([a.shape[i] for i in
                                                         _axes(axis, a.ndim, "average")]))
        return avg, asarray(np.full(avg.shape, count, avg.dtype))
    w = asarray(weights)
    a, w = _floats(a, w)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise ValueError(f"average: weights of shape {w.shape} differ from the array's "
                             f"{a.shape}; 1-d weights need an axis")
        (ax,) = _axes(axis, a.ndim, "average")
        if w.shape[0] != a.shape[ax]:
            raise ValueError(f"average: {w.shape[0]} weights for an axis of size {a.shape[ax]}")
        view = [1] * a.ndim
        view[ax] = w.shape[0]
        w = reshape(w, tuple(view))
    scale = sum(broadcast_to(w, a.shape), axis, keepdims=keepdims)
    avg = sum(a * w, axis, keepdims=keepdims) / scale
    return (avg, scale) if returned else avg


def ptp(a: Any, axis: Any = None, out: Any = None, keepdims: bool = False) -> Any:
    """max - min along ``axis``."""
    _no_out("ptp", out)
    return max(a, axis, keepdims=keepdims) - min(a, axis, keepdims=keepdims)


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    a = asarray(a)
    return sum(a != 0, axis, dtype=dtypes.default_int(), keepdims=keepdims)


def atleast_3d(x: Any) -> Any:
    """``x`` with at least 3 dimensions: 1-d (n,) -> (1, n, 1), 2-d (m, n) -> (m, n, 1)."""
    x = asarray(x)
    if x.ndim >= 3:
        return x
    if x.ndim == 2:
        return expand_dims(x, 2)
    return expand_dims(atleast_2d(atleast_1d(x)), 2)


__all__ += ["logspace", "rollaxis", "diagflat", "divmod", "modf", "float_power", "signbit",
            "copysign", "fromfunction", "iterable"]


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True, base: Any = 10.0,
             dtype: Any = None, axis: int = 0) -> Any:
    """``base ** linspace(start, stop, num)``."""
    from .array_creation import linspace
    from .ufuncs import power
    if axis != 0:
        raise ValueError("logspace: only axis=0 is supported")
    out = power(asarray(base).astype(dtypes.default_float()),
                linspace(start, stop, num, endpoint))
    return out if dtype is None else out.astype(dtype)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Move ``axis`` so that it lies before position ``start`` (NumPy's older moveaxis)."""
    from .shape_ops import _axis, moveaxis
    a = asarray(a)
    axis = _axis(axis, a.ndim, "rollaxis")
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"rollaxis: start {start} is out of bounds for rank {a.ndim}")
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def diagflat(v: Any, k: int = 0) -> Any:
    """A 2-d array with the flattened ``v`` on its ``k``-th diagonal."""
    from .arrays_extra import diag
    return diag(reshape(asarray(v), (-1,)), k)


def divmod(x1: Any, x2: Any) -> tuple[Any, Any]:  # noqa: A001  (NumPy's name)
    from .ufuncs import _float_divmod, _numeric, floor_divide, remainder
    y1, y2, dtype, weak = _numeric("divmod", x1, x2)
    if dtype.kind in "iu":
        return floor_divide(x1, x2), remainder(x1, x2)
    if dtype.kind == "c":
        raise TypeError("divmod: not defined for complex numbers")
    return _float_divmod(y1, y2, weak)


def modf(x: Any, out: Any = None) -> tuple[Any, Any]:
    """The fractional and integral parts, both with the sign of ``x``."""
    from .ufuncs import trunc
    _no_out("modf", out)
    (x,) = _floats(x)
    whole = trunc(x)
    frac = where(isinf(x), np.zeros((), x.dtype), x - whole)
    return copysign(frac, x), whole


def float_power(x1: Any, x2: Any) -> Any:
    """``x1 ** x2`` in the widest float type enabled (float64 only with x64)."""
    from .ufuncs import power
    wide = dtypes.canonicalize(np.float64)
    return power(asarray(x1).astype(wide), asarray(x2).astype(wide))


def signbit(x: Any) -> Any:
    """Whether the sign bit is set (True for -0.0 and negative NaNs)."""
    x = asarray(x)
    if x.dtype.kind in "iu" or x.dtype == np.bool_:
        return x < 0
    if x.dtype.kind == "c":
        raise TypeError("signbit: not defined for complex numbers")
    width = {2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]
    bits = lax.bitcast_convert_type(x, np.dtype(width))
    return bits < 0


def copysign(x1: Any, x2: Any) -> Any:
    """``|x1|`` with the sign of ``x2``."""
    x1, x2 = _floats(x1, x2)
    return where(signbit(x2), -abs(x1), abs(x1))


def fromfunction(function: Any, shape: Any, *, dtype: Any = float, **kwargs: Any) -> Any:
    """``function(*indices)`` over a grid of ``shape`` (indices in ``dtype``)."""
    from .shape_extra import indices
    grids = indices(shape, dtype=dtype)
    return function(*[grids[i] for i in range(len(tuple(shape)))], **kwargs)


def iterable(y: Any) -> bool:
    try:
        iter(y)
    except TypeError:
        return False
    return True
