"""Launching compiled programs: each argument placed as the program takes it, the launch,
and each result wrapped as an spmdc.Array laid out as the program returns it.

A launcher is made from an ``Executable`` (runtime/executable.py) and the layouts of its
inputs and outputs, once per compiled specialisation; the transformations hold one and
call it with the flattened arguments (captured constants are placed on the first call),
get the flat results back and rebuild their pytree. Donated arguments (Note [donation]
in compiler/stablehlo.py) are consumed by the launch: their Arrays are deleted. Four
layouts:

- ``OneDeviceLauncher``: a single-replica program on one device (jit);
- ``ReplicatedLauncher``: one replica per device, each argument split along an axis
  over the replicas or the same on every replica (pmap);
- ``BlockLauncher``: one replica per device of a mesh, each argument's blocks by a
  NamedSharding (shard_map);
- ``PartitionedLauncher``: one program that XLA's SPMD partitioner split over a mesh
  (jit over sharded arrays).

Each also says whether jaxlib's C++ dispatcher may launch it (``fast_path``, Note [C++
dispatch] in runtime/pjrt/dispatch.py), given the call's arguments and outputs and their
leaves.
"""
from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.ir import TensorType
from ..compiler.passes.collectives import mesh_coords
from ..errors import PeerLost
from . import distributed, pjrt, transfers
from .array import Array, is_concrete
from .executable import Executable
from .sharding import Mesh, NamedSharding, sharding_from_tiles

__all__ = ["place", "pace", "launched", "OneDeviceLauncher", "ReplicatedLauncher",
           "BlockLauncher", "PartitionedLauncher"]


def place(x: Any, device: Any, t: TensorType) -> Any:
    """A buffer holding ``x`` (of type ``t``) on ``device``, reusing one already there."""
    if is_concrete(x):
        buf = x.buffer_on(device)
        if buf is not None:
            return buf
        transfers.guard(transfers.DEVICE_TO_DEVICE, False, x.shape, x.dtype, x.weak, device)
    else:                           # See Note [transfer guards] in runtime/transfers.py
        transfers.guard(transfers.HOST_TO_DEVICE, False, t.shape, t.dtype,
                        type(x) in (int, float, complex), device)
    value = np.asarray(x)
    if value.dtype != t.dtype:
        value = value.astype(t.dtype)
    return pjrt.put(value, device)


def _delete_donated(leaves: Sequence[Any], donated: Sequence[int]) -> None:
    for i in donated:           # consumed by the launch: gone, as in JAX
        if type(leaves[i]) is Array:
            leaves[i].delete()


def _deleted_argument() -> RuntimeError:
    # jaxlib would crash on a deleted buffer in a multi-device launch (Note [donation]);
    # the caller says which argument it was
    return RuntimeError("an argument's buffer was deleted (donated to an earlier call)")


# --- one device ------------------------------------------------------------------------------

