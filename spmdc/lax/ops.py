"""More of spmdc.lax: the elementwise, cumulative, index and shape operations users call,
each a thin wrapper over an existing primitive (so they vmap, differentiate and lower as
that primitive does). Like the rest of lax they do not promote dtypes: the operands of a
binary operation must already agree.
"""
from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.primitives.complex_parts import abs_p
from ..compiler.primitives.core import Primitive
from ..compiler.primitives.cumulative import cummax_p, cummin_p, cumprod_p, cumsum_p
from ..compiler.primitives.elementwise import (
    acos_p,
    acosh_p,
    asin_p,
    asinh_p,
    atan2_p,
    atan_p,
    atanh_p,
    bitcast_convert_p,
    cbrt_p,
    ceil_p,
    cosh_p,
    exp2_p,
    expm1_p,
    floor_p,
    integer_pow_p,
    is_finite_p,
    log1p_p,
    logistic_p,
    nextafter_p,
    pow_p,
    rem_p,
    round_p,
    sign_p,
    sinh_p,
    tan_p,
)
from ..compiler.primitives.logic import (
    and_p,
    eq_p,
    ge_p,
    gt_p,
    le_p,
    lt_p,
    ne_p,
    not_p,
    or_p,
    population_count_p,
    shift_left_p,
    shift_right_arithmetic_p,
    shift_right_logical_p,
    xor_p,
)
from ..compiler.primitives.reductions import argmax_p, argmin_p, reduce_and_p, reduce_or_p
from ..compiler.primitives.structural import transpose_p
from ..core import dtypes, operands
from ..core.operands import shape_arg
from ..core.tracing import bind
from .core import _arr, _reshape, broadcast_in_dim, dot_general, rev, select, sort
from .core import slice as lax_slice

__all__ = ["RoundingMethod", "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh",
           "cosh", "sinh", "tan", "cbrt", "ceil", "floor", "sign", "exp2", "expm1", "log1p",
           "logistic", "is_finite", "population_count", "bitwise_not", "square",
           "reciprocal", "atan2", "rem", "pow", "nextafter", "bitwise_and", "bitwise_or",
           "bitwise_xor", "shift_left", "shift_right_arithmetic", "shift_right_logical",
           "eq", "ne", "lt", "le", "gt", "ge", "round", "cumsum", "cumprod",
           "cummax", "cummin", "argmax", "argmin", "reduce_and", "reduce_or",
           "expand_dims", "squeeze", "reshape", "transpose", "collapse", "full", "full_like",
           "broadcasted_iota", "broadcast", "index_in_dim", "slice_in_dim",
           "bitcast_convert_type", "broadcast_shapes"]


def _unary(name: str, prim: Primitive) -> Any:
    def fn(x: Any) -> Any:
        x = _arr(x)
        return bind(prim, x, weak=x.weak)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (the ``{prim.name}`` primitive)."
    return fn


