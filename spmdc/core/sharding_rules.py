"""The sharding rules of types over Explicit mesh axes: for each primitive, the specs of
its results from its operands' (Note [shardings in types] in core/explicit_sharding.py),
JAX's rules with JAX's errors. A spec is a tuple with one entry per dimension, each the
tuple of mesh axes that dimension is split over (major first), ``()`` for none."""
from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..compiler.ir import TensorType, dtype_name
from ..compiler.primitives.conv import conv_general_dilated_p
from ..compiler.primitives.cumulative import cummax_p, cummin_p, cumprod_p, cumsum_p
from ..compiler.primitives.dynamic_slicing import dynamic_slice_p
from ..compiler.primitives.indexing import gather_p
from ..compiler.primitives.reductions import (
    argmax_p,
    argmin_p,
    dot_general_p,
    reduce_and_p,
    reduce_max_p,
    reduce_min_p,
    reduce_or_p,
    reduce_prod_p,
    reduce_sum_p,
)
from ..compiler.primitives.shard_map import shard_map_p
from ..compiler.primitives.sharding import sharding_constraint_p
from ..compiler.primitives.sorting import sort_p
from ..compiler.primitives.structural import (
    broadcast_in_dim_p,
    concatenate_p,
    expand_dims_p,
    iota_p,
    pad_p,
    reshape_p,
    slice_p,
    squeeze_p,
    transpose_p,
)
from ..errors import ShardingTypeError
from ..runtime.sharding import PartitionSpec

__all__ = ["Spec", "Rule", "sharding_rules", "rule_for", "out_sharding_given",
           "to_partition_spec", "spec_text", "indivisible_message"]

Spec = tuple[tuple[str, ...], ...]


def to_partition_spec(spec: Spec) -> PartitionSpec:
    return PartitionSpec(*(None if not a else a[0] if len(a) == 1 else tuple(a) for a in spec))


def spec_text(shape: Sequence[int], spec: PartitionSpec) -> str:
    """The dimensions of a type with its sharding, JAX's way: ``8@X,4`` and ``8@(X,Y)``."""
    out = []
    for d, n in enumerate(shape):
        axes = spec.axes_of(d)
        out.append(str(n) if not axes else f"{n}@{axes[0]}" if len(axes) == 1 and
                   isinstance(spec[d], str) else f"{n}@({','.join(axes)})")
    return ",".join(out)


# A rule: (operands' specs, operands' types, results' types, params, the abstract mesh of
# the types) -> the results' specs.
Rule = Callable[[list[Spec], list[TensorType], list[TensorType], dict[str, Any], Any],
                list[Spec]]
sharding_rules: dict[Any, Rule] = {}


class _Given(threading.local):
    depth = 0


_given = _Given()


@contextmanager
def out_sharding_given() -> Iterator[None]:
    """While the caller names the result's sharding itself (``out_sharding=``), a rule
    that finds the result ambiguous gives a replicated one instead of raising."""
    _given.depth += 1
    try:
        yield
    finally:
        _given.depth -= 1


def _ambiguous(message: str, rank: int) -> list[Spec]:
    if _given.depth:
        return [((),) * rank]
    raise ShardingTypeError(message)


def _show(spec: Spec) -> str:
    return repr(tuple(None if not a else a[0] if len(a) == 1 else a for a in spec))


def _merge(name: str, specs: Sequence[Spec], rank: int) -> Spec:
    out = []
    for d in range(rank):
        found: tuple[str, ...] = ()
        for s in specs:
            if s[d] and found and s[d] != found:
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: "
                    f"{', '.join(_show(s) for s in specs)}.")
            found = found or s[d]
        out.append(found)
    return tuple(out)


def _default(name: str) -> Rule:
    def rule(specs, ins, outs, params, mesh):
        shapes = {t.shape for t in outs}
        if len(shapes) == 1 and all(t.shape == outs[0].shape or t.ndim == 0 for t in ins):
            merged = _merge(name, [s for s, t in zip(specs, ins, strict=True) if t.ndim],
                            outs[0].ndim)
            return [merged] * len(outs)
        return [((),) * t.ndim for t in outs]
    return rule


def rule_for(prim: Any) -> Rule:
    """``prim``'s rule: its entry in ``sharding_rules``, else the default one (results of
    the operands' shape merge their specs, others are replicated)."""
    return sharding_rules.get(prim) or _default(prim.name)


def _one(f: Callable[..., Spec]) -> Rule:
    return lambda specs, ins, outs, params, mesh: [f(specs, ins, outs[0], **params)]


