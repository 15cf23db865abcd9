"""Mesh axes: ``AxisType`` (how an axis is used), the questions every mesh answers about
its axis types (``are_all_axes_explicit`` ...), and ``AbstractMesh``, a mesh's axis names,
sizes and types without its devices (JAX's ``jax.sharding.AbstractMesh``).

An AbstractMesh is what a type knows of a mesh: ``NamedSharding(abstract_mesh, spec)`` is
the sharding of an abstract value (Note [the sharding of an abstract value] in
core/abstract.py). It answers every question that needs axis sizes only (``shape``,
``shard_shape``); it has no devices."""
from __future__ import annotations

import dataclasses
import enum
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["AxisType", "AxisTypeQueries", "AbstractDevice", "AbstractMesh",
           "abstract_mesh_override", "swap_abstract_mesh_override"]


class AxisType(enum.Enum):
    """How a mesh axis is used (JAX's ``AxisType``). Over Explicit axes a value's type
    carries its sharding (Note [shardings in types] in core/explicit_sharding.py); over
    Auto axes the partitioner lays values out; it never changes a value computed."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


class AxisTypeQueries:
    """What a mesh (concrete or abstract) says of its ``axis_types``. As in JAX, a mesh
    with no axes answers False to every "all axes are ..." question (libraries test
    ``are_all_axes_explicit`` to choose their explicitly sharded code path, which an empty
    mesh must not take)."""
    axis_names: tuple[str, ...]
    axis_types: tuple[AxisType, ...]

    def _all_axes_are(self, kind: AxisType) -> bool:
        return bool(self.axis_types) and all(t == kind for t in self.axis_types)

    def _axes_of(self, kind: AxisType) -> tuple[str, ...]:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types, strict=True)
                     if t == kind)

    @property
    def auto_axes(self) -> tuple[str, ...]:
        """The names of the axes of type Auto, in mesh order."""
        return self._axes_of(AxisType.Auto)

    @property
    def explicit_axes(self) -> tuple[str, ...]:
        """The names of the axes of type Explicit, in mesh order."""
        return self._axes_of(AxisType.Explicit)

    @property
    def manual_axes(self) -> tuple[str, ...]:
        """The names of the axes of type Manual, in mesh order."""
        return self._axes_of(AxisType.Manual)

    @property
    def are_all_axes_explicit(self) -> bool:
        return self._all_axes_are(AxisType.Explicit)

    @property
    def are_all_axes_auto(self) -> bool:
        return self._all_axes_are(AxisType.Auto)

    @property
    def are_all_axes_manual(self) -> bool:
        return self._all_axes_are(AxisType.Manual)


@dataclasses.dataclass(frozen=True)
class AbstractDevice:
    """What an AbstractMesh knows of its devices (JAX's ``AbstractDevice``): their kind,
    core count (TPU and GPU; None elsewhere) and platform."""
    device_kind: str
    num_cores: int | None
    platform: str

    def __repr__(self) -> str:
        return f"AbstractDevice({self._repr()})"

    def _repr(self) -> str:
        return (f"device_kind={self.device_kind}, num_cores={self.num_cores}, "
                f"platform={self.platform}")


class AbstractMesh(AxisTypeQueries):
    """A mesh's axis names, sizes and types without its devices (what code traced
    under a mesh may ask of it). ``AbstractMesh((), ())`` is the empty mesh."""

    def __init__(self, axis_sizes: Sequence[int], axis_names: Sequence[str],
                 axis_types: Sequence[AxisType] | AxisType | None = None, *,
                 abstract_device: AbstractDevice | None = None):
        sizes, names = tuple(int(s) for s in axis_sizes), tuple(axis_names)
        if len(sizes) != len(names):
            raise ValueError(f"AbstractMesh: {len(sizes)} axis sizes {sizes} but "
                             f"{len(names)} axis names {names}")
        if axis_types is None:
            axis_types = (AxisType.Auto,) * len(names)
        elif isinstance(axis_types, AxisType):
            axis_types = (axis_types,) * len(names)
        self.axis_sizes = sizes
        self.axis_names = names
        self.axis_types = tuple(axis_types)
        if len(self.axis_types) != len(names) or not all(
                isinstance(t, AxisType) for t in self.axis_types):
            raise ValueError(f"AbstractMesh: axis_types must be one AxisType per axis name "
                             f"({len(names)}), got {axis_types!r}")
        if abstract_device is not None and not isinstance(abstract_device, AbstractDevice):
            raise TypeError(f"AbstractMesh: abstract_device must be an AbstractDevice, got "
                            f"{type(abstract_device).__name__}")
        self.abstract_device = abstract_device

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self

    def update(self, axis_sizes: Sequence[int] | None = None,
               axis_names: Sequence[str] | None = None,
               axis_types: Sequence[AxisType] | None = None, **kwargs: Any) -> AbstractMesh:
        """This mesh with the given fields replaced (the abstract device kept unless
        ``abstract_device=`` is given)."""
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types,
                            abstract_device=kwargs.pop("abstract_device",
                                                       self.abstract_device), **kwargs)

    def update_axis_types(self, name_to_type: dict[str, AxisType]) -> AbstractMesh:
        """This mesh with the named axes' types replaced."""
        unknown = [n for n in name_to_type if n not in self.axis_names]
        if unknown:
            raise ValueError(f"update_axis_types: {unknown} are not axes of {self}")
        return self.update(axis_types=tuple(name_to_type.get(n, t) for n, t in zip(
            self.axis_names, self.axis_types, strict=True)))

    @property
    def shape(self) -> dict[str, int]:
        return dict(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def size(self) -> int:
        return int(np.prod(self.axis_sizes, dtype=np.int64))

    @property
    def empty(self) -> bool:
        return not self.axis_names

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, AbstractMesh) and self.axis_sizes == other.axis_sizes
                and self.axis_names == other.axis_names
                and self.axis_types == other.axis_types
                and self.abstract_device == other.abstract_device)

    def __hash__(self) -> int:
        return hash((self.axis_sizes, self.axis_names, self.axis_types,
                     self.abstract_device))

    def __repr__(self) -> str:
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple) or "()"
        device = "" if self.abstract_device is None else f", {self.abstract_device._repr()}"
        return f"AbstractMesh({axes}, axis_types={self.axis_types!r}{device})"


# Note [the abstract mesh in context]
# JAX keeps two meshes per thread: the concrete one (set_mesh, ``with mesh:``) and an
# abstract one, which set_mesh sets to the concrete mesh's abstract mesh and which
# ``use_abstract_mesh`` (and auto_axes/explicit_axes, to change axis types) replace on
# their own. spmdc's concrete mesh is runtime/sharding.py's current mesh; this is the
# abstract one's replacement: None when nothing replaced it, so that get_abstract_mesh
# answers the concrete mesh's abstract mesh (or the empty one).
class _AbstractMeshOverride(threading.local):
    mesh: AbstractMesh | None = None


_override = _AbstractMeshOverride()


def abstract_mesh_override() -> AbstractMesh | None:
    """The abstract mesh set in this thread by use_abstract_mesh, if any. See Note [the
    abstract mesh in context]."""
    return _override.mesh


def swap_abstract_mesh_override(mesh: AbstractMesh | None) -> AbstractMesh | None:
    """Set this thread's abstract mesh (None: follow the concrete mesh); return the prior."""
    prior, _override.mesh = _override.mesh, mesh
    return prior
