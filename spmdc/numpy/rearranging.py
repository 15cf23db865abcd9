"""Rearranging elements: roll, rot90, fliplr, flipud (NumPy's "Rearranging elements"
section beyond flip and reshape, which shape_ops.py holds).

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from .core import _static_int, asarray
from .shape_ops import _axis, flip, reshape, swapaxes


def fliplr(m: Any) -> Any:
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(f"fliplr: input must be at least 2-d, got shape {m.shape}")
    return flip(m, 1)


def flipud(m: Any) -> Any:
    m = asarray(m)
    if m.ndim < 1:
        raise ValueError("flipud: input must be at least 1-d")
    return flip(m, 0)


def rot90(m: Any, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first axis
    towards the second)."""
    m = asarray(m)
    k = _static_int("rot90", "k", k) % 4
    if len(axes) != 2:
        raise ValueError("rot90: axes must be a pair of axes")
    a0, a1 = _axis(axes[0], m.ndim, "rot90"), _axis(axes[1], m.ndim, "rot90")
    if a0 == a1:
        raise ValueError("rot90: the two axes must be different")
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    if k == 1:
        return swapaxes(flip(m, a1), a0, a1)
    return flip(swapaxes(m, a0, a1), a1)


def roll(a: Any, shift: Any, axis: Any = None) -> Any:
    """Elements shifted by ``shift`` along ``axis`` (the flattened array if None),
    wrapping around; ``shift`` may be traced. A known shift is two slices joined, a traced
    one a dynamic slice of the axis repeated twice (as JAX): no index array."""
    a = asarray(a)
    if axis is None:
        return reshape(roll(reshape(a, (-1,)), shift, 0), a.shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    static = _static_shifts(shift)
    shifts: list[Any]
    if static is not None:
        shifts = list(static)
    else:
        traced = asarray(shift)
        if traced.ndim > 1:
            raise ValueError("roll: shift must be a scalar or a 1-d sequence")
        shifts = [traced] if traced.ndim == 0 else [traced[i] for i in range(traced.shape[0])]
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    for s, ax in zip(shifts, axes, strict=True):
        ax = _axis(ax, a.ndim, "roll")
        n = a.shape[ax]
        if n == 0:
            continue
        if static is not None:
            i = (-s) % n
            a = lax.concatenate([lax.slice_in_dim(a, i, n, axis=ax),
                                 lax.slice_in_dim(a, 0, i, axis=ax)], ax)
        else:
            s = asarray(s).astype(np.int32) % np.int32(n)
            a = lax.dynamic_slice_in_dim(lax.concatenate([a, a], ax), np.int32(n) - s, n,
                                         axis=ax)
    return a


def _static_shifts(shift: Any) -> tuple[int, ...] | None:
    """The shifts as Python ints when they are known without tracing, else None."""
    if isinstance(shift, (int, np.integer)):
        return (int(shift),)
    if isinstance(shift, (tuple, list)) and all(isinstance(s, (int, np.integer))
                                                for s in shift):
        return tuple(int(s) for s in shift)
    if isinstance(shift, np.ndarray) and shift.dtype.kind in "iu" and shift.ndim <= 1:
        return tuple(int(s) for s in shift.reshape(-1))
    return None
