"""Collectives: psum, pmax, pmin, all_gather, psum_scatter, ppermute, all_to_all, axis_index.

Each names the mesh axes it runs over in ``axes`` (a tuple of names; several names act as
one axis, the first one major). Those whose result shape or index depends on the group
size also carry ``axis_sizes`` (the size of each named axis). ``pmean`` is ``psum``
followed by a division in spmdc.lax, so its transpose is right by construction.

The reference implementations run a whole replica group at once: each operand comes
stacked along a new leading axis over the group's members (in group order), and so does
each result. Being registered in ``varying_rules`` (passes/collectives.py) is what tells
the SPMD interpreter to call them that way; the plain interpreter cannot run them.

Lowering builds ``replica_groups`` from the device mesh (``replica_groups`` in
passes/collectives.py); batching (vmap with ``axis_name``) turns the vmapped name into
positional ops over the batch dimension (collectives_batching.py).

Note [grouped collectives]
~~~~~~~~~~~~~~~~~~~~~~~~~~
``psum``, ``pmax``, ``pmin``, ``all_gather``, ``psum_scatter`` and ``all_to_all`` may
carry ``groups`` (JAX's ``axis_index_groups``): a partition of the indices along ``axes``
into groups of one size, each group running the collective on its own. Only collectives
over device axes (pmap, shard_map) carry it: each replica group of the mesh is split into
the sub-groups, which become the op's ``replica_groups``, so a device exchanges data with
its group's members only. The reference implementations run each sub-group separately;
the transposes keep the groups (the transpose within a group is the ungrouped one's); and
a grouped reduction varies over ``axes`` wherever its operand does (the groups' results
differ). Over a vmapped name, spmdc.lax writes the grouped collective with ungrouped ones
instead (lax/grouped.py, Note [axis index groups]), so a batching rule never meets
``groups`` on the vmapped name.

Note [collective transpose]
~~~~~~~~~~~~~~~~~~~~~~~~~~~
Inside ``pmap``, grad differentiates the per-device program: an input broadcast with
``in_axes=None`` is *not* implicitly summed across devices. ``psum`` transposes to
``psum``; ``all_gather`` and ``psum_scatter`` transpose to each other; ``ppermute`` to the
inverse permutation; ``all_to_all`` to the ``all_to_all`` with split and concat axes
swapped; ``pmax``/``pmin`` route the summed cotangent to the devices holding the extreme
(split evenly among ties). Summed over every device's cotangent, these give the derivative
of the whole SPMD program (tests/compiler/primitives/test_collectives.py checks that
against finite differences). This is JAX's pmap semantics, which the tutorials depend on:
``pmap(value_and_grad(loss))`` + ``pmean`` averages per-device gradients, where
shard_map-style semantics would also sum over devices for replicated parameters and give
twice that on two devices. Every collective a VJP rule emits carries a ``note`` param
saying so, so ``spmdc dump`` prints the choice next to each transposed collective.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir import TensorType
from ..passes.autodiff import nondifferentiable, vjp_rules
from ..passes.collectives import replica_groups, varying_rules
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import always_rewrite, batch_rules
from ..stablehlo import hlo, ir, lower_rules, mlir_type
from . import collectives_batching as batching
from .core import NUMBER, ShapeError, _check_kind, declare
from .reductions import fill_reducer

__all__ = ["psum_p", "pmax_p", "pmin_p", "all_gather_p", "psum_scatter_p", "ppermute_p",
           "all_to_all_p", "axis_index_p", "transpose_note"]


def transpose_note(name: str) -> str:
    """The ``note`` param of a collective emitted by a VJP rule."""
    return f"per-device transpose of {name}, see Note [collective transpose]"


# --- pieces of shape rules -----------------------------------------------------------------------

def _check_axes(name: str, axes: tuple, axis_sizes: tuple | None = None) -> int:
    """Validate ``axes`` (and ``axis_sizes``); return the group size (0 if unknown)."""
    if not isinstance(axes, tuple) or not axes or \
            not all(isinstance(a, str) for a in axes) or len(set(axes)) != len(axes):
        raise ShapeError(f"{name}: axes must be a non-empty tuple of distinct axis names, "
                         f"got {axes!r}")
    if axis_sizes is None:
        return 0
    if not isinstance(axis_sizes, tuple) or len(axis_sizes) != len(axes) or \
            any(not isinstance(s, int) or s < 1 for s in axis_sizes):
        raise ShapeError(f"{name}: axis_sizes {axis_sizes!r} must give a positive size for "
                         f"each of the axes {axes}")
    return math.prod(axis_sizes)


def _check_dim(name: str, what: str, d: int, x: TensorType, rank: int) -> None:
    if not isinstance(d, int) or not 0 <= d < rank:
        raise ShapeError(f"{name}: {what}={d} is out of range for operand {x} "
                         f"(valid: 0..{rank - 1})")


def _stacked_broadcast(value: np.ndarray, n: int) -> np.ndarray:
    return np.broadcast_to(value[None], (n, *value.shape)).copy()


def _group_size(name: str, n: int, groups) -> int:
    """The number of members a collective combines: ``n`` along its axes, or the size of
    each of its ``groups`` (Note [grouped collectives]), which are checked here."""
    if groups is None:
        return n
    if not isinstance(groups, tuple) or not groups or not all(
            isinstance(g, tuple) and all(isinstance(i, int) for i in g) for g in groups):
        raise ShapeError(f"{name}: groups must be a tuple of tuples of axis indices, got "
                         f"{groups!r}")
    if len({len(g) for g in groups}) != 1 or (
            n and sorted(i for g in groups for i in g) != list(range(n))):
        raise ShapeError(f"{name}: groups {groups} must list each index of the axis "
                         f"(0..{n - 1}) exactly once, in groups of one size")
    return len(groups[0])


def _per_group(impl):
    """A reference implementation run on each of the ``groups`` separately: ``xs`` holds
    every member along the axes, stacked; each group's results go back to its members."""
    def run(xs, *, groups=None, **params):
        if groups is None:
            return impl(xs, **params)
        out: list = [None] * xs.shape[0]
        for g in groups:
            for i, y in zip(g, impl(xs[list(g)], **params), strict=True):
                out[i] = y
        return np.stack(out)
    return run