class OneDeviceLauncher:
    """A single-replica program on one device; the executable takes the captured constants
    first, then the arguments (the order of jaxlib's C++ dispatcher)."""
    __slots__ = ("executable", "device", "in_types", "out_types", "out_weak", "n_args",
                 "consts", "const_buffers", "donated", "handlers")

    def __init__(self, executable: Executable, in_types: list[TensorType],
                 out_types: list[TensorType], out_weak: list[bool], consts: list[Any],
                 donated: tuple[int, ...]):
        self.executable = executable
        self.device = executable.devices[0]
        self.in_types = in_types            # the arguments', then the constants'
        self.out_types = out_types
        self.out_weak = out_weak
        self.n_args = len(in_types) - len(consts)
        self.consts = consts
        self.const_buffers: list[Any] | None = None
        self.donated = donated              # the arguments a launch consumes
        self.handlers = [pjrt.one_device_handler(t.shape, t.dtype, self.device)
                         for t in out_types]

    def __call__(self, leaves: Sequence[Any]) -> list[Array]:
        # The hot path of every jit call that the C++ dispatcher did not take (Note
        # [dispatch fast path] in transforms/jit.py): an Array already on the device
        # hands over its buffer without a method call; anything else is placed.
        device, in_types = self.device, self.in_types
        if self.const_buffers is None:
            self.const_buffers = [place(c, device, t) for c, t in
                                  zip(self.consts, in_types[self.n_args:], strict=True)]
        bufs = [x._buffers[0] if type(x) is Array and x._devices[0] == device
                and not x.split and x._sharding is None else place(x, device, t)
                for x, t in zip(leaves, in_types, strict=False)]
        outs = pjrt.launch(self.executable.exe, self.const_buffers + bufs, self.handlers)
        if self.donated:
            _delete_donated(leaves, self.donated)
        devs = (device,)
        # committed when an argument is (Note [committed arrays] in runtime/array.py)
        committed = any(x._committed for x in leaves if type(x) is Array)
        return [Array((o,), t, w, devs, committed=committed)
                for o, t, w in zip(outs, self.out_types, self.out_weak, strict=True)]

    def fast_path(self, args: Any, out: Any, flatten: Any) -> Any:
        """The C++ launch for calls like ``args`` that returned ``out``, if it is safe;
        ``flatten`` gives a pytree's leaves (spmdc.tree's, which the runtime cannot
        import)."""
        if self.const_buffers is None:
            return None
        in_leaves, _ = flatten(args)
        if not all(type(x) is Array and not x.split and len(x._buffers) == 1
                   for x in in_leaves):
            return None
        out_leaves, _ = flatten(out)
        n = self.n_args
        return pjrt.fast_path(self.executable.exe, (self.device,),
                              [(t.shape, t.dtype) for t in self.in_types[:n]],
                              [(t.shape, t.dtype) for t in self.out_types],
                              args, [x._buffers[0] for x in in_leaves],
                              out, [x._buffers[0] for x in out_leaves],
                              self.const_buffers,
                              [(t.shape, t.dtype) for t in self.in_types[n:]])


# --- one replica per device ------------------------------------------------------------------

# Note [pacing replicated launches]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# PJRT's CPU client runs each replica of a multi-device program as a task on a pool with
# one thread per device, and starts one collective program at a time. A launch first
# takes a slot of a per-device semaphore of in-flight computations, *blocking a pool
# thread* when the slots are gone. If Python dispatches far ahead (a training loop that
# never reads its results), a blocked launch can hold the thread that the running
# program's last replica needs to reach its all-reduce, and the process deadlocks. So
# at most _MAX_IN_FLIGHT pmap launches are outstanding: before the next one, we wait for
# the oldest. That still overlaps dispatch with execution.
# Launches through jaxlib's C++ dispatcher (Note [C++ dispatch] in runtime/pjrt/dispatch.py)
# are paced the same way, by Pmapped.__call__ around the dispatcher.
_MAX_IN_FLIGHT = 4
_in_flight: collections.deque[list[Any]] = collections.deque()


def pace() -> None:
    """Wait until fewer than _MAX_IN_FLIGHT launches are outstanding."""
    while len(_in_flight) >= _MAX_IN_FLIGHT:
        try:
            oldest = _in_flight.popleft()
        except IndexError:   # another thread took it (Note [threads] in runtime/pjrt/once.py)
            break
        for buf in oldest:
            try:
                buf.block_until_ready()
            except PeerLost:       # raised here by the watchdog, not by that launch
                raise
            except Exception:      # that launch failed: reading its result will say so
                pass


def launched(buffers: list[Any]) -> None:
    """Record a launch; ``buffers`` are ready when it has finished on every replica."""
    _in_flight.append(buffers)


def _launch_replicas(executable: Executable, bufs: list[list[Any]]) -> list[list[Any]]:
    """Launch a program with one replica per device, paced, on per-replica buffers."""
    if any(b.is_deleted() for per_replica in bufs for b in per_replica):
        raise _deleted_argument()
    if distributed.is_initialized():
        distributed.before_launch(executable)
    pace()
    try:
        outs = executable.execute(bufs)
    except Exception as e:
        pjrt.explain(e)
        raise
    launched([buf for per_replica in outs for buf in per_replica])
    return outs


