"""Shardings in types over Explicit mesh axes: what a traced value's type says of its
layout, the per-primitive rules that compute it, and the errors JAX's rules raise.

See Note [shardings in types]. A spec here is a tuple with one entry per dimension, each
the tuple of Explicit mesh axes that dimension is split over (major first), ``()`` for
none: the plain-data form a ``sharding_constraint`` equation holds too.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..compiler.builder import Builder
from ..compiler.ir import Atom, Func, TensorType, Var
from ..compiler.primitives.conv import conv_general_dilated_p
from ..compiler.primitives.cumulative import cummax_p, cummin_p, cumprod_p, cumsum_p
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
from ..compiler.primitives.sharding import sharding_constraint_p
from ..compiler.primitives.sorting import sort_p
from ..compiler.primitives.structural import (
    broadcast_in_dim_p,
    concatenate_p,
    expand_dims_p,
    iota_p,
    reshape_p,
    slice_p,
    squeeze_p,
    transpose_p,
)
from ..errors import ShardingTypeError
from ..runtime.array import Array
from ..runtime.mesh_axes import AbstractMesh, AxisType, abstract_mesh_override
from ..runtime.sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    current_mesh,
    mesh_of,
    remember_mesh,
)

__all__ = ["Spec", "ExplicitTypes", "context_abstract_mesh", "explicit_context",
           "array_spec", "spec_text", "to_partition_spec", "apply_rule", "out_sharding_given",
           "sharding_rules", "note_array", "note_traced", "type_sharding", "array_sharding",
           "constrain_outputs", "note_outputs", "note_constrained", "output_shardings",
           "share_type", "result_shardings"]

Spec = tuple[tuple[str, ...], ...]


# Note [shardings in types]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# Over a mesh whose axes are AxisType.Explicit, JAX's types carry a sharding: an array
# laid out ``P('X', None)`` over such a mesh has the type ``float32[8@X,4]``, and each
# primitive has a sharding rule that gives its result's type from its operands' (a sum
# over a split dimension is not split; a product whose contracted dimensions are split on
# both sides is ambiguous, a ShardingTypeError asking for ``out_sharding=``). spmdc does
# the same, without touching its IR's types (TensorType stays a shape and a dtype, so
# every pass, and every program without an Explicit mesh, is unchanged):
#
# - a trace that sees an Explicit axis keeps an ``ExplicitTypes`` (``Trace.explicit``):
#   the mesh and a spec per Var of the trace whose spec splits something (a Var it does
#   not name is replicated). A trace gets one when it starts under a context mesh with
#   an Explicit axis, or when it takes an input or captures a value whose type has one
#   (an Array laid out by a NamedSharding over such a mesh, or another trace's value);
#   without one, ``bind`` does nothing more than before;
# - ``bind`` runs the rule of the primitive (``sharding_rules``, keyed by primitive;
#   primitives whose operands all have the result's shape, the elementwise family, share
#   the default rule) on the operands' specs, and records the result's. The rules are
#   JAX's: elementwise and broadcasting merge the operands' specs (two different axes on
#   one dimension is an error), reductions drop the reduced dimensions, dot_general keeps
#   the batch and free dimensions' axes, transpose permutes, reshape follows a split
#   dimension when it stays the major part of a group, gather and convolution follow
#   JAX's, cumulative reductions and sort refuse a split dimension; a primitive outside
#   the table whose operands do not share the result's shape gives a replicated result;
# - ``reshard``/``with_sharding_constraint`` and an operation's ``out_sharding=`` set the
#   spec (``out_sharding_given`` lets an ambiguous rule pass while the caller names the
#   result's sharding);
# - a program a transformation's pass wrote (grad's cotangents, vmap's batched body) or
#   one inlined into a trace (a nested jit) has its specs from the same rules run over
#   its equations (``note_outputs``, ``result_shardings``); an equation a pass wrote that
#   a rule refuses gives a replicated result there rather than an error;
# - the types reach XLA as sharding constraints: each output of a trace whose inputs are
#   typed (jit's, eval_shape's, grad's, not vmap's per-example one) is constrained to its
#   spec, replicated included, and a top-level program over the mesh asks for each result
#   in the layout its type says (``result_shardings``), so the Array a call returns is
#   what the type says; intermediate values are left to the partitioner's propagation;
# - the abstract value (``typeof``, ``Tracer.aval``, ``eval_shape``'s ShapeDtypeStruct)
#   reads the spec: ``NamedSharding(abstract_mesh, P('X', None))``, printed JAX's way.
#
# Axes that are Auto in the context (inside ``auto_axes``) are not in any spec: only the
# context's Explicit axes count, or, with no context mesh, those of the array's own mesh.


class ExplicitTypes:
    """A trace's Explicit mesh and the specs of its values (Note [shardings in types])."""
    __slots__ = ("mesh", "abstract", "specs")

    def __init__(self, mesh: Mesh | None, abstract: AbstractMesh):
        self.mesh = mesh                      # for the constraints on the trace's outputs
        self.abstract = abstract              # what the types name
        self.specs: dict[Var, Spec] = {}

    def spec(self, atom: Any) -> Spec:
        """The spec of an Atom of the trace (replicated unless recorded)."""
        if atom.__class__ is Var:
            found = self.specs.get(atom)
            if found is not None:
                return found
        return ((),) * atom.type.ndim

    def record(self, var: Var, spec: Spec) -> None:
        if any(spec):
            self.specs[var] = spec
        else:
            self.specs.pop(var, None)


