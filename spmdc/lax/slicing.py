"""spmdc.lax's slicing and indexing: slice, slice_in_dim, index_in_dim, the dynamic slices
and updates (dynamic_slice*, dynamic_update_slice*), index_take, and gather/scatter with
their dimension-number classes and GatherScatterMode.

gather/scatter follow XLA's semantics (stablehlo.gather/scatter); ``mode`` decides what an
out-of-bounds index does: CLIP clamps, FILL_OR_DROP fills (gather) or drops (scatter),
PROMISE_IN_BOUNDS leaves it to the backend. jnp's indexing lowers through the same
primitives.
"""
from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ..compiler.primitives.dynamic_slicing import dynamic_slice_p, dynamic_update_slice_p
from ..compiler.primitives.indexing import gather_p, scatter_p
from ..compiler.primitives.structural import (
    slice_p,
)
from ..core import dtypes
from ..core.operands import (
    asarray,
    check_flag,
    dtype_of,
    literal,
)
from ..core.tracing import bind, user_source, where
from .elementwise import _where
from .reductions import reduce_and
from .shape import _axis, _canonical_axis, _index_axis, _reshape, expand_dims, squeeze, transpose

__all__ = ["dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim", "dynamic_index_in_dim",
           "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "slice", "index_in_dim",
           "slice_in_dim", "index_take", "GatherDimensionNumbers", "ScatterDimensionNumbers",
           "GatherScatterMode", "gather", "scatter", "scatter_add", "scatter_sub", "scatter_mul",
           "scatter_min", "scatter_max", "split", "unstack"]


