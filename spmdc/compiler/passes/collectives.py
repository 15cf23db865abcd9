"""The collectives pass: axis names, the device mesh, replica groups, replication.

A program under ``pmap`` is a per-device program. Its collectives name *axes*
(``psum(x, axes=('i',))``); the program runs on a device *mesh*, an ordered tuple of
``(axis name, size)`` pairs, major to minor, with one device per mesh point. Device ``r``
(the replica id) sits at the mesh coordinates of ``r`` written in mixed radix: for the
mesh ``(('i', 2), ('j', 4))`` device 6 is ``i=1, j=2``.

``replica_groups(mesh, axes)`` turns names into concrete groups: the devices that agree on
every mesh axis not in ``axes`` form one group, ordered by their index along ``axes``
(the names in the order written, the first one major) -- the same index ``axis_index``
returns. The lowering rules of primitives/collectives.py build their ``replica_groups``
attributes with it, and the SPMD interpreter groups values with it.

``check_collectives(func, mesh, in_varying, out_replicated, out_names)`` is the pass
proper. It runs before lowering and raises, naming the op and the user's source line,
when a collective names an axis the mesh does not bind; and it runs the replication
analysis below to reject an output that must be replicated (``out_axes=None``) but may
differ between devices.

Note [replication]
~~~~~~~~~~~~~~~~~~
The analysis infers, for every value, the set of mesh axes over which it may differ
between devices. Inputs start with what the caller says (``in_axes=None`` inputs and
closed-over constants: nothing; mapped inputs: the pmap's axis). Each collective's rule
is registered in ``varying_rules`` next to its declaration: ``psum``/``pmax``/``pmin``/
``all_gather`` over some axes remove them (every member of a group gets the same value;
not so with ``groups``, whose results differ: Note [grouped collectives]),
``axis_index``, ``ppermute``, ``psum_scatter`` and ``all_to_all`` add theirs, and every
other op gives the union of its operands' sets. An output returned with ``out_axes=None``
whose set is not empty is an error *before compiling*, naming the output. JAX's pmap
returns device 0's copy silently (its issue 21671); we don't. The analysis is
conservative: ``x - x`` still "varies" if ``x`` does.
"""
from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ...errors import ReplicationError, UnboundAxisError, at_line
from ..ir import Func, Lit, Var

__all__ = ["Mesh", "varying_rules", "control_varying_rules", "replica_groups", "mesh_coords",
           "axis_strides", "check_collectives", "check_axis_names", "varying_axes", "value_axes",
           "collective_axes"]

Mesh = tuple[tuple[str, int], ...]
"""The device mesh: ``(axis name, size)`` pairs, major to minor."""


VaryingRule = Callable[..., list[frozenset[str]]]
"""``rule(in_varying, **params) -> [set of axes per output]``: which mesh axes each
output may vary over, given the sets of the operands. See Note [replication].

Every collective primitive registers here; being in this table is also what tells the
SPMD interpreter (interpreter_spmd.py) that the primitive's reference implementation
takes the values of a whole replica group, stacked along a new leading axis."""

varying_rules: dict[Any, VaryingRule] = {}

control_varying_rules: dict[Any, VaryingRule] = {}
"""The same, for primitives with sub-Funcs (control flow): their rules run
``varying_axes`` on the sub-Funcs, and may reject a collective that some devices of its
group would not reach. Not collectives themselves, so kept apart from ``varying_rules``."""


# --- the mesh ------------------------------------------------------------------------------

def axis_strides(mesh: Mesh) -> dict[str, int]:
    """How far apart (in replica ids) two devices one step apart along each axis are."""
    strides, step = {}, 1
    for name, size in reversed(mesh):
        strides[name] = step
        step *= size
    return strides


