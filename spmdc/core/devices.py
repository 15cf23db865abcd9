"""Devices and data placement: devices(), device_put (to one device, or split over a
list of them), device_get, block_until_ready, and the buffer placement jit and pmap use.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..compiler.ir import TensorType
from ..runtime import config_states, pjrt, transfers
from ..runtime.array import Array, is_concrete
from ..runtime.launcher import place
from ..runtime.layouts import Format, format_sharding
from ..runtime.sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    current_mesh,
)
from .tracing import type_of, where
from .tree import tree_flatten, tree_unflatten

__all__ = ["devices", "local_devices", "device_count", "local_device_count", "default_device",
           "place", "device_put", "put_implicitly", "device_get", "block_until_ready", "shard_over",
           "check_device", "check_devices", "check_backend", "put_sharded",
           "make_array_from_callback", "make_array_from_single_device_arrays",
           "make_array_from_process_local_data"]


# --- devices ----------------------------------------------------------------------------

def _is_device(d: Any) -> bool:
    return any(d is e or d == e for e in pjrt.devices()) and not isinstance(
        d, (int, str, np.integer))


def check_devices(op: str, devices: Any) -> tuple[Any, ...] | None:
    """``devices=`` of pmap: None or a sequence of distinct devices from spmdc.devices()."""
    if devices is None:
        return None
    if not isinstance(devices, (tuple, list)) or not devices:
        raise TypeError(f"{op}: devices must be a non-empty list of devices from "
                        f"spmdc.devices(), got {devices!r}{where()}")
    for d in devices:
        if not _is_device(d):
            raise TypeError(f"{op}: devices must be device objects from spmdc.devices() "
                            f"(e.g. spmdc.devices()[:2]), got {d!r} of type "
                            f"{type(d).__name__}{where()}")
    if len({id(d) for d in devices}) != len(devices):
        raise ValueError(f"{op}: devices lists a device more than once{where()}")
    return tuple(devices)


def check_device(op: str, device: Any) -> None:
    """``device_put``'s target: None, a device, a list of devices (splitting the leading
    axis), or a sharding (a PartitionSpec when a mesh is set)."""
    if device is None or isinstance(device, Sharding):
        return
    if isinstance(device, PartitionSpec):
        if current_mesh() is None:
            raise ValueError(f"{op}: a PartitionSpec ({device!r}) needs a mesh: pass "
                             "NamedSharding(mesh, spec), or set one with "
                             f"spmdc.sharding.set_mesh(mesh) / `with mesh:`{where()}")
        return
    if isinstance(device, (tuple, list)):
        check_devices(op, device)
        return
    if not _is_device(device):
        raise ValueError(f"{op}: the device must be None, a device from spmdc.devices(), or a "
                         f"list of them (to shard the leading axis), got {device!r}{where()}")


def check_backend(op: str, backend: Any) -> None:
    """``backend=``: None, or the name of the platform spmdc's devices are on. Another
    platform's name is a RuntimeError, as in JAX (programs probe for an accelerator with
    ``try: jax.devices('gpu') except RuntimeError``)."""
    if backend is None:
        return
    if not isinstance(backend, str):
        raise TypeError(f"{op}: backend must be a platform name (a str) or None, got "
                        f"{backend!r}{where()}")
    platforms = sorted({str(d.platform).lower() for d in pjrt.devices()})
    if backend.lower() not in platforms:
        raise RuntimeError(f"{op}: Unknown backend: {backend!r} requested, but no platform "
                           f"of that kind is present; spmdc runs on {', '.join(platforms)} "
                           f"(pass one of those, or backend=None){where()}")


def devices(backend: str | None = None) -> list[Any]:
    """Every device of the computation, every process's (``backend``, if given, must
    name their platform)."""
    check_backend("devices", backend)
    return list(pjrt.devices())


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Any]:
    """The devices of this process (or of process ``process_index``)."""
    check_backend("local_devices", backend)
    if process_index is None:
        return list(pjrt.local_devices())
    count = pjrt.process_count()
    if isinstance(process_index, bool) or not isinstance(process_index, (int, np.integer)) \
            or not 0 <= process_index < count:
        raise ValueError(f"local_devices: process_index must be an int in 0..{count - 1} "
                         f"(there {'is' if count == 1 else 'are'} {count} "
                         f"process{'es' if count > 1 else ''}), got {process_index!r}{where()}")
    return [d for d in pjrt.devices() if d.process_index == process_index]


def device_count(backend: str | None = None) -> int:
    """How many devices the computation has, over every process."""
    check_backend("device_count", backend)
    return len(pjrt.devices())


def local_device_count(backend: str | None = None) -> int:
    """How many devices this process has."""
    check_backend("local_device_count", backend)
    return len(pjrt.local_devices())


def default_device() -> Any:
    """Where values and one-device computations go when nothing says: the device of
    ``jax_default_device`` (a Device, or the first device of a platform named), else this
    process's first device."""
    chosen = config_states.default_device.value
    if chosen is None:
        return pjrt.local_devices()[0]
    if isinstance(chosen, str):
        return local_devices(backend=chosen)[0]
    return chosen


