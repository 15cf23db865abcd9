"""Shape manipulation for spmdc.numpy: reshape, transpose, broadcasting (broadcast_arrays),
concatenate/stack/split, padding, flip, tile, repeat, atleast_3d, rollaxis, resize,
matrix_transpose, permute_dims.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.concrete import concrete_value
from ..core.operands import full as _full
from ..core.operands import shape_arg as _shape_arg
from ..core.tracing import Tracer, where
from ..errors import ConcretizationTypeError
from .core import (
    _error,
    _promote,
    asarray,
    broadcast_shapes,
    broadcast_to,
    extended_rule,
)


def reshape(x: Any, shape: Any, order: str = "C") -> Any:
    """``x`` with a new shape (one -1 is inferred); ``order='F'`` reads and writes the
    elements in Fortran (column-major) order."""
    rule = extended_rule("reshape", x)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(x, shape, order)
    x = asarray(x)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    if order == "F":
        reversed_shape = tuple(reversed(shape))
        return transpose(reshape(transpose(x), reversed_shape))
    if order != "C":
        raise _error("reshape", f"order={order!r} is not supported; use 'C' or 'F'")
    if builtins.sum(1 for d in shape if d == -1) > 1:
        raise _error("reshape", f"can only specify one unknown dimension, got {shape}")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or x.size % known:
            raise _error("reshape", f"cannot reshape array of shape {x.shape} into {shape}")
        shape = tuple(x.size // known if d == -1 else d for d in shape)
    shape = tuple(int(d) for d in shape)
    if math.prod(shape) != x.size:
        raise _error("reshape", f"cannot reshape array of shape {x.shape} "
                     f"({x.size} elements) into shape {shape}")
    return lax.reshape(x, shape)


def ravel(x: Any) -> Any:
    rule = extended_rule("ravel", x)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(x)
    return reshape(x, (-1,))


def _axis(axis: int, ndim: int, op: str) -> int:
    if not -ndim <= axis < builtins.max(ndim, 1) or (ndim == 0 and axis not in (0, -1)):
        raise _error(op, f"axis {axis} is out of bounds for an array of rank {ndim}",
                     ValueError)
    return axis % ndim if ndim else 0


def _axes(axis: Any, ndim: int, op: str) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = tuple(_axis(int(a), ndim, op) for a in axes)
    if len(set(out)) != len(out):
        raise _error(op, f"repeated axis in {axis}", ValueError)
    return out


def transpose(x: Any, axes: Any = None) -> Any:
    rule = extended_rule("transpose", x)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(x, axes)
    x = asarray(x)
    perm = tuple(reversed(range(x.ndim))) if axes is None else \
        tuple(_axis(a, x.ndim, "transpose") for a in axes)
    if sorted(perm) != list(range(x.ndim)):
        raise _error("transpose", f"axes {axes} are not a permutation of {x.ndim} axes")
    return lax.transpose(x, perm)


def moveaxis(x: Any, source: Any, destination: Any) -> Any:
    rule = extended_rule("moveaxis", x)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(x, source, destination)
    x = asarray(x)
    src = _axes(source, x.ndim, "moveaxis")
    dst = _axes(destination, x.ndim, "moveaxis")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return transpose(x, order)


def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    rule = extended_rule("swapaxes", x)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(x, axis1, axis2)
    x = asarray(x)
    perm = list(range(x.ndim))
    a, b = _axis(axis1, x.ndim, "swapaxes"), _axis(axis2, x.ndim, "swapaxes")
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def expand_dims(x: Any, axis: Any) -> Any:
    rule = extended_rule("expand_dims", x)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(x, axis)
    x = asarray(x)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = x.ndim + len(axes)
    axes = sorted(_axis(a, ndim, "expand_dims") for a in axes)
    return lax.expand_dims(x, axes)


def squeeze(x: Any, axis: Any = None) -> Any:
    rule = extended_rule("squeeze", x)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(x, axis)
    x = asarray(x)
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = _axes(axis, x.ndim, "squeeze")
        for a in axes:
            if x.shape[a] != 1:
                raise _error("squeeze", f"cannot select an axis to squeeze out which has "
                             f"size not equal to one (axis {a} of shape {x.shape})", ValueError)
    return reshape(x, tuple(d for i, d in enumerate(x.shape) if i not in axes))


def atleast_1d(x: Any) -> Any:
    x = asarray(x)
    return reshape(x, (1,)) if x.ndim == 0 else x


def atleast_2d(x: Any) -> Any:
    x = atleast_1d(x)
    return reshape(x, (1, *x.shape)) if x.ndim == 1 else x


def concatenate(arrays: Sequence[Any], axis: int | None = 0) -> Any:
    rule = extended_rule("concatenate", *arrays)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(arrays, axis)
    if not len(arrays):
        raise _error("concatenate", "needs at least one array")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    arrays, _, _ = _promote("concatenate", *arrays)
    arrays = [asarray(a) for a in arrays]
    ndim = arrays[0].ndim
    if ndim == 0:
        raise _error("concatenate", "zero-dimensional arrays cannot be concatenated")
    axis = _axis(axis, ndim, "concatenate")
    for a in arrays:
        if a.ndim != ndim or builtins.any(a.shape[i] != arrays[0].shape[i]
                                          for i in range(ndim) if i != axis):
            raise _error("concatenate", "all input array dimensions except the "
                         f"concatenation axis must match: {[tuple(a.shape) for a in arrays]}")
    if len(arrays) == 1:
        return arrays[0]
    return lax.concatenate(arrays, axis)


def stack(arrays: Sequence[Any], axis: int = 0) -> Any:
    rule = extended_rule("stack", *arrays)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(arrays, axis)
    if not len(arrays):
        raise _error("stack", "needs at least one array")
    arrays = [asarray(a) for a in arrays]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise _error("stack", f"all input arrays must have the same shape, got {sorted(shapes)}",
                     ValueError)
    axis = _axis(axis, arrays[0].ndim + 1, "stack")
    return concatenate([expand_dims(a, axis) for a in arrays], axis)


def hstack(arrays: Sequence[Any]) -> Any:
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, 0 if arrays[0].ndim == 1 else 1)


def vstack(arrays: Sequence[Any]) -> Any:
    return concatenate([atleast_2d(a) for a in arrays], 0)


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    x = asarray(x)
    axis = _axis(axis, x.ndim, "split")
    n = x.shape[axis]
    if isinstance(indices_or_sections, int):
        if n % indices_or_sections:
            raise _error("split", f"array split does not result in an equal division "
                         f"({n} into {indices_or_sections})", ValueError)
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step)) if step else [0] * (indices_or_sections + 1)
    else:
        bounds = [0, *indices_or_sections, n]
    return [_slice_axis(x, axis, a, b) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]


def _slice_axis(x: Any, axis: int, start: int, stop: int) -> Any:
    start_indices = tuple(start if i == axis else 0 for i in range(x.ndim))
    limits = tuple(builtins.max(stop, start) if i == axis else d for i, d in enumerate(x.shape))
    return lax.slice(x, start_indices, limits)


def flip(x: Any, axis: Any = None) -> Any:
    rule = extended_rule("flip", x)
    if rule is not None:                    # See Note [shape functions on keys]
        return rule(x, axis)
    x = asarray(x)
    return lax.rev(x, _axes(axis, x.ndim, "flip"))


def tile(x: Any, reps: Any) -> Any:
    x = asarray(x)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    shape = (1,) * (len(reps) - x.ndim) + x.shape
    reps = (1,) * (len(shape) - len(reps)) + reps
    x = reshape(x, shape)
    big = broadcast_to(reshape(x, tuple(v for d in shape for v in (1, d))),
                       tuple(v for r, d in zip(reps, shape, strict=True) for v in (r, d)))
    return reshape(big, tuple(r * d for r, d in zip(reps, shape, strict=True)))


def repeat(a: Any, repeats: Any, axis: int | None = None, *,
           total_repeat_length: int | None = None) -> Any:
    """NumPy's repeat: each element along ``axis`` (of the flattened array when None)
    ``repeats`` times, or ``repeats[i]`` times for element i. As in JAX, the result's
    length must be known when tracing: ``repeats`` concrete, or ``total_repeat_length``
    given (the result then has that length: cut short, or padded with the last element
    repeated)."""
    x = asarray(a)
    if axis is None:
        x, axis = ravel(x), 0
    axis = _axis(axis, x.ndim, "repeat")
    n = x.shape[axis]
    counts = _concrete_repeats(repeats, total_repeat_length)
    if counts is not None and counts.ndim == 0 and (
            total_repeat_length is None or total_repeat_length == int(counts) * n):
        if int(counts) < 0:
            raise _error("repeat", f"repeats must be non-negative, got {int(counts)}")
        return _repeat_each(x, axis, int(counts))
    from .indexing import take
    if counts is not None and total_repeat_length is None:
        if np.any(counts < 0):
            raise _error("repeat", f"repeats must be non-negative, got {counts.tolist()}")
        try:
            counts = np.broadcast_to(counts, (n,))
        except ValueError:
            raise ValueError(f"repeat: repeats of shape {counts.shape} do not fit the "
                             f"{n} elements along axis {axis}") from None
        return take(x, np.repeat(np.arange(n), counts), axis=axis)
    # a traced count with a static total: where each element's run starts, as indices
    total = int(total_repeat_length)
    counts = broadcast_to(asarray(repeats).astype(np.int32), (n,))
    starts = lax.cumsum(counts) - counts
    marks = _full((total,), 0, np.int32).at[starts].add(1, mode="drop")
    return take(x, lax.cumsum(marks) - 1, axis=axis)


def _concrete_repeats(repeats: Any, total: int | None) -> np.ndarray | None:
    """``repeats`` as NumPy integers when known; None when traced and ``total`` is given
    (ConcretizationTypeError without it: the result's length would be unknown)."""
    if isinstance(repeats, Tracer):
        value = concrete_value(repeats)
        if value is None:
            if total is not None:
                return None
            raise ConcretizationTypeError(
                "repeat: the total number of repeats must be static under jit: pass "
                "concrete repeats, or a static total_repeat_length" + where())
        repeats = value
    counts = np.asarray(repeats)
    if counts.dtype.kind not in "iub":
        raise TypeError(f"repeat: repeats must be integers, got {counts.dtype}")
    return counts.astype(np.int64)


def _repeat_each(x: Any, axis: int, repeats: int) -> Any:
    y = expand_dims(x, axis + 1)
    shape = list(y.shape)
    shape[axis + 1] = repeats
    y = broadcast_to(y, tuple(shape))
    out = list(x.shape)
    out[axis] *= repeats
    return reshape(y, tuple(out))


def pad(array: Any, pad_width: Any, mode: Any = "constant", **kwargs: Any) -> Any:
    """NumPy's pad, every mode: see padding.py (imported here when called, as it builds
    on the reductions and statistics that import this module)."""
    from .padding import pad as pad_in_mode
    return pad_in_mode(array, pad_width, mode, **kwargs)


def atleast_3d(x: Any) -> Any:
    """``x`` with at least 3 dimensions: 1-d (n,) -> (1, n, 1), 2-d (m, n) -> (m, n, 1)."""
    x = asarray(x)
    if x.ndim >= 3:
        return x
    if x.ndim == 2:
        return expand_dims(x, 2)
    return expand_dims(atleast_2d(atleast_1d(x)), 2)


def rollaxis(a: Any, axis: int, start: int = 0) -> Any:
    """Move ``axis`` so that it lies before position ``start`` (NumPy's older moveaxis)."""
    a = asarray(a)
    axis = _axis(axis, a.ndim, "rollaxis")
    if not -a.ndim <= start <= a.ndim:
        raise ValueError(f"rollaxis: start {start} is out of bounds for rank {a.ndim}")
    start = start + a.ndim if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def resize(a: Any, new_shape: Any) -> Any:
    """``a`` flattened, repeated cyclically to fill ``new_shape``."""
    a = ravel(asarray(a))
    shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(s) for s in new_shape)
    if any(s < 0 for s in shape):
        raise ValueError(f"resize: all elements of new_shape must be non-negative, got {shape}")
    size = int(np.prod(shape, dtype=np.int64))
    if a.shape[0] == 0 or size == 0:
        return _full(_shape_arg(shape), 0, a.dtype)
    positions = np.arange(size) % a.shape[0]
    return reshape(a[asarray(positions.astype(dtypes.default_int()))], shape)


def matrix_transpose(x: Any) -> Any:
    """Swap the last two axes."""
    x = asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: needs at least 2 dimensions, got {x.shape}")
    return swapaxes(x, -1, -2)


def permute_dims(a: Any, axes: Sequence[int]) -> Any:
    return transpose(a, tuple(axes))


def broadcast_arrays(*args: Any) -> list[Any]:
    arrays = [asarray(a) for a in args]
    shape = broadcast_shapes(*(a.shape for a in arrays))
    return [broadcast_to(a, shape) for a in arrays]