@_one
def _broadcast_in_dim(specs, ins, out, *, shape, broadcast_dimensions, **_):
    spec = [()] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        if ins[0].shape[i] == shape[d]:
            spec[d] = specs[0][i]
    return tuple(spec)


@_one
def _transpose(specs, ins, out, *, permutation):
    return tuple(specs[0][p] for p in permutation)


@_one
def _squeeze(specs, ins, out, *, dimensions):
    return tuple(s for d, s in enumerate(specs[0]) if d not in dimensions)


@_one
def _expand_dims(specs, ins, out, *, dimensions):
    spec = list(specs[0])
    for d in sorted(dimensions):
        spec.insert(d, ())
    return tuple(spec)


class _Unsupported(Exception):
    """A reshape JAX's rule does not type (it asks for ``out_sharding``)."""


def _one_group(small: tuple[int, ...], big: tuple[int, ...]) -> list[int | list[int]] | None:
    """How the dimensions of ``big`` (more of them) come from those of ``small``, JAX's
    way: per dimension of ``small``, its size where ``big`` has it unchanged, or the sizes
    of the run of ``big``'s dimensions it splits into; at most one dimension splits
    (else _Unsupported), and None where the sizes do not line up so. Trailing size-1
    dimensions the two share are set aside first."""
    ones = 0
    while small and big and small[-1] == 1 and big[-1] == 1:
        small, big, ones = small[:-1], big[:-1], ones + 1
    out: list[int | list[int]] = []
    i = j = 0
    split = False
    while j < len(big):
        if i >= len(small):
            return None
        if small[i] == big[j]:
            out.append(small[i])
        else:
            if split:
                raise _Unsupported
            split = True
            run = [big[j]]
            # grow the run until it makes small[i], taking the size-1 dimensions after it
            # too unless the next of small starts there
            while math.prod(run) != small[i] or (j + 1 < len(big) and big[j + 1] == 1):
                if math.prod(run) > small[i]:
                    return None
                if (math.prod(run) == small[i] and i + 1 < len(small)
                        and big[j + 1] == small[i + 1]):
                    break
                j += 1
                if j >= len(big):
                    return None
                run.append(big[j])
            out.append(run)
        i += 1
        j += 1
    out.extend([1] * ones)
    return out if len(out) == len(small) + ones else None


def _spread(axes: Sequence[str], sizes: Sequence[int], mesh: Any) -> list[tuple[str, ...]]:
    """The mesh axes ``axes`` (major first) laid over dimensions of ``sizes``, as many to
    each as divide it in turn (JAX's rule); every axis must find a dimension."""
    size_of = dict(mesh.shape_tuple)
    left = iter(axes)
    out = []
    for n in sizes:
        here: list[str] = []
        while n > 1:
            a = next(left, None)
            if a is None:
                break
            n, rest = divmod(n, size_of[a])
            if rest:
                raise _Unsupported
            here.append(a)
        out.append(tuple(here))
    if next(left, None) is not None:
        raise _Unsupported
    return out


def _reshape_spec(old: tuple[int, ...], spec: Spec, new: tuple[int, ...], mesh: Any) -> Spec:
    if [n for n in old if n != 1] == [n for n in new if n != 1]:
        # only size-1 dimensions come or go: the others keep their axes, in order
        kept = iter(s for n, s in zip(old, spec, strict=True) if n != 1)
        return tuple(() if n == 1 else next(kept) for n in new)
    if len(new) > len(old):
        parts = _one_group(old, new)
        if parts is None:
            raise _Unsupported
        out: list[tuple[str, ...]] = []
        for part, axes in zip(parts, spec, strict=True):
            if not isinstance(part, list):
                out.append(axes)
            else:
                out.extend(_spread(axes, part, mesh) if axes else [()] * len(part))
        return tuple(out)
    parts = _one_group(new, old) if len(new) < len(old) else None
    if parts is None:
        raise _Unsupported
    merged: list[tuple[str, ...]] = []
    specs = iter(spec)
    for n, part in zip(new, parts, strict=True):
        if not isinstance(part, list):
            merged.append(next(specs))
            continue
        group = [next(specs) for _ in part]
        if not any(group):
            merged.append(())
            continue
        # the merged dimension's axes: the group's, major first; an unsplit dimension
        # may only come after the split ones
        while not group[-1]:
            group.pop()
        if not all(group):
            raise _Unsupported
        merged.extend(_spread([a for axes in group for a in axes], [n], mesh))
    return tuple(merged)


