"""Shardings in types over Explicit mesh axes: what a traced value's type says of its
layout, kept per trace and computed at each ``bind`` by the rules of
core/sharding_rules.py, and how the types reach the partitioner.

See Note [shardings in types]. A spec here is a tuple with one entry per dimension, each
the tuple of Explicit mesh axes that dimension is split over (major first), ``()`` for
none: the plain-data form a ``sharding_constraint`` equation holds too.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ..compiler.builder import Builder
from ..compiler.ir import Atom, Func, Var
from ..compiler.primitives.control_flow import cond_p, while_p
from ..compiler.primitives.remat import checkpoint_p
from ..compiler.primitives.scan import scan_p
from ..compiler.primitives.sharding import sharding_constraint_p
from ..errors import ShardingTypeError
from ..runtime.array import Array
from ..runtime.mesh_axes import AbstractMesh, AxisType, abstract_mesh_override
from ..runtime.sharding import (
    Mesh,
    NamedSharding,
    current_mesh,
    mesh_of,
    remember_mesh,
)
from .sharding_rules import (
    Spec,
    indivisible_message,
    out_sharding_given,
    rule_for,
    sharding_rules,
    spec_text,
    to_partition_spec,
)

__all__ = ["Spec", "ExplicitTypes", "context_abstract_mesh", "explicit_context",
           "array_spec", "spec_text", "to_partition_spec", "apply_rule", "out_sharding_given",
           "note_array", "note_traced", "type_sharding", "array_sharding",
           "constrain_outputs", "note_outputs", "note_constrained", "output_shardings",
           "share_type", "result_shardings", "Sliced"]


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
# - ``bind`` runs the rule of the primitive (``sharding_rules`` in core/sharding_rules.py;
#   primitives whose operands all have the result's shape, the elementwise family, share
#   the default rule) on the operands' specs, and records the result's. The rules are
#   JAX's: elementwise and broadcasting merge the operands' specs (two different axes on
#   one dimension is an error), reductions drop the reduced dimensions, dot_general keeps
#   the batch and free dimensions' axes, transpose permutes, reshape splits one dimension
#   or merges one run of them and spreads their axes in order, slicing and padding keep
#   the operand's (if the axes still divide the size), gather and convolution follow
#   JAX's, cumulative reductions and sort refuse a split dimension; a primitive outside
#   the table whose operands do not share the result's shape gives a replicated result;
# - ``reshard``/``with_sharding_constraint`` and an operation's ``out_sharding=`` set the
#   spec (``out_sharding_given`` lets an ambiguous rule pass while the caller names the
#   result's sharding);
# - a program a transformation's pass wrote (grad's cotangents, vmap's batched body) or
#   one inlined into a trace (a nested jit) has its specs from the same rules run over
#   its equations (``note_outputs``, ``result_shardings``); an equation a pass wrote that
#   a rule refuses gives a replicated result there rather than an error;
# - the functions of control flow, remat and vmap see their operands' types (a scan's x
#   and a vmapped argument without the mapped dimension: ``Sliced``), and a loop's, a
#   cond's or a remat's results are typed by its body's rules (below);
# - the types reach XLA as sharding constraints: each output of a trace whose inputs are
#   typed (jit's, eval_shape's, grad's; not a control-flow body's or vmap's per-example
#   one, whose results the rules type) is constrained to its
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


def _state_for(trace: Any, mesh: Mesh | None, abstract: AbstractMesh) -> ExplicitTypes | None:
    if trace.axis_env:         # named axes (shard_map, vmap's): values are per-device there
        return None
    state = trace.explicit
    if state is None:
        state = trace.explicit = ExplicitTypes(mesh, abstract)
    elif state.mesh is None:
        state.mesh = mesh
    return state


class Sliced:
    """What a scan body's ``x`` or a vmapped function's argument stands for: one slice of
    ``value`` along dimension ``axis`` (its type is the value's without that dimension)."""
    __slots__ = ("value", "axis")

    def __init__(self, value: Any, axis: int = 0):
        self.value, self.axis = value, axis


def _without(spec: Spec, axis: int | None) -> Spec:
    return spec if axis is None else spec[:axis] + spec[axis + 1:]


def note_array(trace: Any, var: Var, value: Array, without: int | None = None) -> None:
    """``var`` (an input of ``trace``) stands for the Array ``value`` (a slice of it
    along dimension ``without``): its type takes the Array's sharding over Explicit
    axes, if it has one."""
    if value._sharding.__class__ is not NamedSharding:
        return
    found = array_spec(value)
    if found is not None:
        state = _state_for(trace, found[1], found[2])
        if state is not None:
            state.record(var, _without(found[0], without))


def note_traced(trace: Any, var: Var, outer: ExplicitTypes, outer_var: Var,
                without: int | None = None) -> None:
    """``var`` (an input of ``trace``) stands for ``outer_var`` of a trace with types (a
    slice of it along dimension ``without``)."""
    state = _state_for(trace, outer.mesh, outer.abstract)
    if state is not None:
        state.record(var, _without(outer.spec(outer_var), without))


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
    a user may not) gives replicated results."""
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


def apply_rule(state: ExplicitTypes, prim: Any, atoms: Sequence[Any], params: dict[str, Any],
               outs: Sequence[Var]) -> None:
    """Record the specs of ``outs``, the results of ``prim`` on ``atoms`` (Note
    [shardings in types])."""
    specs = [state.spec(a) for a in atoms]
    ins = [a.type for a in atoms]
    rule = rule_for(prim)
    out_specs = [restrict(o, state.abstract)
                 for o in rule(specs, ins, [v.type for v in outs], params, state.abstract)]
    sizes = dict(state.abstract.shape_tuple)
    for v, s in zip(outs, out_specs, strict=True):
        for d, axes in enumerate(s):
            parts = math.prod(sizes[a] for a in axes)
            if v.type.shape[d] % parts:
                raise ShardingTypeError(indivisible_message(prim, ins[0], s, v.type, d, parts))
        state.record(v, s)


# --- control flow and remat ---------------------------------------------------------------
# A loop's, a cond's or a remat's results have the types its body gives them: the body's
# rules run on the operands' specs (a scan body's x without the leading dimension, a ys
# result with an unsplit one in front), as JAX's types are its jaxprs' outputs'. Where
# JAX refuses a carry or a branch whose type changes the sharding, spmdc takes the body's.

def _body_specs(mesh: AbstractMesh, func: Func, specs: Sequence[Spec]) -> list[Spec]:
    inner = ExplicitTypes(None, mesh)
    for v, spec in zip(func.inputs, specs, strict=True):
        inner.record(v, spec)
    _run_rules(inner, func)
    return [inner.spec(o) for o in func.outputs]


def _scan_rule(specs, ins, outs, params, mesh):
    k, n = params["num_consts"], params["num_carry"]
    body = _body_specs(mesh, params["body"], [*specs[:k + n], *(s[1:] for s in specs[k + n:])])
    return [*body[:n], *(((),) + s for s in body[n:])]


def _while_rule(specs, ins, outs, params, mesh):
    return _body_specs(mesh, params["body_func"], specs[params["cond_nconsts"]:])


def _cond_rule(specs, ins, outs, params, mesh):
    each = [_body_specs(mesh, br, specs[1:]) for br in params["branches"]]
    # branches laid out differently give a replicated result there (JAX asks for one type)
    return [tuple(d[0] if all(x == d[0] for x in d) else () for d in zip(*per, strict=True))
            for per in zip(*each, strict=True)]


def _checkpoint_rule(specs, ins, outs, params, mesh):
    return _body_specs(mesh, params["call"], specs)


sharding_rules.update({scan_p: _scan_rule, while_p: _while_rule, cond_p: _cond_rule,
                       checkpoint_p: _checkpoint_rule})
