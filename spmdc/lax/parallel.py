"""spmdc.lax's collectives over named axes: psum, pmean, pmax, pmin, all_gather,
psum_scatter, ppermute, pshuffle, all_to_all, axis_index, axis_size, pbroadcast and
pswapaxes (JAX's lax/parallel.py). Each takes an axis name or a tuple of names bound by an
enclosing pmap, vmap or shard_map, and maps over pytrees. pmean is psum divided by the
group size, so its transpose is right by construction (Note [collective transpose] in
compiler/primitives/collectives.py). ``axis_index_groups`` is grouped.py's (Note [axis
index groups]).
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.primitives.collectives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_p,
    psum_scatter_p,
)
from ..compiler.primitives.core import Primitive
from ..core.operands import (
    asarray,
    full,
)
from ..core.tracing import bind
from ..core.tree import tree_map
from .elementwise import _where
from .shape import _canonical_axis

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute", "pshuffle",
           "all_to_all", "axis_index", "axis_size", "pbroadcast", "pswapaxes"]


def _axis_names(op: str, axis_name: Any) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The names as a tuple and their sizes; an unbound name is an error here, at the
    user's line (the collectives pass checks compiled programs again)."""
    from ..compiler.passes.collectives import UnboundAxisError, unbound_axis_message
    from ..core.tracing import current_trace, user_source
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    trace = current_trace()
    bound = trace.axis_env if trace is not None else {}
    for name in names:
        if name not in bound:
            raise UnboundAxisError(unbound_axis_message(op, name, [str(b) for b in bound],
                                                        user_source()))
    return names, tuple(int(bound[n]) for n in names)


def _groups(op: str, axis_name: Any, axis_index_groups: Any) -> Any:
    """``axis_index_groups`` checked against the axis (lax/grouped.py), or None."""
    if axis_index_groups is None:
        return None
    from .grouped import check_groups
    _, sizes = _axis_names(op, axis_name)
    return check_groups(op, axis_index_groups, int(np.prod(sizes)))


def _in_groups(op: str, x: Any, axis_name: Any, groups: Any, **params: Any) -> Any:
    from .grouped import device_grouped, grouped, on_devices
    axes, sizes = _axis_names(op, axis_name)
    if on_devices(axis_name):
        return tree_map(lambda v: device_grouped(op, asarray(v), axes, sizes, groups, **params),
                         x)
    n = int(np.prod(sizes))
    return tree_map(lambda v: grouped(op, asarray(v), axis_name, groups, n, **params), x)


