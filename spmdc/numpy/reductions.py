"""Reductions for spmdc.numpy: sum, mean, max, min, prod, var, std, argmax, argmin, all,
any, cumulative ops (cumulative_sum/prod), logsumexp, allclose, array_equal/array_equiv,
count_nonzero and the ``nan*`` reductions.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.operands import inexact
from ..core.tracing import current_trace
from ..transforms.jit import jit
from .comparisons import equal, less_equal, where
from .comparisons import where as _where
from .core import _error, _no_out, asarray, broadcast_to, extended_rule
from .shape_ops import _axes, _axis, expand_dims, ravel, reshape, squeeze
from .ufuncs import (
    abs,
    add,
    exp,
    isfinite,
    isnan,
    log,
    maximum,
    minimum,
    multiply,
    sign,
    sqrt,
    stop_gradient,
)


def _accumulator(dtype: np.dtype) -> np.dtype:
    """The dtype sum and prod accumulate in: booleans and integers narrower than the
    default int widen to it (unsigned ones to the unsigned type of that width), as in JAX
    and NumPy; everything else keeps its dtype."""
    wide = dtypes.default_int()
    if dtypes.kind(dtype) in "bi" and dtype.itemsize < wide.itemsize:
        return wide
    if dtypes.kind(dtype) == "u" and dtype.itemsize < wide.itemsize:
        return np.dtype(f"uint{8 * wide.itemsize}")
    return dtype


def _computation_dtype(dtype: Any) -> np.dtype:
    """float16 and bfloat16 sums, products, means and variances are computed in float32
    and rounded once at the end, as JAX does (XLA would accumulate in the narrow type)."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype in (np.float16, dtypes.bfloat16) else dtype


def _upcast(x: Any) -> Any:
    wide = _computation_dtype(x.dtype)
    return x.astype(wide) if wide != x.dtype else x


def _reduce(op: str, reducer: Callable[[Any, tuple[int, ...]], Any], x: Any, axis: Any,
            keepdims: bool, dtype: Any = None, initial: Any = None, where_: Any = None) -> Any:
    """NumPy's reduction ``op``: the lax reduction ``reducer`` over ``axis``, with NumPy's
    accumulator dtypes, ``initial`` and ``where`` (masked elements read the identity)."""
    x = asarray(x)
    sums = reducer in (lax.reduce_sum, lax.reduce_prod)
    extremes = reducer in (lax.reduce_max, lax.reduce_min)
    if dtype is not None:
        x = x.astype(dtype)
    elif sums:
        wide = _accumulator(x.dtype)
        x = x.astype(wide) if wide != x.dtype else x
    if where_ is not None:
        if extremes and initial is None:
            error = _error(op, f"{op} has no identity element, so a where= mask needs "
                           "initial= too (the value where every element is masked out)")
            raise ValueError(*error.args)
        identity = {lax.reduce_sum: 0, lax.reduce_prod: 1, lax.reduce_and: True,
                    lax.reduce_or: False}.get(reducer, initial)
        mask = asarray(where_)
        x = where(mask if mask.dtype == np.bool_ else mask != 0, x,
                  asarray(identity).astype(x.dtype))
    axes = _axes(axis, x.ndim, op)
    if extremes and builtins.any(x.shape[a] == 0 for a in axes) and initial is None:
        raise _error(op, "zero-size array to reduction operation which has no identity")
    result_dtype, weak = x.dtype, x.weak
    if sums:
        x = _upcast(x)
    out = reducer(x, axes)
    if initial is not None:            # in the computation's dtype, as JAX converts it
        init = asarray(initial)
        init = init.astype(out.dtype) if init.dtype != out.dtype else init
        combine = {lax.reduce_max: maximum, lax.reduce_min: minimum, lax.reduce_sum: add,
                   lax.reduce_prod: multiply}[reducer]
        out = combine(out, init)
    if out.dtype != result_dtype:
        out = out.astype(result_dtype)
        out.weak = weak
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return out