def _start_indices(op: str, x: Any, starts: Sequence[Any],
                   allow_negative_indices: bool | Sequence[bool]) -> list[Any]:
    """The start indices of a dynamic slice of ``x`` in the default int type, a negative
    start counting from the end of its dimension (``start + size``, once) as in JAX; the
    primitive then clamps the window into the operand (XLA's rule)."""
    starts = list(starts) if not hasattr(starts, "ndim") or starts.ndim == 1 else None
    if starts is None:
        raise ValueError(f"{op}: start_indices must be a 1-d sequence of scalars")
    if len(starts) != x.ndim:
        raise ValueError(f"{op}: {len(starts)} start indices for an operand of rank {x.ndim} "
                         f"(shape {x.shape}); give one per dimension")
    allow = ([bool(allow_negative_indices)] * x.ndim
             if isinstance(allow_negative_indices, (bool, np.bool_))
             else [bool(a) for a in allow_negative_indices])
    if len(allow) != x.ndim:
        raise ValueError(f"{op}: allow_negative_indices has {len(allow)} entries for an "
                         f"operand of rank {x.ndim}")
    int_type = dtypes.default_int()
    out = []
    for i, n, negative_ok in zip(starts, x.shape, allow, strict=True):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            i = int(i)
            if i < 0 and not negative_ok:
                raise ValueError(f"{op}: start index {i} is out of bounds for a dimension "
                                 f"of size {n} when allow_negative_indices=False")
            out.append(np.asarray(i + n if i < 0 else i, int_type))
            continue
        i = asarray(i)
        if i.ndim != 0 or i.dtype.kind not in "iu":
            raise TypeError(f"{op}: start indices must be integer scalars, got {i.dtype} "
                            f"of shape {i.shape}")
        unsigned = i.dtype.kind == "u"
        i = i.astype(int_type) if i.dtype != int_type else i
        if negative_ok and not unsigned:
            i = _where(i < 0, i + np.asarray(n, int_type), i)
        out.append(i)
    return out


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """``operand[start:start + size]`` in every dimension; a negative start counts from
    the end, then the window is clamped to lie inside the operand (as in JAX)."""
    x = asarray(operand)
    starts = _start_indices("dynamic_slice", x, start_indices, allow_negative_indices)
    return bind(dynamic_slice_p, x, *starts,
                slice_sizes=tuple(int(s) for s in slice_sizes), weak=x.weak)


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    x = asarray(operand)
    axis = _canonical_axis("dynamic_slice_in_dim", "axis", axis, x.ndim)
    starts: list[Any] = [0] * x.ndim
    starts[axis] = start_index
    sizes = list(x.shape)
    sizes[axis] = slice_size
    allow = [True] * x.ndim
    allow[axis] = allow_negative_indices
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Any:
    x = asarray(operand)
    axis = _canonical_axis("dynamic_index_in_dim", "axis", axis, x.ndim)
    out = dynamic_slice_in_dim(x, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    if keepdims:
        return out
    return _reshape(out, out.shape[:axis] + out.shape[axis + 1:])


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """``operand`` with ``update`` written at ``start_indices`` (negative starts count
    from the end; the window is clamped to lie inside the operand, as in JAX)."""
    x, u = asarray(operand), asarray(update)
    if u.dtype != x.dtype and not u.weak:      # JAX's lax ops do not promote
        raise TypeError(f"lax.dynamic_update_slice requires arguments to have the same "
                        f"dtypes, got {x.dtype}, {u.dtype}; convert the update with "
                        f".astype({x.dtype})" + (f" (at {user_source()})" if user_source()
                                                 else ""))
    starts = _start_indices("dynamic_update_slice", x, start_indices, allow_negative_indices)
    return bind(dynamic_update_slice_p, x, u.astype(x.dtype), *starts, weak=x.weak)


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    x = asarray(operand)
    axis = _canonical_axis("dynamic_update_slice_in_dim", "axis", axis, x.ndim)
    starts: list[Any] = [0] * x.ndim
    starts[axis] = start_index
    allow = [True] * x.ndim
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(x, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    x = asarray(operand)
    axis = _canonical_axis("dynamic_update_index_in_dim", "axis", axis, x.ndim)
    update = asarray(update)
    if update.ndim == x.ndim - 1:
        update = _reshape(update, update.shape[:axis] + (1,) + update.shape[axis:])
    return dynamic_update_slice_in_dim(x, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def slice(x: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:
    x = asarray(x)
    return bind(slice_p, x, start_indices=tuple(start_indices),
                limit_indices=tuple(limit_indices),
                strides=None if strides is None else tuple(strides), weak=x.weak)


def slice_in_dim(operand: Any, start_index: int | None, limit_index: int | None,
                 stride: int = 1, axis: int = 0) -> Any:
    """``operand[start:limit:stride]`` along ``axis`` (static bounds)."""
    x = asarray(operand)
    axis = _axis("slice_in_dim", axis, x.ndim)
    n = x.shape[axis]
    start = 0 if start_index is None else int(start_index)
    limit = n if limit_index is None else int(limit_index)
    start, limit = (start + n if start < 0 else start), (limit + n if limit < 0 else limit)
    starts, limits, strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
    starts[axis], limits[axis], strides[axis] = start, limit, int(stride)
    return slice(x, starts, limits, strides)


def index_in_dim(operand: Any, index: int, axis: int = 0, keepdims: bool = True) -> Any:
    """``operand[index]`` along ``axis`` (static index; negative counts from the end)."""
    x = asarray(operand)
    axis = _axis("index_in_dim", axis, x.ndim)
    n = x.shape[axis]
    i = int(index)
    if not -n <= i < n:
        raise IndexError(f"lax.index_in_dim: index {i} is out of bounds for axis {axis} of "
                         f"size {n}")
    i %= n
    out = slice_in_dim(x, i, i + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis`` (each without that dimension), as a tuple."""
    x = asarray(x)
    axis = _index_axis("unstack", axis, x.ndim)
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """``src`` indexed along ``axes`` by the index arrays ``idxs`` (one per axis, taken
    modulo the axis size): shape ``(n, *the other dimensions of src)``."""
    src = asarray(src)
    axes = tuple(_index_axis("index_take", a, src.ndim) for a in axes)
    idxs = [asarray(i) for i in idxs]
    if len(idxs) != len(axes):
        raise ValueError(f"lax.index_take: {len(idxs)} index arrays for {len(axes)} axes")
    if len(set(axes)) != len(axes):
        raise ValueError(f"lax.index_take: axes {axes} repeat an axis")
    moved = transpose(src, (*axes, *(d for d in range(src.ndim) if d not in axes)))
    return moved[tuple(i % src.shape[a] for i, a in zip(idxs, axes, strict=True))]


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


# Note [default gather and scatter parameters]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# gather and scatter bind their batching dimensions and ``mode`` only where they differ
# from the primitive's defaults (no batching dimensions; gather's mode 'clip', scatter's
# 'drop'; compiler/primitives/indexing.py). An equation's parameters are part of the
# program (printed, compared by CSE), so a default spelled out would make the same
# gather two programs: jnp's indexing binds through these wrappers, and its programs
# read as they did when it bound the primitives itself.

def _batching(**dims: Sequence[int]) -> dict[str, tuple[int, ...]]:
    """The batching-dimension parameters that are not empty (Note [default gather and
    scatter parameters])."""
    return {name: _ints(d) for name, d in dims.items() if len(d)}


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
    x, idx = asarray(operand), literal(start_indices)
    if not dtypes.is_int(dtype_of(idx)):
        raise TypeError(f"lax.gather: start_indices must be integers, got {dtype_of(idx)}"
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
               **_batching(operand_batching_dims=dn.operand_batching_dims,
                           start_indices_batching_dims=dn.start_indices_batching_dims),
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


def _scatter_function(name: str, combine: str, negate: bool = False) -> Any:
    """The lax function ``name``: XLA's scatter combining each update window into the
    operand with ``combine`` (``negate``: the updates negated first, for scatter_sub)."""
    def scatter_fn(operand: Any, scatter_indices: Any, updates: Any,
                   dimension_numbers: ScatterDimensionNumbers, *,
                   indices_are_sorted: bool = False, unique_indices: bool = False,
                   mode: Any = None) -> Any:
        check_flag(f"lax.{name}", "indices_are_sorted", indices_are_sorted)
        check_flag(f"lax.{name}", "unique_indices", unique_indices)
        x, idx, u = asarray(operand), literal(scatter_indices), asarray(updates)
        if negate:
            u = -u
        if not dtypes.is_int(dtype_of(idx)):
            raise TypeError(f"lax.{name}: scatter_indices must be integers, got "
                            f"{dtype_of(idx)}{where()}")
        dn = dimension_numbers
        if not isinstance(dn, ScatterDimensionNumbers):
            raise TypeError(f"lax.{name}: dimension_numbers must be a "
                            f"ScatterDimensionNumbers, got {type(dn).__name__}{where()}")
        if u.dtype != x.dtype and not u.weak:
            raise TypeError(f"lax.{name}: updates of dtype {u.dtype} for an operand of dtype "
                            f"{x.dtype}; convert them with .astype({x.dtype}){where()}")
        clip = _mode(name, mode) is GatherScatterMode.CLIP
        return bind(scatter_p, x, idx, u.astype(x.dtype),
                    update_window_dims=_ints(dn.update_window_dims),
                    inserted_window_dims=_ints(dn.inserted_window_dims),
                    scatter_dims_to_operand_dims=_ints(dn.scatter_dims_to_operand_dims),
                    **_batching(operand_batching_dims=dn.operand_batching_dims,
                                scatter_indices_batching_dims=dn.scatter_indices_batching_dims),
                    combine=combine, **({"mode": "clip"} if clip else {}), weak=x.weak)
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


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list[Any]:
    """Pieces of the given ``sizes`` (summing to the axis' size) along ``axis``."""
    x = asarray(operand)
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
