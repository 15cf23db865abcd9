"""``spmdc.experimental.multihost_utils``: host values across the processes of a
computation (spmdc.distributed), as JAX's module of that name does.

Each helper is a collective over every device: all processes must call it, in the same
order, with leaves of the same shape and dtype. In a single-process computation they
are immediate. Results are NumPy arrays, on every process.

``host_local_array_to_global_array`` / ``global_array_to_host_local_array`` convert
between each process's piece and the global Array over a mesh of every process's devices
(Note [host-local and global arrays]); ``live_devices`` and ``ProcessFailureError`` ask
the coordination service which processes are alive.
"""
from __future__ import annotations

import contextlib
import math
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core import tree as _tree
from ..core.devices import device_put, make_array_from_single_device_arrays
from ..core.tree import broadcast_prefix, tree_flatten, tree_map
from ..errors import ProcessFailureError, where
from ..runtime import pjrt
from ..runtime.array import Array
from ..runtime.pjrt.distributed import joined
from ..runtime.sharding import Mesh, NamedSharding, PartitionSpec
from ..transforms.jit import jit
from ..transforms.pmap import pmap

__all__ = ["process_allgather", "broadcast_one_to_all", "sync_global_devices",
           "assert_equal", "host_local_array_to_global_array",
           "global_array_to_host_local_array", "live_devices", "ProcessFailureError",
           "reached_preemption_sync_point"]


def _gather_rows(x: Any) -> np.ndarray:
    """Every process's ``x``, stacked along a new axis 0 in process order."""
    host = np.asarray(x)
    count = pjrt.process_count()
    if count == 1:
        return host[None]
    n = len(pjrt.local_devices())
    gathered = _all_gather(np.broadcast_to(host, (n, *host.shape)))
    # Device k of process p holds process p's x (each process's n devices hold copies):
    # keep one per process.
    return np.asarray(gathered)[0][::n]


_all_gather = pmap(lambda v: lax.all_gather(v, "processes"), "processes")