def device_put(x: Any, device: Any = None) -> Any:
    """Put ``x`` (a pytree) on ``device``; a *list* of devices shards the leading axis; a
    NamedSharding (or a PartitionSpec over the current mesh) places each device's block; a
    Format stands for its sharding (Note [formats])."""
    if isinstance(device, Format):
        device = format_sharding(device, "device_put")
    check_device("device_put", device)
    for leaf in tree_flatten(x)[0]:      # (a donated Array is gone)
        if is_concrete(leaf):
            leaf.check_not_deleted(where())
    if isinstance(device, (list, tuple)):
        return _tree_map(lambda v: shard_over(v, tuple(device)), x)
    if isinstance(device, PartitionSpec):
        device = NamedSharding(current_mesh(), device)
    if isinstance(device, NamedSharding):
        return _tree_map(lambda v: put_sharded(v, device), x)
    if isinstance(device, SingleDeviceSharding):
        device = device.device
    explicit = device is not None            # See Note [committed arrays] (runtime/array.py)
    device = device or default_device()

    def put_one(v: Any) -> Array:
        t, weak = type_of(v)
        with transfers.explicit():   # See Note [transfer guards] in runtime/transfers.py
            return Array((place(v, device, t),), t, weak, (device,),
                         committed=explicit or (is_concrete(v) and v.committed))
    return _tree_map(put_one, x)


def put_implicitly(value: Any) -> Array:
    """A host value (a NumPy array or scalar) on the default device, as an operand of an
    operation: an implicit transfer, which the transfer guards check (Note [transfer
    guards] in runtime/transfers.py); ``device_put``'s are explicit."""
    t, weak = type_of(value)
    device = default_device()
    return Array((place(value, device, t),), t, weak, (device,))


def device_get(x: Any) -> Any:
    def get_one(v: Any) -> Any:
        if not is_concrete(v):
            return v
        with transfers.explicit():          # See Note [transfer guards]
            return np.asarray(v)
    return _tree_map(get_one, x)


def block_until_ready(x: Any) -> Any:
    leaves, _ = tree_flatten(x)
    for v in leaves:
        if is_concrete(v):
            v.block_until_ready()
    return x


def _tree_map(f: Callable[[Any], Any], tree: Any) -> Any:
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [f(v) for v in leaves])


# How an Array laid out over several processes gets another layout over its mesh: a
# program every process runs (set by transforms/partitioned.py, which this floor cannot
# import; Note [arrays over processes] in runtime/array.py).
relayout: list[Callable[[Array, NamedSharding], Array]] = []


def put_sharded(x: Any, sharding: NamedSharding) -> Array:
    """``x`` laid out by ``sharding``: each device of its mesh gets its block."""
    if type(x) is Array and x._sharding == sharding:
        return x
    if type(x) is Array and not x.is_fully_addressable:
        # the value is not all here: another program over the mesh moves the blocks
        if not isinstance(x._sharding, NamedSharding) or x._sharding.mesh != sharding.mesh:
            raise ValueError(
                f"device_put: this Array is laid out over devices of several processes, so "
                f"it can take another layout only over the same mesh ({x.sharding!r}, "
                f"asked for {sharding!r}){where()}")
        return relayout[0](x, sharding)
    t, weak = type_of(x)
    try:
        sharding.check_shape(t.shape, "device_put")
    except ValueError as e:
        raise ValueError(f"{e}{where()}") from None
    index = sharding.devices_indices_map(t.shape)
    host = None
    bufs = []
    # across processes, this process's blocks only (Note [arrays over processes])
    mine = sharding._addressable_assignment
    for dev in mine:
        buf = x.buffer_on(dev) if type(x) is Array and sharding.is_fully_replicated else None
        if buf is None:
            if host is None:
                host = np.asarray(x)
                if host.dtype != t.dtype:
                    host = host.astype(t.dtype)
            buf = pjrt.put(np.ascontiguousarray(host[index[dev]]), dev)
        bufs.append(buf)
    return Array(tuple(bufs), t, weak, mine, sharding=sharding,
                 committed=True)


# --- device_put with a list of devices -------------------------------------------------------

