"""jit over arrays laid out on a mesh: one global program, split by XLA's SPMD partitioner.

Note [jit over sharded arrays]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
When an argument of a top-level jit call is an Array laid out by a NamedSharding over a
mesh of several devices (``device_put(x, NamedSharding(mesh, P('data')))``), or jit was
given ``in_shardings``/``out_shardings``, the program is not run on one device. It is
traced as usual (the global program: nothing in it mentions devices), lowered in the
partition form (Note [partition form] in compiler/stablehlo.py) with each argument's
layout on it, and compiled for the mesh's devices with XLA's SPMD partitioner, which
splits every operation and inserts the collectives the layouts need (a matmul whose
contracted dimension is split gets an all-reduce). Each device gets its block of every
argument, and each result comes back as an Array laid out the way the partitioner chose
(read from the executable), or as ``out_shardings`` asked.

Over a mesh spanning several processes (spmdc.distributed) every process compiles the same
program for all the mesh's devices and launches it with the blocks of its own devices;
its results hold those devices' blocks (Note [arrays over processes] in runtime/array.py).

Per argument: an ``in_shardings`` entry wins (an argument laid out otherwise is laid out
again, through the host); else an Array's own NamedSharding over the mesh; anything
else (NumPy values, Python scalars, one-device Arrays) is replicated on every device of
the mesh. All sharded arguments and requested shardings must share one mesh.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..compiler.ir import Func, TensorType
from ..compiler.primitives.shard_map import shard_map_p
from ..compiler.primitives.sharding import sharding_constraint_p
from ..compiler.stablehlo import Partitioning
from ..core import devices as _devices
from ..core import dtypes, explicit_sharding
from ..core import precision as _precision
from ..core.devices import device_put
from ..core.tracing import bind, current_trace, type_of, where
from ..core.tree import (
    broadcast_prefix,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)
from ..runtime.array import Array
from ..runtime.executable import compile_func
from ..runtime.launcher import PartitionedLauncher
from ..runtime.layouts import Format, format_sharding
from ..runtime.mesh_axes import AbstractMesh, AxisType, abstract_mesh_override
from ..runtime.sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    current_mesh,
    mesh_of,
    remember_mesh,
)
from .arguments import run_launcher, usable_donations

__all__ = ["check_shardings", "is_sharded_call", "layout", "partitioned_key", "out_requests",
           "constraint_mesh", "with_sharding_constraint", "reshard", "place_computed",
           "PartitionedEntry", "remember_mesh", "mesh_of"]


def _is_spec_leaf(x: Any) -> bool:
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def check_shardings(what: str, value: Any) -> Any:
    """jit's ``in_shardings``/``out_shardings``: a pytree (prefix) of NamedSharding,
    PartitionSpec (over the current mesh at call time) or None (unspecified)."""
    if value is None:
        return None
    leaves, _ = tree_flatten(value, is_leaf=_is_spec_leaf)
    for leaf in leaves:
        if leaf is not None and not isinstance(leaf, (NamedSharding, PartitionSpec,
                                                      SingleDeviceSharding)):
            raise TypeError(f"jit: {what} entries must be NamedSharding, PartitionSpec or "
                            f"None, got {leaf!r} of type {type(leaf).__name__}{where()}")
    return value


def _resolve(s: Any, what: str) -> NamedSharding | None:
    if s is None or isinstance(s, SingleDeviceSharding):
        return None
    if isinstance(s, PartitionSpec):
        mesh = current_mesh()
        if mesh is None:
            raise ValueError(f"jit: {what} is the PartitionSpec {s!r}, which needs a mesh: "
                             f"pass NamedSharding(mesh, spec) or set one with "
                             f"spmdc.set_mesh(mesh){where()}")
        return NamedSharding(mesh, s)
    return s


def is_sharded_call(leaves: Sequence[Any]) -> bool:
    """Whether an argument is laid out over a mesh of several devices, or such a mesh is
    set in context (Note [arrays made under a mesh])."""
    for x in leaves:
        if type(x) is Array and isinstance(x._sharding, NamedSharding) \
                and x._sharding.mesh.size > 1:
            return True
    context = current_mesh()
    return context is not None and context.size > 1


# Note [arrays made under a mesh]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Under ``set_mesh(mesh)`` (any axis types) JAX runs a jit call whose arguments name no
# mesh over the mesh in context, so what it makes (``jnp.ones(4)``, a layer's parameters)
# is an Array laid out ``NamedSharding(mesh, P())`` over all the mesh's devices, not one
# on the first device. spmdc does the same: with no mesh from the arguments or the
# shardings asked for, ``layout`` takes the context's (of more than one device), and the
# arguments are replicated over it. Outside ``set_mesh`` nothing changes.


def layout(in_shardings: Any, out_shardings: Any, args: tuple[Any, ...],
           kwargs: dict[str, Any], leaves: list[Any]
           ) -> tuple[Mesh, list[NamedSharding]] | None:
    """The mesh a jit call runs over and each argument's layout (module docstring), or
    None when nothing names a mesh; ``in_shardings``/``out_shardings`` are jit's."""
    requested = [_resolve(s, "in_shardings") for s in (
        broadcast_prefix((in_shardings, {k: None for k in kwargs}), (args, kwargs),
                         is_leaf=_is_spec_leaf, what="jit in_shardings")
        if in_shardings is not None else [None] * len(leaves))]
    meshes = {s.mesh for s in requested if s is not None}
    meshes |= {x._sharding.mesh for x in leaves if _on_a_mesh(x)}
    out_meshes = []
    if out_shardings is not None:
        outs = tree_flatten(out_shardings, is_leaf=_is_spec_leaf)[0]
        out_meshes = [r.mesh for r in (_resolve(s, "out_shardings") for s in outs)
                      if r is not None]
        meshes |= set(out_meshes)
    if len(meshes) > 1:
        raise ValueError(_different_meshes(requested, args, kwargs, leaves, out_meshes))
    if not meshes:           # See Note [arrays made under a mesh]
        context = current_mesh()
        if context is None or context.size == 1:
            return None      # shardings that name no mesh (all None): one device after all
        meshes = {context}
    mesh = meshes.pop()
    shardings = []
    for x, s in zip(leaves, requested, strict=True):
        if s is None and type(x) is Array and isinstance(x._sharding, NamedSharding) \
                and x._sharding.mesh == mesh:
            s = x._sharding
        shardings.append(s if s is not None else NamedSharding(mesh))
    return mesh, shardings