def _binary(name: str, prim: Primitive, weak_out: bool = True) -> Any:
    def fn(x: Any, y: Any) -> Any:
        x, y = _arr(x), _arr(y)
        if x.dtype != y.dtype:
            raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                            f"{x.dtype}, {y.dtype}; convert one with lax.convert_element_type")
        return bind(prim, x, y, weak=weak_out and x.weak and y.weak)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` of two arrays of one dtype."
    return fn


abs, acos, acosh, asin, asinh = (_unary("abs", abs_p), _unary("acos", acos_p),
                                 _unary("acosh", acosh_p), _unary("asin", asin_p),
                                 _unary("asinh", asinh_p))
atan, atanh, cosh, sinh, tan = (_unary("atan", atan_p), _unary("atanh", atanh_p),
                                _unary("cosh", cosh_p), _unary("sinh", sinh_p),
                                _unary("tan", tan_p))
cbrt, ceil, floor, sign = (_unary("cbrt", cbrt_p), _unary("ceil", ceil_p),
                           _unary("floor", floor_p), _unary("sign", sign_p))
exp2, expm1, log1p, logistic = (_unary("exp2", exp2_p), _unary("expm1", expm1_p),
                                _unary("log1p", log1p_p), _unary("logistic", logistic_p))
population_count = _unary("population_count", population_count_p)
bitwise_not = _unary("bitwise_not", not_p)
atan2, rem, pow, nextafter = (_binary("atan2", atan2_p), _binary("rem", rem_p),
                              _binary("pow", pow_p), _binary("nextafter", nextafter_p))
bitwise_and, bitwise_or, bitwise_xor = (
    _binary("bitwise_and", and_p), _binary("bitwise_or", or_p), _binary("bitwise_xor", xor_p))
shift_left, shift_right_arithmetic, shift_right_logical = (
    _binary("shift_left", shift_left_p),
    _binary("shift_right_arithmetic", shift_right_arithmetic_p),
    _binary("shift_right_logical", shift_right_logical_p))
eq, ne, lt, le, gt, ge = (_binary(n, p, weak_out=False) for n, p in (
    ("eq", eq_p), ("ne", ne_p), ("lt", lt_p), ("le", le_p), ("gt", gt_p), ("ge", ge_p)))


def is_finite(x: Any) -> Any:
    return bind(is_finite_p, _arr(x))


def square(x: Any) -> Any:
    """``x * x``."""
    x = _arr(x)
    return bind(integer_pow_p, x, y=2, weak=x.weak)


def reciprocal(x: Any) -> Any:
    """``1 / x``."""
    x = _arr(x)
    return bind(integer_pow_p, x, y=-1, weak=x.weak)


class RoundingMethod(enum.IntEnum):
    """How ``lax.round`` breaks ties: away from zero (0) or to the nearest even (1)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x: Any, rounding_method: Any = RoundingMethod.AWAY_FROM_ZERO) -> Any:
    """Round to the nearest integer; ties go away from zero, or to even with
    ``rounding_method=RoundingMethod.TO_NEAREST_EVEN`` (or 1)."""
    if isinstance(rounding_method, str):
        rounding_method = RoundingMethod[rounding_method.upper()]
    method = int(rounding_method)
    if method not in (0, 1):
        raise ValueError(f"lax.round: rounding_method must be a lax.RoundingMethod (0 or 1), "
                         f"got {rounding_method!r}")
    x = _arr(x)
    return bind(round_p, x, rounding_method=method, weak=x.weak)


def _axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ValueError(f"lax.{op}: axis {axis} is out of bounds for an operand of rank {ndim}")
    return axis % ndim


def _cumulative(prim: Primitive) -> Any:
    name = prim.name

    def fn(operand: Any, axis: int = 0, reverse: bool = False) -> Any:
        x = _arr(operand)
        return bind(prim, x, axis=_axis(name, axis, x.ndim), reverse=bool(reverse),
                    weak=x.weak)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Cumulative ``{name[3:]}`` along ``axis`` (from the end if ``reverse``)."
    return fn


cumsum, cumprod, cummax, cummin = map(_cumulative, (cumsum_p, cumprod_p, cummax_p, cummin_p))


def _arg(prim: Primitive) -> Any:
    name = prim.name

    def fn(operand: Any, axis: int, index_dtype: Any) -> Any:
        x = _arr(operand)
        return bind(prim, x, axis=_axis(name, axis, x.ndim),
                    index_dtype=dtypes.canonicalize(index_dtype))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Index of the {name[3:]}imum along ``axis``, in ``index_dtype``."
    return fn


argmax, argmin = _arg(argmax_p), _arg(argmin_p)


def _bool_reducer(prim: Primitive) -> Any:
    name = prim.name

    def fn(operand: Any, axes: Sequence[int]) -> Any:
        x = _arr(operand)
        if x.dtype != np.bool_:
            raise TypeError(f"lax.{name} supports bool operands only here, got {x.dtype}")
        return bind(prim, x, axes=tuple(_axis(name, a, x.ndim) for a in axes),
                    weak=x.weak)
    fn.__name__ = fn.__qualname__ = name
    return fn


reduce_and, reduce_or = _bool_reducer(reduce_and_p), _bool_reducer(reduce_or_p)


def expand_dims(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` with dimensions of size 1 inserted at ``dimensions`` (of the result)."""
    x = _arr(array)
    ndim = x.ndim + len(dimensions)
    shape = list(x.shape)
    for d in sorted(_axis("expand_dims", d, ndim) for d in dimensions):
        shape.insert(d, 1)
    return _reshape(x, tuple(shape))


def squeeze(array: Any, dimensions: Sequence[int]) -> Any:
    """``array`` without its ``dimensions``, each of size 1."""
    x = _arr(array)
    dims = {_axis("squeeze", d, x.ndim) for d in dimensions}
    for d in sorted(dims):
        if x.shape[d] != 1:
            raise ValueError(f"lax.squeeze: dimension {d} of shape {x.shape} has size "
                             f"{x.shape[d]}, not 1")
    return _reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in dims))


def reshape(operand: Any, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None
            ) -> Any:
    """Reshape (after transposing by ``dimensions`` when given)."""
    x = _arr(operand)
    if dimensions is not None:
        x = transpose(x, dimensions)
    shape = shape_arg(tuple(new_sizes), "reshape")
    if math.prod(shape) != x.size:
        raise TypeError(f"lax.reshape: cannot reshape an array of shape {x.shape} "
                        f"({x.size} elements) into shape {shape}")
    return _reshape(x, shape)


def transpose(operand: Any, permutation: Sequence[int]) -> Any:
    """``operand`` with its dimensions in the order ``permutation``."""
    x = _arr(operand)
    perm = tuple(_axis("transpose", d, x.ndim) for d in permutation)
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"lax.transpose: {tuple(permutation)} is not a permutation of the "
                         f"{x.ndim} dimensions")
    if perm == tuple(range(x.ndim)):
        return x
    return bind(transpose_p, x, permutation=perm, weak=x.weak)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge dimensions ``start_dimension:stop_dimension`` into one."""
    x = _arr(operand)
    lo, hi, _ = builtins_slice(start_dimension, stop_dimension).indices(x.ndim)
    size = int(np.prod(x.shape[lo:hi], dtype=np.int64))
    return reshape(x, x.shape[:lo] + (size,) + x.shape[hi:])