def _grouped(groups) -> dict:
    """``groups`` as a keyword, or nothing: ungrouped collectives do not carry it."""
    return {} if groups is None else {"groups": groups}


# --- psum, pmax, pmin ----------------------------------------------------------------------------

def _allreduce_rule(name: str, kinds: str):
    def rule(x: TensorType, *, axes, note=None, groups=None) -> TensorType:
        _check_axes(name, axes)
        _check_kind(name, x, kinds)
        _group_size(name, 0, groups)
        return x
    return rule


def _allreduce_impl(ufunc: np.ufunc):
    def impl(xs, *, axes, note=None):
        return _stacked_broadcast(ufunc.reduce(xs, axis=0).astype(xs.dtype), xs.shape[0])
    return _per_group(impl)


def _allreduce_lowering(op_class):
    def rule(ctx, eqn, x):
        t = eqn.inputs[0].type
        op = _across_partitions(ctx, hlo.AllReduceOp([mlir_type(t)], [x], _groups(ctx, eqn)))
        fill_reducer(op_class, TensorType((), t.dtype), op.regions[0])
        return op.results[0]
    return rule


def _reduce_out_axes(ins, *, axes, groups=None, **_):
    if groups is not None and len(groups) > 1:   # the groups' results differ
        return [ins[0]]
    return [ins[0] - frozenset(axes)]          # See Note [replication]


def _vary_over_axes(ins, *, axes, **_):
    return [ins[0] | frozenset(axes)]


def _groups(ctx, eqn) -> ir.DenseIntElementsAttr:
    """The op's ``replica_groups``: those of its axes on the mesh, each split into the
    eqn's ``groups`` if it has them (Note [grouped collectives])."""
    mesh = tuple((name, ctx.axis_env[name]) for name in ctx.mesh_axes)
    groups = replica_groups(mesh, eqn.params["axes"])
    sub = eqn.params.get("groups")
    if sub is not None:
        groups = [[members[i] for i in g] for members in groups for g in sub]
    return ir.DenseIntElementsAttr.get(np.asarray(groups, np.int64))