class ReplicatedLauncher:
    """One replica per device of a mesh of named axes (pmap's; nested pmaps add axes):
    argument i split over the replicas along its axis ``dims[i]`` or, for None, the same
    on every replica; output k likewise (``out_dims[k]``), split over the first
    ``depths[k]`` mesh axes. A pmap result passed to the next pmap over the same devices
    is used in place; everything else is copied from the host once."""
    __slots__ = ("executable", "devices", "mesh", "in_types", "dims", "consts",
                 "const_buffers", "out_types", "out_weak", "out_dims", "depths",
                 "leading", "n_args", "selections", "local_outer")

    def __init__(self, executable: Executable, mesh: Mesh, in_types: list[TensorType],
                 dims: list[int | None], consts: list[Any], out_types: list[TensorType],
                 out_weak: list[bool], out_dims: list[int | None], depths: list[int]):
        self.executable = executable
        # The devices of this process's replicas, in replica order; every replica's but
        # in a multi-process computation (Note [pmap over processes] in pmap.py). The
        # rest of the launcher speaks of those replicas only.
        self.devices = tuple(executable.local_devices)
        self.mesh = mesh
        self.in_types = in_types
        self.dims = dims
        self.n_args = len(dims)
        self.consts = consts
        self.const_buffers: list[list[Any]] | None = None
        self.out_types = out_types
        self.out_weak = out_weak
        self.out_dims = out_dims
        self.depths = depths
        everywhere = executable.devices
        coords = [mesh_coords(mesh, r) for r, d in enumerate(everywhere)
                  if d in self.devices]
        names = [n for n, _ in mesh]
        # each replica's index along the outer axis, counted from this process's first
        first = min(c[names[0]] for c in coords)
        self.leading = [c[names[0]] - first for c in coords]
        self.local_outer = len(set(self.leading))    # the outer axis's local length
        # For an output split over the first m mesh axes: the replicas at coordinate 0 on
        # the others, in order (they hold the pieces; the others hold copies).
        self.selections = {m: [r for r, c in enumerate(coords)
                               if all(c[n] == 0 for n in names[m:])]
                           for m in set(depths)}

    def _place_mapped(self, x: Any, d: int, t: TensorType) -> list[Any]:
        if (d == 0 and type(x) is Array and x.split and x.device_list == self.devices
                and len(self.mesh) == 1 and x.dtype == t.dtype):
            return list(x.shard_buffers())          # a pmap result: already in place
        host = np.asarray(x)
        if host.dtype != t.dtype:
            host = host.astype(t.dtype)
        if d != 0:
            host = np.moveaxis(host, d, 0)
        return [pjrt.put(host[i], dev) for i, dev in zip(self.leading, self.devices,
                                                         strict=True)]

    def _place_replicated(self, x: Any, t: TensorType) -> list[Any]:
        host = None
        bufs = []
        for dev in self.devices:
            buf = x.buffer_on(dev) if type(x) is Array else None
            if buf is None:
                if host is None:
                    host = np.asarray(x)
                    if host.dtype != t.dtype:
                        host = host.astype(t.dtype)
                buf = pjrt.put(host, dev)
            bufs.append(buf)
        return bufs

    def __call__(self, leaves: Sequence[Any]) -> list[Array]:
        if self.const_buffers is None:
            self.const_buffers = [self._place_replicated(c, t) for c, t in
                                  zip(self.consts, self.in_types[self.n_args:], strict=True)]
        bufs = [self._place_replicated(x, t) if d is None else self._place_mapped(x, d, t)
                for x, d, t in zip(leaves, self.dims, self.in_types, strict=False)]
        bufs.extend(self.const_buffers)
        outs = _launch_replicas(self.executable, bufs)
        _delete_donated(leaves, self.executable.donated)
        return [self._wrap(o, t, w, d, m) for o, t, w, d, m in
                zip(outs, self.out_types, self.out_weak, self.out_dims, self.depths,
                    strict=True)]

    def fast_path(self, args: Any, out: Any, flatten: Any) -> Any:
        """The C++ launch for calls like ``args`` that returned ``out`` (``flatten`` as
        for OneDeviceLauncher), where it does what the Python path does: one mesh axis,
        no captured constants, every argument an Array already in place (split over
        these devices for in_axes 0, replicated on them for None), and every output
        split on axis 0 or replicated."""
        if pjrt.process_count() > 1:
            # jaxlib's dispatcher asks to move arguments laid out over this process's
            # devices only; the Python path handles them (Note [pmap over processes]).
            return None
        if (self.consts or len(self.mesh) != 1 or not self.out_types
                or any(d not in (0, None) for d in self.out_dims)):
            return None
        in_leaves, _ = flatten(args)
        if len(in_leaves) != self.n_args:
            return None
        for x, d in zip(in_leaves, self.dims, strict=True):
            if (type(x) is not Array or x.split != (d is not None) or x._sharding is not None
                    or x.group() is None):
                return None
        out_leaves, _ = flatten(out)
        return pjrt.fast_path(self.executable.exe, self.devices,
                              [(t.shape, t.dtype) for t in self.in_types],
                              [(t.shape, t.dtype) for t in self.out_types],
                              args, [x.group() for x in in_leaves],
                              out, [x.group() for x in out_leaves], kind="replicated")

    def _wrap(self, bufs: list[Any], t: TensorType, weak: bool, d: int | None,
              depth: int) -> Array:
        if d is None:                      # replicated (checked by Note [replication])
            # The value lives on device 0, like JAX's; the other replicas' copies are kept
            # so that passing it back with in_axes=None (the parameters of a training
            # step) needs no copy through the host.
            out = Array((bufs[0],), t, weak, (self.devices[0],), committed=True)
            out._copies = dict(zip(self.devices, bufs, strict=True))
            return out
        chosen = self.selections[depth]
        lead = (self.local_outer, *(s for _, s in self.mesh[1:depth])) if depth else ()
        out = Array(tuple(bufs[r] for r in chosen), TensorType((*lead, *t.shape), t.dtype),
                    weak, tuple(self.devices[r] for r in chosen), split=True,
                    committed=True)
        if d == 0:
            return out
        # Only the leading axis can be split over devices: move it on the host.
        return Array.from_host(np.moveaxis(np.asarray(out), 0, d), self.devices[0], weak)


