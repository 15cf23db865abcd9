"""The one door to jaxlib's PJRT client: devices, compiling, placing data, executing.

Everything spmdc needs from jaxlib's half-private runtime surface is in this module (see
../shared/notes/pjrt.md), so a jaxlib upgrade touches this file alone. jaxlib's array
type expects two duck-typed helpers that normally come from the jax package: an *aval*
(shape, dtype, weak_type, ndim) and a single-device *sharding*; they are defined here.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc

# jaxlib's disassemble_into_single_device_arrays tries to import jax._src.sharding_impls
# once per output shard. Without jax installed, each failed import walks sys.path (tens
# of microseconds, most of a pmap launch's Python overhead); a None entry in sys.modules
# makes the same ModuleNotFoundError immediate.
if importlib.util.find_spec("jax") is None:
    sys.modules.setdefault("jax._src.sharding_impls", None)

__all__ = ["client", "devices", "compile", "put", "execute", "execute_one", "to_numpy", "Device",
           "Buffer", "optimized_hlo", "cost_analysis", "device_count_env", "is_ready"]

Device = Any          # a jaxlib device (CpuDevice(id=0) ...)
Buffer = Any          # a jaxlib single-device array
Executable = Any      # a jaxlib LoadedExecutable


def device_count_env() -> int:
    """How many virtual CPU devices to create (``SPMDC_CPU_DEVICES``, default 8)."""
    raw = os.environ.get("SPMDC_CPU_DEVICES", "8")
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"SPMDC_CPU_DEVICES must be a positive integer, got {raw!r}") from None
    if n < 1:
        raise ValueError(f"SPMDC_CPU_DEVICES must be a positive integer, got {n}")
    return n


@functools.cache
def client() -> Any:
    return xc.make_cpu_client(num_devices=device_count_env())


@functools.cache
def devices() -> tuple[Device, ...]:
    return tuple(client().devices())


class _Aval:
    """What jaxlib's array type asks of an abstract value."""
    __slots__ = ("shape", "dtype", "weak_type", "ndim")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype):
        self.shape, self.dtype, self.weak_type, self.ndim = shape, dtype, False, len(shape)


@functools.lru_cache(maxsize=4096)
def _aval(shape: tuple[int, ...], dtype: np.dtype) -> _Aval:
    return _Aval(shape, dtype)


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


@functools.cache
def _sharding(device: Device) -> _OneDevice:
    return _OneDevice(device)


@functools.cache
def _group_sharding(devs: tuple[Device, ...]) -> Any:
    return _jax.GSPMDSharding(list(devs), xc.HloSharding.replicate())


def put(value: np.ndarray, device: Device) -> Buffer:
    """Copy a host array to ``device``."""
    value = np.ascontiguousarray(value)
    return xc.batched_device_put(_aval(value.shape, value.dtype), _sharding(device),
                                 [value], [device], enable_x64=True)


def to_numpy(buffer: Buffer) -> np.ndarray:
    return np.asarray(buffer)


def is_ready(buffer: Buffer) -> bool:
    return buffer.is_ready()


def compile(module_text: str, devs: Sequence[Device]) -> Executable:
    """Compile a StableHLO module for ``len(devs)`` replicas, replica k on ``devs[k]``."""
    n = len(devs)
    options = xc.CompileOptions()
    build = options.executable_build_options
    build.num_replicas = n
    build.num_partitions = 1
    build.device_assignment = xc.DeviceAssignment.create(
        np.array([[d.id] for d in devs], dtype=np.int64))
    return client().compile_and_load(module_text, _jax.DeviceList(tuple(devs)), options)


def execute(exe: Executable, args: Sequence[Sequence[Buffer]],
            devs: tuple[Device, ...],
            in_types: Sequence[tuple[tuple[int, ...], np.dtype]] = ()) -> list[list[Buffer]]:
    """Run ``exe``; ``args[i][r]`` is argument i on replica r, of (shape, dtype)
    ``in_types[i]`` (needed with several replicas). Returns ``outs[k][r]``."""
    if len(devs) == 1:
        packed = [a[0] for a in args]
    else:
        sharding = _group_sharding(devs)
        packed = [_jax.ArrayImpl(_aval(*t), sharding, list(a), True, True)
                  for a, t in zip(args, in_types, strict=True)]
    return exe.execute_sharded(packed).disassemble_into_single_device_arrays()


def execute_one(exe: Executable, args: list[Buffer]) -> list[Buffer]:
    """Run a single-replica ``exe`` on one buffer per argument; one buffer per output."""
    return [outs[0] for outs in
            exe.execute_sharded(args).disassemble_into_single_device_arrays()]


def optimized_hlo(exe: Executable) -> str:
    return "\n\n".join(m.to_string() for m in exe.hlo_modules())


def cost_analysis(exe: Executable) -> dict[str, float]:
    return dict(exe.cost_analysis())
