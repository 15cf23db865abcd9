"""``jnp.pad``: every NumPy padding mode (constant, empty, edge, wrap, reflect,
symmetric, linear_ramp, maximum, minimum, mean, median) and a callable mode.

Part of spmdc.numpy (re-exported through shape_ops.pad).

Note [padding modes]
~~~~~~~~~~~~~~~~~~~~
Each mode pads one axis at a time, built from slices, flips, repeats and concatenation
of the operand (so it is traced like any other array code and differentiates and batches
through those ops); the widths are static, as in NumPy and JAX. ``reflect`` and
``symmetric`` pad wider than the axis by reflecting again off the part already padded,
chunk by chunk (NumPy's rule; with ``reflect_type='odd'`` each chunk is ``2 * edge - x``
about the current edge). Statistic modes round to the nearest integer for integer
arrays, as NumPy does. A callable mode gets each 1-d row of the zero-padded array, its
``(before, after)`` widths, the axis and the extra keywords, and returns the new row
(JAX's convention: it returns the row rather than editing it in place).
"""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..core.operands import operand as _operand
from ..core.tracing import where as _where
from .array_creation import linspace
from .core import asarray, broadcast_to
from .reductions import max as _max
from .reductions import mean as _mean
from .reductions import min as _min
from .shape_ops import concatenate, flip, repeat, squeeze
from .statistics import median as _median
from .ufuncs import round as _round
from .vectorize import apply_along_axis

_KEYWORDS = {"constant": ("constant_values",), "empty": (), "edge": (), "wrap": (),
             "linear_ramp": ("end_values",), "maximum": ("stat_length",),
             "minimum": ("stat_length",), "mean": ("stat_length",),
             "median": ("stat_length",), "reflect": ("reflect_type",),
             "symmetric": ("reflect_type",)}
_STATISTICS = {"maximum": _max, "minimum": _min, "mean": _mean, "median": _median}


def pad(array: Any, pad_width: Any, mode: str | Callable[..., Any] = "constant",
        **kwargs: Any) -> Any:
    """``array`` padded by ``pad_width`` (an int, ``(before, after)`` or one pair per
    axis) in NumPy's ``mode``. See Note [padding modes]."""
    x = asarray(array)
    widths = _pairs(pad_width, x.ndim, "pad_width", integral=True)
    if any(w < 0 for pair in widths for w in pair):
        raise ValueError(f"jnp.pad: pad_width must be non-negative, got {widths}{_where()}")
    if callable(mode):
        return _pad_callable(x, widths, mode, kwargs)
    if mode not in _KEYWORDS:
        raise NotImplementedError(f"jnp.pad: unknown mode {mode!r}; use one of "
                         f"{', '.join(sorted(_KEYWORDS))} or a callable{_where()}")
    extra = sorted(set(kwargs) - set(_KEYWORDS[mode]))
    if extra:
        raise ValueError(f"jnp.pad: mode {mode!r} takes no keyword {', '.join(extra)}"
                         f"{_where()}")
    if x.ndim == 0:
        return x
    if mode == "constant":
        return _pad_constant(x, widths, kwargs.get("constant_values", 0))
    if mode == "empty":
        return _pad_constant(x, widths, 0)
    if mode == "edge":
        return _pad_edge(x, widths)
    if mode == "wrap":
        return _pad_wrap(x, widths)
    if mode in ("reflect", "symmetric"):
        reflect_type = kwargs.get("reflect_type", "even")
        if reflect_type not in ("even", "odd"):
            raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got "
                             f"{reflect_type!r}{_where()}")
        return _pad_reflect(x, widths, mode, reflect_type)
    if mode == "linear_ramp":
        ends = _pairs(kwargs.get("end_values", 0), x.ndim, "end_values", integral=False)
        return _pad_linear_ramp(x, widths, ends)
    lengths = kwargs.get("stat_length")
    if lengths is not None:
        lengths = _pairs(lengths, x.ndim, "stat_length", integral=True)
    return _pad_statistic(x, widths, lengths, _STATISTICS[mode])


