"""Launching replicated programs: placing pmap arguments on the devices, pacing launches,
wrapping results as spmdc.Arrays split over the devices.

A pmap result passed to the next pmap over the same devices is used in place: its
buffers already sit one per device. Everything else is copied from the host once.
"""
from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.ir import Func, TensorType
from ..compiler.passes.collectives import Mesh, mesh_coords
from ..core.tree import tree_flatten, tree_unflatten
from ..runtime import distributed, pjrt
from ..runtime.array import Array
from .arguments import check_donations, raise_if_deleted

__all__ = ["PmapEntry", "pace", "launched"]


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
# Launches through jaxlib's C++ dispatcher (Note [C++ dispatch] in runtime/pjrt/dispatch.py) are
# paced the same way, by Pmapped.__call__ around the dispatcher.
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
            except Exception:      # that launch failed: reading its result will say so
                pass


def launched(buffers: list[Any]) -> None:
    """Record a launch; ``buffers`` are ready when it has finished on every replica."""
    _in_flight.append(buffers)


class PmapEntry:
    """One compiled specialisation: placement of inputs, launch, wrapping of outputs."""
    __slots__ = ("executable", "devices", "mesh", "in_types", "dims", "consts",
                 "const_buffers", "out_types", "out_weak", "out_tree", "out_dims", "depths",
                 "leading", "n_args", "selections", "local_outer")

    def __init__(self, executable: Any, mesh: Mesh, func: Func, dims: list[int | None],
                 consts: list[Any], out_weak: list[bool], out_tree: Any,
                 out_dims: list[int | None], depths: list[int]):
        self.executable = executable
        # The devices of this process's replicas, in replica order; every replica's but
        # in a multi-process computation (Note [pmap over processes] in pmap.py). The
        # rest of the entry speaks of those replicas only.
        self.devices = tuple(executable.local_devices)
        self.mesh = mesh
        self.in_types = func.in_types
        self.dims = dims
        self.n_args = len(dims)
        self.consts = consts
        self.const_buffers: list[list[Any]] | None = None
        self.out_types = func.out_types
        self.out_weak = out_weak
        self.out_tree = out_tree
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

    def __call__(self, leaves: Sequence[Any]) -> Any:
        if self.const_buffers is None:
            self.const_buffers = [self._place_replicated(c, t) for c, t in
                                  zip(self.consts, self.in_types[self.n_args:], strict=True)]
        bufs = [self._place_replicated(x, t) if d is None else self._place_mapped(x, d, t)
                for x, d, t in zip(leaves, self.dims, self.in_types, strict=False)]
        bufs.extend(self.const_buffers)
        donated = self.executable.donated       # Note [donation] in compiler/stablehlo.py
        if donated:
            check_donations(leaves, donated)
        if any(b.is_deleted() for per_replica in bufs for b in per_replica):
            raise_if_deleted(leaves)       # jaxlib would crash: Note [donation]
        if distributed.checking_launches():
            distributed.check_launch(self.executable.fingerprint())
        pace()
        try:
            outs = self.executable.execute(bufs)
        except Exception as e:
            raise_if_deleted(leaves, e)
            pjrt.explain(e)
            raise
        for i in donated:           # consumed by the launch: gone, as in JAX
            if type(leaves[i]) is Array:
                leaves[i].delete()
        launched([buf for per_replica in outs for buf in per_replica])
        results = [self._wrap(o, t, w, d, m) for o, t, w, d, m in
                   zip(outs, self.out_types, self.out_weak, self.out_dims, self.depths,
                       strict=True)]
        return tree_unflatten(self.out_tree, results)

    def fast_path(self, args: Any, out: Any) -> Any:
        """The C++ launch for calls like ``args`` that returned ``out``, where it does
        what the Python path does: one mesh axis, no captured constants, every argument
        an Array already in place (split over these devices for in_axes 0, replicated
        on them for None), and every output split on axis 0 or replicated."""
        if pjrt.process_count() > 1:
            # jaxlib's dispatcher asks to move arguments laid out over this process's
            # devices only; the Python path handles them (Note [pmap over processes]).
            return None
        if (self.consts or len(self.mesh) != 1 or not self.out_types
                or any(d not in (0, None) for d in self.out_dims)):
            return None
        leaves, _ = tree_flatten(args)
        if len(leaves) != self.n_args:
            return None
        for x, d in zip(leaves, self.dims, strict=True):
            if (type(x) is not Array or x.split != (d is not None) or x._sharding is not None
                    or x.group() is None):
                return None
        out_leaves, _ = tree_flatten(out)
        return pjrt.fast_path(self.executable.exe, self.devices,
                              [(t.shape, t.dtype) for t in self.in_types],
                              [(t.shape, t.dtype) for t in self.out_types],
                              args, [x.group() for x in leaves],
                              out, [x.group() for x in out_leaves], kind="replicated")

    def _wrap(self, bufs: list[Any], t: TensorType, weak: bool, d: int | None,
              depth: int) -> Array:
        if d is None:                      # replicated (checked by Note [replication])
            # The value lives on device 0, like JAX's; the other replicas' copies are kept
            # so that passing it back with in_axes=None (the parameters of a training
            # step) needs no copy through the host.
            out = Array((bufs[0],), t, weak, (self.devices[0],))
            out._copies = dict(zip(self.devices, bufs, strict=True))
            return out
        chosen = self.selections[depth]
        lead = (self.local_outer, *(s for _, s in self.mesh[1:depth])) if depth else ()
        out = Array(tuple(bufs[r] for r in chosen), TensorType((*lead, *t.shape), t.dtype),
                    weak, tuple(self.devices[r] for r in chosen), split=True)
        if d == 0:
            return out
        # Only the leading axis can be split over devices: move it on the host.
        return Array.from_host(np.moveaxis(np.asarray(out), 0, d), self.devices[0], weak)
