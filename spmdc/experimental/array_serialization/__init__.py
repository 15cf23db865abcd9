"""``jax.experimental.array_serialization``: saving and restoring sharded arrays with
TensorStore (``serialization``, ``tensorstore_impl``). TensorStore is imported when
first used, never by importing these modules."""
from __future__ import annotations

from . import serialization, tensorstore_impl

__all__ = ["serialization", "tensorstore_impl"]
