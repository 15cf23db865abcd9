"""``lax.scaled_dot``: a dot_general of two operands each multiplied by a scale per block
of its contracting dimensions (microscaling: float8 operands, ``float8_e8m0fnu`` scales).

As JAX 0.10.2 defines it (and lowers it everywhere), each scale is repeated over its
block, the operand and its scale are converted to bfloat16 and multiplied there, and the
two products meet in ``dot_general`` with ``preferred_element_type`` (bfloat16 unless
given). spmdc writes that definition with its own operations, so vmap, jit and the rest
apply as to any such program (JAX's primitive has a batching rule and no derivative;
spmdc's definition is differentiable too).
``nn.scaled_matmul`` is the other block-scaled product (float32 scaling, Note
[block-scaled matmul] in compiler/primitives/scaled_matmul.py).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from ..core import dtypes
from ..core.tracing import type_of
from .dot import dot_general
from .elementwise import convert_element_type, mul
from .shape import broadcast_in_dim, reshape

__all__ = ["scaled_dot"]

_BF16 = np.dtype(ml_dtypes.bfloat16)


def scaled_dot(lhs: Any, rhs: Any, *, lhs_scale: Any = None, rhs_scale: Any = None,
               dimension_numbers: Any = None, preferred_element_type: Any = None) -> Any:
    """``(lhs * lhs_scale) @ (rhs * rhs_scale)`` by ``dimension_numbers`` (default: the
    last dimension of ``lhs`` against the second-to-last of ``rhs``, the leading ones
    batch), each scale repeated over its block of the contracting dimensions; the
    products are formed in bfloat16 and the result is ``preferred_element_type``
    (bfloat16 by default). A missing scale is 1."""
    lhs_t, rhs_t = type_of(lhs)[0], type_of(rhs)[0]
    if dimension_numbers is None:
        n = lhs_t.ndim
        if n < 2:
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(d) for d in ds) for ds in (lc, rc, lb, rb))
    if lhs_scale is None:
        lhs_scale = _unit_scale(lhs_t.shape, lc)
    if rhs_scale is None:
        rhs_scale = _unit_scale(rhs_t.shape, rc)
    lhs_st, rhs_st = type_of(lhs_scale)[0], type_of(rhs_scale)[0]
    _check(lhs_t, rhs_t, lhs_st, rhs_st, lc, rc, lb, rb)
    out_dtype = np.dtype(_BF16 if preferred_element_type is None
                         else dtypes.canonicalize(preferred_element_type))
    return dot_general(_scaled(lhs, lhs_scale, lhs_t.shape, lc),
                       _scaled(rhs, rhs_scale, rhs_t.shape, rc),
                       ((lc, rc), (lb, rb)), preferred_element_type=out_dtype)


def _unit_scale(shape: Sequence[int], contracting: Sequence[int]) -> Any:
    """JAX's scale for an operand given none: ones, one block per contracting dimension."""
    return np.ones([1 if d in contracting else n for d, n in enumerate(shape)],
                   ml_dtypes.float8_e8m0fnu)


def _scaled(x: Any, scale: Any, shape: Sequence[int], contracting: Sequence[int]) -> Any:
    """``x`` times ``scale`` repeated over each contracting block, in bfloat16."""
    scale_shape = list(type_of(scale)[0].shape)
    for d in contracting:
        if scale_shape[d] != shape[d]:
            block = shape[d] // scale_shape[d]
            wide = scale_shape[:d + 1] + [block] + scale_shape[d + 1:]
            keep = [i for i in range(len(wide)) if i != d + 1]
            scale = broadcast_in_dim(scale, wide, keep)
            scale_shape[d] = shape[d]
            scale = reshape(scale, scale_shape)
    return mul(convert_element_type(x, _BF16), convert_element_type(scale, _BF16))


def _check(lhs: Any, rhs: Any, lhs_s: Any, rhs_s: Any, lc: tuple[int, ...],
           rc: tuple[int, ...], lb: tuple[int, ...], rb: tuple[int, ...]) -> None:
    """JAX's checks of scaled_dot's operands, with its messages (TypeError)."""
    if len({lhs.ndim, rhs.ndim, lhs_s.ndim, rhs_s.ndim}) != 1:
        raise TypeError(f"All input tensors must have the same rank. Got lhs rank: {lhs.ndim} "
                        f"rhs rank: {rhs.ndim} lhs_scale rank: {lhs_s.ndim} rhs_scale rank: "
                        f"{rhs_s.ndim}.")
    if len(lb) != len(rb):
        raise TypeError("LHS and RHS must have the same number of batch dimensions, got "
                        f"{len(lb)} and {len(rb)}.")
    if len(lc) != len(rc):
        raise TypeError("LHS and RHS must have the same number of contracting dimensions, "
                        f"got {len(lc)} and {len(rc)}.")
    for i, j in zip(lb, rb, strict=True):
        if len({lhs.shape[i], rhs.shape[j], lhs_s.shape[i], rhs_s.shape[j]}) != 1:
            raise TypeError("All input tensors must have the same batch dimension size for "
                            f"batch dims ({i}, {j}).")
    for i, j in zip(lc, rc, strict=True):
        if lhs.shape[i] != rhs.shape[j]:
            raise TypeError(f"LHS contracting dim {i} of size {lhs.shape[i]} does not match "
                            f"RHS contracting dim {j} of size {rhs.shape[j]}.")
    for side, x, s, contracting in (("LHS", lhs, lhs_s, lc), ("RHS", rhs, rhs_s, rc)):
        for i, size in enumerate(x.shape):
            if i in contracting:
                if size % s.shape[i]:
                    raise TypeError(f"{side} contracting dim {i} of size {size} must be "
                                    f"divisible by its scale's dim size {s.shape[i]}.")
                if size // s.shape[i] < 2:
                    raise TypeError(f"The ratio of {side} contracting dim {i} to its scale's "
                                    f"dim size ({size // s.shape[i]}) must be at least 2.")
            elif s.shape[i] != size:
                raise TypeError(f"{side} dim {i} of size {size} does not match scale dim "
                                f"size {s.shape[i]}.")