def _on_a_mesh(x: Any) -> bool:
    return type(x) is Array and isinstance(x._sharding, NamedSharding) \
        and x._sharding.mesh.size > 1


def _different_meshes(requested: list[NamedSharding | None], args: tuple[Any, ...],
                      kwargs: dict[str, Any], leaves: list[Any], out_meshes: list[Mesh]
                      ) -> str:
    """The message for a jit call whose arguments and shardings name several meshes:
    the first argument (by its path) or sharding on each mesh, with the mesh's device
    ids (meshes that differ only in their devices print alike)."""
    users: dict[Mesh, str] = {}
    paths = [("args" if path[0].idx == 0 else "kwargs") + keystr(path[1:])
             for path, _ in tree_flatten_with_path((args, kwargs))[0]]
    for path, x, s in zip(paths, leaves, requested, strict=True):
        if s is not None:
            users.setdefault(s.mesh, f"in_shardings for {path}")
        if _on_a_mesh(x):
            users.setdefault(x._sharding.mesh,
                             f"argument {path} ({x.dtype.name}{list(x.shape)})")
    for mesh in out_meshes:
        users.setdefault(mesh, "out_shardings")
    described = "; ".join(
        f"{who} is on {mesh!r} with device ids {mesh.device_ids.flatten().tolist()}"
        for mesh, who in users.items())
    return (f"jit: the arguments and shardings are laid out over different meshes: "
            f"{described}{where()}. Put them on one mesh, e.g. "
            "device_put(x, NamedSharding(mesh, spec)) with the other's mesh")


