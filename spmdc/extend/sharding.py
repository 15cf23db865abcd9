"""``jax.extend.sharding``: XLA's sharding protos as libraries store them: an
``OpSharding`` parsed from its serialized bytes, the ``HloSharding`` of such bytes, and
the bytes of an ``HloSharding`` (jaxlib's ``xla_client`` classes, through the runtime's
door to jaxlib, runtime/pjrt/); and ``GSPMDSharding``, a placement given by an
``HloSharding`` over a list of devices.

Note [GSPMDSharding as a NamedSharding]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
spmdc places arrays by a NamedSharding over a Mesh. An HloSharding that tiles an
array's dimensions (or replicates it) is one: its tile assignment, the devices' indices
into the device list laid out as a grid of one axis per tiled dimension (and a last axis
of copies when it replicates there), is a mesh with axes ``_axis_0``, ``_axis_1`` ...,
and the spec names the tiled ones, one per dimension; JAX converts such a GSPMDSharding
to a NamedSharding the same way. So ``GSPMDSharding`` is a NamedSharding over that mesh,
and ``device_put``, ``devices_indices_map`` and the launches take it as they take any;
its equality, hash and repr are JAX's, by the HloSharding and the devices. An
HloSharding that places the whole array on one device or leaves it to manual code is not
a tiling, and is refused.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..runtime import pjrt
from ..runtime.sharding import Mesh, NamedSharding, PartitionSpec

__all__ = ["get_op_sharding_from_serialized_proto", "get_hlo_sharding_from_serialized_proto",
           "get_serialized_proto_from_hlo_sharding", "GSPMDSharding"]


def _mesh_and_spec(devices: tuple[Any, ...], hlo: Any) -> tuple[Mesh, PartitionSpec]:
    """The mesh and spec of ``hlo`` over ``devices`` (See Note [GSPMDSharding as a
    NamedSharding])."""
    if hlo.is_replicated():
        return Mesh(np.array(devices, dtype=object), ("_axis_0",)), PartitionSpec()
    if not hlo.is_tiled() or hlo.subgroup_types() or hlo.is_manual():
        raise ValueError(f"GSPMDSharding: {hlo} does not tile the array's dimensions over "
                         "the devices (it is maximal, manual or unreduced); spmdc places "
                         "arrays by tiles or copies only")
    dims = list(hlo.tile_assignment_dimensions())
    ids = list(hlo.tile_assignment_devices())
    if sorted(ids) != list(range(len(devices))):
        raise ValueError(f"GSPMDSharding: {hlo} assigns tiles to {len(ids)} devices, but "
                         f"{len(devices)} devices were given")
    grid = np.empty(len(ids), dtype=object)
    grid[:] = [devices[i] for i in ids]
    names = tuple(f"_axis_{k}" for k in range(len(dims)))
    tiled = len(dims) - (1 if hlo.replicate_on_last_tile_dim() else 0)
    return Mesh(grid.reshape(dims), names), PartitionSpec(*names[:tiled])


class GSPMDSharding(NamedSharding):
    """The placement ``op_sharding`` (an ``xla_client.HloSharding`` or ``OpSharding``)
    gives an array over ``devices``: See Note [GSPMDSharding as a NamedSharding]."""

    def __init__(self, devices: Sequence[Any], op_sharding: Any, *,
                 memory_kind: str | None = None):
        devs = tuple(devices)
        if isinstance(op_sharding, pjrt.OpSharding):
            op_sharding = pjrt.HloSharding.from_proto(op_sharding)
        if not isinstance(op_sharding, pjrt.HloSharding):
            raise TypeError(f"GSPMDSharding: op_sharding must be an xla_client.HloSharding "
                            f"or OpSharding, got {type(op_sharding).__name__}")
        hlo = pjrt.HloSharding.v3_to_v2_sharding(op_sharding)
        mesh, spec = _mesh_and_spec(devs, hlo)
        super().__init__(mesh, spec, memory_kind=memory_kind)
        self._devices, self._hlo_sharding = devs, hlo

    @classmethod
    def get_replicated(cls, device_assignment: Sequence[Any], *,
                       memory_kind: str | None = None) -> GSPMDSharding:
        """The whole array on every device of ``device_assignment``."""
        return cls(tuple(device_assignment), pjrt.HloSharding.replicate(),
                   memory_kind=memory_kind)

    def _hlo_key(self) -> Any:
        return "replicated" if self.is_fully_replicated else self._hlo_sharding

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GSPMDSharding):
            return False
        return self._devices == other._devices and (
            self._hlo_key() == other._hlo_key() if self.is_fully_replicated or
            other.is_fully_replicated else self._hlo_sharding == other._hlo_sharding)

    def __hash__(self) -> int:
        return hash((self._devices, self._hlo_key()))

    def __repr__(self) -> str:
        return f"GSPMDSharding({self._hlo_sharding!r}, memory_kind={self.memory_kind})"

    @property
    def num_devices(self) -> int:
        return len(self._devices)

    def with_memory_kind(self, kind: str) -> GSPMDSharding:
        return GSPMDSharding(self._devices, self._hlo_sharding, memory_kind=kind)

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> Any:
        return self._hlo_sharding

    def check_compatible_aval(self, aval_shape: Sequence[int]) -> None:
        """A ValueError unless an array of shape ``aval_shape`` has a dimension for
        every tiled one."""
        if len(aval_shape) < len(self.spec):
            raise ValueError(f"Sharding {self} is only valid for values of rank at least "
                             f"{len(self.spec)}, but was applied to a value of rank "
                             f"{len(aval_shape)}")


def _bytes(sharding: Any, name: str) -> bytes:
    if not isinstance(sharding, (bytes, bytearray)):
        raise TypeError(f"{name}: expected the serialized OpSharding proto (bytes), got "
                        f"{type(sharding).__name__}")
    return bytes(sharding)


def get_op_sharding_from_serialized_proto(sharding: bytes) -> Any:
    """The ``xla_client.OpSharding`` serialized as ``sharding``."""
    return pjrt.op_sharding_from_proto(_bytes(sharding, "get_op_sharding_from_serialized_proto"))


def get_hlo_sharding_from_serialized_proto(sharding: bytes) -> Any:
    """The ``xla_client.HloSharding`` of the OpSharding proto serialized as ``sharding``."""
    return pjrt.hlo_sharding_from_proto(
        _bytes(sharding, "get_hlo_sharding_from_serialized_proto"))


def get_serialized_proto_from_hlo_sharding(sharding: Any) -> bytes:
    """The serialized OpSharding proto of the ``xla_client.HloSharding`` ``sharding``."""
    return pjrt.hlo_sharding_to_proto(sharding)
