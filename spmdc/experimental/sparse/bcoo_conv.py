"""``bcoo_conv_general_dilated``: JAX's sparse convolution, for what JAX's covers: one
spatial dimension, leading (batch, feature) dimensions of size 1, unit strides,
dilations and group counts, any padding; either operand a BCOO or a dense array.

The product of every stored element of ``lhs`` with every stored element of ``rhs``
lands at output coordinate ``i + pad_low - k`` (``i`` the lhs coordinate, ``k`` the
rhs one: lax's convolution is a cross-correlation); coordinates below 0 get index 0 and
value 0, those past the end stay out of range (so every operation drops them), as JAX's.
The result is a BCOO of shape ``(1, 1, out)`` with two batch dimensions.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.tracing import where
from spmdc.experimental.sparse.bcoo import BCOO

__all__ = ["bcoo_conv_general_dilated"]


def _pairs(name: str, value: Any, n: int) -> tuple[int, ...]:
    return (1,) * n if value is None else tuple(int(v) for v in value)


def bcoo_conv_general_dilated(lhs: Any, rhs: Any, *, window_strides: Sequence[int],
                              padding: Any, lhs_dilation: Sequence[int] | None = None,
                              rhs_dilation: Sequence[int] | None = None,
                              dimension_numbers: Any = None, feature_group_count: int = 1,
                              batch_group_count: int = 1, precision: Any = None,
                              preferred_element_type: Any = None,
                              out_sharding: Any = None) -> BCOO:
    """``lax.conv_general_dilated(lhs, rhs, ...)`` of a sparse ``lhs`` and/or ``rhs`` as a
    BCOO, in the cases JAX's supports (see the module docstring); the others are JAX's
    NotImplementedError."""
    # lax's own checks of shapes and parameters (JAX traces lax.conv_general_dilated).
    lax.conv_general_dilated(
        jnp.zeros(lhs.shape, lhs.dtype), jnp.zeros(rhs.shape, rhs.dtype), window_strides,
        padding, lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers, feature_group_count=feature_group_count,
        batch_group_count=batch_group_count, precision=precision,
        preferred_element_type=preferred_element_type)
    n = len(lhs.shape) - 2
    if _pairs("lhs_dilation", lhs_dilation, n) != (1,) * n:
        raise NotImplementedError("bcoo convolution with lhs_dilation.")
    if _pairs("rhs_dilation", rhs_dilation, n) != (1,) * n:
        raise NotImplementedError("bcoo convolution with rhs_dilation.")
    if tuple(int(s) for s in window_strides) != (1,) * n:
        raise NotImplementedError("bcoo convolution with non-unit window_strides.")
    if feature_group_count != 1 or batch_group_count != 1:
        raise NotImplementedError("bcoo convolution with non-unit group counts.")
    if tuple(lhs.shape[:2]) != (1, 1) or tuple(rhs.shape[:2]) != (1, 1):
        raise NotImplementedError("bcoo convolution with leading dimensions other than (1, 1)")
    if n != 1:
        raise NotImplementedError(f"bcoo convolution over {n} spatial dimensions: JAX's "
                                  f"covers one{where()}")
    if isinstance(padding, str):
        pads = lax.padtype_to_pads(lhs.shape[2:], rhs.shape[2:], window_strides, padding)
    else:
        pads = [tuple(int(p) for p in pair) for pair in padding]
    index_dtype = (lhs.indices.dtype if isinstance(lhs, BCOO)
                   else rhs.indices.dtype if isinstance(rhs, BCOO) else np.int32)
    left, right = _as_1d(lhs, index_dtype), _as_1d(rhs, index_dtype)
    return _conv_1d(left, right, pads[0], lhs.shape[2], rhs.shape[2])


def _as_1d(mat: Any, index_dtype: Any) -> tuple[Any, Any]:
    """(data, coordinates) of the stored elements of a (1, 1, n) operand."""
    if isinstance(mat, BCOO):
        mat = mat.update_layout(n_batch=2, n_dense=0)
        data = lax.squeeze(mat.data, (0, 1))
        indices = lax.squeeze(mat.indices, (0, 1, 3))
        return jnp.where(indices < mat.shape[-1], data, 0), indices  # out of range: 0
    if hasattr(mat, "shape") and hasattr(mat, "dtype"):
        data = lax.squeeze(jnp.asarray(mat), (0, 1))
        return data, jnp.arange(data.shape[0], dtype=index_dtype)
    raise TypeError(f"bcoo_conv_general_dilated: input of type {type(mat)} not recognized"
                    f"{where()}")


def _conv_1d(lhs: tuple[Any, Any], rhs: tuple[Any, Any], pads: tuple[int, int],
             n_lhs: int, n_rhs: int) -> BCOO:
    (a, i), (b, k) = lhs, rhs
    if a.dtype != b.dtype:
        raise TypeError(f"bcoo_conv_general_dilated: operands of dtypes {a.dtype} and "
                        f"{b.dtype}; convert one{where()}")
    data = (a[:, None] * b[None, :]).ravel()
    coords = (i[:, None] + (pads[0] - k)[None, :]).ravel()
    below = coords < 0
    coords = jnp.where(below, 0, coords)
    data = jnp.where(below, 0, data)
    size = max(0, n_lhs + pads[0] + pads[1] - n_rhs + 1)
    return BCOO((data[None, None], coords[None, None, :, None]), shape=(1, 1, size))