def shard_over(x: Any, devices: tuple[Any, ...]) -> Array:
    """``x`` split along its leading axis over ``devices`` (slice k on ``devices[k]``)."""
    if type(x) is Array and x.split and x.device_list == devices:
        return x
    t, weak = type_of(x)
    if t.ndim == 0 or t.shape[0] != len(devices):
        raise ValueError(f"device_put with a list of {len(devices)} devices shards the "
                         f"leading axis over them, so it needs an array whose leading axis "
                         f"has size {len(devices)}; got shape {t.shape}{where()}")
    host = np.asarray(x)
    if host.dtype != t.dtype:
        host = host.astype(t.dtype)
    bufs = tuple(pjrt.put(host[k], dev) for k, dev in enumerate(devices))
    return Array(bufs, t, weak, tuple(devices), split=True, committed=True)



# --- global arrays from their pieces (JAX's make_array_from_*) -------------------------------

def _layout(op: str, shape: Any, sharding: Any) -> tuple[tuple[int, ...], NamedSharding]:
    """``shape`` as a tuple and ``sharding`` as a NamedSharding, or a clear error."""
    if isinstance(sharding, SingleDeviceSharding):
        sharding = NamedSharding(
            Mesh(np.array([sharding.device], dtype=object), ("_one",)),
            PartitionSpec())
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"{op}: sharding must be a NamedSharding or SingleDeviceSharding, "
                        f"got {sharding!r}{where()}")
    try:
        shape = tuple(int(n) for n in shape)
    except TypeError:
        raise TypeError(f"{op}: shape must be a tuple of ints, got {shape!r}{where()}") \
            from None
    try:
        sharding.check_shape(shape, op)
    except ValueError as e:
        raise ValueError(f"{e}{where()}") from None
    return shape, sharding


def make_array_from_callback(shape: Any, sharding: Any, data_callback: Callable[[Any], Any],
                             dtype: Any = None) -> Array:
    """The array of ``shape`` laid out by ``sharding`` whose block on each device is
    ``data_callback(index)``, ``index`` being that block's tuple of slices (called once
    per distinct block)."""
    if isinstance(sharding, NamedSharding) and len(sharding.spec) > len(tuple(shape)) and \
            all(p is None for p in tuple(sharding.spec)[len(tuple(shape)):]):
        # JAX lays a scalar out by P(None) here (Orbax's replicated restore shardings):
        # entries past the array's rank that shard nothing are dropped.
        sharding = NamedSharding(sharding.mesh, PartitionSpec(*tuple(sharding.spec)[
            :len(tuple(shape))]), memory_kind=sharding.memory_kind)
    shape, sharding = _layout("make_array_from_callback", shape, sharding)
    index = sharding.devices_indices_map(shape)
    devs = sharding._addressable_assignment       # Note [arrays over processes]
    key = {dev: tuple((s.start, s.stop, s.step) for s in index[dev]) for dev in devs}
    want = sharding.shard_shape(shape)
    blocks: dict[Any, np.ndarray] = {}
    for dev in devs:
        if key[dev] not in blocks:
            block = np.asarray(data_callback(index[dev]), dtype)
            if block.shape != want:
                raise ValueError(f"make_array_from_callback: the callback gave a block of "
                                 f"shape {block.shape} for index {index[dev]}, which needs "
                                 f"{want}{where()}")
            blocks[key[dev]] = block
    if not blocks:
        raise ValueError(f"make_array_from_callback: none of the sharding's devices is this "
                         f"process's (process {pjrt.process_index()}); lay the array out "
                         f"over a mesh that includes this process's devices{where()}")
    t, _ = type_of(next(iter(blocks.values())))
    bufs = [pjrt.put(np.ascontiguousarray(blocks[key[dev]].astype(t.dtype, copy=False)), dev)
            for dev in devs]
    return Array(tuple(bufs), TensorType(shape, t.dtype), False, devs, sharding=sharding,
                 committed=True)