def _replicate(x: Array) -> Array:
    """``x`` replicated over its mesh: a program every process launches."""
    mesh = x.sharding.mesh
    return jit(lambda v: v, out_shardings=NamedSharding(mesh, PartitionSpec()))(x)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's leaves: stacked along a new leading axis in process order, or
    with ``tiled`` concatenated along axis 0 (a scalar is always stacked). A leaf that is
    an Array laid out over several processes' devices is one global value: it comes back
    whole, as in JAX (Note [arrays over processes] in runtime/array.py)."""
    def gather(x: Any) -> np.ndarray:
        if isinstance(x, Array) and not x.is_fully_addressable:
            return np.asarray(_replicate(x))
        rows = _gather_rows(x)
        if tiled and rows.ndim > 1:
            return np.concatenate(list(rows), axis=0)
        return rows
    return tree_map(gather, in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Process 0's leaves (or, with ``is_source``, those of the processes passing True,
    summed) on every process; every process's leaves must have the same shapes."""
    if pjrt.process_count() == 1:
        return tree_map(np.asarray, in_tree)
    if is_source is None:
        is_source = pjrt.process_index() == 0
    sources = _gather_rows(np.asarray(bool(is_source)))

    def broadcast(x: Any) -> np.ndarray:
        rows = _gather_rows(x)
        picked = rows[sources]
        return np.sum(picked, axis=0, dtype=rows.dtype)
    return tree_map(broadcast, in_tree)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Raise AssertionError (with ``fail_message``) unless every process passes the
    same leaves."""
    leaves, _ = tree_flatten(in_tree)
    gathered = [_gather_rows(x) for x in leaves]
    for k, rows in enumerate(gathered):
        differ = [p for p in range(len(rows)) if not np.array_equal(rows[p], rows[0])]
        if differ:
            raise AssertionError(
                f"{fail_message}{'. ' if fail_message else ''}leaf {k} differs between "
                f"process 0 and process{'es' if len(differ) > 1 else ''} "
                f"{', '.join(map(str, differ))}: {rows[0]!r} vs {rows[differ[0]]!r}")


def sync_global_devices(name: str) -> None:
    """A barrier over every device of every process; all processes must pass the same
    ``name``, or it is an AssertionError naming the processes that differ."""
    assert_equal(np.uint32(zlib.crc32(name.encode())),
                 f"sync_global_devices name mismatch ({name!r})")



# --- host-local pieces and global arrays ----------------------------------------------------

# Note [host-local and global arrays]
# A program written for one process per host feeds each process's data (its batch rows)
# to a computation over a mesh of every process's devices. JAX's
# host_local_array_to_global_array lays each process's piece out over its own devices
# (the mesh's local mesh: the sub-box of the mesh this process's devices form, which
# must be contiguous) by the spec, and the pieces together are one global Array, each
# dimension split over mesh axes that span processes growing by the number of
# processes along them. global_array_to_host_local_array is the inverse: this process's
# blocks of a global Array as an Array over the local mesh. In one process the local
# mesh is the mesh: the first is device_put by the spec, the second returns its
# (addressable) input. spmdc does both with its own Arrays (blocks placed with
# device_put, then make_array_from_single_device_arrays); under jit JAX's primitives
# change the type only, which spmdc, whose jit sees global Arrays, has no need of.

def _spec_leaves(name: str, tree: Any, pspecs: Any) -> list[Any]:
    specs = broadcast_prefix(pspecs, tree, is_leaf=lambda v: isinstance(v, PartitionSpec),
                             what=name)
    for s in specs:
        if s is None:
            raise ValueError("`None` is not a valid input to the pspecs argument. Please use "
                             "jax.sharding.PartitionSpec() if you wanted to replicate your "
                             f"input{where()}")
        if not isinstance(s, PartitionSpec):
            raise TypeError(f"{name}: each spec must be a jax.sharding.PartitionSpec, got "
                            f"{type(s).__name__}{where()}")
    return specs


def _local_mesh(mesh: Mesh) -> Mesh:
    """The sub-mesh of ``mesh`` this process's devices form (``mesh`` itself in one
    process); ValueError if they do not form a box of it."""
    if pjrt.process_count() == 1:
        return mesh
    me = pjrt.process_index()
    mine = np.vectorize(lambda d: d.process_index == me, otypes=[bool])(mesh.devices)
    if not mine.any():
        raise ValueError(f"the mesh {mesh} holds none of process {me}'s devices{where()}")
    box = tuple(slice(int(i.min()), int(i.max()) + 1) for i in np.nonzero(mine))
    if not mine[box].all():
        raise ValueError(f"the mesh {mesh} is not contiguous: process {me}'s devices do "
                         "not form a sub-box of it; use jax.make_array_from_callback or "
                         f"make_array_from_single_device_arrays instead{where()}")
    return Mesh(mesh.devices[box], mesh.axis_names, mesh.axis_types)


def _growth(mesh: Mesh, local: Mesh, spec: PartitionSpec, ndim: int) -> list[int]:
    """Per dimension: how many local pieces make the global dimension."""
    out = []
    for k in range(ndim):
        part = spec[k] if k < len(spec) else None
        axes = () if part is None else (part,) if isinstance(part, str) else tuple(part)
        out.append(math.prod(mesh.shape[a] // local.shape[a] for a in axes))
    return out


def _placed_blocks(value: Any, sharding: NamedSharding) -> list[Array]:
    return [device_put(value[idx], d) for d, idx in sharding.devices_indices_map(
        value.shape).items() if d in sharding._addressable_assignment]


def _to_global(x: Any, mesh: Mesh, spec: PartitionSpec) -> Any:
    if isinstance(x, Array) and not x.is_fully_addressable:
        return x                                         # already global
    value = np.asarray(x)
    value = value.astype(dtypes.canonicalize(value.dtype), copy=False)
    local = _local_mesh(mesh)
    if local is mesh:
        return device_put(value, NamedSharding(mesh, spec))
    growth = _growth(mesh, local, spec, value.ndim)
    shape = tuple(n * g for n, g in zip(value.shape, growth, strict=True))
    blocks = _placed_blocks(value, NamedSharding(local, spec))
    return make_array_from_single_device_arrays(shape, NamedSharding(mesh, spec), blocks)


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh,
                                     pspecs: Any) -> Any:
    """Each leaf of ``local_inputs`` (this process's piece) as its part of a global Array
    over ``global_mesh`` laid out by its spec in ``pspecs`` (a prefix tree of
    PartitionSpecs). See Note [host-local and global arrays]."""
    leaves, tree = tree_flatten(local_inputs)
    specs = _spec_leaves("host_local_array_to_global_array pspecs", local_inputs, pspecs)
    return _tree.tree_unflatten(tree, [_to_global(x, global_mesh, s)
                                 for x, s in zip(leaves, specs, strict=True)])


def _to_local(x: Any, mesh: Mesh, spec: PartitionSpec) -> Any:
    if isinstance(x, Array) and x.is_fully_addressable:
        return x                                         # already host-local
    local = _local_mesh(mesh)
    if not isinstance(x, Array):
        if local is not mesh:
            raise TypeError("global_array_to_host_local_array: a global value must be a "
                            f"jax.Array laid out over the mesh, got {type(x).__name__}"
                            f"{where()}")
        return device_put(np.asarray(x), NamedSharding(mesh, spec))
    sharding = NamedSharding(mesh, spec)
    if not x.sharding.is_equivalent_to(sharding, x.ndim):
        x = device_put(x, sharding)
    growth = _growth(mesh, local, spec, x.ndim)
    shape = tuple(n // g for n, g in zip(x.shape, growth, strict=True))
    blocks = [s.data for s in x.addressable_shards]
    return make_array_from_single_device_arrays(shape, NamedSharding(local, spec), blocks)


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh,
                                     pspecs: Any) -> Any:
    """This process's blocks of each global Array of ``global_inputs`` (laid out over
    ``global_mesh`` by its spec in ``pspecs``) as an Array over the process's local mesh.
    See Note [host-local and global arrays]."""
    leaves, tree = tree_flatten(global_inputs)
    specs = _spec_leaves("global_array_to_host_local_array pspecs", global_inputs, pspecs)
    return _tree.tree_unflatten(tree, [_to_local(x, global_mesh, s)
                                 for x, s in zip(leaves, specs, strict=True)])


# --- which processes are alive --------------------------------------------------------------

def _live(client: Any, devices: list[Any]) -> dict[Any, int]:
    """The devices of ``devices`` whose process is alive, each with the incarnation the
    coordination service gives its process."""
    processes = {d.process_index for d in devices}
    if pjrt.process_index() not in processes:
        raise ValueError(f"live_devices: the devices provided include none of this "
                         f"process's{where()}")
    alive = client.get_live_nodes(sorted(processes))
    return {d: alive[d.process_index] for d in devices if d.process_index in alive}


class _LiveDevices:
    """``with live_devices(devices) as alive:`` the devices of ``devices`` whose processes
    are alive, the same list on every process (a barrier over those processes, kept by
    the coordination service); on leaving the block, ProcessFailureError if a process
    died or restarted meanwhile (raised from the block's own exception, if any)."""

    def __init__(self) -> None:
        self.devices: dict[Any, int] | None = None

    @contextlib.contextmanager
    def __call__(self, devices: Any) -> Iterator[list[Any]]:
        if not joined:
            raise RuntimeError("Distributed JAX not initialized.")
        devices = list(devices)
        if not devices:
            raise ValueError(f"live_devices: no devices provided{where()}")
        client = joined[0].client
        if self.devices is None:
            self.devices = _live(client, devices)
        failure = None
        try:
            yield sorted(self.devices, key=lambda d: d.id)
        except Exception as e:
            failure = e
        finally:
            before, self.devices = self.devices, _live(client, devices)
            failed = {d for d in before
                      if d not in self.devices or self.devices[d] != before[d]}
            if failed:
                raise ProcessFailureError(failed) from failure
            if failure is not None:
                raise failure


live_devices = _LiveDevices()


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether every process has reached the step agreed on after a preemption notice.
    A single-process program has no such step: False, as in JAX. spmdc's distributed
    runtime does not start JAX's preemption service (a signal ends a process: Note
    [failing fast] in runtime/distributed.py), so with several processes this is the
    RuntimeError JAX raises when that service is off (callers such as Orbax read it as
    "no preemption")."""
    if pjrt.process_count() == 1:
        return False
    raise RuntimeError(
        f"reached_preemption_sync_point({step_id}): Preemption sync manager has not been "
        "initialized: spmdc's distributed runtime runs without JAX's preemption service "
        "(a SIGTERM ends the program; checkpoint on a schedule instead)")
