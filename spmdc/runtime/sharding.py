"""Shardings: how a global array is laid out over devices (JAX's ``jax.sharding`` objects).

A ``Mesh`` names the axes of an n-d array of devices. A ``PartitionSpec`` says, for each
dimension of an array, over which mesh axes it is split (``None``: not split; a name; a
tuple of names: split over their product, the first name major). A ``NamedSharding`` pairs
the two; ``devices_indices_map(shape)`` gives each device's block as a tuple of slices.
Mesh axes a spec does not name replicate the blocks: every device along them holds the
same block.

Replica order is the mesh's device order (``mesh.devices.flat``, the last axis fastest),
the same order ``compiler/passes/collectives.py`` numbers the replicas of a mesh in, so a
program compiled for ``mesh.devices.flat`` sees device ``(i, j)`` at coordinates
``{'x': i, 'y': j}``.

These objects are plain data (NumPy and the device objects only); spmdc.sharding adds the
functions users call (make_mesh, set_mesh) and device_put does the placing.

In a computation over several processes (spmdc.distributed) a mesh may hold every
process's devices. A sharding over it is global, and this process can address only its
own devices' blocks: ``_addressable_assignment`` lists them, in assignment order, which is
the order an Array laid out by the sharding holds its buffers in (Note [arrays over
processes] in runtime/array.py).
"""
from __future__ import annotations

import itertools
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import pjrt
from .mesh_axes import (
    AbstractDevice,
    AbstractMesh,
    AxisType,
    AxisTypeQueries,
    abstract_mesh_override,
)

__all__ = ["AxisType", "Mesh", "PartitionSpec", "Sharding", "NamedSharding",
           "SingleDeviceSharding", "Shard", "current_mesh", "set_current_mesh",
           "remember_mesh", "mesh_of"]