class BlockLauncher:
    """One replica per device of a mesh, argument i's blocks laid out by
    ``in_shardings[i]`` and output k's by ``out_shardings[k]`` (shard_map's)."""

    def __init__(self, executable: Executable, mesh: Mesh,
                 in_shardings: list[NamedSharding], in_types: list[TensorType],
                 consts: list[Any], const_types: list[TensorType],
                 out_types: list[TensorType], out_weak: list[bool],
                 out_shardings: list[NamedSharding]):
        self.executable, self.mesh = executable, mesh
        self.in_shardings, self.in_types = in_shardings, in_types
        self.consts, self.const_types = consts, const_types
        self.const_buffers: list[list[Any]] | None = None
        self.out_types, self.out_weak = out_types, out_weak
        self.out_shardings = out_shardings

    def _place(self, x: Any, sharding: NamedSharding, t: TensorType) -> list[Any]:
        """This process's blocks of ``x`` (every block, in one process), in mesh order
        (Note [arrays over processes] in runtime/array.py)."""
        mine = self.executable.local_devices
        if type(x) is Array and x._sharding is not None and x._sharding.is_equivalent_to(
                sharding, x.ndim) and x._devices == mine and x.dtype == t.dtype:
            return list(x.shard_buffers())
        host = np.asarray(x)
        if host.dtype != t.dtype:
            host = host.astype(t.dtype)
        index = sharding.devices_indices_map(host.shape)
        return [pjrt.put(np.ascontiguousarray(host[index[d]]), d) for d in mine]

    def __call__(self, leaves: Sequence[Any]) -> list[Array]:
        devices = self.executable.local_devices
        if self.const_buffers is None:
            replicated = NamedSharding(self.mesh)
            self.const_buffers = [self._place(c, replicated, t)
                                  for c, t in zip(self.consts, self.const_types, strict=True)]
        bufs = [self._place(x, s, t)
                for x, s, t in zip(leaves, self.in_shardings, self.in_types, strict=True)]
        bufs.extend(self.const_buffers)
        outs = _launch_replicas(self.executable, bufs)
        return [Array(tuple(o), t, w, devices, sharding=s)
                for o, t, w, s in zip(outs, self.out_types, self.out_weak,
                                      self.out_shardings, strict=True)]


# --- one program over a mesh -----------------------------------------------------------------

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
# in runtime/pjrt/dispatch.py): an Array laid out on a mesh flattens to its one
# group_array, so after the first launch ``fast_path`` grants calls whose arguments are
# already laid out as the program takes them (not programs with captured constants,
# which the C++ side would pass first, nor those with donated arguments: Note
# [donation]). jit of x * 2 over an 8-way NamedSharding, side by side: 195 us per call
# before this Note, 96 us with the grouped Python launch, 75 us with the C++ one; JAX
# 70-75 us.

