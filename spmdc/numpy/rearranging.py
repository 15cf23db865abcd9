"""Rearranging elements: roll, rot90, fliplr, flipud (NumPy's "Rearranging elements"
section beyond flip and reshape, which shape_ops.py holds).

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..core import dtypes
from .core import _static_int, asarray
from .indexing import take
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
    wrapping around; ``shift`` may be traced."""
    a = asarray(a)
    if axis is None:
        return reshape(roll(reshape(a, (-1,)), shift, 0), a.shape)
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    shifts = asarray(shift)
    if shifts.ndim > 1:
        raise ValueError("roll: shift must be a scalar or a 1-d sequence")
    shifts = [shifts] if shifts.ndim == 0 else [shifts[i] for i in range(shifts.shape[0])]
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
        int_type = dtypes.default_int()
        positions = (asarray(np.arange(n, dtype=int_type)) - asarray(s).astype(int_type)) % n
        a = take(a, positions, axis=ax)
    return a