def _reshape(specs, ins, outs, params, mesh):
    old, spec, new = ins[0].shape, specs[0], tuple(params["new_sizes"])
    if not any(spec):
        return [((),) * len(new)]
    try:
        return [_reshape_spec(old, spec, new, mesh)]
    except _Unsupported:
        return _ambiguous(
            "This reshape is not supported. Please specify the sharding of the output via "
            "the `out_sharding` argument of jax.lax.reshape. Got operand type: "
            f"{ins[0].dtype.name}[{spec_text(old, to_partition_spec(spec))}], new sizes: "
            f"{new}", len(new))


def _reduce(specs, ins, outs, params, mesh):
    axes = params["axes"]
    return [tuple(s for d, s in enumerate(specs[0]) if d not in axes)] * len(outs)


@_one
def _arg_reduce(specs, ins, out, *, axis, **_):
    return tuple(s for d, s in enumerate(specs[0]) if d != axis)


def _along(what: str, message: Callable[[TensorType, Spec, int], str]) -> Rule:
    """Operations along one dimension, which must not be split (cumulative, sort)."""
    def rule(specs, ins, outs, params, mesh):
        d = params[what]
        for s, t in zip(specs, ins, strict=True):
            if s[d]:
                raise ShardingTypeError(message(t, s, d))
        return [specs[0]] * len(outs)
    return rule


def _cumulative_message(t: TensorType, s: Spec, d: int) -> str:
    return (f"Input should be unsharded over the axis being reduced. Got input "
            f"type={t.dtype.name}[{spec_text(t.shape, to_partition_spec(s))}] and axis={d}")


def _sort_message(t: TensorType, s: Spec, d: int) -> str:
    return (f"Arguments to sort must be unsharded over the sorting dimension. Got arg "
            f"spec={to_partition_spec(s)!r} and sorting dimension={d}")


@_one
def _dot_general(specs, ins, out, *, contract, batch, **_):
    (xc, yc), (xb, yb) = contract, batch
    x, y = specs
    for (l_dims, r_dims, what) in ((xb, yb, "batch"), (xc, yc, "contracting")):
        ls, rs = tuple(x[d] for d in l_dims), tuple(y[d] for d in r_dims)
        if any(a and b and a != b for a, b in zip(ls, rs, strict=True)):
            return _ambiguous(
                f"dot_general requires lhs {what} dimensions and rhs {what} dimensions to "
                f"have consistent sharding, got {_show(ls)} and {_show(rs)}.", out.ndim)[0]
    lc, rc = tuple(x[d] for d in xc), tuple(y[d] for d in yc)
    if any(a and b for a, b in zip(lc, rc, strict=True)):
        return _ambiguous(
            "Contracting dimensions are sharded and it is ambiguous how the output should "
            "be sharded. Please specify the output sharding via the `out_sharding` "
            f"parameter. Got lhs_contracting_spec={_show(lc)} and "
            f"rhs_contracting_spec={_show(rc)}", out.ndim)[0]
    spec = [x[i] or y[j] for i, j in zip(xb, yb, strict=True)]
    spec += [x[d] for d in range(len(x)) if d not in xc and d not in xb]
    spec += [y[d] for d in range(len(y)) if d not in yc and d not in yb]
    return tuple(spec)


@_one
def _conv(specs, ins, out, *, dimension_numbers, **_):
    (lhs_dims, rhs_dims, out_dims), (lhs, rhs) = dimension_numbers, specs
    spec = [()] * out.ndim
    spec[out_dims[0]] = lhs[lhs_dims[0]]
    spec[out_dims[1]] = rhs[rhs_dims[0]]
    return tuple(spec)


@_one
def _gather(specs, ins, out, *, offset_dims, collapsed_slice_dims, start_index_map,
            slice_sizes, operand_batching_dims=(), start_indices_batching_dims=(), **_):
    operand, indices = list(specs[0]), list(specs[1])
    if not any(operand) and not any(indices):
        return ((),) * out.ndim
    full_or_whole = all(slice_sizes[d] == ins[0].shape[d] or not operand[d]
                        for d in start_index_map)
    batching = all(indices[i] == operand[o] or not operand[o] or not indices[i]
                   for o, i in zip(operand_batching_dims, start_indices_batching_dims,
                                   strict=True))
    index_rest = all(not s for i, s in enumerate(indices)
                     if i not in start_indices_batching_dims)
    if not (full_or_whole and batching and index_rest):
        return _ambiguous(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the "
            "gather indexing as out sharding could not be resolved unambiguously (or would "
            f"require collectives on inputs). Got operand={_aval_text(ins[0], specs[0])}, "
            f"indices={_aval_text(ins[1], specs[1])}", out.ndim)[0]
    for o, i in zip(operand_batching_dims, start_indices_batching_dims, strict=True):
        indices[i] = indices[i] or operand[o]
    window = iter(d for d in range(len(operand))
                  if d not in collapsed_slice_dims and d not in operand_batching_dims)
    rest = iter(indices)
    return tuple(operand[next(window)] if p in offset_dims else next(rest)
                 for p in range(out.ndim))


