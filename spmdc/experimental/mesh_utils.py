"""``jax.experimental.mesh_utils``: arrays of devices shaped for a Mesh.

spmdc's devices are one process's CPU devices, which have no physical topology to
follow, so the device order is simply spmdc.devices()'s; the options that tune the order
for accelerator topologies are checked and change nothing.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import devices as _devices

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def _grid(shape: Sequence[int], devices: Sequence[Any] | None, op: str) -> np.ndarray:
    shape = tuple(int(n) for n in shape)
    pool = list(_devices.devices()) if devices is None else list(devices)
    needed = math.prod(shape)
    if devices is not None and len(pool) != needed or needed > len(pool):
        raise ValueError(f"{op}: a mesh of shape {shape} needs {needed} devices, got "
                         f"{len(pool)}")
    grid = np.empty(needed, dtype=object)
    grid[:] = pool[:needed]
    return grid.reshape(shape)


def _flags(op: str, **flags: Any) -> None:
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{op}: {name} must be True or False, got {value!r}")


def create_device_mesh(mesh_shape: Sequence[int], devices: Sequence[Any] | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> np.ndarray:
    """The devices (all of spmdc's, or ``devices``) as an array of ``mesh_shape``."""
    _flags("create_device_mesh", contiguous_submeshes=contiguous_submeshes,
           allow_split_physical_axes=allow_split_physical_axes)
    return _grid(mesh_shape, devices, "create_device_mesh")


def create_hybrid_device_mesh(mesh_shape: Sequence[int], dcn_mesh_shape: Sequence[int],
                              devices: Sequence[Any] | None = None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False) -> np.ndarray:
    """A mesh over several slices or processes: each axis is ``dcn_mesh_shape[i]``
    groups of ``mesh_shape[i]`` devices; with one process, the devices in order."""
    _flags("create_hybrid_device_mesh", process_is_granule=process_is_granule,
           should_sort_granules_by_key=should_sort_granules_by_key,
           allow_split_physical_axes=allow_split_physical_axes)
    if len(mesh_shape) != len(dcn_mesh_shape):
        raise ValueError(f"create_hybrid_device_mesh: mesh_shape {tuple(mesh_shape)} and "
                         f"dcn_mesh_shape {tuple(dcn_mesh_shape)} differ in length")
    shape = [a * b for a, b in zip(mesh_shape, dcn_mesh_shape, strict=True)]
    return _grid(shape, devices, "create_hybrid_device_mesh")
