"""Mesh axes: ``AxisType`` (how an axis is used), the questions every mesh answers about
its axis types (``are_all_axes_explicit`` ...), and ``AbstractMesh``, a mesh's axis names,
sizes and types without its devices (JAX's ``jax.sharding.AbstractMesh``).

An AbstractMesh is what a type knows of a mesh: ``NamedSharding(abstract_mesh, spec)`` is
the sharding of an abstract value (Note [the sharding of an abstract value] in
core/abstract.py). It answers every question that needs axis sizes only (``shape``,
``shard_shape``); it has no devices."""
from __future__ import annotations

import enum
from collections.abc import Sequence

import numpy as np

__all__ = ["AxisType", "AxisTypeQueries", "AbstractMesh"]


class AxisType(enum.Enum):
    """How a mesh axis is used (JAX's ``AxisType``). spmdc records it and shows it; it does
    not change any value a program computes (spmdc has no sharding in types: results of
    operations on sharded arrays may be laid out differently than JAX lays them out)."""
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
    axis_types: tuple[AxisType, ...]

    def _all_axes_are(self, kind: AxisType) -> bool:
        return bool(self.axis_types) and all(t == kind for t in self.axis_types)

    @property
    def are_all_axes_explicit(self) -> bool:
        return self._all_axes_are(AxisType.Explicit)

    @property
    def are_all_axes_auto(self) -> bool:
        return self._all_axes_are(AxisType.Auto)

    @property
    def are_all_axes_manual(self) -> bool:
        return self._all_axes_are(AxisType.Manual)


class AbstractMesh(AxisTypeQueries):
    """A mesh's axis names, sizes and types without its devices (what code traced
    under a mesh may ask of it). ``AbstractMesh((), ())`` is the empty mesh."""

    def __init__(self, axis_sizes: Sequence[int], axis_names: Sequence[str],
                 axis_types: Sequence[AxisType] | AxisType | None = None):
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
                and self.axis_types == other.axis_types)

    def __hash__(self) -> int:
        return hash((self.axis_sizes, self.axis_names, self.axis_types))

    def __repr__(self) -> str:
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple) or "()"
        return f"AbstractMesh({axes}, axis_types={self.axis_types!r})"