class Mesh(AxisTypeQueries):
    """An n-d array of distinct devices whose axes have names."""

    def __init__(self, devices: Any, axis_names: str | Sequence[str],
                 axis_types: AxisType | Sequence[AxisType] | None = None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        names = tuple(axis_names)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"Mesh: axis_names must be strings, got {axis_names!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh: axis_names {names} name an axis twice")
        devs = np.array(devices, dtype=object)
        if devs.ndim != len(names):
            raise ValueError(f"Mesh: the devices array has {devs.ndim} dimensions (shape "
                             f"{devs.shape}) but {len(names)} axis names {names} were given; "
                             "reshape the devices to one dimension per axis name")
        flat = list(devs.flat)
        if len({id(d) for d in flat}) != len(flat):
            raise ValueError("Mesh: a device appears more than once in the devices array")
        if axis_types is None:
            types = (AxisType.Auto,) * len(names)
        elif isinstance(axis_types, AxisType):
            types = (axis_types,) * len(names)
        else:
            types = tuple(axis_types)
            if len(types) != len(names) or not all(isinstance(t, AxisType) for t in types):
                raise ValueError(f"Mesh: axis_types must be one AxisType per axis name "
                                 f"({len(names)}), got {axis_types!r}")
        devs.flags.writeable = False
        self.devices = devs
        self.axis_names = names
        self.axis_types = types
        self._prior: list[Mesh | None] = []

    @property
    def shape(self) -> OrderedDict[str, int]:
        return OrderedDict(zip(self.axis_names, self.devices.shape, strict=True))

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.axis_names, self.devices.shape, strict=True))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(self.devices.shape)

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        return self.devices.size == 0

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """This mesh without its devices (the empty AbstractMesh for a mesh of no axes);
        its abstract device names the first device's kind and platform, as JAX's."""
        if not self.axis_names:
            return AbstractMesh((), ())
        first = self.devices.flat[0]
        platform = str(getattr(first, "platform", "cpu"))
        cores = getattr(first, "core_count", None) if platform in ("gpu", "cuda") else None
        kind = AbstractDevice(device_kind=str(getattr(first, "device_kind", platform)),
                              num_cores=cores, platform=platform)
        return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types,
                            abstract_device=kind)

    @property
    def device_ids(self) -> np.ndarray:
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list[Any]:
        """The mesh's devices that belong to this process, in mesh order."""
        return list(_local(self._flat_devices))

    @property
    def _flat_devices(self) -> tuple[Any, ...]:
        return tuple(self.devices.flat)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Mesh) and self.axis_names == other.axis_names
                and self.axis_types == other.axis_types
                and self.devices.shape == other.devices.shape
                and all(a is b or a == b for a, b in zip(self.devices.flat,
                                                         other.devices.flat, strict=True)))

    def __hash__(self) -> int:
        return hash((self.axis_names, self.axis_types, self.devices.shape,
                     tuple(d.id for d in self.devices.flat)))

    def __repr__(self) -> str:
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple)
        return f"Mesh({axes}, axis_types={self.axis_types!r})"

    # ``with mesh:`` makes it the current mesh (as set_mesh does), for shard_map and
    # device_put(x, PartitionSpec(...)) calls that name no mesh.
    def __enter__(self) -> Mesh:
        self._prior.append(current_mesh())
        set_current_mesh(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        set_current_mesh(self._prior.pop())


class _CurrentMesh(threading.local):
    mesh: Mesh | None = None


_current = _CurrentMesh()


def current_mesh() -> Mesh | None:
    return _current.mesh


def set_current_mesh(mesh: Mesh | None) -> None:
    _current.mesh = mesh
    pjrt.set_mesh_context(None if mesh is None and abstract_mesh_override() is None
                          else (mesh, abstract_mesh_override()))


# The Mesh objects constraints were made with, by (axes, device ids): a constraint's
# params hold plain data (the compiler knows no Mesh), and results should carry the
# user's own Mesh, with its axis types.
_meshes: dict[Any, Mesh] = {}


def remember_mesh(mesh: Mesh) -> tuple[int, ...]:
    """The ids of ``mesh``'s devices, for a primitive's params; ``mesh`` is remembered so
    that a program found to run over it gets this very Mesh object back."""
    ids = tuple(int(d.id) for d in mesh._flat_devices)
    _meshes[(mesh.shape_tuple, ids)] = mesh
    return ids


def mesh_of(axes: Any, device_ids: tuple[int, ...]) -> Mesh:
    """The Mesh of a constraint's ``mesh`` and ``device_ids`` params."""
    mesh = _meshes.get((tuple(axes), tuple(device_ids)))
    if mesh is None:
        by_id = {d.id: d for d in pjrt.devices()}
        grid = np.empty(len(device_ids), dtype=object)
        grid[:] = [by_id[i] for i in device_ids]
        mesh = Mesh(grid.reshape([s for _, s in axes]), tuple(n for n, _ in axes))
    return mesh


class _Unconstrained:
    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    def __reduce__(self) -> Any:
        return "_UNCONSTRAINED"


_UNCONSTRAINED = _Unconstrained()


def _canonical_entry(entry: Any) -> Any:
    """One dimension's entry as JAX stores it: an empty tuple or list is None, a
    one-name tuple or list is the name, a longer list is a tuple."""
    if isinstance(entry, (tuple, list)):
        if not entry:
            return None
        return entry[0] if len(entry) == 1 else tuple(entry)
    return entry


class PartitionSpec:
    """For each dimension of an array: the mesh axes it is split over (``None``, a name, or
    a tuple of names); dimensions past the end of the spec are not split."""
    UNCONSTRAINED = _UNCONSTRAINED

    def __init__(self, *partitions: Any):
        partitions = tuple(map(_canonical_entry, partitions))
        for p in partitions:
            if not (p is None or p is _UNCONSTRAINED or isinstance(p, str)
                    or (isinstance(p, tuple) and all(isinstance(a, str) for a in p))):
                raise TypeError(f"PartitionSpec entries must be None, a mesh axis name or a "
                                f"tuple of names, got {p!r}")
        self._partitions = partitions

    def __iter__(self) -> Any:
        return iter(self._partitions)

    def __len__(self) -> int:
        return len(self._partitions)

    def __getitem__(self, i: Any) -> Any:
        return self._partitions[i]

    @property
    def partitions(self) -> tuple[Any, ...]:
        return self._partitions

    def __add__(self, other: Any) -> PartitionSpec:
        """The two specs' dimensions one after the other (a tuple counts as a spec)."""
        if isinstance(other, (PartitionSpec, tuple)):
            return PartitionSpec(*self._partitions, *other)
        return NotImplemented

    def __radd__(self, other: Any) -> PartitionSpec:
        if isinstance(other, tuple):
            return PartitionSpec(*other, *self._partitions)
        return NotImplemented

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PartitionSpec):
            return self._partitions == other._partitions
        return isinstance(other, tuple) and self._partitions == other

    def __hash__(self) -> int:
        return hash(self._partitions)

    def __repr__(self) -> str:
        return "P(" + ", ".join(map(repr, self._partitions)) + (
            "," if len(self._partitions) == 1 else "") + ")"

    def index(self, entry: Any) -> int:
        """The first dimension whose entry is ``entry`` (as the spec writes it; Flax's
        logical axis rules look a name up this way); ValueError if none is."""
        return self._partitions.index(_canonical_entry(entry))

    def count(self, entry: Any) -> int:
        """How many dimensions have the entry ``entry``."""
        return self._partitions.count(_canonical_entry(entry))

    def axes_of(self, dim: int) -> tuple[str, ...]:
        """The mesh axes dimension ``dim`` is split over (major first)."""
        if dim >= len(self._partitions):
            return ()
        p = self._partitions[dim]
        if p is None or p is _UNCONSTRAINED:
            return ()
        return (p,) if isinstance(p, str) else tuple(p)

    def all_axes(self) -> list[str]:
        return [a for d in range(len(self._partitions)) for a in self.axes_of(d)]


