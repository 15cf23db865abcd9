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
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.ir import Func, TensorType
from ..compiler.passes import run_pass
from ..compiler.passes.cleanup import cleanup
from ..compiler.primitives.shard_map import shard_map_p
from ..compiler.primitives.sharding import sharding_constraint_p
from ..compiler.stablehlo import Partitioning, lower_program, parse_module
from ..core import devices as _devices
from ..core import dtypes
from ..core import precision as _precision
from ..core.devices import device_put
from ..core.tracing import bind, current_trace, type_of, where
from ..core.tree import broadcast_prefix, tree_flatten, tree_unflatten
from ..runtime import distributed, pjrt
from ..runtime.array import Array
from ..runtime.executable import fingerprint
from ..runtime.sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    current_mesh,
    sharding_from_tiles,
)
from .arguments import check_donations, raise_if_deleted, usable_donations

__all__ = ["check_shardings", "is_sharded_call", "call_partitioned", "constraint_mesh", "layout",
           "with_sharding_constraint", "reshard", "PartitionedEntry", "remember_mesh"]


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
    """Whether an argument is laid out over a mesh of several devices."""
    for x in leaves:
        if type(x) is Array and isinstance(x._sharding, NamedSharding) \
                and x._sharding.mesh.size > 1:
            return True
    return False


def layout(jitted: Any, args: tuple[Any, ...], kwargs: dict[str, Any], leaves: list[Any]
           ) -> tuple[Mesh, list[NamedSharding]] | None:
    """The mesh a jit call runs over and each argument's layout (module docstring), or
    None when nothing names a mesh."""
    requested = [_resolve(s, "in_shardings") for s in (
        broadcast_prefix((jitted.in_shardings, {k: None for k in kwargs}), (args, kwargs),
                         is_leaf=_is_spec_leaf, what="jit in_shardings")
        if jitted.in_shardings is not None else [None] * len(leaves))]
    meshes = {s.mesh for s in requested if s is not None}
    meshes |= {x._sharding.mesh for x in leaves if type(x) is Array
               and isinstance(x._sharding, NamedSharding) and x._sharding.mesh.size > 1}
    if jitted.out_shardings is not None:
        outs = tree_flatten(jitted.out_shardings, is_leaf=_is_spec_leaf)[0]
        meshes |= {r.mesh for r in (_resolve(s, "out_shardings") for s in outs)
                   if r is not None}
    if len(meshes) > 1:
        raise ValueError(f"jit: the arguments and shardings are laid out over different "
                         f"meshes ({', '.join(map(repr, meshes))}); put them on one mesh"
                         f"{where()}")
    if not meshes:           # shardings that name no mesh (all None): one device after all
        return None
    mesh = meshes.pop()
    shardings = []
    for x, s in zip(leaves, requested, strict=True):
        if s is None and type(x) is Array and isinstance(x._sharding, NamedSharding) \
                and x._sharding.mesh == mesh:
            s = x._sharding
        shardings.append(s if s is not None else NamedSharding(mesh))
    return mesh, shardings


def call_partitioned(jitted: Any, statics: tuple[Any, ...], args: tuple[Any, ...],
                     kwargs: dict[str, Any], leaves: list[Any], in_tree: Any
                     ) -> tuple[Any, PartitionedEntry] | None:
    """The Python path of a jit call over sharded arrays (module docstring): the outputs
    and the entry that ran, or None if the call is not one."""
    found = layout(jitted, args, kwargs, leaves)
    if found is None:
        return None
    mesh, shardings = found
    key = ("partitioned", in_tree, statics, dtypes._x64, _precision._default[0], mesh,
           *[(type_of(x), s.spec) for x, s in zip(leaves, shardings, strict=True)])
    entry = jitted._cache.get(key)
    if entry is None:
        func, out_weak, consts, out_tree, _ = jitted._trace(statics, args, kwargs)
        func = run_pass("cleanup", cleanup, func)
        entry = jitted._cache[key] = PartitionedEntry(
            func, mesh, shardings, _out_requests(jitted, out_tree), consts, out_weak,
            out_tree, jitted._donated_leaves(statics, args, kwargs))
    return entry(leaves), entry