def sum(x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    _no_out("sum", out)
    return _reduce("sum", lax.reduce_sum, x, axis, keepdims, dtype, initial, where)


def prod(x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         initial: Any = None, where: Any = None) -> Any:
    _no_out("prod", out)
    return _reduce("prod", lax.reduce_prod, x, axis, keepdims, dtype, initial, where)


def max(x: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    _no_out("max", out)
    return _reduce("max", lax.reduce_max, x, axis, keepdims, None, initial, where)


def min(x: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
        initial: Any = None, where: Any = None) -> Any:
    _no_out("min", out)
    return _reduce("min", lax.reduce_min, x, axis, keepdims, None, initial, where)


amax, amin = max, min


def _where_for_reduce(x: Any, mask: Any, identity: Any) -> Any:
    return where(mask, x, identity)


def all(x: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    _no_out("all", out)
    return _reduce("all", lax.reduce_and, asarray(x).astype(bool), axis, keepdims,
                   where_=where)


def any(x: Any, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: Any = None) -> Any:
    _no_out("any", out)
    return _reduce("any", lax.reduce_or, asarray(x).astype(bool), axis, keepdims,
                   where_=where)


def mean(x: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         *, where: Any = None) -> Any:
    _no_out("mean", out)
    x = asarray(x)
    if dtypes.kind(x.dtype) in "biu" and dtype is None:
        x = x.astype(dtypes.default_float())
    axes = _axes(axis, x.ndim, "mean")
    if current_trace() is None:             # See Note [eager mean is one program]
        return _mean_program(x, axes, None if dtype is None else np.dtype(dtype), keepdims,
                             None if where is None else asarray(where))
    return _mean(x, axes, dtype, keepdims, where)


# Note [eager mean is one program]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX's jnp.mean is a jitted function, so even called outside jit it runs as one XLA
# program, in which the count it divides by is a constant: XLA folds ``sum / n`` into
# ``sum * (1 / n)``, which rounds differently in the last bit from the division op by op
# (the mean of 300 float32 NUTS draws: 3.68160987 under JAX, 3.68160963 divided). So an
# eager call compiles the same way (a jit of ``_mean``, cached per shape, axes, dtype
# and keepdims); under a trace the operations go into the traced program, which is
# compiled as a whole anyway. See Note [captured arrays are constants] in
# transforms/stages.py for the same folding of closed-over arrays.


def _mean(x: Any, axes: tuple[int, ...], dtype: Any, keepdims: bool, where: Any) -> Any:
    result_dtype = np.dtype(dtype) if dtype is not None else x.dtype
    computation = _computation_dtype(result_dtype)          # See _computation_dtype
    if computation != result_dtype:
        return _narrowed(_mean(x.astype(computation), axes, None, keepdims, where),
                         result_dtype, x)
    if where is not None:
        count = sum(broadcast_to(asarray(where), x.shape).astype(x.dtype), axis=axes,
                    keepdims=keepdims)
        return sum(x, axis=axes, dtype=dtype, keepdims=keepdims, where=where) / count
    n = math.prod(x.shape[a] for a in axes)
    total = sum(x, axis=axes, dtype=dtype, keepdims=keepdims)
    return total / np.asarray(n, total.dtype) if n else total * np.asarray(np.nan, total.dtype)


_mean_program = jit(_mean, static_argnums=(1, 2, 3))


def _narrowed(out: Any, dtype: np.dtype, like: Any) -> Any:
    out = out.astype(dtype)
    out.weak = bool(like.weak)
    return out


def var(x: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    """The variance; ``correction`` is the Array API's name for ``ddof``."""
    _no_out("var", out)
    if correction is not None:
        if ddof != 0:
            raise _error("var", "give ddof= or correction=, not both")
        ddof = correction
    x = asarray(x)
    if dtype is not None:
        if dtypes.kind(x.dtype) == "c" and dtypes.kind(dtype) != "c":
            raise ValueError("jnp.var of a complex array takes no real dtype=: the "
                             "variance of complex values is real; leave dtype= out or "
                             "give a complex dtype")
        x = x.astype(dtype)
    if dtypes.kind(x.dtype) in "biu":
        x = x.astype(dtypes.default_float())
    computation = _computation_dtype(x.dtype)                # See _computation_dtype
    if computation != x.dtype:
        return _narrowed(var(x.astype(computation), axis, None, None, ddof, keepdims,
                             where=where), x.dtype, x)
    axes = _axes(axis, x.ndim, "var")
    centered = x - mean(x, axis=axes, keepdims=True, where=where)
    # |x - mean|^2, real for complex x (as JAX and NumPy: the variance is real unless
    # a complex dtype= asks for the complex type).
    squared = (lax.real(centered * lax.conj(centered)) if dtypes.kind(x.dtype) == "c"
               else centered * centered)
    if where is None:
        n = math.prod(x.shape[a] for a in axes) - ddof
        count = np.asarray(n, squared.dtype)
    else:
        mask = broadcast_to(asarray(where), x.shape)
        count = sum(mask.astype(squared.dtype), axis=axes, keepdims=keepdims) - ddof
    out = sum(squared, axis=axes, keepdims=keepdims, where=where) / count
    return out.astype(x.dtype) if dtype is not None else out


def std(x: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
        keepdims: bool = False, *, where: Any = None, correction: Any = None) -> Any:
    return sqrt(var(x, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def _arg_reduce(op: str, lax_arg: Callable[..., Any], x: Any, axis: Any,
                keepdims: bool) -> Any:
    x = asarray(x)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _axis(axis, x.ndim, op)
    if x.shape[axis] == 0:
        raise _error(op, "attempt to get argmax/argmin of an empty sequence")
    out = lax_arg(x, axis, dtypes.default_int())
    if keepdims:
        out = expand_dims(out, axis)
    return out


def argmax(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _arg_reduce("argmax", lax.argmax, x, axis, keepdims)


def argmin(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    return _arg_reduce("argmin", lax.argmin, x, axis, keepdims)


def _cumulative(op: str, lax_cumulative: Callable[..., Any], x: Any, axis: Any, dtype: Any,
                out: Any) -> Any:
    _no_out(op, out)
    x = asarray(x)
    if dtype is not None:
        x = x.astype(dtype)
    elif x.dtype == np.bool_:              # booleans count (JAX); other dtypes are kept
        x = x.astype(dtypes.default_int())
    if axis is None:
        x, axis = ravel(x), 0
    return lax_cumulative(x, _axis(axis, x.ndim, op))


def cumsum(x: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    return _cumulative("cumsum", lax.cumsum, x, axis, dtype, out)


def cumprod(x: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
    return _cumulative("cumprod", lax.cumprod, x, axis, dtype, out)


def _logsumexp_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < builtins.max(ndim, 1):
            raise ValueError(f"logsumexp: axis {a} is out of bounds for an array of rank {ndim}")
        out.append(int(a) % builtins.max(ndim, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"logsumexp: repeated axis in {axis!r}")
    return tuple(out)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """``log(sum(b * exp(a), axis))`` without overflow (JAX's ``jax.nn.logsumexp`` and
    ``jax.scipy.special.logsumexp``, which spmdc.nn and spmdc.scipy re-export): the
    maximum (where finite) is taken out before ``exp`` and added back, under
    ``stop_gradient`` so that gradients are exact and finite. With ``b``, a negative sum
    gives NaN unless ``return_sign``, which returns ``(log|sum|, sign(sum))``. ``where``
    masks entries out of the sum."""
    mask = where
    if mask is not None:
        a = _where(mask, a, 0)
    if b is not None:
        a, b = inexact(a, b)
        a = _where(b != 0, a, -np.inf)
    else:
        (a,) = inexact(a)
    axes = _logsumexp_axes(axis, a.ndim)
    masked = a if mask is None else _where(mask, a, -np.inf)
    if builtins.any(a.shape[i] == 0 for i in axes):
        amax = max(masked, axes, keepdims=True, initial=-np.inf)
    else:
        amax = max(masked, axes, keepdims=True)
    amax = stop_gradient(_where(isfinite(amax), amax, 0))
    exp_a = exp(a - amax)
    if b is not None:
        exp_a = exp_a * b
    sumexp = sum(exp_a, axes, keepdims=True, where=mask)
    sign_ = sign(sumexp)
    out = log(abs(sumexp)) + amax
    if not keepdims:
        out, sign_ = squeeze(out, axes), squeeze(sign_, axes)
    if return_sign:
        return out, sign_
    if b is not None:
        out = _where(sign_ < 0, np.nan, out)
    return out


def allclose(a: Any, b: Any, rtol: Any = 1e-5, atol: Any = 1e-8, equal_nan: bool = False
             ) -> Any:
    return all(isclose(a, b, rtol, atol, equal_nan))


def isclose(a: Any, b: Any, rtol: Any = 1e-5, atol: Any = 1e-8, equal_nan: bool = False
            ) -> Any:
    """``|a - b| <= atol + rtol |b|`` in a float type (integers are not subtracted in their
    own, where the difference could wrap), equal infinities close, NaNs close only with
    ``equal_nan``: JAX's (and NumPy's) rule; typed keys are close when equal."""
    rule = extended_rule("isclose", a, b)
    if rule is not None:
        return rule(a, b)
    from .comparisons import logical_and, logical_or
    from .ufuncs import _floats, isnan
    a, b = _floats(a, b)
    real = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}.get(
        np.dtype(a.dtype), a.dtype)
    rtol, atol = asarray(rtol).astype(real), asarray(atol).astype(real)
    in_range = less_equal(abs(a - b), atol + rtol * abs(b))
    out = logical_or(equal(a, b), logical_and(isfinite(b), in_range))
    return logical_or(out, logical_and(isnan(a), isnan(b))) if equal_nan else out


def array_equal(a1: Any, a2: Any, equal_nan: bool = False) -> Any:
    """A boolean scalar array: whether ``a1`` and ``a2`` have one shape and equal
    elements (NaN equal to NaN when ``equal_nan``). As in JAX it is an array, not a Python
    bool, so that it can be traced (under jit it is a traced value)."""
    rule = extended_rule("array_equal", a1, a2)
    if rule is not None:
        return rule(a1, a2)
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    same = equal(a1, a2)
    if equal_nan:
        same = lax.bitwise_or(same, lax.bitwise_and(isnan(a1), isnan(a2)))
    return all(same)


def _nan_masked(x: Any, fill: Any) -> Any:
    x = asarray(x)
    if dtypes.kind(x.dtype) not in "fc":
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
    if dtypes.kind(a.dtype) not in "fc":
        return reduce(a, axis, None, keepdims, initial, where_)
    if not dtypes.supports_inf(a.dtype):    # a float8 without infinities: its extreme
        fill = float(np.sign(fill)) * float(dtypes.finfo(a.dtype).max)
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
    if dtypes.kind(a.dtype) not in "fc":
        return mean(a, axis, dtype, None, keepdims, where=where)
    dtype = dtypes.canonicalize(dtype) if dtype is not None else a.dtype
    total = sum(_nan_masked(a, 0), axis, dtype, None, keepdims, where=where)
    return total / _count(a, axis, keepdims, where).astype(total.dtype)


def nanvar(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None) -> Any:
    """var over the elements that are not NaN (``ddof`` subtracted from their count)."""
    _no_out("nanvar", out)
    a = asarray(a)
    if dtypes.kind(a.dtype) in "biu":
        a = a.astype(dtypes.default_float())
    if dtype is not None:
        a = a.astype(dtype)
    centre = nanmean(a, axis, keepdims=True, where=where)
    deviation = _nan_masked(a - centre, 0)
    deviation = deviation * (deviation.conj() if dtypes.kind(a.dtype) == "c" else deviation)
    total = sum(deviation, axis, None, None, keepdims, where=where)
    count = _count(a, axis, keepdims, where).astype(total.dtype)
    return total / maximum(count - ddof, np.zeros((), total.dtype))


def nanstd(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: int = 0,
           keepdims: bool = False, where: Any = None) -> Any:
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where))


def _nan_arg(op: str, fill: float, a: Any, axis: Any, keepdims: bool) -> Any:
    a = asarray(a)
    if dtypes.kind(a.dtype) not in "fc":
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


def _cumulative_with_initial(op: str, fn: Any, identity: int, x: Any, axis: Any, dtype: Any,
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
    return _cumulative_with_initial("cumulative_sum", cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x: Any, /, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """cumprod in the array API's form (see cumulative_sum)."""
    return _cumulative_with_initial("cumulative_prod", cumprod, 1, x, axis, dtype, include_initial)


def count_nonzero(a: Any, axis: Any = None, keepdims: bool = False) -> Any:
    a = asarray(a)
    return sum(a != 0, axis, dtype=dtypes.default_int(), keepdims=keepdims)


def array_equiv(a1: Any, a2: Any) -> Any:
    """Whether the arrays broadcast together and are equal everywhere (False if they do
    not broadcast)."""
    a1, a2 = asarray(a1), asarray(a2)
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        return asarray(False)
    return all(a1 == a2)