def partitioned_key(in_tree: Any, statics: tuple[Any, ...], mesh: Mesh, leaves: list[Any],
                    shardings: list[NamedSharding]) -> tuple[Any, ...]:
    """What a jit call over a mesh (module docstring) is compiled for: its cache key."""
    return ("partitioned", in_tree, statics, dtypes._x64, _precision._default[0], mesh,
            abstract_mesh_override(),           # auto_axes/explicit_axes change the types
            *[(type_of(x), s.spec) for x, s in zip(leaves, shardings, strict=True)])


def out_requests(out_shardings: Any, out_tree: Any) -> list[NamedSharding | None]:
    """The layout jit's ``out_shardings`` asks of each output, None where it asks none."""
    if out_shardings is None:
        return [None] * out_tree.num_leaves
    skeleton = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    return [_resolve(s, "out_shardings") for s in broadcast_prefix(
        out_shardings, skeleton, is_leaf=_is_spec_leaf, what="jit out_shardings")]


def _spec_tuple(s: NamedSharding, ndim: int) -> tuple[tuple[str, ...], ...]:
    return tuple(s.spec.axes_of(d) for d in range(ndim))


def _as_the_user_wrote(found: list[Any], requests: Sequence[NamedSharding | None],
                       in_shardings: Sequence[NamedSharding], in_types: Sequence[TensorType],
                       out_types: Sequence[TensorType]) -> list[Any]:
    """The results' shardings as JAX reports them: a requested one (``out_shardings``, a
    type's over Explicit axes) as it was written; else the first argument's NamedSharding
    where the partitioner laid the result out the same way and it has the same rank
    (``P('X', None)`` stays so); else the one read from the executable."""
    first = next(((s, t.ndim) for s, t in zip(in_shardings, in_types, strict=True)
                  if isinstance(s, NamedSharding)), None)
    out = []
    for got, asked, t in zip(found, requests, out_types, strict=True):
        if asked is not None and asked.is_equivalent_to(got, t.ndim):
            out.append(asked)
        elif first is not None and first[1] == t.ndim and first[0].is_equivalent_to(got, t.ndim):
            out.append(first[0])
        else:
            out.append(got)
    return out


class PartitionedEntry:
    """One compiled partitioned program (compiled by runtime/executable.py in the partition
    form, launched by runtime/launcher.py's PartitionedLauncher: Note [grouped launch])."""

    def __init__(self, func: Func, mesh: Mesh, in_shardings: list[NamedSharding],
                 out_requests: list[NamedSharding | None], consts: list[Any],
                 out_weak: list[bool], out_tree: Any, donated: Sequence[int] = (),
                 compiler_options: dict[str, Any] | None = None):
        n = len(in_shardings)
        in_types = func.in_types
        for k, (s, t) in enumerate(zip(in_shardings, in_types[:n], strict=True)):
            try:
                s.check_shape(t.shape, f"jit: the sharding of argument {k}")
            except ValueError as e:
                raise ValueError(f"{e}{where()}") from None
        for k, (s, t) in enumerate(zip(out_requests, func.out_types, strict=True)):
            if s is not None:
                try:
                    s.check_shape(t.shape, f"jit: out_shardings of output {k}")
                except ValueError as e:
                    raise ValueError(f"{e}{where()}") from None
        shardings = in_shardings + [NamedSharding(mesh)] * len(consts)
        # over Explicit axes, a result is laid out as its type says (Note [shardings in
        # types] in core/explicit_sharding.py), whatever transformation wrote it
        typed = explicit_sharding.result_shardings(func, mesh, shardings)
        if typed is not None:
            out_requests = [r if r is not None else t
                            for r, t in zip(out_requests, typed, strict=True)]
        partitioning = Partitioning(
            mesh.shape_tuple,
            [_spec_tuple(s, t.ndim) for s, t in zip(shardings, in_types, strict=True)],
            [None if s is None else _spec_tuple(s, t.ndim)
             for s, t in zip(out_requests, func.out_types, strict=True)],
            remember_mesh(mesh))
        # Note [donation] in compiler/stablehlo.py: an output takes a donated input's
        # place where it has the same type and is asked for in the same layout
        aliases = usable_donations(
            [(t, s) for t, s in zip(in_types, shardings, strict=True)],
            [(t, s) for t, s in zip(func.out_types, out_requests, strict=True)], donated,
            describe=lambda key: f"{key[0]} laid out as {key[1].spec}")
        self.executable = compile_func(func, mesh._flat_devices, aliases=aliases,
                                       partitioning=partitioning,
                                       compiler_options=compiler_options)
        self.donated = self.executable.donated
        self.out_tree = out_tree
        self.launcher = PartitionedLauncher(self.executable, mesh, shardings, in_types,
                                            func.out_types, out_weak, consts)
        if len(mesh._flat_devices) > 1:     # (one device: XLA reports no layouts)
            self.launcher.out_shardings = _as_the_user_wrote(
                self.launcher.out_shardings, out_requests, in_shardings, in_types[:n],
                func.out_types)

    @property
    def module_text(self) -> str:
        return self.executable.module_text

    def __call__(self, leaves: Sequence[Any]) -> Any:
        return run_launcher(self.launcher, leaves, self.donated, self.out_tree)

    def optimized_hlo(self) -> str:
        return self.executable.optimized_hlo()

    def fast_path(self, args: Any, out: Any) -> Any:
        """The C++ launch for calls like ``args`` that returned ``out``, where it is safe
        (PartitionedLauncher.fast_path)."""
        return self.launcher.fast_path(args, out, tree_flatten)