def _pairs(value: Any, ndim: int, name: str, *, integral: bool) -> list[tuple[Any, Any]]:
    """``value`` as one ``(before, after)`` pair per axis (NumPy's broadcasting of a
    scalar, a pair or a column of pairs)."""
    v = np.asarray(value, dtype=object if not integral else None)
    if integral:
        if v.dtype.kind not in "iub":
            raise TypeError(f"jnp.pad: {name} must be integers, got {value!r}{_where()}")
        v = v.astype(np.int64)
    if v.ndim > 2 or v.size not in (1, 2, 2 * ndim) or (v.ndim == 2 and v.shape[1] not in (1, 2)):
        raise ValueError(f"jnp.pad: {name} must be a scalar, (before, after) or one pair "
                         f"per axis of the rank-{ndim} array, got shape {v.shape}{_where()}")
    try:
        v = np.broadcast_to(v, (ndim, 2))
    except ValueError:
        raise ValueError(f"jnp.pad: {name} of shape {v.shape} does not broadcast to "
                         f"({ndim}, 2){_where()}") from None
    if integral:
        return [(operator.index(lo), operator.index(hi)) for lo, hi in v]
    return [(lo, hi) for lo, hi in v]


def _empty_axis(x: Any, axis: int, pair: tuple[int, int], mode: str) -> bool:
    if x.shape[axis] == 0 and (pair[0] or pair[1]):
        raise ValueError(f"jnp.pad: cannot pad the empty axis {axis} in mode {mode!r}"
                         f"{_where()}")
    return x.shape[axis] == 0


def _slice(x: Any, start: int, stop: int, axis: int) -> Any:
    return lax.slice_in_dim(x, start, stop, axis=axis)


def _pad_constant(x: Any, widths: list[tuple[int, int]], values: Any) -> Any:
    if np.ndim(values) == 0:
        return lax.pad(x, _operand(values, x.dtype), [(lo, hi, 0) for lo, hi in widths])
    values = asarray(values).astype(x.dtype)
    if values.ndim > 2 or values.shape[-1] not in (1, 2):
        raise ValueError(f"jnp.pad: constant_values of shape {values.shape} is not a "
                         f"scalar, (before, after) or one pair per axis{_where()}")
    values = broadcast_to(values, (x.ndim, 2))
    for axis, (lo, hi) in enumerate(widths):
        for side, width in enumerate((lo, hi)):
            if width:
                config = [(0, 0, 0)] * x.ndim
                config[axis] = (width, 0, 0) if side == 0 else (0, width, 0)
                x = lax.pad(x, values[axis, side], config)
    return x


def _pad_edge(x: Any, widths: list[tuple[int, int]]) -> Any:
    for axis, (lo, hi) in enumerate(widths):
        if _empty_axis(x, axis, (lo, hi), "edge"):
            continue
        n = x.shape[axis]
        x = concatenate([repeat(_slice(x, 0, 1, axis), lo, axis=axis), x,
                         repeat(_slice(x, n - 1, n, axis), hi, axis=axis)], axis=axis)
    return x


def _pad_wrap(x: Any, widths: list[tuple[int, int]]) -> Any:
    for axis, (lo, hi) in enumerate(widths):
        if _empty_axis(x, axis, (lo, hi), "wrap"):
            continue
        n = x.shape[axis]
        lo_whole, lo_part = divmod(lo, n)
        hi_whole, hi_part = divmod(hi, n)
        parts = [_slice(x, n - lo_part, n, axis)] if lo_part else []
        parts += [x] * (lo_whole + 1 + hi_whole)
        parts += [_slice(x, 0, hi_part, axis)] if hi_part else []
        x = concatenate(parts, axis=axis)
    return x


