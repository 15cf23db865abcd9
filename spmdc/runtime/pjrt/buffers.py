"""Device buffers: placing host values, copying them back, grouping one buffer per device
into one jaxlib array, and the result handlers that make launch outputs. jaxlib's array
type expects two duck-typed helpers that normally come from the jax package: an *aval*
(shape, dtype, weak_type, ndim) and a single-device *sharding*; they are defined here.
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc

from . import backend
from .backend import Device
from .distributed import explain, process_index
from .once import once

Buffer = Any          # a jaxlib single-device array


class Aval:
    """What jaxlib's array type asks of an abstract value."""
    __slots__ = ("shape", "dtype", "weak_type", "ndim")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype):
        self.shape, self.dtype, self.weak_type, self.ndim = shape, dtype, False, len(shape)


@functools.lru_cache(maxsize=4096)
def aval(shape: tuple[int, ...], dtype: np.dtype) -> Aval:
    return Aval(shape, dtype)


class _OneDevice(_jax.SingleDeviceSharding):
    """A single-device sharding with the extra properties jaxlib's array type reads."""

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return xc.HloSharding.replicate()

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    @property
    def memory_kind(self) -> Any:
        return self._memory_kind

    @property
    def device_set(self) -> set[Device]:
        return {self._device}

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def num_devices(self) -> int:
        return 1


@once
def one_device_sharding(device: Device) -> _OneDevice:
    return _OneDevice(device)


@once
def group_sharding(devs: tuple[Device, ...]) -> Any:
    return _jax.GSPMDSharding(list(devs), xc.HloSharding.replicate())


def put(value: np.ndarray, device: Device) -> Buffer:
    """Copy a host array to ``device``."""
    if backend.several_processes and device.process_index != process_index():
        # jaxlib would return an array without data (notes/distributed.md, pitfall 5)
        raise ValueError(
            f"{device} belongs to process {device.process_index}; this is process "
            f"{process_index()}, which can place data only on its own devices "
            "(spmdc.local_devices()). Across processes, pass each process's part to pmap, "
            "or lay an array out over a mesh of every process's devices with "
            "device_put(x, NamedSharding(mesh, spec)) or "
            "make_array_from_process_local_data: each process then places its own blocks")
    value = np.asarray(value, order="C")     # (ascontiguousarray would make a 0-d array 1-d)
    return xc.batched_device_put(aval(value.shape, value.dtype),
                                 one_device_sharding(device), [value], [device],
                                 enable_x64=True)


def to_numpy(buffer: Buffer) -> np.ndarray:
    # Not np.asarray(buffer): that goes through the buffer protocol, which has no
    # bfloat16 (nor the other ml_dtypes types) and gave an object array for them.
    # Waiting first turns a failed computation into its Python error: a replica of a
    # multi-device program that fails (e.g. RESOURCE_EXHAUSTED allocating its output)
    # leaves an error buffer, and copying one to the host aborts the process.
    try:
        buffer.block_until_ready()
    except Exception as e:
        explain(e)
        raise
    return buffer._single_device_array_to_np_array_did_copy()[0]


def is_ready(buffer: Buffer) -> bool:
    return buffer.is_ready()


def group_array(buffers: Sequence[Buffer], devs: tuple[Device, ...],
                shape: tuple[int, ...], dtype: np.dtype) -> Buffer:
    """One jaxlib array over ``devs`` whose shard r is ``buffers[r]`` (each of ``shape``):
    the form in which a replicated program takes an argument and returns a result."""
    return _jax.ArrayImpl(aval(shape, dtype), group_sharding(devs), list(buffers),
                          True, True)


def copy_to_host_async(buffer: Buffer) -> None:
    """Start the device-to-host copy of a single-device buffer."""
    buffer._copy_single_device_array_to_host_async()


def group_devices(group: Buffer) -> tuple[Device, ...]:
    return tuple(group._sharding._devices)


def shards(group: Buffer) -> list[Buffer]:
    """The per-replica buffers of a ``group_array``, in replica order."""
    return group._arrays


@functools.lru_cache(maxsize=4096)
def result_handler(shape: tuple[int, ...], dtype: np.dtype, devs: tuple[Device, ...]) -> Any:
    """What turns an output's per-device buffers (each of ``shape``) into a group_array."""
    return _array_result_handler(aval(shape, np.dtype(dtype)), group_sharding(devs))


@functools.lru_cache(maxsize=4096)
def one_device_handler(shape: tuple[int, ...], dtype: np.dtype, device: Device) -> Any:
    """What makes a single-device result buffer, with ``put``'s sharding."""
    return _array_result_handler(aval(shape, np.dtype(dtype)), one_device_sharding(device))


def _array_result_handler(of: Aval, sharding: Any) -> Any:
    # jaxlib 0.10 checks the sharding against the aval unless told not to; 0.11 has no
    # such check (nor the argument).
    try:
        return _jax.array_result_handler(of, sharding, committed=True, _skip_checks=True)
    except TypeError:
        return _jax.array_result_handler(of, sharding, committed=True)