def _out_requests(jitted: Any, out_tree: Any) -> list[NamedSharding | None]:
    if jitted.out_shardings is None:
        return [None] * out_tree.num_leaves
    skeleton = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    return [_resolve(s, "out_shardings") for s in broadcast_prefix(
        jitted.out_shardings, skeleton, is_leaf=_is_spec_leaf, what="jit out_shardings")]


def _spec_tuple(s: NamedSharding, ndim: int) -> tuple[tuple[str, ...], ...]:
    return tuple(s.spec.axes_of(d) for d in range(ndim))


# Note [grouped launch]
# ~~~~~~~~~~~~~~~~~~~~~
# A partitioned program takes each argument as one jaxlib array over the devices
# (group_array) and returns each output as one. Taking an output apart into its
# per-device buffers costs about as much as the launch itself (8 CPU devices: 100 us of
# a 200 us call), so the Array keeps the output's group as it came (``Array._group``)
# and takes it apart only when asked for a block or the value; an output passed to the
# next partitioned call in the same layout is handed over as that group. The group is
# made by a result handler, which must be told the shape of the per-device buffers: the
# first launch takes the outputs apart and reads it off device 0's (XLA pads an uneven
# block, so it is not always the block's shape; the partitioned program is one program
# for every partition, so the shapes are the same on all), and later launches use it.
#
# That also lets jaxlib's C++ dispatcher launch partitioned programs (Note [C++ dispatch]
# in runtime/pjrt/dispatch.py): an Array laid out on a mesh flattens to its one group_array, so
# after the first launch ``fast_path`` grants calls whose arguments are already laid out
# as the program takes them (not programs with captured constants, which the C++ side
# would pass first, nor those with donated arguments: Note [donation]). jit of x * 2 over
# an 8-way NamedSharding, side by side: 195 us per call before this Note, 96 us with the
# grouped Python launch, 75 us with the C++ one; JAX 70-75 us.

