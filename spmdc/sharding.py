"""spmdc.sharding: meshes of devices, partition specs and shardings (JAX's jax.sharding).

    mesh = spmdc.make_mesh((2, 4), ('data', 'model'))
    x = spmdc.device_put(x, NamedSharding(mesh, P('data', None)))
    x.sharding, x.addressable_shards

The objects are defined in runtime/sharding.py; see its docstring for the layout rules.
"""
from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .core import devices as _devices
from .core.tree import tree_leaves
from .errors import where
from .runtime import pjrt
from .runtime.mesh_axes import (
    AbstractDevice,
    AbstractMesh,
    abstract_mesh_override,
    swap_abstract_mesh_override,
)
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

__all__ = ["AxisType", "AbstractDevice", "AbstractMesh", "get_abstract_mesh",
           "use_abstract_mesh", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "Shard", "make_mesh", "set_mesh", "get_mesh", "use_mesh",
           "make_single_device_sharding", "reshard", "auto_axes", "explicit_axes"]

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
    """The abstract mesh in context: the one ``use_abstract_mesh`` set, else the current
    mesh (``set_mesh`` / ``with mesh:``) without its devices; the empty AbstractMesh when
    there is none. See Note [the abstract mesh in context] in runtime/mesh_axes.py."""
    override = abstract_mesh_override()
    if override is not None:
        return override
    mesh = current_mesh()
    return AbstractMesh((), ()) if mesh is None else mesh.abstract_mesh


class use_abstract_mesh(contextlib.AbstractContextManager):
    """``with use_abstract_mesh(abstract_mesh):`` get_abstract_mesh answers
    ``abstract_mesh`` inside the block (the concrete mesh stays as it is). It may change
    the axis names and types of a mesh in context, not its size (ValueError, as JAX)."""

    def __init__(self, mesh: AbstractMesh):
        if not isinstance(mesh, AbstractMesh):
            raise ValueError("use_abstract_mesh: expected a jax.sharding.AbstractMesh, got "
                             f"{type(mesh).__name__}{where()}")
        self.mesh = mesh
        self._prior: list[AbstractMesh | None] = []

    def __enter__(self) -> use_abstract_mesh:
        prior = get_abstract_mesh()
        if not prior.empty and not self.mesh.empty and prior.size != self.mesh.size:
            raise ValueError(f"use_abstract_mesh cannot change the size of the mesh: got "
                             f"{self.mesh} (size {self.mesh.size}) in a context of {prior} "
                             f"(size {prior.size}){where()}")
        self._prior.append(swap_abstract_mesh_override(self.mesh))
        set_current_mesh(current_mesh())         # the dispatchers' key follows
        return self

    def __exit__(self, *exc: Any) -> None:
        swap_abstract_mesh_override(self._prior.pop())
        set_current_mesh(current_mesh())


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


def make_single_device_sharding(device: Any, *, memory_kind: str | None = None
                                 ) -> SingleDeviceSharding:
    return SingleDeviceSharding(device, memory_kind=memory_kind)


# --- switching axis types for a function (auto_axes, explicit_axes) -------------------------

# Note [auto and explicit axes]
# JAX's auto_axes(f, out_sharding=...) runs f with the named mesh axes (all, by default)
# made Auto: inside, the abstract mesh in context says so, and the partitioner, not the
# types, decides the layout over those axes; its results are then resharded to
# out_sharding. explicit_axes(f, in_sharding=...) is the converse: its arguments are
# resharded to in_sharding and f runs with the axes Explicit. Only the axes Explicit in
# the abstract mesh in context are in a value's type (Note [shardings in types] in
# core/explicit_sharding.py), so inside auto_axes the types leave those axes to the
# partitioner, and inside explicit_axes their sharding rules apply; the rest is as JAX:
# the abstract mesh f sees, the reshards at the boundary (the layout of auto_axes'
# results is out_sharding's), JAX's pass-through when there is no mesh or the axes
# already have the type asked for, and its errors. explicit_axes' results are left where
# the partitioner put them: JAX reshards them to their type's spec with the now-Auto
# axes dropped, which constrains nothing over those axes.

