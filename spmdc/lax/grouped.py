"""Collectives within groups of an axis: ``axis_index_groups``.

``psum(x, 'i', axis_index_groups=[[0, 1], [2, 3]])`` sums within each group of indices
along ``'i'`` (every index in exactly one group, all groups of one size, as JAX requires);
pmean, pmax, pmin, all_gather, psum_scatter and all_to_all likewise act within the group.

Note [axis index groups]
~~~~~~~~~~~~~~~~~~~~~~~~
Over device axes (pmap, shard_map) a grouped collective is the collective primitive with
``groups``, lowered to ``replica_groups`` of the group size (Note [grouped collectives] in
compiler/primitives/collectives.py): each device exchanges data with its group only.

Over a vmapped axis (and a mix of vmapped and device axes) it is written here with the
ungrouped ones: every member's value is gathered over the whole axis (``all_gather``),
and each member combines the rows of its own group, found from ``axis_index`` through
constant tables (the group of each index, the members of each group, each index's
position in its group). Everything is then an ordinary primitive, so vmap, grad (psum's
transpose within the groups comes out of all_gather's and the dot's) and the reference
interpreter need no rule of their own; on one device the gathered rows cost nothing
that matters. shard_map's global emulation (Note [shard_map]) vmaps its body over the
mesh axes, so it takes this form too, and the two agree by construction.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiler.primitives.collectives import (
    all_gather_p,
    all_to_all_p,
    pmax_p,
    pmin_p,
    psum_p,
    psum_scatter_p,
)
from ..core.operands import asarray
from .dot import dot_general
from .elementwise import _where
from .reductions import reduce_max, reduce_min
from .shape import _concatenate, expand_dims, squeeze, transpose
from .slicing import dynamic_index_in_dim, dynamic_slice_in_dim

__all__ = ["check_groups", "grouped", "on_devices", "device_grouped"]


def check_groups(op: str, groups: Any, n: int) -> tuple[tuple[int, ...], ...]:
    """The groups as tuples of ints, checked: each index of range(n) exactly once, all
    groups of one size."""
    try:
        out = tuple(tuple(int(i) for i in g) for g in groups)
    except TypeError:
        raise TypeError(f"{op}: axis_index_groups must be a list of lists of axis indices, "
                        f"got {groups!r}") from None
    flat = sorted(i for g in out for i in g)
    if flat != list(range(n)):
        raise ValueError(f"{op}: axis_index_groups {groups!r} must list each index of the "
                         f"axis (0..{n - 1}) exactly once")
    if len({len(g) for g in out}) != 1:
        raise ValueError(f"{op}: the groups of axis_index_groups {groups!r} must all have "
                         "the same size")
    return out


def on_devices(axis_name: Any) -> bool:
    """Whether every named axis is a device axis (of pmap or shard_map), not vmap's."""
    from ..core.tracing import current_trace
    from ..transforms.pmap import DeviceAxis
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    env = current_trace().axis_env
    return all(isinstance(env[n], DeviceAxis) for n in names)


def device_grouped(op: str, v: Any, axes: tuple[str, ...], sizes: tuple[int, ...],
                   groups: tuple[tuple[int, ...], ...], **params: Any) -> Any:
    """``op`` within the groups over device axes: the primitive with ``groups``."""
    from . import parallel
    bind = parallel._collective
    if op in ("psum", "pmean"):
        total = bind(psum_p, v, axes=axes, groups=groups)
        return total / len(groups[0]) if op == "pmean" else total
    prim = _PRIMITIVES[op]
    if op in ("pmax", "pmin"):
        if v.dtype == np.bool_:          # "any" / "all", as the ungrouped ones
            return bind(prim, v.astype(np.int32), axes=axes, groups=groups).astype(np.bool_)
        return bind(prim, v, axes=axes, groups=groups)
    if op == "all_gather":
        return bind(prim, v, axes=axes, axis_sizes=sizes, dimension=params["axis"],
                    tiled=params["tiled"], groups=groups)
    return bind(prim, v, axes=axes, axis_sizes=sizes, groups=groups, **params)


_PRIMITIVES = {"pmax": pmax_p, "pmin": pmin_p, "all_gather": all_gather_p,
               "psum_scatter": psum_scatter_p, "all_to_all": all_to_all_p}
"""The collective primitive that computes each grouped operation on device axes."""


class _Tables:
    def __init__(self, groups: tuple[tuple[int, ...], ...], n: int):
        self.k = len(groups[0])
        self.group_of = np.zeros(n, np.int32)
        self.position = np.zeros(n, np.int32)
        for g, members in enumerate(groups):
            for p, i in enumerate(members):
                self.group_of[i], self.position[i] = g, p
        self.members = np.asarray(groups, np.int32)                 # (groups, k)
        self.same = (self.group_of[:, None] == self.group_of[None, :])  # (n, n)


def grouped(op: str, v: Any, axis_name: Any, groups: tuple[tuple[int, ...], ...], n: int,
            **params: Any) -> Any:
    """``op`` on one array within the groups (Note [axis index groups])."""
    from . import parallel
    t = _Tables(groups, n)
    me = parallel.axis_index(axis_name)
    rows = parallel.all_gather(v, axis_name)                 # (n, *v.shape): every member's v
    if op in ("psum", "pmean"):
        weights = asarray(t.same)[me].astype(rows.dtype)
        total = dot_general(weights, rows, (((0,), (0,)), ((), ())))
        return total / t.k if op == "pmean" else total
    if op in ("pmax", "pmin"):
        mask = asarray(t.same)[me].reshape((n,) + (1,) * (rows.ndim - 1))
        fill = _lowest(rows.dtype) if op == "pmax" else _highest(rows.dtype)
        kept = _where(mask, rows, fill)
        return reduce_max(kept, (0,)) if op == "pmax" else reduce_min(kept, (0,))
    mine = rows[asarray(t.members)[asarray(t.group_of)[me]]]
    position = asarray(t.position)[me]
    if op == "all_gather":                               # (k, *v.shape), in group order
        axis, tiled = params["axis"], params["tiled"]
        if tiled:
            return _concatenate([mine[j] for j in range(t.k)], axis)
        order = list(range(1, mine.ndim))
        order.insert(axis, 0)
        return transpose(mine, tuple(order))
    if op == "psum_scatter":
        d, tiled = params["scatter_dimension"], params["tiled"]
        total = mine.sum(axis=0)
        if not tiled:
            return dynamic_index_in_dim(total, position, d, keepdims=False)
        size = total.shape[d] // t.k
        return dynamic_slice_in_dim(total, position * size, size, axis=d)
    if op == "all_to_all":
        split, concat, tiled = params["split_axis"], params["concat_axis"], params["tiled"]
        size = v.shape[split] // t.k
        pieces = [dynamic_slice_in_dim(mine[j], position * size, size, axis=split)
                  for j in range(t.k)]
        if tiled:
            return _concatenate(pieces, concat)
        pieces = [squeeze(p, (split,)) for p in pieces]
        return _concatenate([expand_dims(p, (concat,)) for p in pieces], concat)
    raise AssertionError(op)


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> Any:
    return np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).max