def _aval_text(t: TensorType, s: Spec) -> str:
    return f"ShapedArray({t.dtype.name}[{spec_text(t.shape, to_partition_spec(s))}])"


# Slicing, padding and dynamic_slice keep their operand's layout, also along a dimension
# whose size they change, as JAX's rules do; a size the dimension's mesh axes no longer
# divide is JAX's ShardingTypeError (``indivisible_message``), worded as JAX words it.
_SIZE_CHANGING = {slice_p: "slicing", pad_p: "padding", dynamic_slice_p: "dynamic_slice"}


@_one
def _keep_operand(specs, ins, out, **_):
    return specs[0]


def indivisible_message(prim: Any, operand: TensorType, spec: Spec, out: TensorType,
                        d: int, parts: int) -> str:
    """The ShardingTypeError's message when dimension ``d`` of ``prim``'s result ``out``
    cannot be split into ``parts`` pieces as ``spec`` (its spec) asks."""
    axes = spec[d]
    name = _SIZE_CHANGING.get(prim)
    if name is None:
        return (f"{prim.name}: its result {out} would be split over mesh axes {axes} "
                f"({parts} pieces) in dimension {d}, whose size {out.shape[d]} they do "
                "not divide; reshard an operand first (jax.sharding.reshard)")
    entry = axes[0] if len(axes) == 1 else axes
    dims = ",".join(str(n) if not a else f"{n}@{a[0]}" if len(a) == 1 else
                    f"{n}@({','.join(a)})" for n, a in zip(operand.shape, spec, strict=True))
    # JAX's padding rule reports the sizes its shape rule computed, NumPy integers
    shape = tuple(out.shape) if prim is not pad_p else \
        "(" + ", ".join(f"np.int64({n})" for n in out.shape) + ")"
    return (f"{name} on sharded dims where out dim ({out.shape[d]}) is not divisible by "
            f"mesh axes ({parts}) with spec ({entry}) is not implemented. Got input "
            f"type={dtype_name(operand.dtype)}[{dims}] and output shape={shape}")


@_one
def _concatenate(specs, ins, out, *, dimension):
    # JAX asks the operands laid out over a mesh for one layout; a replicated spec here may
    # be an operand with no mesh at all (a constant), which JAX leaves out of the check
    split = [s for s in specs if any(s)]
    if any(s != split[0] for s in split):
        raise ShardingTypeError(
            "All operands should have the same sharding. Got shardings "
            + ", ".join(_show(s) for s in specs) + "; reshard them to one layout first "
            "(jax.sharding.reshard)")
    return split[0] if split else specs[0]


def _constraint(specs, ins, outs, params, mesh):
    return [tuple(tuple(a) for a in params["spec"])]


def _shard_map(specs, ins, outs, params, mesh):
    """Each result is laid out as its ``out_specs`` entry says (as JAX's shard_map types
    it over Explicit axes)."""
    return [tuple(tuple(a) for a in spec) for spec in params["out_specs"]]


def _replicated(specs, ins, outs, params, mesh):
    return [((),) * t.ndim for t in outs]


sharding_rules.update({
    broadcast_in_dim_p: _broadcast_in_dim, transpose_p: _transpose, squeeze_p: _squeeze,
    expand_dims_p: _expand_dims, reshape_p: _reshape, argmax_p: _arg_reduce,
    argmin_p: _arg_reduce, dot_general_p: _dot_general, conv_general_dilated_p: _conv,
    gather_p: _gather, concatenate_p: _concatenate,
    **dict.fromkeys(_SIZE_CHANGING, _keep_operand),
    sharding_constraint_p: _constraint, shard_map_p: _shard_map, iota_p: _replicated,
    sort_p: _along("dimension", _sort_message),
})
sharding_rules.update(dict.fromkeys((reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p,
                                     reduce_and_p, reduce_or_p), _reduce))
sharding_rules.update(dict.fromkeys((cumsum_p, cumprod_p, cummax_p, cummin_p),
                                    _along("axis", _cumulative_message)))