def context_abstract_mesh() -> AbstractMesh:
    """JAX's ``get_abstract_mesh()``: the override in context, else the current mesh's."""
    override = abstract_mesh_override()
    if override is not None:
        return override
    mesh = current_mesh()
    return AbstractMesh((), ()) if mesh is None else mesh.abstract_mesh


def explicit_context() -> ExplicitTypes | None:
    """The ExplicitTypes a trace starting now gets from the context mesh, if it has an
    Explicit axis (cheap when no mesh is set)."""
    if current_mesh() is None and abstract_mesh_override() is None:
        return None
    abstract = context_abstract_mesh()
    if AxisType.Explicit not in abstract.axis_types:
        return None
    return ExplicitTypes(current_mesh(), abstract)


def _explicit_names(abstract: AbstractMesh) -> frozenset[str]:
    return frozenset(n for n, t in zip(abstract.axis_names, abstract.axis_types,
                                       strict=True) if t == AxisType.Explicit)


def array_spec(x: Any) -> tuple[Spec, Mesh, AbstractMesh] | None:
    """An Array's spec over the Explicit axes in force (the context's, or its mesh's when
    no mesh is in context), its Mesh and the abstract mesh its type names; None when it
    is not laid out over a mesh with such an axis."""
    s = x._sharding
    if s.__class__ is not NamedSharding or not isinstance(s.mesh, Mesh) \
            or AxisType.Explicit not in s.mesh.axis_types:
        return None
    context = context_abstract_mesh()
    abstract = context if context.axis_names == s.mesh.axis_names else s.mesh.abstract_mesh
    names = _explicit_names(abstract)
    if not names:
        return None
    spec = tuple(tuple(a for a in s.spec.axes_of(d) if a in names) for d in range(x.ndim))
    return spec, s.mesh, abstract


def restrict(spec: Sequence[Sequence[str]], abstract: AbstractMesh) -> Spec:
    """``spec`` with only ``abstract``'s Explicit axes."""
    names = _explicit_names(abstract)
    return tuple(tuple(a for a in axes if a in names) for axes in spec)


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


def _state_for(trace: Any, mesh: Mesh | None, abstract: AbstractMesh) -> ExplicitTypes | None:
    if trace.axis_env:         # named axes (shard_map, vmap's): values are per-device there
        return None
    state = trace.explicit
    if state is None:
        state = trace.explicit = ExplicitTypes(mesh, abstract)
    elif state.mesh is None:
        state.mesh = mesh
    return state


