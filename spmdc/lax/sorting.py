"""spmdc.lax's sorting: sort and sort_key_val (the sort primitive), top_k, and
approx_max_k/approx_min_k (exact on the CPU backend: a sort, as JAX's are there).
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..compiler.primitives.sorting import sort_p
from ..core import dtypes, operands
from ..core.operands import (
    asarray,
)
from ..core.tracing import bind
from .shape import _canonical_axis, _index_axis, rev, transpose
from .slicing import slice_in_dim

__all__ = ["sort", "sort_key_val", "top_k", "approx_max_k", "approx_min_k"]


def sort(operand: Any, dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1) -> Any:
    """Sort ``operand`` (an array, or a sequence of same-shaped arrays sorted together by
    the first ``num_keys`` of them, lexicographically) along ``dimension``. NaNs sort
    last and -0.0 equals 0.0 (Note [sort order] in compiler/primitives/sorting.py)."""
    single = not isinstance(operand, (tuple, list))
    operands = [asarray(operand)] if single else [asarray(x) for x in operand]
    if not operands:
        raise ValueError("sort: needs at least one operand")
    if not 1 <= int(num_keys) <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(operands)})")
    shapes = {x.shape for x in operands}
    if len(shapes) != 1:
        raise TypeError("sort: operands must have one shape, got "
                        + ", ".join(str(x.shape) for x in operands))
    dimension = _canonical_axis("sort", "dimension", dimension, operands[0].ndim)
    outs = bind(sort_p, *operands, dimension=dimension, is_stable=bool(is_stable),
                num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Any, Any]:
    """``keys`` sorted along ``dimension``, and ``values`` in the same order."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


def top_k(operand: Any, k: int) -> tuple[Any, Any]:
    """The ``k`` largest entries along the last axis, in descending order, and their
    indices (int32; among equal entries the lower index comes first)."""
    x = asarray(operand)
    k = int(k)
    if x.ndim == 0:
        raise ValueError("lax.top_k: the operand must have at least one dimension")
    if x.dtype.kind == "c":                     # as JAX: see Note [complex order]
        raise ValueError("top_k is not compatible with complex inputs.")
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


def _top_k_along(op: str, operand: Any, k: int, reduction_dimension: int,
                 recall_target: float, reduction_input_size_override: int,
                 aggregate_to_topk: bool, largest: bool) -> list[Any]:
    x = asarray(operand)
    if x.dtype.kind not in "fc" and x.dtype != dtypes.canonicalize("bfloat16"):
        raise TypeError(f"lax.{op}: operand must be a floating type, got {x.dtype}")
    if not aggregate_to_topk:
        raise NotImplementedError(f"lax.{op}: aggregate_to_topk=False (a partial, "
                                  "TPU-oriented result) is not supported; leave it True")
    if not 0 < recall_target <= 1:
        raise ValueError(f"lax.{op}: recall_target must be in (0, 1], got {recall_target}")
    if not isinstance(reduction_input_size_override, (int, np.integer)):
        raise TypeError(f"lax.{op}: reduction_input_size_override must be an int")
    dim = _index_axis(op, reduction_dimension, x.ndim)
    k = operator.index(k)
    if not 0 <= k <= x.shape[dim]:
        raise ValueError(f"lax.{op}: k={k} must be between 0 and the size {x.shape[dim]} of "
                         f"dimension {dim}")
    last_first = (*(d for d in range(x.ndim) if d != dim), dim)       # dim moved last
    values, order = _sorted_with_positions(transpose(x, last_first), largest)
    values, order = (slice_in_dim(v, 0, k, axis=-1) for v in (values, order))
    back = tuple(last_first.index(d) for d in range(x.ndim))
    return [transpose(values, back), transpose(order, back)]


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Any]:
    """The ``k`` largest values along ``reduction_dimension`` (descending) and their int32
    indices. JAX computes them exactly on CPU, as here: ``recall_target`` and
    ``reduction_input_size_override`` only tune TPU's approximation."""
    return _top_k_along("approx_max_k", operand, k, reduction_dimension, recall_target,
                        reduction_input_size_override, aggregate_to_topk, True)


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Any]:
    """The ``k`` smallest values along ``reduction_dimension`` (ascending) and their int32
    indices, exactly (see approx_max_k)."""
    return _top_k_along("approx_min_k", operand, k, reduction_dimension, recall_target,
                        reduction_input_size_override, aggregate_to_topk, False)