def mesh_coords(mesh: Mesh, replica: int) -> dict[str, int]:
    strides = axis_strides(mesh)
    return {name: (replica // strides[name]) % size for name, size in mesh}


def replica_groups(mesh: Mesh, axes: Sequence[str]) -> list[list[int]]:
    """The replica groups of a collective over ``axes`` on ``mesh`` (module docstring)."""
    sizes = dict(mesh)
    missing = [a for a in axes if a not in sizes]
    if missing:
        raise UnboundAxisError(f"axis {missing[0]!r} is not an axis of the device mesh "
                               f"{_mesh_text(mesh)}")
    strides = axis_strides(mesh)
    others = [(n, s) for n, s in mesh if n not in axes]
    groups = []
    for k in range(math.prod(s for _, s in others)):
        base, rest = 0, k
        for name, size in reversed(others):
            base += (rest % size) * strides[name]
            rest //= size
        members = []
        for j in range(math.prod(sizes[a] for a in axes)):
            r, rest = base, j
            for name in reversed(axes):
                r += (rest % sizes[name]) * strides[name]
                rest //= sizes[name]
            members.append(r)
        groups.append(members)
    return groups


def _mesh_text(mesh: Mesh) -> str:
    return " x ".join(f"{n}={s}" for n, s in mesh) or "(no axes)"


# --- axis names ------------------------------------------------------------------------------

def collective_axes(eqn: Any) -> tuple[str, ...]:
    """The axis names a collective equation uses (empty for other primitives)."""
    if eqn.prim not in varying_rules:
        return ()
    return tuple(eqn.params.get("axes", ()))


def _sub_funcs(eqn: Any) -> Iterable[Func]:
    for value in eqn.params.values():
        if isinstance(value, Func):
            yield value
        elif isinstance(value, tuple):
            yield from (v for v in value if isinstance(v, Func))


def unbound_axis_message(op: str, name: Any, bound: Iterable[str], source: str | None) -> str:
    bound = [b for b in bound if not b.startswith("_")]
    where = at_line(source)
    close = difflib.get_close_matches(str(name), bound, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    names = ", ".join(repr(b) for b in bound) if bound else "none"
    return (f"{op}: unbound axis name {name!r}{where}. Axis names bound here (by an "
            f"enclosing pmap or vmap axis_name=...): {names}{hint}")


def check_axis_names(func: Func, bound: Iterable[str]) -> None:
    """Every collective in ``func`` (and in its sub-functions) names bound axes only."""
    bound = tuple(bound)
    for eqn in func.eqns:
        for name in collective_axes(eqn):
            if name not in bound:
                raise UnboundAxisError(unbound_axis_message(eqn.prim.name, name, bound,
                                                            eqn.source))
        for sub in _sub_funcs(eqn):
            check_axis_names(sub, bound)


# --- replication analysis ----------------------------------------------------------------------

def _introduced(func: Func) -> frozenset[str]:
    """Axes a sub-function's collectives may make its values vary over."""
    out: set[str] = set()
    for eqn in func.eqns:
        if eqn.prim in varying_rules:
            out |= set(eqn.params.get("axes", ()))
        for sub in _sub_funcs(eqn):
            out |= _introduced(sub)
    return frozenset(out)


def varying_axes(func: Func, in_varying: Sequence[frozenset[str]]
                 ) -> list[frozenset[str]]:
    """For each output of ``func``, the mesh axes it may vary over (Note [replication])."""
    env = value_axes(func, in_varying)
    return [frozenset() if isinstance(a, Lit) else env[a] for a in func.outputs]


def value_axes(func: Func, in_varying: Sequence[frozenset[str]]
               ) -> dict[Var, frozenset[str]]:
    """For each value of ``func``, the mesh axes it may vary over (shown by spmdc dump as
    ``{V:i,j}``, JAX's notation)."""
    env: dict[Var, frozenset[str]] = dict(zip(func.inputs, map(frozenset, in_varying),
                                              strict=True))
    none: frozenset[str] = frozenset()

    def read(a: Any) -> frozenset[str]:
        return none if isinstance(a, Lit) else env[a]

    for eqn in func.eqns:
        ins = [read(a) for a in eqn.inputs]
        rule = varying_rules.get(eqn.prim) or control_varying_rules.get(eqn.prim)
        if rule is not None:
            outs = rule(ins, **eqn.params)
        else:
            union = frozenset().union(*ins)
            for sub in _sub_funcs(eqn):       # a loop body may call axis_index ...
                union |= _introduced(sub)
            outs = [union] * len(eqn.outputs)
        env.update(zip(eqn.outputs, outs, strict=True))
    return env


def check_collectives(func: Func, mesh: Mesh, in_varying: Sequence[frozenset[str]],
                      out_replicated: Sequence[bool], out_names: Sequence[str],
                      what: str = "pmap") -> Func:
    """The collectives pass (module docstring). Returns ``func`` unchanged or raises."""
    check_axis_names(func, [n for n, _ in mesh])
    varying = varying_axes(func, in_varying)
    for k, (axes, replicated) in enumerate(zip(varying, out_replicated, strict=True)):
        if replicated and axes:
            names = ", ".join(repr(a) for a in sorted(axes) if not a.startswith("_"))
            over = f" over axis {names}" if names else " between devices"
            source = next((e.source for e in reversed(func.eqns)
                           if func.outputs[k] in e.outputs and e.source), None)
            over += f" (computed at {source})" if source else ""
            raise ReplicationError(
                f"{what}: {out_names[k]} has out_axes=None, but its value may "
                f"differ{over}, so there is no single copy to return. Reduce it with a "
                "collective first (e.g. lax.pmean / lax.psum over the axis), or give it "
                "an integer out_axes to get every device's value. See Note [replication].")
    return func