class PartitionedEntry:
    """One compiled partitioned program: placing the blocks, launch, laid-out results."""

    def __init__(self, func: Func, mesh: Mesh, in_shardings: list[NamedSharding],
                 out_requests: list[NamedSharding | None], consts: list[Any],
                 out_weak: list[bool], out_tree: Any, donated: Sequence[int] = ()):
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
        replicated = NamedSharding(mesh)
        self.mesh = mesh
        self.devices = mesh._flat_devices       # the program's, every process's
        self.in_shardings = in_shardings + [replicated] * len(consts)
        self.in_types = in_types
        self.consts = consts
        self.const_buffers: list[list[Any]] | None = None
        self.const_groups: list[Any] = []
        self.out_types, self.out_weak, self.out_tree = func.out_types, out_weak, out_tree
        partitioning = Partitioning(
            mesh.shape_tuple,
            [_spec_tuple(s, t.ndim) for s, t in zip(self.in_shardings, in_types, strict=True)],
            [None if s is None else _spec_tuple(s, t.ndim)
             for s, t in zip(out_requests, func.out_types, strict=True)])
        self.func = func
        # Note [donation] in compiler/stablehlo.py: an output takes a donated input's
        # place where it has the same type and is asked for in the same layout
        self.aliases = usable_donations(
            [(t, s) for t, s in zip(in_types, self.in_shardings, strict=True)],
            [(t, s) for t, s in zip(func.out_types, out_requests, strict=True)], donated,
            describe=lambda key: f"{key[0]} laid out as {key[1].spec}")
        self.donated = tuple(sorted(self.aliases))
        self.module_text, callbacks, effects = lower_program(
            func, partitioning=partitioning, aliases=self.aliases,
            platform=pjrt.platform_wanted())
        module = parse_module(self.module_text) if callbacks else self.module_text
        self.exe = pjrt.compile(module, self.devices, callbacks, wait=effects,
                                partitioned=True)       # Note [host callbacks] in stablehlo.py
        # the devices this process feeds, in the order the launch takes their blocks
        self.local = pjrt.addressable(self.exe, self.devices)
        self.out_shardings = [sharding_from_tiles(mesh, t.shape, tiles)
                              for t, tiles in zip(func.out_types, pjrt.output_tiles(self.exe),
                                                  strict=True)]
        self.block_types = [(s.shard_shape(t.shape), t.dtype)
                            for s, t in zip(self.in_shardings, in_types, strict=True)]
        # how to make each output's group_array, once the first launch has shown the
        # per-device buffers' shapes (Note [grouped launch])
        self.handlers: list[Any] | None = None
        self.out_blocks: list[tuple[int, ...]] = []

    def _pack(self, x: Any, s: NamedSharding, t: TensorType, block: tuple[Any, Any]) -> Any:
        """Argument ``x`` as one group_array over the devices (Note [grouped launch])."""
        if type(x) is Array and x._sharding == s and x.dtype == t.dtype:
            if x._group is None:     # kept, so that the next call can take the C++ path
                x._group = pjrt.group_array(list(x.shard_buffers()), self.local, *block)
            if pjrt.group_devices(x._group) == self.local:
                return x._group
        return pjrt.group_array(self._place(x, s, t), self.local, *block)

    def _first_launch(self, packed: list[Any]) -> list[Array]:
        outs = pjrt.launch_and_split(self.exe, packed)
        # one program runs on every partition, so device 0's buffers have the shapes
        self.out_blocks = [pjrt.to_numpy(o[0]).shape for o in outs]
        self.handlers = [pjrt.result_handler(shape, t.dtype, self.local)
                         for shape, t in zip(self.out_blocks, self.out_types, strict=True)]
        results = []
        for o, t, w, s, shape in zip(outs, self.out_types, self.out_weak, self.out_shardings,
                                     self.out_blocks, strict=True):
            out = Array(tuple(o), t, w, self.local, sharding=s)
            out._group = pjrt.group_array(o, self.local, shape, t.dtype)
            results.append(out)
        return results

    def _place(self, x: Any, s: NamedSharding, t: TensorType) -> list[Any]:
        if type(x) is Array and x._sharding == s and x.dtype == t.dtype:
            return list(x.shard_buffers())
        if type(x) is Array and s.is_fully_replicated and x.dtype == t.dtype:
            bufs = [x.buffer_on(d) for d in self.local]
            if all(b is not None for b in bufs):
                return bufs
        host = np.asarray(x)
        if host.dtype != t.dtype:
            host = host.astype(t.dtype)
        index = s.devices_indices_map(host.shape)
        return [pjrt.put(np.ascontiguousarray(host[index[d]]), d) for d in self.local]

    def __call__(self, leaves: Sequence[Any]) -> Any:
        n = len(leaves)
        if self.const_buffers is None:
            self.const_buffers = [self._place(c, s, t) for c, s, t in zip(
                self.consts, self.in_shardings[n:], self.in_types[n:], strict=True)]
            self.const_groups = [pjrt.group_array(b, self.local, *block) for b, block in
                                 zip(self.const_buffers, self.block_types[n:], strict=True)]
        packed = [self._pack(x, s, t, block) for x, s, t, block in zip(
            leaves, self.in_shardings, self.in_types, self.block_types, strict=False)]
        packed.extend(self.const_groups)
        if self.donated:
            check_donations(leaves, self.donated)
        if any(g.is_deleted() for g in packed):     # jaxlib would crash: Note [donation]
            raise_if_deleted(leaves)
        if distributed.checking_launches():
            distributed.check_launch(self.fingerprint())
        try:
            if self.handlers is None:
                results = self._first_launch(packed)
            else:
                results = []
                groups = pjrt.launch(self.exe, packed, self.handlers)
                for g, t, w, s in zip(groups, self.out_types, self.out_weak,
                                      self.out_shardings, strict=True):
                    out = Array(None, t, w, self.local, sharding=s)
                    out._group = g
                    results.append(out)
        except Exception as e:
            raise_if_deleted(leaves, e)
            pjrt.explain(e)
            raise
        for i in self.donated:      # consumed by the launch: gone, as in JAX
            if type(leaves[i]) is Array:
                leaves[i].delete()
        return tree_unflatten(self.out_tree, results)

    def optimized_hlo(self) -> str:
        return pjrt.optimized_hlo(self.exe)

    def fingerprint(self) -> str:
        return fingerprint(self.func.name, self.module_text)

    def fast_path(self, args: Any, out: Any) -> Any:
        """The C++ launch for calls like ``args`` that returned ``out``, where it does what
        the Python path does: after the first launch (Note [grouped launch]), with no
        captured constants (the C++ side would pass them first), every argument an Array
        already laid out as the program takes it, as one group_array. Not for programs
        with donated arguments: jaxlib crashes on a multi-device array donated and passed
        again in one call, which only the Python path checks (Note [donation]). Not
        across processes either, as for pmap (Note [pmap over processes] in pmap.py)."""
        if self.handlers is None or self.consts or self.donated or pjrt.process_count() > 1:
            return None
        leaves, _ = tree_flatten(args)
        if len(leaves) != len(self.block_types):
            return None
        for x, s in zip(leaves, self.in_shardings, strict=True):
            if type(x) is not Array or x._sharding != s or x._group is None or \
                    pjrt.group_devices(x._group) != self.devices:
                return None
        out_leaves, _ = tree_flatten(out)
        if any(type(y) is not Array or y._group is None for y in out_leaves):
            return None
        return pjrt.fast_path(self.exe, self.devices, self.block_types,
                              [(b, t.dtype) for b, t in zip(self.out_blocks, self.out_types,
                                                            strict=True)],
                              args, [x._group for x in leaves], out,
                              [y._group for y in out_leaves], kind="partitioned")


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
        s = _resolve(s, "the sharding")
        if s is None:
            raise TypeError(f"with_sharding_constraint: each sharding must be a NamedSharding "
                            f"or a PartitionSpec over the current mesh{where()}")
        t = type_of(leaf)[0]
        try:
            s.check_shape(t.shape, "with_sharding_constraint")
        except ValueError as e:
            raise ValueError(f"{e}{where()}") from None
        if current_trace() is None:
            out.append(device_put(leaf, s))
        else:
            out.append(bind(sharding_constraint_p, leaf, mesh=s.mesh.shape_tuple,
                            device_ids=remember_mesh(s.mesh), spec=_spec_tuple(s, t.ndim)))
    return tree_unflatten(tree, out)


