"""spmdc.sharding: meshes of devices, partition specs and shardings (JAX's jax.sharding).

    mesh = spmdc.make_mesh((2, 4), ('data', 'model'))
    x = spmdc.device_put(x, NamedSharding(mesh, P('data', None)))
    x.sharding, x.addressable_shards

The objects are defined in runtime/sharding.py; see its docstring for the layout rules.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from .core import devices as _devices
from .runtime import pjrt
from .runtime.mesh_axes import AbstractMesh
from .runtime.sharding import (
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    Shard,
    Sharding,
    SingleDeviceSharding,
    current_mesh,
    set_current_mesh,
)
from .transforms.partitioned import reshard

__all__ = ["AxisType", "AbstractMesh", "get_abstract_mesh", "Mesh", "NamedSharding",
           "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "Shard", "make_mesh", "set_mesh", "get_mesh", "use_mesh",
           "make_single_device_sharding", "reshard"]

P = PartitionSpec


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str],
              axis_types: Sequence[AxisType] | None = None, *,
              devices: Sequence[Any] | None = None) -> Mesh:
    """A mesh of ``prod(axis_shapes)`` devices (the first ones, or ``devices``) shaped
    ``axis_shapes``. As in JAX, the axes are ``AxisType.Explicit`` unless ``axis_types``
    says otherwise (spmdc records the type; see AxisType)."""
    shape = tuple(axis_shapes)
    if not all(isinstance(n, (int, np.integer)) and n > 0 for n in shape):
        raise ValueError(f"make_mesh: axis_shapes must be positive integers, got {shape}")
    if len(shape) != len(tuple(axis_names)):
        raise ValueError(f"make_mesh: {len(shape)} axis sizes {shape} but "
                         f"{len(tuple(axis_names))} axis names {tuple(axis_names)}")
    pool = list(_devices.devices()) if devices is None else list(devices)
    needed = int(np.prod(shape))
    if needed > len(pool):
        more = (f"create more virtual CPU devices with SPMDC_CPU_DEVICES={needed} (before "
                "spmdc is imported)" if pjrt.platform_wanted() == "cpu" else
                "run on a host with more devices")
        raise ValueError(f"make_mesh: a {' x '.join(map(str, shape))} mesh needs {needed} "
                         f"devices, but only {len(pool)} are available; {more} or make a "
                         "smaller mesh")
    if devices is not None and needed != len(pool):
        raise ValueError(f"make_mesh: devices= lists {len(pool)} devices, but the mesh "
                         f"{shape} has {needed}")
    types = (AxisType.Explicit,) * len(shape) if axis_types is None else axis_types
    grid = np.empty(needed, dtype=object)
    grid[:] = pool[:needed]
    return Mesh(grid.reshape(shape), tuple(axis_names), types)


def get_mesh() -> Mesh | None:
    """The mesh set by ``set_mesh`` / ``with mesh:`` in this thread, if any."""
    return current_mesh()


def get_abstract_mesh() -> AbstractMesh:
    """The current mesh (``set_mesh`` / ``with mesh:``) without its devices; the empty
    AbstractMesh when there is none."""
    mesh = current_mesh()
    if mesh is None:
        return AbstractMesh((), ())
    return AbstractMesh(mesh.axis_sizes, mesh.axis_names, mesh.axis_types)


class _MeshSetting(contextlib.AbstractContextManager):
    def __init__(self, prior: Mesh | None):
        self.prior = prior

    def __exit__(self, *exc: Any) -> None:
        set_current_mesh(self.prior)


def set_mesh(mesh: Mesh | None) -> _MeshSetting:
    """Make ``mesh`` the current mesh (for shard_map without ``mesh=`` and device_put with
    a PartitionSpec). Works as a call and as a context manager that restores the prior."""
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"set_mesh expects a Mesh (or None), got {type(mesh).__name__}")
    prior = current_mesh()
    set_current_mesh(mesh)
    return _MeshSetting(prior)


@contextlib.contextmanager
def use_mesh(mesh: Mesh) -> Iterator[Mesh]:
    """``with use_mesh(mesh):`` the mesh is current inside the block."""
    with set_mesh(mesh):
        yield mesh


def make_single_device_sharding(device: Any) -> SingleDeviceSharding:
    return SingleDeviceSharding(device)


# --- a text picture of a layout (spmdc.debug.visualize_array_sharding) ----------------------

def visualize_sharding(shape: Sequence[int], sharding: Sharding) -> None:
    """Print a grid of the blocks of a 1-d or 2-d array of ``shape`` laid out by
    ``sharding``, each cell naming the devices that hold that block."""
    print(_picture(shape, sharding))


def visualize_array_sharding(arr: Any) -> None:
    """``visualize_sharding(arr.shape, arr.sharding)``."""
    visualize_sharding(arr.shape, arr.sharding)


def _picture(shape: Sequence[int], sharding: Sharding) -> str:
    shape = tuple(shape)
    if len(shape) not in (1, 2):
        raise ValueError(f"visualize_sharding draws 1-d and 2-d arrays; got shape {shape}")
    full = shape if len(shape) == 2 else (1, *shape)
    index = sharding.devices_indices_map(shape)
    cells: dict[tuple[tuple[int, int], tuple[int, int]], list[Any]] = {}
    for dev, idx in index.items():
        idx2 = idx if len(shape) == 2 else (slice(None), *idx)
        key = tuple(s.indices(n)[:2] for s, n in zip(idx2, full, strict=True))
        cells.setdefault(key, []).append(dev)
    rows = sorted({k[0] for k in cells})
    cols = sorted({k[1] for k in cells})
    text = {k: f"{_platform(v[0])} {','.join(str(d.id) for d in sorted(v, key=lambda d: d.id))}"
            for k, v in cells.items()}
    width = max(len(t) for t in text.values()) + 2
    line = "+" + "+".join("-" * width for _ in cols) + "+"
    out = [line]
    for r in rows:
        out.append("|" + "|".join(text[(r, c)].center(width) for c in cols) + "|")
        out.append(line)
    return "\n".join(out)


def _platform(device: Any) -> str:
    return str(getattr(device, "platform", "cpu")).upper()