def note_array(trace: Any, var: Var, value: Array) -> None:
    """``var`` (an input of ``trace``) stands for the Array ``value``: its type takes the
    Array's sharding over Explicit axes, if it has one."""
    if value._sharding.__class__ is not NamedSharding:
        return
    found = array_spec(value)
    if found is not None:
        state = _state_for(trace, found[1], found[2])
        if state is not None:
            state.record(var, found[0])


def note_traced(trace: Any, var: Var, outer: ExplicitTypes, outer_var: Var) -> None:
    """``var`` (an input of ``trace``) stands for ``outer_var`` of a trace with types."""
    state = _state_for(trace, outer.mesh, outer.abstract)
    if state is not None:
        state.record(var, outer.spec(outer_var))


def note_constrained(trace: Any, var: Var, sharding: NamedSharding) -> None:
    """``var`` was constrained to ``sharding`` (reshard, with_sharding_constraint): over
    Explicit axes its type says so, whether or not the trace had types before."""
    mesh = sharding.mesh
    if not isinstance(mesh, Mesh) or AxisType.Explicit not in mesh.axis_types:
        return
    context = context_abstract_mesh()
    abstract = context if context.axis_names == mesh.axis_names else mesh.abstract_mesh
    state = _state_for(trace, mesh, abstract)
    if state is not None:
        state.record(var, restrict([sharding.spec.axes_of(d) for d in range(var.type.ndim)],
                                   abstract))


def share_type(out: Any, like: Any) -> None:
    """Give the traced value ``out`` the sharding in the type of ``like``, a traced value
    of the same trace and shape (JAX's ``full_like`` makes its result so)."""
    state = like._trace.explicit
    if state is not None and out._trace is like._trace and out.shape == like.shape:
        state.record(out._var, state.spec(like._var))


def type_sharding(state: ExplicitTypes, var: Var) -> NamedSharding:
    """The sharding in the type of ``var``."""
    return NamedSharding(state.abstract, to_partition_spec(state.spec(var)))


def array_sharding(x: Array) -> NamedSharding | None:
    """The sharding in the type of the Array ``x``, if it is laid out over Explicit axes."""
    if x._sharding.__class__ is not NamedSharding:
        return None
    found = array_spec(x)
    if found is None:
        return None
    return NamedSharding(found[2], to_partition_spec(found[0]))


def constrain_outputs(state: ExplicitTypes, b: Builder, atoms: list[Atom]) -> list[Atom]:
    """The outputs of a trace with types, each constrained to its type's sharding so that
    the partitioner lays it out so (Note [shardings in types])."""
    if state.mesh is None:
        return atoms
    ids = remember_mesh(state.mesh)
    out: list[Atom] = []
    for a in atoms:
        if a.__class__ is not Var:
            out.append(a)
            continue
        spec = state.spec(a)
        v = b.bind(sharding_constraint_p, a, mesh=state.mesh.shape_tuple, device_ids=ids,
                   spec=spec)
        state.record(v, spec)
        out.append(v)
    return out


def result_shardings(func: Func, mesh: Mesh, in_shardings: Sequence[NamedSharding]
                     ) -> list[NamedSharding] | None:
    """The shardings the types of a program's results have, from its inputs' layouts over
    ``mesh``: the rules run over the program's equations (those a transformation's pass
    wrote, as grad's and vmap's, included; ``_run_rules``), None when the mesh has no
    Explicit axis in force."""
    context = context_abstract_mesh()
    abstract = context if context.axis_names == mesh.axis_names else mesh.abstract_mesh
    if AxisType.Explicit not in abstract.axis_types:
        return None
    state = ExplicitTypes(mesh, abstract)
    for v, s in zip(func.inputs, in_shardings, strict=True):
        state.record(v, restrict([s.spec.axes_of(d) for d in range(v.type.ndim)], abstract))
    _run_rules(state, func)
    return [NamedSharding(mesh, to_partition_spec(state.spec(o))) for o in func.outputs]