class PartitionedLauncher:
    """A program XLA's SPMD partitioner split over ``mesh``: each argument (then each
    captured constant, replicated) laid out by ``in_shardings`` as one group_array, each
    result an Array laid out as the partitioner chose (Note [grouped launch])."""

    def __init__(self, executable: Executable, mesh: Mesh,
                 in_shardings: list[NamedSharding], in_types: list[TensorType],
                 out_types: list[TensorType], out_weak: list[bool], consts: list[Any]):
        self.executable = executable
        self.exe = executable.exe
        self.mesh = mesh
        self.devices = executable.devices      # the program's, every process's
        # the devices this process feeds, in the order the launch takes their blocks
        self.local = executable.local_devices
        self.in_shardings = in_shardings       # the arguments', then the constants'
        self.in_types = in_types
        self.consts = consts
        self.const_buffers: list[list[Any]] | None = None
        self.const_groups: list[Any] = []
        self.out_types, self.out_weak = out_types, out_weak
        self.donated = executable.donated
        self.out_shardings = [sharding_from_tiles(mesh, t.shape, tiles)
                              for t, tiles in zip(out_types,
                                                  executable.output_tiles(len(out_types)),
                                                  strict=True)]
        self.block_types = [(s.shard_shape(t.shape), t.dtype)
                            for s, t in zip(in_shardings, in_types, strict=True)]
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
            out = Array(tuple(o), t, w, self.local, sharding=s, committed=True)
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

    def __call__(self, leaves: Sequence[Any]) -> list[Array]:
        n = len(leaves)
        if self.const_buffers is None:
            self.const_buffers = [self._place(c, s, t) for c, s, t in zip(
                self.consts, self.in_shardings[n:], self.in_types[n:], strict=True)]
            self.const_groups = [pjrt.group_array(b, self.local, *block) for b, block in
                                 zip(self.const_buffers, self.block_types[n:], strict=True)]
        packed = [self._pack(x, s, t, block) for x, s, t, block in zip(
            leaves, self.in_shardings, self.in_types, self.block_types, strict=False)]
        packed.extend(self.const_groups)
        if any(g.is_deleted() for g in packed):
            raise _deleted_argument()
        if distributed.is_initialized():
            distributed.before_launch(self.executable)
        try:
            if self.handlers is None:
                results = self._first_launch(packed)
            else:
                results = []
                groups = pjrt.launch(self.exe, packed, self.handlers)
                for g, t, w, s in zip(groups, self.out_types, self.out_weak,
                                      self.out_shardings, strict=True):
                    out = Array(None, t, w, self.local, sharding=s, committed=True)
                    out._group = g
                    results.append(out)
        except Exception as e:
            pjrt.explain(e)
            raise
        _delete_donated(leaves, self.donated)
        return results

    def fast_path(self, args: Any, out: Any, flatten: Any) -> Any:
        """The C++ launch for calls like ``args`` that returned ``out`` (``flatten`` as
        for OneDeviceLauncher), where it does what the Python path does: after the first
        launch (Note [grouped launch]), with no captured constants (the C++ side would
        pass them first), every argument an Array already laid out as the program takes
        it, as one group_array. Not for programs with donated arguments: jaxlib crashes
        on a multi-device array donated and passed again in one call, which only the
        Python path checks (Note [donation]). Not across processes either, as for pmap
        (Note [pmap over processes] in pmap.py)."""
        if self.handlers is None or self.consts or self.donated or pjrt.process_count() > 1:
            return None
        in_leaves, _ = flatten(args)
        if len(in_leaves) != len(self.block_types):
            return None
        for x, s in zip(in_leaves, self.in_shardings, strict=True):
            if type(x) is not Array or x._sharding != s or x._group is None or \
                    pjrt.group_devices(x._group) != self.devices:
                return None
        out_leaves, _ = flatten(out)
        if any(type(y) is not Array or y._group is None for y in out_leaves):
            return None
        return pjrt.fast_path(self.exe, self.devices, self.block_types,
                              [(b, t.dtype) for b, t in zip(self.out_blocks, self.out_types,
                                                            strict=True)],
                              args, [x._group for x in in_leaves], out,
                              [y._group for y in out_leaves], kind="partitioned")