# --- layouts asked for inside a program -----------------------------------------------------

def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """Lay out each array of ``x`` by its sharding (a NamedSharding, or a PartitionSpec
    over the current mesh; ``shardings`` may be a pytree prefix of ``x``). Inside jit the
    value is unchanged and the partitioner is told the layout (a jit with a constraint
    runs over its mesh: Note [jit over sharded arrays]); outside it is ``device_put``."""
    leaves, tree = tree_flatten(x)
    targets = broadcast_prefix(shardings, x, is_leaf=_is_spec_leaf,
                               what="with_sharding_constraint shardings")
    out = []
    for leaf, s in zip(leaves, targets, strict=True):
        if isinstance(s, Format):                   # See Note [formats]
            s = format_sharding(s, f"with_sharding_constraint{where()}")
        s = _resolve(s, "the sharding")
        if s is None:
            raise TypeError(f"with_sharding_constraint: each sharding must be a NamedSharding, "
                            f"a PartitionSpec over the current mesh or a Format of one"
                            f"{where()}")
        t = type_of(leaf)[0]
        s = _on_devices(s, leaf, t)
        try:
            s.check_shape(t.shape, "with_sharding_constraint")
        except ValueError as e:
            raise ValueError(f"{e}{where()}") from None
        if current_trace() is None:
            out.append(device_put(leaf, s))
        else:
            placed = bind(sharding_constraint_p, leaf, mesh=s.mesh.shape_tuple,
                          device_ids=remember_mesh(s.mesh), spec=_spec_tuple(s, t.ndim))
            explicit_sharding.note_constrained(placed._trace, placed._var, s)
            out.append(placed)
    return tree_unflatten(tree, out)



def _on_devices(s: NamedSharding, leaf: Any, t: Any) -> NamedSharding:
    """``s`` over a Mesh: a sharding over an AbstractMesh takes the devices of the current
    mesh, else those of the mesh ``leaf`` (an Array) is laid out over.

    Note [constraints over an abstract mesh]
    ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
    Code that runs under ``set_mesh`` may build its shardings from ``get_abstract_mesh()``
    (Flax's variables do: ``NamedSharding(get_abstract_mesh(), spec)``). Such a constraint
    takes the devices of the mesh set in the context (as JAX's does inside ``jit``), and
    without one those of the array's own NamedSharding when its mesh has the same axes (as
    JAX's). Outside ``jit`` JAX refuses an array on one device even under ``set_mesh``;
    spmdc lays it out over the context's mesh, as it would inside ``jit``."""
    mesh = s.mesh
    if not isinstance(mesh, AbstractMesh):
        return s
    context = current_mesh()
    if context is not None:
        concrete = context
    else:
        own = getattr(leaf, "_sharding", None) if type(leaf) is Array else None
        if not isinstance(own, NamedSharding) or isinstance(own.mesh, AbstractMesh):
            raise ValueError(
                f"with_sharding_constraint: the sharding {s!r} has an AbstractMesh, which "
                f"needs a mesh set with spmdc.set_mesh(mesh) or an input laid out by a "
                f"NamedSharding over a Mesh; got a value of type {t}{where()}")
        concrete = own.mesh
    if concrete.shape_tuple != mesh.shape_tuple:
        raise ValueError(f"with_sharding_constraint: mesh shape of the input "
                         f"{concrete.shape_tuple} does not match the mesh shape of the target "
                         f"sharding {mesh.shape_tuple} for shape {t}{where()}")
    return NamedSharding(concrete, s.spec)