def _across_partitions(ctx, op, global_ids: bool = True):
    """In a manual computation of the partition form (primitives/shard_map.py), the
    devices are partitions, not replicas: the collective needs a channel of its own
    (type 1, device to device) and, for the grouped ones, ``use_global_device_ids`` so
    that its groups (numbered in mesh order, as replica groups are) name partitions."""
    if ctx.manual:
        op.attributes["channel_handle"] = hlo.ChannelHandle.get(ctx.next_channel(), 1)
        if global_ids:
            op.attributes["use_global_device_ids"] = ir.UnitAttr.get()
    return op


psum_p = declare("psum", _allreduce_rule("psum", NUMBER), _allreduce_impl(np.add))
batch_rules[psum_p] = batching.psum_batch
always_rewrite.add(psum_p)           # psum of an unbatched value over the vmapped name
jvp_rules[psum_p] = linear_jvp(psum_p)
vjp_rules[psum_p] = lambda b, ct, x, *, axes, note=None, groups=None: [
    b.psum(ct, axes=axes, note=transpose_note("psum"), **_grouped(groups))]
# (See Note [collective transpose])
lower_rules[psum_p] = _allreduce_lowering(hlo.AddOp)
varying_rules[psum_p] = _reduce_out_axes


def _extremum_vjp(prim):
    # The summed cotangent goes to the devices holding the extreme, split among ties.
    def rule(b, ct, x, *, axes, note=None, groups=None):
        g = _grouped(groups)
        extreme = b.bind(prim, x, axes=axes, **g)
        hits = b.convert(b.eq(x, extreme), new_dtype=x.type.dtype)
        tag = transpose_note(prim.name)
        share = b.div(b.psum(ct, axes=axes, note=tag, **g),
                      b.psum(hits, axes=axes, note=tag, **g))
        return [b.mul(hits, share)]
    return rule


def _extremum_jvp(prim):
    # The mean tangent of the devices holding the extreme (the transpose of _extremum_vjp).
    def rule(b, primals, tangents, *, axes, note=None, groups=None):
        (x,), (t,) = primals, tangents
        g = _grouped(groups)
        extreme = b.bind(prim, x, axes=axes, note=note, **g)
        hits = b.convert(b.eq(x, extreme), new_dtype=x.type.dtype)
        return [extreme], [b.div(b.psum(b.mul(hits, t), axes=axes, **g),
                                 b.psum(hits, axes=axes, **g))]
    return rule


pmax_p = declare("pmax", _allreduce_rule("pmax", "iuf"), _allreduce_impl(np.maximum))
batch_rules[pmax_p] = batching.extremum_batch("reduce_max")
always_rewrite.add(pmax_p)
jvp_rules[pmax_p] = _extremum_jvp(pmax_p)
vjp_rules[pmax_p] = _extremum_vjp(pmax_p)
lower_rules[pmax_p] = _allreduce_lowering(hlo.MaxOp)
varying_rules[pmax_p] = _reduce_out_axes

pmin_p = declare("pmin", _allreduce_rule("pmin", "iuf"), _allreduce_impl(np.minimum))
batch_rules[pmin_p] = batching.extremum_batch("reduce_min")
always_rewrite.add(pmin_p)
jvp_rules[pmin_p] = _extremum_jvp(pmin_p)
vjp_rules[pmin_p] = _extremum_vjp(pmin_p)
lower_rules[pmin_p] = _allreduce_lowering(hlo.MinOp)
varying_rules[pmin_p] = _reduce_out_axes


# --- all_gather -------------------------------------------------------------------------------

def _all_gather_rule(x: TensorType, *, axes, axis_sizes, dimension, tiled, note=None,
                     groups=None):
    n = _group_size("all_gather", _check_axes("all_gather", axes, axis_sizes), groups)
    if tiled:
        _check_dim("all_gather", "dimension", dimension, x, x.ndim)
        shape = list(x.shape)
        shape[dimension] *= n
    else:
        _check_dim("all_gather", "dimension", dimension, x, x.ndim + 1)
        shape = [*x.shape[:dimension], n, *x.shape[dimension:]]
    return TensorType(tuple(shape), x.dtype)


@_per_group
def _all_gather_impl(xs, *, axes, axis_sizes, dimension, tiled, note=None):
    members = list(xs)
    whole = np.concatenate(members, dimension) if tiled else np.stack(members, dimension)
    return _stacked_broadcast(whole, len(members))


