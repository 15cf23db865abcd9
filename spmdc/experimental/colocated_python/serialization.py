"""``jax.experimental.colocated_python.serialization``: pickling callables and specs with
their devices named by id (``_serialize`` / ``_deserialize``), as JAX ships them to a
colocated Python executor.

spmdc runs the function in this process (Note [colocated Python in this process] in
func.py), so calls never go through these; they are the helpers JAX defines under this
name, which a library may call or patch (Orbax reads ``_reduce_mesh`` and friends):
cloudpickle with a dispatch table that writes a ``Mesh``, ``NamedSharding``,
``DeviceList`` or ``SingleDeviceSharding`` as device ids and reads them back as this
host's CPU devices of those ids. A value met twice in one ``_serialize`` is written once
and read back as the same object. cloudpickle is imported when first needed
(``ModuleNotFoundError`` without it, as JAX's)."""
from __future__ import annotations

import functools
import io
import threading
from typing import Any

import numpy as np

from ...runtime import pjrt
from ...runtime.sharding import Mesh, NamedSharding, SingleDeviceSharding

DeviceList = pjrt.DeviceList

__all__ = ["DeviceList"]


def _cloudpickle() -> Any:
    try:
        import cloudpickle
    except ImportError:
        raise ModuleNotFoundError(
            'No module named "cloudpickle": colocated_python serialization needs it '
            "(pip install cloudpickle)", name="cloudpickle") from None
    return cloudpickle


class _SharedObjects(threading.local):
    """The values met so far in this thread's ``_serialize`` (value -> index) or
    ``_deserialize`` (index -> value); None outside one."""

    def __init__(self) -> None:
        self.index: dict[Any, int] | None = None
        self.seen: list[Any] | None = None


_shared = _SharedObjects()


def _rebuild_first(index: int, rebuild: Any, args: Any) -> Any:
    obj = rebuild(*args)     # first: it may rebuild values it holds (a sharding's mesh)
    assert _shared.seen is not None and len(_shared.seen) == index, \
        "values were read back in another order than they were written"
    _shared.seen.append(obj)
    return obj


def _rebuild_again(index: int) -> Any:
    assert _shared.seen is not None
    return _shared.seen[index]


def _written_once(reduce: Any) -> Any:
    """``reduce`` that writes an equal value met before as a reference to the first."""
    @functools.wraps(reduce)
    def once(obj: Any) -> tuple[Any, Any]:
        assert _shared.index is not None, "only inside _serialize"
        index = _shared.index.get(obj)
        if index is not None:
            return _rebuild_again, (index,)
        rebuild, args = reduce(obj)
        index = _shared.index[obj] = len(_shared.index)
        return _rebuild_first, (index, rebuild, args)
    return once


@functools.cache
def _get_cpu_device_map() -> dict[int, Any]:
    """This host's CPU devices by id (what a serialized device id is read back as)."""
    found: dict[int, Any] = {}
    for device in pjrt.client().devices():
        if device.device_kind == "cpu" or device.platform == "cpu":
            if device.id in found:
                raise ValueError(f"Multiple CPU devices with id {device.id} found: "
                                 f"{found[device.id]} and {device}")
            found[device.id] = device
    return found


def _lookup_cpu_device(cpu_device_map: dict[int, Any], device_id: int) -> Any:
    device = cpu_device_map.get(int(device_id))
    if device is None:
        raise ValueError(f"Invalid device ID {device_id}. Device list must contain only "
                         "CPU devices.")
    return device


@_written_once
def _reduce_mesh(mesh: Mesh) -> tuple[Any, Any]:
    ids = np.vectorize(lambda d: d.id, otypes=[int])(mesh.devices)
    return _unreduce_mesh, (ids, mesh.axis_names, mesh.axis_types)


def _unreduce_mesh(ids: np.ndarray, axis_names: Any, axis_types: Any) -> Mesh:
    devices = np.vectorize(functools.partial(_lookup_cpu_device, _get_cpu_device_map()),
                           otypes=[object])(ids)
    return Mesh(devices, axis_names, axis_types=axis_types)


@_written_once
def _reduce_named_sharding(sharding: NamedSharding) -> tuple[Any, Any]:
    return _unreduce_named_sharding, (_reduce_mesh(sharding.mesh), sharding.spec,
                                      sharding.memory_kind)


def _unreduce_named_sharding(reduced_mesh: Any, spec: Any, memory_kind: Any) -> Any:
    mesh = reduced_mesh[0](*reduced_mesh[1])
    return NamedSharding(mesh, spec, memory_kind=memory_kind)


@_written_once
def _reduce_device_list(device_list: Any) -> tuple[Any, Any]:
    return _unreduce_device_list, ([d.id for d in device_list],)


def _unreduce_device_list(ids: Any) -> Any:
    cpu = _get_cpu_device_map()
    return DeviceList(tuple(_lookup_cpu_device(cpu, i) for i in ids))


@_written_once
def _reduce_single_device_sharding(sharding: SingleDeviceSharding) -> tuple[Any, Any]:
    (device,) = sharding.device_set
    return _unreduce_single_device_sharding, (device.id, sharding.memory_kind)


def _unreduce_single_device_sharding(device_id: int, memory_kind: Any) -> Any:
    device = _lookup_cpu_device(_get_cpu_device_map(), device_id)
    return SingleDeviceSharding(device, memory_kind=memory_kind)


def _serialize(obj: Any) -> bytes:
    """``obj`` (a callable, specs, shardings, any picklable tree) as bytes, its devices
    written as ids. Not for storage: cloudpickle keeps no format across versions."""
    cloudpickle = _cloudpickle()
    table = dict(cloudpickle.CloudPickler.dispatch_table)
    table.update({Mesh: _reduce_mesh, NamedSharding: _reduce_named_sharding,
                  DeviceList: _reduce_device_list,
                  SingleDeviceSharding: _reduce_single_device_sharding})

    class _Pickler(cloudpickle.Pickler):
        dispatch_table = table

    assert _shared.index is None, "_serialize() expects no recursive calls"
    _shared.index = {}
    try:
        with io.BytesIO() as out:
            _Pickler(out).dump(obj)
            return out.getvalue()
    finally:
        _shared.index = None


def _deserialize(data: bytes) -> Any:
    """What ``_serialize`` wrote, its devices this host's CPU devices of those ids."""
    cloudpickle = _cloudpickle()
    assert _shared.seen is None, "_deserialize() expects no recursive calls"
    _shared.seen = []
    try:
        return cloudpickle.loads(data)
    finally:
        _shared.seen = None