builtins_slice = slice


def full(shape: Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    return operands.full(shape_arg(shape), fill_value, dtype)


def full_like(x: Any, fill_value: Any, dtype: Any = None, shape: Any = None) -> Any:
    return full(operands.shape_of(x) if shape is None else shape, fill_value,
                dtype if dtype is not None else operands.dtype_of(x))


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """An array of ``shape`` counting 0, 1, ... along ``dimension``."""
    shape = shape_arg(shape, "broadcasted_iota")
    return operands.iota(dtypes.canonicalize(dtype), shape,
                         _axis("broadcasted_iota", dimension, len(shape)))


def broadcast(operand: Any, sizes: Sequence[int]) -> Any:
    """Add leading dimensions of ``sizes``."""
    x = _arr(operand)
    sizes = tuple(int(s) for s in sizes)
    return broadcast_in_dim(x, sizes + x.shape, tuple(range(len(sizes), len(sizes) + x.ndim)))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    return operands.broadcast_shapes(*shapes)


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    """``operand[start:limit:stride]`` along ``axis`` (static bounds)."""
    x = _arr(operand)
    axis = _axis("slice_in_dim", axis, x.ndim)
    n = x.shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start, limit = (start + n if start < 0 else start), (limit + n if limit < 0 else limit)
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return lax_slice(x, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """``operand[index]`` along ``axis`` (static index; negative counts from the end)."""
    x = _arr(operand)
    axis = _axis("index_in_dim", axis, x.ndim)
    n = x.shape[axis]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"lax.index_in_dim: index {i} is out of bounds for axis {axis} of "
                         f"size {n}")
    i %= n
    out = slice_in_dim(x, i, i + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def bitcast_convert_type(operand: Any, new_dtype: Any) -> Any:
    """The same bits read as ``new_dtype``, which must have the same width."""
    x = _arr(operand)
    return bind(bitcast_convert_p, x, new_dtype=dtypes.canonicalize(new_dtype))


__all__ += ["top_k", "select_n", "dot", "split", "tile", "broadcast_to_rank"]


def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The ``k`` largest entries along the last axis, in descending order, and their
    indices (int32; among equal entries the lower index comes first)."""
    x = _arr(operand)
    k = int(k)
    if x.ndim == 0:
        raise ValueError("lax.top_k: the operand must have at least one dimension")
    if not 0 <= k <= x.shape[-1]:
        raise ValueError(f"lax.top_k: k={k} must be between 0 and the last dimension's size "
                         f"{x.shape[-1]}")
    values, indices = _sorted_with_positions(x, descending=True)
    return slice_in_dim(values, 0, k, axis=-1), slice_in_dim(indices, 0, k, axis=-1)


def _sorted_with_positions(x: Any, descending: bool) -> tuple[Any, Any]:
    """``x`` stably sorted along its last axis and the int32 positions the values came
    from (jnp.argsort's order, ties by position; descending: reversed in and out)."""
    last = x.ndim - 1
    positions = operands.iota(np.dtype(np.int32), x.shape, last)
    if descending:
        x, positions = rev(x, (last,)), rev(positions, (last,))
    values, indices = sort((x, positions), last, num_keys=1)
    values.weak = x.weak                      # the values are x's, as a gather of x keeps
    if descending:
        values, indices = rev(values, (last,)), rev(indices, (last,))
    return values, indices


def select_n(which: Any, *cases: Any) -> Any:
    """``cases[which]`` elementwise: ``which`` is boolean (two cases) or an integer array
    of indices into ``cases``, which share one shape and dtype."""
    if not cases:
        raise ValueError("lax.select_n: needs at least one case")
    which = _arr(which)
    if len(cases) == 1:
        return _arr(cases[0])
    if which.dtype == np.bool_:
        if len(cases) != 2:
            raise ValueError(f"lax.select_n: a boolean selector picks from 2 cases, got "
                             f"{len(cases)}")
        return select(which, cases[1], cases[0])
    if which.dtype.kind not in "iu":
        raise TypeError(f"lax.select_n: which must be bool or an integer, got {which.dtype}")
    out = _arr(cases[-1])
    for i in range(len(cases) - 2, -1, -1):
        pick = which == np.asarray(i, which.dtype)
        if pick.shape != out.shape:
            pick = broadcast_in_dim(pick, out.shape, tuple(
                range(len(out.shape) - pick.ndim, len(out.shape))))
        out = select(pick, cases[i], out)
    return out


def dot(lhs: Any, rhs: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
    """Vector/matrix products of rank-1 and rank-2 operands (contracting lhs's last axis
    with rhs's first)."""
    x, y = _arr(lhs), _arr(rhs)
    if x.ndim not in (1, 2) or y.ndim not in (1, 2):
        raise TypeError(f"lax.dot needs rank-1 or rank-2 operands, got shapes {x.shape} and "
                        f"{y.shape}; use lax.dot_general")
    return dot_general(x, y, (((x.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """Pieces of the given ``sizes`` (summing to the axis' size) along ``axis``."""
    x = _arr(operand)
    axis = _axis("split", axis, x.ndim)
    sizes = [int(s) for s in sizes]
    if sum(sizes) != x.shape[axis] or any(s < 0 for s in sizes):
        raise ValueError(f"lax.split: sizes {sizes} must be non-negative and sum to "
                         f"{x.shape[axis]}, the size of axis {axis}")
    out, start = [], 0
    for s in sizes:
        out.append(slice_in_dim(x, start, start + s, 1, axis))
        start += s
    return out


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along dimension i (len(reps) == rank)."""
    x = _arr(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != x.ndim:
        raise ValueError(f"lax.tile: {len(reps)} repetitions for an operand of rank {x.ndim}")
    if all(r == 1 for r in reps):
        return x
    # each dimension d becomes (reps[d], n_d), broadcast, then merged
    tiled = broadcast_in_dim(x, tuple(n for r, s in zip(reps, x.shape, strict=True)
                                      for n in (r, s)),
                             tuple(range(1, 2 * x.ndim, 2)))
    return _reshape(tiled, tuple(r * s for r, s in zip(reps, x.shape, strict=True)))


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """``x`` with leading dimensions of size 1 added up to ``rank``."""
    x = _arr(x)
    if x.ndim >= rank:
        return x
    return broadcast(x, (1,) * (rank - x.ndim))
