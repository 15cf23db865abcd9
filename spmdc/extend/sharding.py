"""``jax.extend.sharding``: XLA's sharding protos as libraries store them: an
``OpSharding`` parsed from its serialized bytes, the ``HloSharding`` of such bytes, and
the bytes of an ``HloSharding`` (jaxlib's ``xla_client`` classes, through the runtime's
door to jaxlib, runtime/pjrt/)."""
from __future__ import annotations

from typing import Any

from ..runtime import pjrt

__all__ = ["get_op_sharding_from_serialized_proto", "get_hlo_sharding_from_serialized_proto",
           "get_serialized_proto_from_hlo_sharding"]


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
