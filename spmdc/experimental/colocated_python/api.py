"""``jax.experimental.colocated_python.api``: ``colocated_python``,
``colocated_python_class`` and ``colocated_cpu_devices`` (Note [colocated Python in this
process] in func.py)."""
from __future__ import annotations

import collections
import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from ...runtime import pjrt
from ...runtime.sharding import Mesh
from .func import make_callable
from .obj import wrap_class

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]


def colocated_cpu_devices(devices_or_mesh: Any) -> Any:
    """The CPU devices colocated with ``devices_or_mesh`` (a sequence of devices: a list
    of the same length, in order; a Mesh: a Mesh of the same shape, names and axis
    types). On spmdc's CPU client each input device gets the next unused CPU device of
    its process, in device order, as JAX's CPU client does (a CPU device need not map to
    itself). An accelerator client has no CPU devices beside it: ``ValueError``."""
    if isinstance(devices_or_mesh, Mesh):
        return _cpu_mesh(devices_or_mesh)
    return list(_cpu_devices(tuple(devices_or_mesh)))


@functools.lru_cache(maxsize=1024)
def _cpu_devices(devices: tuple[Any, ...]) -> tuple[Any, ...]:
    if not devices:
        raise ValueError("colocated_cpu_devices needs at least one device, got none")
    cpu = [d for d in pjrt.client().devices() if d.platform == "cpu"]
    if not cpu:
        raise ValueError(
            f"No CPU devices found colocated with {devices[0]}: spmdc's {pjrt.platform_name()} "
            "client has no CPU devices beside its accelerators; colocated_python runs on a "
            "CPU client (JAX_PLATFORMS=cpu)")
    free: dict[int, list[Any]] = collections.defaultdict(list)
    for d in reversed(cpu):
        free[d.process_index].append(d)
    out = []
    for d in devices:
        if not free[d.process_index]:
            raise ValueError(f"Process {d.process_index} does not have enough local CPU "
                             "devices")
        out.append(free[d.process_index].pop())
    return tuple(out)


@functools.lru_cache(maxsize=1024)
def _cpu_mesh(mesh: Mesh) -> Mesh:
    flat = _cpu_devices(tuple(mesh.devices.flat))
    grid = np.empty(len(flat), dtype=object)
    grid[:] = flat
    return Mesh(grid.reshape(mesh.devices.shape), mesh.axis_names,
                axis_types=mesh.axis_types)


def _sourceinfo(fun: Any) -> str | None:
    code = getattr(fun, "__code__", None)
    if code is None:
        return None
    return f"{getattr(fun, '__name__', '<unknown>')} at {code.co_filename}:{code.co_firstlineno}"


def _signature(fun: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def colocated_python(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun`` as a colocated Python callable: called on ``jax.Array`` arguments, it runs
    on the CPU devices colocated with theirs (here, in this process), and has
    ``specialize(in_specs=, out_specs_fn=, devices=)``."""
    return make_callable(fun, _sourceinfo(fun), _signature(fun))


def colocated_python_class(cls: type) -> type:
    """A wrapper class whose instances make ``cls``'s object on the first method call and
    run its methods as colocated Python callables."""
    return wrap_class(cls, _sourceinfo(cls.__init__))