def check_spec(spec: PartitionSpec, mesh: Mesh, what: str) -> None:
    """Every axis the spec names is one of the mesh's, and none is named twice."""
    used = spec.all_axes()
    for a in used:
        if a not in mesh.axis_names:
            raise ValueError(f"{what}: {spec!r} names mesh axis {a!r}, but the mesh has axes "
                             f"{mesh.axis_names}")
    twice = sorted({a for a in used if used.count(a) > 1})
    if twice:
        raise ValueError(f"{what}: {spec!r} uses mesh axis {twice[0]!r} for more than one "
                         "dimension; each mesh axis may split at most one dimension")


class Sharding:
    """Base of the sharding classes (``isinstance(s, spmdc.sharding.Sharding)``)."""

    memory_kind = "device"

    @property
    def is_fully_addressable(self) -> bool:
        """Whether every device is this process's."""
        return len(self._addressable_assignment) == len(self._device_assignment)

    @property
    def num_devices(self) -> int:
        return len(self.device_set)

    @property
    def addressable_devices(self) -> set[Any]:
        return set(self._addressable_assignment)

    @property
    def _addressable_assignment(self) -> tuple[Any, ...]:
        """This process's devices, in the order of ``_device_assignment``."""
        return _local(self._device_assignment)

    @property
    def _addressable_device_assignment(self) -> list[Any]:
        """JAX's name for ``_addressable_assignment`` (a list), which Orbax reads."""
        return list(self._addressable_assignment)

    def addressable_devices_indices_map(self, global_shape: tuple[int, ...]
                                        ) -> dict[Any, tuple[slice, ...]]:
        index = self.devices_indices_map(global_shape)
        return {d: index[d] for d in self._addressable_assignment}

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        index = next(iter(self.devices_indices_map(tuple(global_shape)).values()))
        return tuple(len(range(*s.indices(n))) for s, n in zip(index, global_shape,
                                                                strict=True))

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Whether the two place the same block of an ``ndim``-d array on each device."""
        return (isinstance(other, Sharding) and self.device_set == other.device_set
                and _layout(self, ndim) == _layout(other, ndim))


def _local(devices: tuple[Any, ...]) -> tuple[Any, ...]:
    """The devices of ``devices`` that belong to this process (all of them in a
    single-process computation), in their order."""
    if pjrt.process_count() == 1:
        return devices
    me = pjrt.process_index()
    return tuple(d for d in devices if d.process_index == me)


def _layout(s: Sharding, ndim: int) -> dict[Any, tuple[Any, ...]]:
    """Device -> (block number, block count) per dimension, for equivalence tests."""
    if isinstance(s, SingleDeviceSharding):
        return {s.device: ((0, 1),) * ndim}
    assert isinstance(s, NamedSharding)
    return {d: s._blocks(coords, ndim) for coords, d in s._coords()}


class NamedSharding(Sharding):
    """``spec`` over ``mesh`` (module docstring)."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec | None = None, *,
                 memory_kind: str | None = None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding: mesh must be a spmdc.sharding.Mesh or "
                            f"AbstractMesh, got "
                            f"{type(mesh).__name__}")
        spec = PartitionSpec() if spec is None else spec
        if isinstance(spec, tuple):
            spec = PartitionSpec(*spec)
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding: spec must be a PartitionSpec, got {spec!r}")
        if memory_kind not in (None, "device"):
            raise ValueError(f"NamedSharding: memory_kind={memory_kind!r} is not available; "
                             "spmdc's devices have one memory kind, 'device'")
        check_spec(spec, mesh, "NamedSharding")
        self.mesh = mesh
        self.spec = spec

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NamedSharding) and self.mesh == other.mesh
                and self.spec == other.spec)

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec))

    @property
    def memory_kind(self) -> str | None:  # type: ignore[override]
        """'device' over a Mesh; None over an AbstractMesh (a type's sharding, as JAX's)."""
        return None if isinstance(self.mesh, AbstractMesh) else "device"

    def __repr__(self) -> str:
        kind = "" if self.memory_kind is None else ", memory_kind=device"
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r}{kind})"

    def with_spec(self, spec: PartitionSpec) -> NamedSharding:
        return NamedSharding(self.mesh, spec)

    def update(self, *, mesh: Mesh | AbstractMesh | None = None,
               spec: PartitionSpec | None = None) -> NamedSharding:
        """This sharding with its mesh and/or spec replaced (JAX's ``update``)."""
        return NamedSharding(self.mesh if mesh is None else mesh,
                             self.spec if spec is None else spec)

    @property
    def device_set(self) -> set[Any]:
        return set(self.mesh.devices.flat)

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        return self.mesh._flat_devices

    @property
    def is_fully_replicated(self) -> bool:
        return all(self.mesh.shape[a] == 1 for a in self.spec.all_axes())

    def _coords(self) -> list[tuple[dict[str, int], Any]]:
        names = self.mesh.axis_names
        return [(dict(zip(names, idx, strict=True)), self.mesh.devices[idx])
                for idx in itertools.product(*map(range, self.mesh.devices.shape))]

    def _blocks(self, coords: dict[str, int], ndim: int) -> tuple[tuple[int, int], ...]:
        out = []
        for d in range(ndim):
            k, n = 0, 1
            for a in self.spec.axes_of(d):
                k, n = k * self.mesh.shape[a] + coords[a], n * self.mesh.shape[a]
            out.append((k, n))
        return tuple(out)

    def check_shape(self, shape: tuple[int, ...], what: str) -> None:
        """The spec fits an array of this shape: not too long, every split divides."""
        if len(self.spec) > len(shape):
            raise ValueError(f"{what}: {self.spec!r} has {len(self.spec)} entries, but the "
                             f"array has only {len(shape)} dimensions (shape {shape})")
        for d, n in enumerate(shape):
            parts = math.prod(self.mesh.shape[a] for a in self.spec.axes_of(d))
            if n % parts:
                axes = " x ".join(f"{a!r} ({self.mesh.shape[a]})"
                                  for a in self.spec.axes_of(d))
                raise ValueError(f"{what}: dimension {d} of shape {shape} has size {n}, "
                                 f"which is not divisible by {parts}, the number of pieces "
                                 f"{self.spec!r} splits it into (mesh axes {axes})")

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """The shape of each device's block (from the mesh's axis sizes only, so that a
        sharding over an AbstractMesh answers it too)."""
        shape = tuple(global_shape)
        self.check_shape(shape, "NamedSharding.shard_shape")
        return tuple(n // math.prod(self.mesh.shape[a] for a in self.spec.axes_of(d))
                     for d, n in enumerate(shape))

    def devices_indices_map(self, global_shape: tuple[int, ...]
                            ) -> dict[Any, tuple[slice, ...]]:
        shape = tuple(global_shape)
        self.check_shape(shape, "NamedSharding.devices_indices_map")
        out = {}
        for coords, dev in self._coords():
            index = []
            for (k, n), size in zip(self._blocks(coords, len(shape)), shape, strict=True):
                step = size // n
                index.append(slice(None) if n == 1 else slice(k * step, (k + 1) * step))
            out[dev] = tuple(index)
        return out

    def replica_ids(self, global_shape: tuple[int, ...]) -> dict[Any, int]:
        """For each device, how many devices before it (in mesh order) hold its block."""
        seen: dict[tuple[Any, ...], int] = {}
        out = {}
        for dev, index in self.devices_indices_map(global_shape).items():
            key = tuple((s.start, s.stop) for s in index)
            out[dev] = seen.get(key, 0)
            seen[key] = out[dev] + 1
        return out


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device: Any, *, memory_kind: str | None = None):
        if memory_kind not in (None, "device"):
            raise ValueError(f"SingleDeviceSharding: memory_kind={memory_kind!r} is not "
                             "available; spmdc's devices have one memory kind, 'device'")
        self.device = device

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and self.device == other.device

    def __hash__(self) -> int:
        return hash(("single", self.device))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self.device!r}, memory_kind=device)"

    @property
    def device_set(self) -> set[Any]:
        return {self.device}

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        return (self.device,)

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def devices_indices_map(self, global_shape: tuple[int, ...]
                            ) -> dict[Any, tuple[slice, ...]]:
        return {self.device: (slice(None),) * len(global_shape)}