def _relayout(x: Array, sharding: NamedSharding) -> Array:
    """``x``, laid out over several processes, laid out by ``sharding`` over its mesh."""
    return _identity_to(sharding)(x)


@functools.lru_cache(maxsize=64)
def _identity_to(sharding: NamedSharding) -> Any:
    from .jit import jit  # (jit builds on this module)
    return jit(lambda v: v, out_shardings=sharding)


_devices.relayout[:] = [_relayout]


def place_result(x: Any, out_sharding: Any) -> Any:
    """``x`` laid out by an operation's ``out_sharding=`` (JAX's keyword on products and
    constructors): None leaves it to the partitioner; a NamedSharding or a PartitionSpec
    over the current mesh is a sharding constraint on the result (its values are the
    same; only its layout is asked for)."""
    if out_sharding is None:
        return x
    if not isinstance(out_sharding, (NamedSharding, PartitionSpec)):
        raise ValueError(f"out_sharding must be None, a NamedSharding or a PartitionSpec, "
                         f"got {out_sharding!r}{where()}")
    return with_sharding_constraint(x, _typed_spec(out_sharding, x))


def _typed_spec(out_sharding: Any, x: Any) -> Any:
    """``out_sharding`` with one spec entry per dimension of ``x`` where the result's type
    carries it (an Explicit mesh axis): JAX reports such a result's sharding from its
    type, ``P('X', None)`` for ``P('X')``."""
    spec = out_sharding.spec if isinstance(out_sharding, NamedSharding) else out_sharding
    mesh = out_sharding.mesh if isinstance(out_sharding, NamedSharding) else current_mesh()
    ndim = len(getattr(x, "shape", ()))
    if mesh is None or AxisType.Explicit not in mesh.axis_types or len(spec) >= ndim:
        return out_sharding
    full = PartitionSpec(*spec, *[None] * (ndim - len(spec)))
    return NamedSharding(mesh, full) if isinstance(out_sharding, NamedSharding) else full


def place_computed(compute: Callable[[], Any], out_sharding: Any) -> Any:
    """``compute()`` laid out by ``out_sharding`` (``place_result``); while it runs, a
    sharding rule that cannot tell the result's sharding over Explicit axes leaves it to
    ``out_sharding`` instead of raising (Note [shardings in types] in
    core/explicit_sharding.py)."""
    if out_sharding is None:
        return compute()
    with explicit_sharding.out_sharding_given():
        out = compute()
    return place_result(out, out_sharding)


def reshard(x: Any, out_shardings: Any) -> Any:
    """``x`` laid out by ``out_shardings`` (as with_sharding_constraint)."""
    return with_sharding_constraint(x, out_shardings)


def constraint_mesh(func: Func) -> Mesh | None:
    """The mesh a sharding constraint or a shard_map in ``func`` (or a sub-program) runs
    over, if any; a jit program with one runs partitioned over that mesh."""
    for eqn in func.eqns:
        if eqn.prim is sharding_constraint_p or eqn.prim is shard_map_p:
            return mesh_of(eqn.params["mesh"], eqn.params["device_ids"])
        for v in eqn.params.values():
            for sub in (v if isinstance(v, tuple) else (v,)):
                if isinstance(sub, Func):
                    found = constraint_mesh(sub)
                    if found is not None:
                        return found
    return None