def make_array_from_single_device_arrays(shape: Any, sharding: Any, arrays: Any,
                                         *, dtype: Any = None) -> Array:
    """The array of ``shape`` laid out by ``sharding`` from its blocks: ``arrays`` holds
    one single-device array per device of the sharding that is this process's (every
    device, in one process), each on its device, holding that device's block."""
    op = "make_array_from_single_device_arrays"
    shape, sharding = _layout(op, shape, sharding)
    arrays = list(arrays)
    devs = sharding._addressable_assignment       # Note [arrays over processes]
    on: dict[Any, Array] = {}
    for a in arrays:
        if not is_concrete(a) or len(a.devices()) != 1:
            raise TypeError(f"{op}: arrays must be single-device spmdc Arrays (e.g. from "
                            f"device_put(x, device)), got {type(a).__name__}{where()}")
        a.check_not_deleted(where())
        (d,) = a.devices()
        if d not in devs or d in on:
            raise ValueError(f"{op}: each array must be on its own device of the "
                             f"sharding; {d} is {'listed twice' if d in on else 'not in it'}"
                             f"{where()}")
        on[d] = a
    if len(on) != len(devs) or not devs:
        whose = "" if sharding.is_fully_addressable else " of this process"
        raise ValueError(f"{op}: the sharding has {len(devs)} devices{whose}, but {len(on)} "
                         f"arrays were given, one per device{where()}")
    want = sharding.shard_shape(shape)
    first = on[devs[0]]
    dt = np.dtype(dtype) if dtype is not None else first.dtype
    bufs = []
    for d in devs:
        a = on[d]
        if a.shape != want or a.dtype != dt:
            raise ValueError(f"{op}: the array on {d} is {a.dtype}{list(a.shape)}; the "
                             f"sharding's block of {list(shape)} is {dt}{list(want)}{where()}")
        bufs.append(a.buffer_on(d))
    return Array(tuple(bufs), TensorType(shape, dt), first.weak, devs, sharding=sharding,
                 committed=True)


def make_array_from_process_local_data(sharding: Any, local_data: Any,
                                       global_shape: Any = None) -> Array:
    """The array laid out by ``sharding`` from this process's data, as JAX's: along each
    dimension, ``local_data`` holds the distinct blocks of this process's devices one
    after the other, in the global order (the whole array in one process).
    ``global_shape`` defaults to the shape in which this process holds, along each
    dimension, that many of the blocks all the devices hold."""
    op = "make_array_from_process_local_data"
    local = np.asarray(local_data)
    if not isinstance(sharding, NamedSharding):     # one device (or the clear error)
        _, sharding = _layout(op, local.shape if global_shape is None else global_shape,
                              sharding)
    if local.ndim < len(sharding.spec):
        _layout(op, local.shape, sharding)          # the clear error
    devs = sharding._addressable_assignment
    if not devs:
        raise ValueError(f"{op}: none of the sharding's devices is this process's (process "
                         f"{pjrt.process_index()}){where()}")
    if global_shape is None:
        global_shape = _global_shape(sharding, local.shape, devs, op)
    shape, sharding = _layout(op, global_shape, sharding)
    if len(shape) != local.ndim:
        raise ValueError(f"{op}: global_shape {shape} has {len(shape)} dimensions, the data "
                         f"{local.ndim}{where()}")
    index = sharding.devices_indices_map(shape)
    block = sharding.shard_shape(shape)
    # per dimension, the starts of this process's blocks, in order: block k of them is
    # at k * block in the local data
    starts = [sorted({index[d][k].indices(n)[0] for d in devs}) for k, n in enumerate(shape)]
    held = tuple(len(s) * b for s, b in zip(starts, block, strict=True))
    if local.shape != held:
        raise ValueError(f"{op}: this process's devices hold "
                         f"{' x '.join(str(len(s)) for s in starts)} blocks of shape {block} "
                         f"of the global shape {shape}, {held} in all, but the local data "
                         f"has shape {local.shape}{where()}")
    t, weak = type_of(local)
    bufs = []
    for d in devs:
        nth = [starts[k].index(s.indices(n)[0]) for k, (s, n) in enumerate(zip(
            index[d], shape, strict=True))]
        at = tuple(slice(j * b, (j + 1) * b) for j, b in zip(nth, block, strict=True))
        bufs.append(pjrt.put(np.ascontiguousarray(local[at]), d))
    return Array(tuple(bufs), TensorType(shape, t.dtype), weak, devs, sharding=sharding,
                 committed=True)


def _global_shape(sharding: NamedSharding, local: tuple[int, ...], devs: tuple[Any, ...],
                  op: str) -> tuple[int, ...]:
    """The global shape of which ``devs`` hold ``local``'s blocks."""
    counts = [math.prod(sharding.mesh.shape[a] for a in sharding.spec.axes_of(k))
              for k in range(len(local))]
    index = sharding.devices_indices_map(tuple(counts))      # one element per block
    shape = []
    for k, (n, c) in enumerate(zip(local, counts, strict=True)):
        held = len({index[d][k].indices(c)[0] for d in devs})
        if n % held:
            raise ValueError(f"{op}: dimension {k} of the local data has size {n}, which "
                             f"does not split into the {held} blocks this process's devices "
                             f"hold along it; pass global_shape{where()}")
        shape.append(n // held * c)
    return tuple(shape)