class Shard:
    """One device's block of an Array: ``device``, ``index`` (slices into the global
    array), ``replica_id`` (0 for the first device holding this block) and ``data``."""
    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device: Any, index: tuple[slice, ...], replica_id: int, data: Any):
        self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

    def __repr__(self) -> str:
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data!r})")


# --- layouts XLA's SPMD partitioner chose (Note [partition form] in compiler/stablehlo.py) --

class TiledSharding(Sharding):
    """A layout the partitioner chose that no PartitionSpec over the mesh names: each
    device's block, as the tile coordinates it holds (tiles are ``ceil(n / count)`` long,
    the last one shorter)."""

    def __init__(self, counts: tuple[int, ...], tiles: dict[Any, tuple[int, ...]]):
        self.counts = counts
        self.tiles = tiles

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TiledSharding) and self.counts == other.counts
                and self.tiles == other.tiles)

    def __hash__(self) -> int:
        return hash((self.counts, tuple(sorted((d.id, t) for d, t in self.tiles.items()))))

    def __repr__(self) -> str:
        return f"TiledSharding(tiles per dimension {self.counts}, over {len(self.tiles)} devices)"

    @property
    def device_set(self) -> set[Any]:
        return set(self.tiles)

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        return tuple(self.tiles)

    @property
    def is_fully_replicated(self) -> bool:
        return all(c == 1 for c in self.counts)

    def devices_indices_map(self, global_shape: tuple[int, ...]
                            ) -> dict[Any, tuple[slice, ...]]:
        out = {}
        for dev, coords in self.tiles.items():
            index = []
            for k, c, n in zip(coords, self.counts, global_shape, strict=True):
                step = -(-n // c)
                index.append(slice(None) if c == 1 else slice(min(n, k * step),
                                                              min(n, (k + 1) * step)))
            out[dev] = tuple(index)
        return out

    def replica_ids(self, global_shape: tuple[int, ...]) -> dict[Any, int]:
        seen: dict[tuple[int, ...], int] = {}
        out = {}
        for dev, coords in self.tiles.items():
            out[dev] = seen.get(coords, 0)
            seen[coords] = out[dev] + 1
        return out


def sharding_from_tiles(mesh: Mesh, shape: tuple[int, ...],
                        tiles: tuple[list[int], list[int], bool] | None) -> Sharding:
    """The layout ``runtime/pjrt.output_tiles`` read from an executable, as a
    NamedSharding over ``mesh`` when one describes it, else as a TiledSharding."""
    devices = mesh._flat_devices
    ndim = len(shape)
    if tiles is None:
        raise ValueError("the partitioner gave an output a layout spmdc cannot read")
    counts_all, ids, replicated_last = tiles
    if not counts_all:                                  # replicated everywhere
        return NamedSharding(mesh, PartitionSpec())
    counts = tuple(counts_all[:ndim])
    grid = np.array(ids).reshape(counts_all)
    held = {}
    for pos in itertools.product(*map(range, counts_all)):
        held[devices[int(grid[pos])]] = tuple(pos[:ndim])
    del replicated_last            # the extra count of copies needs no more than the grid
    for spec in _candidate_specs(mesh, ndim):
        s = NamedSharding(mesh, spec)
        if all(tuple(k for k, _ in s._blocks(coords, ndim)) == held[d]
               and tuple(n for _, n in s._blocks(coords, ndim)) == counts
               for coords, d in s._coords()):
            if all(n % c == 0 for n, c in zip(shape, counts, strict=True)):
                return s
    return TiledSharding(counts, held)


def _candidate_specs(mesh: Mesh, ndim: int) -> list[PartitionSpec]:
    """Every spec over the mesh's axes for an ``ndim``-d array, fewest split axes first."""
    names = mesh.axis_names
    specs = []
    for where in itertools.product(range(-1, ndim), repeat=len(names)):
        groups: list[list[str]] = [[] for _ in range(ndim)]
        for name, d in zip(names, where, strict=True):
            if d >= 0:
                groups[d].append(name)
        for orders in itertools.product(*[itertools.permutations(g) for g in groups]):
            parts = [None if not o else (o[0] if len(o) == 1 else tuple(o)) for o in orders]
            while parts and parts[-1] is None:
                parts.pop()
            specs.append(PartitionSpec(*parts))
    specs.sort(key=lambda s: len(s.all_axes()))
    return specs
