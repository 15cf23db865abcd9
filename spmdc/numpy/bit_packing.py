"""``packbits`` and ``unpackbits``: booleans packed 8 to a uint8 along an axis, and the
bits of a uint8 array unpacked, in 'big' or 'little' bit order, as NumPy and JAX give them.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..core import dtypes
from ..core.tracing import where as _where
from .core import asarray
from .editing import normalized_axis
from .reductions import sum as jnp_sum
from .shape_ops import expand_dims, pad, ravel, reshape, swapaxes

__all__ = ["packbits", "unpackbits"]


def _axis_last(op: str, arr: Any, axis: int | None, bitorder: str) -> tuple[Any, int]:
    """``arr`` with the axis the bits run along (the flattened array's if ``axis`` is None)
    moved last, and that axis; ``bitorder`` checked."""
    if bitorder not in ("little", "big"):
        raise ValueError(f"{op}: bitorder must be 'little' or 'big', got {bitorder!r}"
                         f"{_where()}")
    if axis is None:
        arr, axis = ravel(arr), 0
    axis = normalized_axis(op, axis, arr.ndim)
    return swapaxes(arr, axis, -1), axis


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Booleans (non-zero entries) packed 8 to a uint8 along ``axis``."""
    arr = asarray(a)
    if not (dtypes.is_int(arr.dtype) or arr.dtype == np.bool_):
        raise TypeError(f"packbits: expected an integer or boolean array, got {arr.dtype}"
                        f"{_where()}")
    arr, axis = _axis_last("packbits", (arr != 0).astype(np.uint8), axis, bitorder)
    shifts = np.arange(8, dtype=np.uint8)
    if bitorder == "big":
        shifts = shifts[::-1]
    remainder = arr.shape[-1] % 8
    if remainder:
        arr = pad(arr, [(0, 0)] * (arr.ndim - 1) + [(0, 8 - remainder)])
    arr = reshape(arr, arr.shape[:-1] + (arr.shape[-1] // 8, 8))
    packed = jnp_sum(arr << asarray(shifts), axis=-1).astype(np.uint8)
    return swapaxes(packed, axis, -1)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None,
               bitorder: str = "big") -> Any:
    """The bits of a uint8 array, each a uint8 0 or 1, along ``axis``."""
    arr = asarray(a)
    if arr.dtype != np.uint8:
        raise TypeError(f"unpackbits: expected a uint8 array, got {arr.dtype}{_where()}")
    arr, axis = _axis_last("unpackbits", arr, axis, bitorder)
    bits = (np.uint8(1) << np.arange(8, dtype=np.uint8))
    if bitorder == "big":
        bits = bits[::-1]
    unpacked = ((expand_dims(arr, -1) & asarray(bits)) > 0).astype(np.uint8)
    unpacked = reshape(unpacked, unpacked.shape[:-2] + (-1,))
    if count is not None:
        count = operator.index(count)
        if count > unpacked.shape[-1]:
            unpacked = pad(unpacked, [(0, 0)] * (unpacked.ndim - 1)
                           + [(0, count - unpacked.shape[-1])])
        else:
            unpacked = unpacked[..., :count]
    return swapaxes(unpacked, axis, -1)