def output_shardings(func: Func) -> list[NamedSharding | None]:
    """The sharding in the type of each output of ``func``, a trace's program: what the
    output's constraint over a mesh with Explicit axes names (``constrain_outputs`` put
    them there), None for an output with none."""
    made = {e.outputs[0]: e for e in func.eqns[-len(func.outputs):]
            if e.prim is sharding_constraint_p} if func.outputs else {}
    context = context_abstract_mesh()
    out: list[NamedSharding | None] = []
    for o in func.outputs:
        eqn = made.get(o)
        mesh = None if eqn is None else mesh_of(eqn.params["mesh"], eqn.params["device_ids"])
        if mesh is None or AxisType.Explicit not in mesh.axis_types:
            out.append(None)
            continue
        abstract = context if context.axis_names == mesh.axis_names else mesh.abstract_mesh
        out.append(NamedSharding(abstract, to_partition_spec(
            restrict(eqn.params["spec"], abstract))))
    return out


def _run_rules(state: ExplicitTypes, func: Func) -> None:
    """The rules run over ``func``'s equations, its inputs' specs recorded in ``state``.
    An equation whose rule refuses its operands (a transformation's pass may write what
    a user may not) gives replicated results, as do the sub-programs of control flow."""
    with out_sharding_given():
        for eqn in func.eqns:
            try:
                apply_rule(state, eqn.prim, eqn.inputs, eqn.params, eqn.outputs)
            except ShardingTypeError:
                for v in eqn.outputs:
                    state.specs.pop(v, None)


def note_outputs(state: ExplicitTypes, func: Func, ins: Sequence[Atom],
                 outs: Sequence[Var]) -> None:
    """The specs of ``outs``, the results of inlining ``func`` on ``ins`` (Atoms of the
    trace of ``state``): its equations' rules run on the inputs' specs."""
    inner = ExplicitTypes(state.mesh, state.abstract)
    for v, a in zip(func.inputs, ins, strict=True):
        inner.record(v, state.spec(a))
    _run_rules(inner, func)
    for o, v in zip(func.outputs, outs, strict=True):
        state.record(v, inner.spec(o))


# --- the rules ---------------------------------------------------------------------------

Rule = Callable[[list[Spec], list[TensorType], list[TensorType], dict[str, Any]], list[Spec]]
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
    def rule(specs, ins, outs, params):
        shapes = {t.shape for t in outs}
        if len(shapes) == 1 and all(t.shape == outs[0].shape or t.ndim == 0 for t in ins):
            merged = _merge(name, [s for s, t in zip(specs, ins, strict=True) if t.ndim],
                            outs[0].ndim)
            return [merged] * len(outs)
        return [((),) * t.ndim for t in outs]
    return rule


def apply_rule(state: ExplicitTypes, prim: Any, atoms: Sequence[Any], params: dict[str, Any],
               outs: Sequence[Var]) -> None:
    """Record the specs of ``outs``, the results of ``prim`` on ``atoms`` (Note
    [shardings in types])."""
    specs = [state.spec(a) for a in atoms]
    ins = [a.type for a in atoms]
    rule = sharding_rules.get(prim) or _default(prim.name)
    out_specs = [restrict(o, state.abstract)
                 for o in rule(specs, ins, [v.type for v in outs], params)]
    sizes = dict(state.abstract.shape_tuple)
    for v, s in zip(outs, out_specs, strict=True):
        for d, axes in enumerate(s):
            parts = math.prod(sizes[a] for a in axes)
            if v.type.shape[d] % parts:
                raise ShardingTypeError(
                    f"{prim.name}: its result {v.type} would be split over mesh axes "
                    f"{axes} ({parts} pieces) in dimension {d}, whose size "
                    f"{v.type.shape[d]} they do not divide; reshard an operand first "
                    "(jax.sharding.reshard)")
        state.record(v, s)