def _all_gather_lowering(ctx, eqn, x):
    t, out = eqn.inputs[0].type, eqn.outputs[0].type
    dim = eqn.params["dimension"]
    if not eqn.params["tiled"]:                       # gather along a new size-1 axis
        one = TensorType((*t.shape[:dim], 1, *t.shape[dim:]), t.dtype)
        x = hlo.ReshapeOp(mlir_type(one), x).result
    return _across_partitions(ctx, hlo.AllGatherOp(
        [mlir_type(out)], [x], dim, _groups(ctx, eqn))).results[0]


all_gather_p = declare("all_gather", _all_gather_rule, _all_gather_impl)
batch_rules[all_gather_p] = batching.all_gather_batch
always_rewrite.add(all_gather_p)
jvp_rules[all_gather_p] = linear_jvp(all_gather_p)
vjp_rules[all_gather_p] = lambda b, ct, x, *, axes, axis_sizes, dimension, tiled, note=None, \
    groups=None: [b.psum_scatter(ct, axes=axes, axis_sizes=axis_sizes,
                                 scatter_dimension=dimension, tiled=tiled,
                                 note=transpose_note("all_gather"), **_grouped(groups))]
lower_rules[all_gather_p] = _all_gather_lowering
varying_rules[all_gather_p] = _reduce_out_axes


# --- psum_scatter ------------------------------------------------------------------------------

def _psum_scatter_rule(x: TensorType, *, axes, axis_sizes, scatter_dimension, tiled,
                       note=None, groups=None):
    n = _group_size("psum_scatter", _check_axes("psum_scatter", axes, axis_sizes), groups)
    _check_kind("psum_scatter", x, NUMBER)
    _check_dim("psum_scatter", "scatter_dimension", scatter_dimension, x, x.ndim)
    size = x.shape[scatter_dimension]
    shape = list(x.shape)
    if tiled:
        if size % n:
            raise ShapeError(f"psum_scatter: dimension {scatter_dimension} of {x} has size "
                             f"{size}, not a multiple of the axis size {n} (tiled=True)")
        shape[scatter_dimension] //= n
    else:
        if size != n:
            raise ShapeError(f"psum_scatter: dimension {scatter_dimension} of {x} has size "
                             f"{size}, but it must equal the axis size {n} (tiled=False)")
        del shape[scatter_dimension]
    return TensorType(tuple(shape), x.dtype)


