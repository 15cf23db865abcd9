"""``lax.gather`` and the ``lax.scatter`` family with JAX's dimension-number classes and
modes, over the gather and scatter primitives (compiler/primitives/indexing.py, Note
[out-of-bounds windows]). The index vector is the last dimension of the indices, as in
JAX.

Modes (``GatherScatterMode`` or its name): FILL_OR_DROP makes gather read an
out-of-bounds window as ``fill_value`` (default NaN for inexact types, the smallest
signed / largest unsigned integer, True for booleans, as JAX) and scatter drop the
window's update; CLIP clamps the window into bounds; PROMISE_IN_BOUNDS promises there is
nothing to handle (spmdc clamps, which is one of the allowed results). The defaults are
JAX's: PROMISE_IN_BOUNDS for gather, FILL_OR_DROP for scatter.
"""
from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..compiler.primitives.indexing import gather_p, scatter_p
from ..core import dtypes
from ..core.operands import asarray, check_flag
from ..core.tracing import bind, where
from .core import _where
from .ops import expand_dims, reduce_and

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
           "scatter_max"]


class GatherDimensionNumbers(NamedTuple):
    """Which dimensions of a gather's output are window offsets, which operand
    dimensions the windows drop, which operand dimension each index component
    addresses, and the batching dimensions of operand and indices."""
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """Which dimensions of the updates are window dimensions, which operand dimensions
    the windows lack, which operand dimension each index component addresses, and the
    batching dimensions of operand and indices."""
    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """What gather and scatter do with out-of-bounds windows (module docstring)."""
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s: Any) -> GatherScatterMode:
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"{where()}')


def _ints(xs: Sequence[int]) -> tuple[int, ...]:
    return tuple(int(x) for x in xs)


def _mode(op: str, mode: Any) -> GatherScatterMode:
    parsed = GatherScatterMode.from_any(mode)
    if parsed is GatherScatterMode.ONE_HOT:
        raise ValueError(f"lax.{op}: mode ONE_HOT (a TPU formulation of one-hot "
                         f"contractions) is not supported; use FILL_OR_DROP or CLIP{where()}")
    return parsed


def _default_fill(dtype: np.dtype) -> Any:
    if dtypes.is_inexact(dtype):
        return np.nan
    if dtype == np.bool_:
        return True
    return np.iinfo(dtype).min if dtypes.is_int(dtype) and dtype.kind == "i" else \
        np.iinfo(dtype).max


def gather(operand: Any, start_indices: Any, dimension_numbers: GatherDimensionNumbers,
           slice_sizes: Sequence[int], *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode: Any = None, fill_value: Any = None) -> Any:
    """XLA's gather: a window of ``slice_sizes`` at each index vector (the last dimension
    of ``start_indices``). ``unique_indices``/``indices_are_sorted`` are promises that can
    only speed up XLA and change no value."""
    check_flag("lax.gather", "unique_indices", unique_indices)
    check_flag("lax.gather", "indices_are_sorted", indices_are_sorted)
    x, idx = asarray(operand), asarray(start_indices)
    if not dtypes.is_int(idx.dtype):
        raise TypeError(f"lax.gather: start_indices must be integers, got {idx.dtype}"
                        f"{where()}")
    dn = dimension_numbers
    if not isinstance(dn, GatherDimensionNumbers):
        raise TypeError(f"lax.gather: dimension_numbers must be a GatherDimensionNumbers, "
                        f"got {type(dn).__name__}{where()}")
    parsed = _mode("gather", GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
    sizes = _ints(slice_sizes)
    out = bind(gather_p, x, idx, offset_dims=_ints(dn.offset_dims),
               collapsed_slice_dims=_ints(dn.collapsed_slice_dims),
               start_index_map=_ints(dn.start_index_map), slice_sizes=sizes,
               operand_batching_dims=_ints(dn.operand_batching_dims),
               start_indices_batching_dims=_ints(dn.start_indices_batching_dims), mode="clip",
               weak=x.weak)
    if parsed is not GatherScatterMode.FILL_OR_DROP:
        return out
    fill = _default_fill(x.dtype) if fill_value is None else fill_value
    # the windows in bounds: 0 <= start[d] <= shape[d] - size[d] for every indexed d
    upper = np.asarray([x.shape[d] - sizes[d] for d in dn.start_index_map], np.int64)
    ok = (idx >= 0) & (idx <= upper.astype(idx.dtype))
    ok = reduce_and(ok, (ok.ndim - 1,))
    batch_positions = [d for d in range(out.ndim) if d not in dn.offset_dims]
    mask = expand_dims(ok, tuple(dn.offset_dims)) if dn.offset_dims else ok
    assert len(batch_positions) == ok.ndim
    return _where(mask, out, asarray(fill).astype(out.dtype))


def _scatter(op: str, combine: str, operand: Any, scatter_indices: Any, updates: Any,
             dimension_numbers: ScatterDimensionNumbers, mode: Any) -> Any:
    x, idx, u = asarray(operand), asarray(scatter_indices), asarray(updates)
    if not dtypes.is_int(idx.dtype):
        raise TypeError(f"lax.{op}: scatter_indices must be integers, got {idx.dtype}"
                        f"{where()}")
    dn = dimension_numbers
    if not isinstance(dn, ScatterDimensionNumbers):
        raise TypeError(f"lax.{op}: dimension_numbers must be a ScatterDimensionNumbers, "
                        f"got {type(dn).__name__}{where()}")
    if u.dtype != x.dtype and not u.weak:
        raise TypeError(f"lax.{op}: updates of dtype {u.dtype} for an operand of dtype "
                        f"{x.dtype}; convert them with .astype({x.dtype}){where()}")
    parsed = _mode(op, mode)
    return bind(scatter_p, x, idx, u.astype(x.dtype),
                update_window_dims=_ints(dn.update_window_dims),
                inserted_window_dims=_ints(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_ints(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=_ints(dn.operand_batching_dims),
                scatter_indices_batching_dims=_ints(dn.scatter_indices_batching_dims),
                combine=combine,
                mode="clip" if parsed is GatherScatterMode.CLIP else "drop", weak=x.weak)


def _scatter_function(name: str, combine: str, negate: bool = False) -> Any:
    def scatter_fn(operand: Any, scatter_indices: Any, updates: Any,
                   dimension_numbers: ScatterDimensionNumbers, *,
                   indices_are_sorted: bool = False, unique_indices: bool = False,
                   mode: Any = None) -> Any:
        check_flag(f"lax.{name}", "indices_are_sorted", indices_are_sorted)
        check_flag(f"lax.{name}", "unique_indices", unique_indices)
        updates = asarray(updates)
        if negate:
            updates = -updates
        return _scatter(name, combine, operand, scatter_indices, updates, dimension_numbers,
                        mode)
    scatter_fn.__name__ = scatter_fn.__qualname__ = name
    scatter_fn.__doc__ = (f"XLA's scatter{'' if combine == 'set' else ' with ' + combine}: "
                          f"each update window {'written' if combine == 'set' else 'combined'}"
                          f" into ``operand`` at its index vector (``indices_are_sorted`` "
                          f"and ``unique_indices`` are promises that change no value).")
    return scatter_fn


scatter = _scatter_function("scatter", "set")
scatter_add = _scatter_function("scatter_add", "add")
scatter_sub = _scatter_function("scatter_sub", "add", negate=True)
scatter_mul = _scatter_function("scatter_mul", "mul")
scatter_min = _scatter_function("scatter_min", "min")
scatter_max = _scatter_function("scatter_max", "max")