def _mesh_switch(axes: str | tuple[str, ...] | None, kind: AxisType, name: str,
                 shardings: Any = None) -> tuple[AbstractMesh, AbstractMesh,
                                                  tuple[str, ...]] | None:
    """(mesh in context, that mesh with ``axes`` of type ``kind``, the axes), or None
    when there is no mesh: the context's, or that of the NamedShardings in ``shardings``."""
    context = get_abstract_mesh()
    named = AbstractMesh((), ())
    for s in tree_leaves(shardings, is_leaf=lambda v: isinstance(v, PartitionSpec)):
        if isinstance(s, NamedSharding):
            if not named.empty and named != s.mesh.abstract_mesh:
                raise ValueError(f"{name}: the shardings passed should have the same mesh; "
                                 f"got {named} and {s.mesh}{where()}")
            named = s.mesh.abstract_mesh
    if named.empty and context.empty:
        return None
    if not named.empty and not context.empty and named != context:
        raise ValueError(f"{name}: the mesh in context {context} must match the mesh of "
                         f"the shardings {named}; use jax.set_mesh to enter one{where()}")
    mesh = context if not context.empty else named
    axes = mesh.axis_names if axes is None else axes
    axes = axes if isinstance(axes, tuple) else (axes,)
    unknown = [a for a in axes if a not in mesh.axis_names]
    if unknown:
        raise ValueError(f"{name}: axes {unknown} are not axes of {mesh}{where()}")
    types = dict(zip(mesh.axis_names, mesh.axis_types, strict=True))
    if any(types[a] == AxisType.Manual for a in axes):
        raise NotImplementedError(f"{name}: going from a Manual axis to an Auto or Explicit "
                                  f"one is not allowed (axes {axes} of {mesh}){where()}")
    return mesh, mesh.update_axis_types(dict.fromkeys(axes, kind)), axes


def _given_or_keyword(given: Any, name: str, kwargs: dict[str, Any]) -> Any:
    """The sharding given to the decorator, else the call's keyword ``name`` (taken out of
    ``kwargs``), as JAX requires one of the two."""
    if given is not None:
        return given
    if name not in kwargs:
        raise TypeError(f"Missing required keyword argument: '{name}'")
    return kwargs.pop(name)


def auto_axes(f: Callable[..., Any] | None = None, /, *,
              axes: str | tuple[str, ...] | None = None, out_sharding: Any = None) -> Any:
    """``f`` run with mesh axes ``axes`` (all by default) of type Auto, its results
    resharded to ``out_sharding`` (given here or as a keyword of each call). See Note
    [auto and explicit axes]."""
    if f is None:
        return functools.partial(auto_axes, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def run_with_auto_axes(*args: Any, **kwargs: Any) -> Any:
        target = _given_or_keyword(out_sharding, "out_sharding", kwargs)
        switch = _mesh_switch(axes, AxisType.Auto, "auto_axes", target)
        if switch is None or set(switch[0].auto_axes) == set(switch[2]):
            return f(*args, **kwargs)
        with use_abstract_mesh(switch[1]):
            out = f(*args, **kwargs)
        return reshard(out, target)
    return run_with_auto_axes


def explicit_axes(f: Callable[..., Any] | None = None, /, *,
                  axes: str | tuple[str, ...] | None = None, in_sharding: Any = None) -> Any:
    """``f`` run with mesh axes ``axes`` (all by default) of type Explicit, on its
    arguments resharded to ``in_sharding`` (given here or as a keyword of each call). It
    needs a mesh in context. See Note [auto and explicit axes]."""
    if f is None:
        return functools.partial(explicit_axes, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def run_with_explicit_axes(*args: Any, **kwargs: Any) -> Any:
        target = _given_or_keyword(in_sharding, "in_sharding", kwargs)
        switch = _mesh_switch(axes, AxisType.Explicit, "explicit_axes")
        if switch is None:
            raise ValueError("explicit_axes: the context mesh cannot be empty; enter a mesh "
                             f"with jax.set_mesh to use explicit_axes{where()}")
        with use_abstract_mesh(switch[1]):
            return f(*reshard(args, target), **kwargs)
    return run_with_explicit_axes


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