def _pad_reflect(x: Any, widths: list[tuple[int, int]], mode: str,
                 reflect_type: str) -> Any:
    for axis, (lo, hi) in enumerate(widths):
        if _empty_axis(x, axis, (lo, hi), mode):
            continue
        x = _reflect_side(x, axis, lo, mode, reflect_type, before=True)
        x = _reflect_side(x, axis, hi, mode, reflect_type, before=False)
    return x


def _reflect_side(x: Any, axis: int, width: int, mode: str, reflect_type: str,
                  before: bool) -> Any:
    """Pad one side of ``axis`` by ``width`` reflected values, a chunk (at most the
    original length, less the edge for ``reflect``) at a time."""
    n = x.shape[axis]
    skip = 1 if (mode == "reflect" and n > 1) else 0        # reflect omits the edge
    edge = _slice(x, 0, 1, axis) if before else _slice(x, x.shape[axis] - 1,
                                                        x.shape[axis], axis)
    while width > 0:
        chunk = min(width, n - skip)
        width -= chunk
        size = x.shape[axis]
        if before:
            part = _slice(x, skip, skip + chunk, axis)
        else:
            stop = size if (mode == "symmetric" or n == 1) else size - 1
            part = _slice(x, stop - chunk, stop, axis)
        part = flip(part, axis)
        if reflect_type == "odd":
            part = 2 * edge - part
            if n > 1:
                edge = (_slice(part, 0, 1, axis) if before
                        else _slice(part, chunk - 1, chunk, axis))
        x = concatenate([part, x] if before else [x, part], axis=axis)
    return x


def _pad_linear_ramp(x: Any, widths: list[tuple[int, int]],
                     ends: list[tuple[Any, Any]]) -> Any:
    for axis, ((lo, hi), (end_lo, end_hi)) in enumerate(zip(widths, ends, strict=True)):
        if _empty_axis(x, axis, (lo, hi), "linear_ramp"):
            continue
        n = x.shape[axis]
        first = squeeze(_slice(x, 0, 1, axis), axis)
        last = squeeze(_slice(x, n - 1, n, axis), axis)
        before = linspace(end_lo, first, lo, endpoint=False, dtype=x.dtype, axis=axis)
        after = linspace(end_hi, last, hi, endpoint=False, dtype=x.dtype, axis=axis)
        x = concatenate([before, x, flip(after, axis)], axis=axis)
    return x


def _pad_statistic(x: Any, widths: list[tuple[int, int]],
                   lengths: list[tuple[int, int]] | None, statistic: Callable) -> Any:
    for axis, (lo, hi) in enumerate(widths):
        n = x.shape[axis]
        if lengths is None:
            stat_lo = stat_hi = statistic(x, axis=axis, keepdims=True)
        else:
            len_lo, len_hi = lengths[axis]
            if len_lo == 0 or len_hi == 0:
                raise ValueError(f"jnp.pad: a stat_length of 0 leaves no values for the "
                                 f"statistic (axis {axis}){_where()}")
            len_lo, len_hi = min(len_lo, n), min(len_hi, n)
            stat_lo = statistic(_slice(x, 0, len_lo, axis), axis=axis, keepdims=True)
            stat_hi = statistic(_slice(x, n - len_hi, n, axis), axis=axis, keepdims=True)
        if x.dtype.kind in "iu":
            stat_lo, stat_hi = _round(stat_lo), _round(stat_hi)
        x = concatenate([repeat(stat_lo.astype(x.dtype), lo, axis=axis), x,
                         repeat(stat_hi.astype(x.dtype), hi, axis=axis)], axis=axis)
    return x


def _pad_callable(x: Any, widths: list[tuple[int, int]], func: Callable[..., Any],
                  kwargs: dict) -> Any:
    padded = _pad_constant(x, widths, 0) if x.ndim else x
    for axis in range(padded.ndim):
        padded = apply_along_axis(func, axis, padded, widths[axis], axis, kwargs)
    return padded


__all__ = ["pad"]