def _collective(prim: Primitive, x: Any, **params: Any) -> Any:
    x = asarray(x)
    return bind(prim, x, weak=x.weak, **params)


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum over the devices (or batch elements) of the named axes, on every one."""
    groups = _groups("psum", axis_name, axis_index_groups)
    if groups is not None:
        return _in_groups("psum", tree_map(_counted, x), axis_name, groups)
    axes, _ = _axis_names("psum", axis_name)

    def one(v: Any) -> Any:
        v = asarray(v)
        if v.dtype == np.bool_:           # psum of booleans counts them
            v = v.astype(np.int32)
        return _collective(psum_p, v, axes=axes)
    return tree_map(one, x)


def _counted(v: Any) -> Any:
    v = asarray(v)
    return v.astype(np.int32) if v.dtype == np.bool_ else v     # psum of booleans counts


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    groups = _groups("pmean", axis_name, axis_index_groups)
    if groups is not None:
        return _in_groups("pmean", x, axis_name, groups)
    _, sizes = _axis_names("pmean", axis_name)
    n = int(np.prod(sizes))
    return tree_map(lambda v: psum(v, axis_name) / n, x)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    groups = _groups("pmax", axis_name, axis_index_groups)
    if groups is not None:
        return _in_groups("pmax", x, axis_name, groups)
    axes, _ = _axis_names("pmax", axis_name)
    return tree_map(lambda v: _extremum(pmax_p, v, axes), x)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    groups = _groups("pmin", axis_name, axis_index_groups)
    if groups is not None:
        return _in_groups("pmin", x, axis_name, groups)
    axes, _ = _axis_names("pmin", axis_name)
    return tree_map(lambda v: _extremum(pmin_p, v, axes), x)


def _extremum(prim: Primitive, v: Any, axes: tuple[str, ...]) -> Any:
    """pmax / pmin; on booleans they are "any" / "all" (as in JAX), computed on int32."""
    v = asarray(v)
    if v.dtype == np.bool_:
        return _collective(prim, v.astype(np.int32), axes=axes).astype(np.bool_)
    return _collective(prim, v, axes=axes)


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False) -> Any:
    """Every member's value, stacked along a new ``axis`` (or concatenated if tiled)."""
    groups = _groups("all_gather", axis_name, axis_index_groups)
    if groups is not None:
        return tree_map(lambda v: _in_groups(
            "all_gather", v, axis_name, groups, tiled=bool(tiled),
            axis=_canonical_axis("all_gather", "axis", axis,
                                 asarray(v).ndim + (0 if tiled else 1))), x)
    axes, sizes = _axis_names("all_gather", axis_name)

    def one(v: Any) -> Any:
        v = asarray(v)
        dim = _canonical_axis("all_gather", "axis", axis, v.ndim + (0 if tiled else 1))
        return _collective(all_gather_p, v, axes=axes, axis_sizes=sizes, dimension=dim,
                           tiled=bool(tiled))
    return tree_map(one, x)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """psum, of which each member keeps its own slice along ``scatter_dimension``."""
    groups = _groups("psum_scatter", axis_name, axis_index_groups)
    if groups is not None:
        return tree_map(lambda v: _in_groups(
            "psum_scatter", v, axis_name, groups, tiled=bool(tiled),
            scatter_dimension=_canonical_axis("psum_scatter", "scatter_dimension",
                                              scatter_dimension, asarray(v).ndim)), x)
    axes, sizes = _axis_names("psum_scatter", axis_name)

    def one(v: Any) -> Any:
        v = asarray(v)
        dim = _canonical_axis("psum_scatter", "scatter_dimension", scatter_dimension, v.ndim)
        return _collective(psum_scatter_p, v, axes=axes, axis_sizes=sizes,
                           scatter_dimension=dim, tiled=bool(tiled))
    return tree_map(one, x)


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send each member's value along the (source, destination) pairs of ``perm``; a
    member no pair sends to gets zeros."""
    from ..compiler.primitives.collectives import check_permutation
    from ..compiler.primitives.core import ShapeError
    from ..core.tracing import user_source
    axes, sizes = _axis_names("ppermute", axis_name)
    pairs = _pairs(perm)
    try:
        check_permutation("ppermute", pairs, int(np.prod(sizes)))
    except (ShapeError, TypeError, ValueError) as e:
        source = user_source()
        raise ValueError(f"{e}" + (f" (at {source})" if source else "")) from None
    return tree_map(lambda v: _collective(ppermute_p, v, axes=axes, axis_sizes=sizes,
                                           perm=pairs), x)


def _pairs(perm: Any) -> tuple[tuple[int, int], ...]:
    """``perm`` as (source, destination) pairs of ints, else a TypeError saying so."""
    import operator

    from ..core.tracing import user_source
    try:
        return tuple((operator.index(s), operator.index(d)) for s, d in perm)
    except (TypeError, ValueError):
        source = user_source()
        raise TypeError(f"ppermute: perm must be a sequence of (source, destination) pairs of "
                        f"ints, e.g. [(0, 1), (1, 0)], got {perm!r}"
                        + (f" (at {source})" if source else "")) from None


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """ppermute where ``perm[i]`` is the member that member ``i`` receives from."""
    _, sizes = _axis_names("pshuffle", axis_name)
    n = int(np.prod(sizes))
    if sorted(int(p) for p in perm) != list(range(n)):
        raise ValueError(f"pshuffle: perm={list(perm)} is not a permutation of "
                         f"range({n}) (the axis size)")
    return ppermute(x, axis_name, [(int(src), dst) for dst, src in enumerate(perm)])


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Member j gets piece j (along ``split_axis``) of every member, stacked (or, tiled,
    concatenated) along ``concat_axis`` in member order."""
    groups = _groups("all_to_all", axis_name, axis_index_groups)
    if groups is not None:
        return tree_map(lambda v: _in_groups(
            "all_to_all", v, axis_name, groups, tiled=bool(tiled),
            split_axis=_canonical_axis("all_to_all", "split_axis", split_axis, asarray(v).ndim),
            concat_axis=_canonical_axis("all_to_all", "concat_axis", concat_axis,
                                        asarray(v).ndim)), x)
    axes, sizes = _axis_names("all_to_all", axis_name)

    def one(v: Any) -> Any:
        v = asarray(v)
        return _collective(all_to_all_p, v, axes=axes, axis_sizes=sizes,
                           split_axis=_canonical_axis("all_to_all", "split_axis",
                                                      split_axis, v.ndim),
                           concat_axis=_canonical_axis("all_to_all", "concat_axis",
                                                       concat_axis, v.ndim),
                           tiled=bool(tiled))
    return tree_map(one, x)


def axis_index(axis_name: Any) -> Any:
    """This device's (or batch element's) index along the named axes, an int32."""
    axes, sizes = _axis_names("axis_index", axis_name)
    return bind(axis_index_p, axes=axes, axis_sizes=sizes)


def axis_size(axis_name: Any) -> int:
    """The size of the named mapped axis (the product, for a tuple of names): a Python int,
    known when tracing."""
    _, sizes = _axis_names("axis_size", axis_name)
    return int(np.prod(sizes, dtype=np.int64))


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every member of the named axis gets member ``source``'s ``x`` (a pytree): the
    psum of ``x`` masked to ``source``, which is also how it batches and differentiates."""
    n = axis_size(axis_name)
    source = operator.index(source)
    if not 0 <= source < n:
        raise ValueError(f"lax.pbroadcast: source {source} is out of range for axis "
                         f"{axis_name!r} of size {n}")
    mine = axis_index(axis_name) == source

    def one(v: Any) -> Any:
        v = asarray(v)
        out = psum(_where(mine, v, full(v.shape, 0, v.dtype)), axis_name)
        return out.astype(v.dtype) if out.dtype != v.dtype else out     # bools are counted
    return tree_map(one, x)


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the mapped axis ``axis_name`` with the array axis ``axis`` (whose size must be
    the axis's, or its groups'): ``all_to_all(x, axis_name, axis, axis)``."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)