def _one(f: Callable[..., Spec]) -> Rule:
    return lambda specs, ins, outs, params: [f(specs, ins, outs[0], **params)]


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


def _reshape_groups(old: tuple[int, ...], new: tuple[int, ...]
                    ) -> list[tuple[list[int], list[int]]]:
    """Runs of dimensions of ``old`` and ``new`` with equal products, in order."""
    groups, i, j = [], 0, 0
    while i < len(old) or j < len(new):
        a: list[int] = []
        b: list[int] = []
        pa = pb = 1
        if i < len(old):
            pa, i = old[i], i + 1
            a.append(i - 1)
        if j < len(new):
            pb, j = new[j], j + 1
            b.append(j - 1)
        while pa != pb:
            if pa < pb and i < len(old):
                pa, i = pa * old[i], i + 1
                a.append(i - 1)
            elif pb < pa and j < len(new):
                pb, j = pb * new[j], j + 1
                b.append(j - 1)
            else:
                break
        groups.append((a, b))
    return groups


@_one
def _reshape(specs, ins, out, *, new_sizes, **_):
    old, spec = ins[0].shape, specs[0]
    result: list[tuple[str, ...]] = [()] * len(new_sizes)
    if not any(spec):
        return tuple(result)
    for a, b in _reshape_groups(old, tuple(new_sizes)):
        split = [d for d in a if spec[d]]
        if not split:
            continue
        major = [d for d in a if old[d] != 1][:1]
        target = [d for d in b if new_sizes[d] != 1][:1]
        if split != major or not target:
            raise ShardingTypeError(
                f"reshape of a value of shape {old} split as {_show(spec)} into shape "
                f"{tuple(new_sizes)} would move data between devices: a split dimension "
                "must stay the major part of the dimensions it becomes or is merged into; "
                "reshard the value first (jax.sharding.reshard)")
        result[target[0]] = spec[split[0]]
    return tuple(result)


def _reduce(specs, ins, outs, params):
    axes = params["axes"]
    return [tuple(s for d, s in enumerate(specs[0]) if d not in axes)] * len(outs)


@_one
def _arg_reduce(specs, ins, out, *, axis, **_):
    return tuple(s for d, s in enumerate(specs[0]) if d != axis)


def _along(what: str, message: Callable[[TensorType, Spec, int], str]) -> Rule:
    """Operations along one dimension, which must not be split (cumulative, sort)."""
    def rule(specs, ins, outs, params):
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


@_one
def _slice(specs, ins, out, **_):
    return tuple(s if n == m else () for s, n, m in zip(specs[0], ins[0].shape, out.shape,
                                                          strict=True))


@_one
def _concatenate(specs, ins, out, *, dimension):
    return _merge("concatenate", specs, out.ndim)


def _constraint(specs, ins, outs, params):
    return [tuple(tuple(a) for a in params["spec"])]


def _replicated(specs, ins, outs, params):
    return [((),) * t.ndim for t in outs]


sharding_rules.update({
    broadcast_in_dim_p: _broadcast_in_dim, transpose_p: _transpose, squeeze_p: _squeeze,
    expand_dims_p: _expand_dims, reshape_p: _reshape, argmax_p: _arg_reduce,
    argmin_p: _arg_reduce, dot_general_p: _dot_general, conv_general_dilated_p: _conv,
    gather_p: _gather, slice_p: _slice, concatenate_p: _concatenate,
    sharding_constraint_p: _constraint, iota_p: _replicated,
    sort_p: _along("dimension", _sort_message),
})
sharding_rules.update(dict.fromkeys((reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p,
                                     reduce_and_p, reduce_or_p), _reduce))
sharding_rules.update(dict.fromkeys((cumsum_p, cumprod_p, cummax_p, cummin_p),
                                    _along("axis", _cumulative_message)))