def _relayout(x: Array, sharding: NamedSharding) -> Array:
    """``x``, laid out over several processes, laid out by ``sharding`` over its mesh."""
    return _identity_to(sharding)(x)


@functools.lru_cache(maxsize=64)
def _identity_to(sharding: NamedSharding) -> Any:
    from .jit import jit  # (jit builds on this module)
    return jit(lambda v: v, out_shardings=sharding)


_devices.relayout[:] = [_relayout]


def reshard(x: Any, out_shardings: Any) -> Any:
    """``x`` laid out by ``out_shardings`` (as with_sharding_constraint)."""
    return with_sharding_constraint(x, out_shardings)


def constraint_mesh(func: Func) -> Mesh | None:
    """The mesh a sharding constraint or a shard_map in ``func`` (or a sub-program) runs
    over, if any; a jit program with one runs partitioned over that mesh."""
    for eqn in func.eqns:
        if eqn.prim is sharding_constraint_p or eqn.prim is shard_map_p:
            return _mesh_of(eqn.params["mesh"], eqn.params["device_ids"])
        for v in eqn.params.values():
            for sub in (v if isinstance(v, tuple) else (v,)):
                if isinstance(sub, Func):
                    found = constraint_mesh(sub)
                    if found is not None:
                        return found
    return None


# The Mesh objects constraints were made with, by (axes, device ids): the constraint's
# params hold plain data (the compiler knows no Mesh), and results should carry the
# user's own Mesh.
_meshes: dict[Any, Mesh] = {}


def remember_mesh(mesh: Mesh) -> tuple[int, ...]:
    """The ids of ``mesh``'s devices, for a primitive's params; ``mesh`` is remembered so
    that a program found to run over it gets this very Mesh object back."""
    ids = tuple(int(d.id) for d in mesh._flat_devices)
    _meshes[(mesh.shape_tuple, ids)] = mesh
    return ids


def _mesh_of(axes: Any, device_ids: tuple[int, ...]) -> Mesh:
    mesh = _meshes.get((tuple(axes), tuple(device_ids)))
    if mesh is None:
        by_id = {d.id: d for d in pjrt.devices()}
        grid = np.empty(len(device_ids), dtype=object)
        grid[:] = [by_id[i] for i in device_ids]
        mesh = Mesh(grid.reshape([s for _, s in axes]), tuple(n for n, _ in axes))
    return mesh