@_per_group
def _psum_scatter_impl(xs, *, axes, axis_sizes, scatter_dimension, tiled, note=None):
    total = xs.sum(0).astype(xs.dtype)
    n, d = xs.shape[0], scatter_dimension
    if tiled:   # member j gets the j-th of n equal chunks
        total = total.reshape(*total.shape[:d], n, total.shape[d] // n, *total.shape[d + 1:])
    return np.moveaxis(total, d, 0).copy()


def _psum_scatter_lowering(ctx, eqn, x):
    t, out = eqn.inputs[0].type, eqn.outputs[0].type
    d = eqn.params["scatter_dimension"]
    chunk = list(t.shape)
    chunk[d] = out.shape[d] if eqn.params["tiled"] else 1
    op = _across_partitions(ctx, hlo.ReduceScatterOp(
        mlir_type(TensorType(tuple(chunk), t.dtype)), x, d, _groups(ctx, eqn)))
    fill_reducer(hlo.AddOp, TensorType((), t.dtype), op.regions[0])
    return op.result if eqn.params["tiled"] else hlo.ReshapeOp(mlir_type(out),
                                                                op.result).result


psum_scatter_p = declare("psum_scatter", _psum_scatter_rule, _psum_scatter_impl)
batch_rules[psum_scatter_p] = batching.psum_scatter_batch
always_rewrite.add(psum_scatter_p)
jvp_rules[psum_scatter_p] = linear_jvp(psum_scatter_p)
vjp_rules[psum_scatter_p] = lambda b, ct, x, *, axes, axis_sizes, scatter_dimension, tiled, \
    note=None, groups=None: [b.all_gather(ct, axes=axes, axis_sizes=axis_sizes,
                                          dimension=scatter_dimension, tiled=tiled,
                                          note=transpose_note("psum_scatter"),
                                          **_grouped(groups))]
lower_rules[psum_scatter_p] = _psum_scatter_lowering
varying_rules[psum_scatter_p] = _vary_over_axes


# --- ppermute ---------------------------------------------------------------------------------

def check_permutation(name: str, perm, n: int) -> None:
    """``perm``: (source, destination) pairs of indices below ``n``, each used once."""
    if not isinstance(perm, tuple) or any(
            not isinstance(p, tuple) or len(p) != 2 or
            not all(isinstance(i, int) and not isinstance(i, bool) for i in p) for p in perm):
        raise ShapeError(f"{name}: perm must be a tuple of (source, destination) index "
                         f"pairs, got {perm!r}")
    for what, idx in (("source", [s for s, _ in perm]), ("destination", [d for _, d in perm])):
        bad = [i for i in idx if not 0 <= i < n]
        if bad:
            raise ShapeError(f"{name}: {what} index {bad[0]} in perm={perm} is out of range "
                             f"for an axis of size {n} (valid: 0..{n - 1})")
        repeated = sorted({i for i in idx if idx.count(i) > 1})
        if repeated:
            raise ShapeError(f"{name}: perm={perm} uses {what} {repeated[0]} more than "
                             f"once; each device may send and receive at most once")


def _ppermute_rule(x: TensorType, *, axes, axis_sizes, perm, note=None):
    check_permutation("ppermute", perm, _check_axes("ppermute", axes, axis_sizes))
    return x


def _ppermute_impl(xs, *, axes, axis_sizes, perm, note=None):
    out = np.zeros_like(xs)          # a device no pair sends to receives zeros
    for src, dst in perm:
        out[dst] = xs[src]
    return out


def _ppermute_lowering(ctx, eqn, x):
    t = eqn.outputs[0].type
    if not eqn.params["perm"]:
        return ctx.constant(0, t)
    pairs = [(g[s], g[d]) for g in replica_groups(
        tuple((n, ctx.axis_env[n]) for n in ctx.mesh_axes), eqn.params["axes"])
        for s, d in eqn.params["perm"]]
    return _across_partitions(ctx, hlo.CollectivePermuteOp(x, ir.DenseIntElementsAttr.get(
        np.asarray(pairs, np.int64).reshape(-1, 2))), global_ids=False).result


def _inverse(perm):
    return tuple((d, s) for s, d in perm)


ppermute_p = declare("ppermute", _ppermute_rule, _ppermute_impl)
batch_rules[ppermute_p] = batching.ppermute_batch
always_rewrite.add(ppermute_p)
jvp_rules[ppermute_p] = linear_jvp(ppermute_p)
vjp_rules[ppermute_p] = lambda b, ct, x, *, axes, axis_sizes, perm, note=None: [
    b.ppermute(ct, axes=axes, axis_sizes=axis_sizes, perm=_inverse(perm),
               note=transpose_note("ppermute"))]
lower_rules[ppermute_p] = _ppermute_lowering
varying_rules[ppermute_p] = _vary_over_axes


# --- all_to_all -------------------------------------------------------------------------------

def _all_to_all_rule(x: TensorType, *, axes, axis_sizes, split_axis, concat_axis, tiled,
                     note=None, groups=None):
    n = _group_size("all_to_all", _check_axes("all_to_all", axes, axis_sizes), groups)
    _check_dim("all_to_all", "split_axis", split_axis, x, x.ndim)
    _check_dim("all_to_all", "concat_axis", concat_axis, x, x.ndim)
    size = x.shape[split_axis]
    shape = list(x.shape)
    if tiled:
        if size % n:
            raise ShapeError(f"all_to_all: split_axis {split_axis} of {x} has size {size}, "
                             f"not a multiple of the axis size {n} (tiled=True)")
        shape[split_axis] //= n
        shape[concat_axis] *= n
    else:
        if size != n:
            raise ShapeError(f"all_to_all: split_axis {split_axis} of {x} has size {size}, "
                             f"but it must equal the axis size {n} (tiled=False)")
        del shape[split_axis]
        shape.insert(concat_axis, n)
    return TensorType(tuple(shape), x.dtype)


@_per_group
def _all_to_all_impl(xs, *, axes, axis_sizes, split_axis, concat_axis, tiled, note=None):
    n = xs.shape[0]
    outs = []
    for j in range(n):            # member j gets chunk j of every member, in member order
        if tiled:
            c = xs.shape[1 + split_axis] // n
            chunks = [np.take(x, range(j * c, (j + 1) * c), axis=split_axis) for x in xs]
            outs.append(np.concatenate(chunks, concat_axis))
        else:
            outs.append(np.moveaxis(np.take(xs, j, axis=1 + split_axis), 0, concat_axis))
    return np.stack(outs)


def _all_to_all_lowering(ctx, eqn, x):
    t, out = eqn.inputs[0].type, eqn.outputs[0].type
    split, concat = eqn.params["split_axis"], eqn.params["concat_axis"]
    sub = eqn.params.get("groups")
    n = len(sub[0]) if sub is not None else math.prod(eqn.params["axis_sizes"])
    groups = _groups(ctx, eqn)
    if eqn.params["tiled"]:
        return _across_partitions(ctx, hlo.AllToAllOp([x], split, concat, n, groups),
                                  global_ids=False).results[0]
    # Untiled: add a size-1 axis to concatenate along, run the tiled op, which leaves the
    # split axis with size 1, and drop that axis.
    if concat <= split:
        extra, split1 = concat, split + 1
    else:
        extra, split1 = concat + 1, split
    shape1 = list(t.shape)
    shape1.insert(extra, 1)
    x1 = hlo.ReshapeOp(mlir_type(TensorType(tuple(shape1), t.dtype)), x).result
    y = _across_partitions(ctx, hlo.AllToAllOp([x1], split1, extra, n, groups),
                           global_ids=False).results[0]
    return hlo.ReshapeOp(mlir_type(out), y).result


def _all_to_all_vjp(b, ct, x, *, axes, axis_sizes, split_axis, concat_axis, tiled, note=None,
                    groups=None):
    return [b.all_to_all(ct, axes=axes, axis_sizes=axis_sizes, split_axis=concat_axis,
                         concat_axis=split_axis, tiled=tiled,
                         note=transpose_note("all_to_all"), **_grouped(groups))]


all_to_all_p = declare("all_to_all", _all_to_all_rule, _all_to_all_impl)
batch_rules[all_to_all_p] = batching.all_to_all_batch
always_rewrite.add(all_to_all_p)
jvp_rules[all_to_all_p] = linear_jvp(all_to_all_p)
vjp_rules[all_to_all_p] = _all_to_all_vjp
lower_rules[all_to_all_p] = _all_to_all_lowering
varying_rules[all_to_all_p] = _vary_over_axes


# --- axis_index -------------------------------------------------------------------------------

def _axis_index_rule(*, axes, axis_sizes) -> TensorType:
    _check_axes("axis_index", axes, axis_sizes)
    return TensorType((), np.dtype(np.int32))


def _axis_index_lowering(ctx, eqn):
    # The index along ``axes`` from the replica id: each axis's coordinate is
    # (id // stride) % size, combined with the first named axis major.
    i32 = TensorType((), np.dtype(np.int32))
    sizes = dict((n, ctx.axis_env[n]) for n in ctx.mesh_axes)
    strides, step = {}, 1
    for name in reversed(ctx.mesh_axes):
        strides[name], step = step, step * sizes[name]
    own = hlo.PartitionIdOp() if ctx.manual else hlo.ReplicaIdOp()   # See _across_partitions
    rid = hlo.ConvertOp(mlir_type(i32), own.result).result
    index = None
    for name in eqn.params["axes"]:
        coord = hlo.RemOp(hlo.DivOp(rid, ctx.constant(strides[name], i32)).result,
                          ctx.constant(sizes[name], i32)).result
        index = coord if index is None else hlo.AddOp(
            hlo.MulOp(index, ctx.constant(sizes[name], i32)).result, coord).result
    return index


axis_index_p = declare("axis_index", _axis_index_rule,
                       lambda *, axes, axis_sizes: np.arange(math.prod(axis_sizes),
                                                             dtype=np.int32))
batch_rules[axis_index_p] = batching.axis_index_batch
always_rewrite.add(axis_index_p)
nondifferentiable[axis_index_p] = "an integer index"
lower_rules[axis_index_p] = _axis_index_lowering
varying_rules[axis_index_p] = lambda ins, *, axes, axis_sizes: [frozenset(axes)]
