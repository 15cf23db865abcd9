"""``jax._src.state.types``: ``AbstractRef``, the abstract type of a mutable array reference
(Flax's nnx tests ``isinstance(jax.typeof(x), AbstractRef)``), which is spmdc's own
(spmdc/core/refs.py)."""
from __future__ import annotations

from typing import Any

from ...core.abstract import ShapedArray
from ...core.refs import AbstractRef

__all__ = ["AbstractRef", "shaped_array_ref"]


def shaped_array_ref(shape: tuple[int, ...], dtype: Any, weak_type: bool = False
                     ) -> AbstractRef:
    """The type of a ref holding a ``dtype`` array of ``shape``."""
    return AbstractRef(ShapedArray(shape, dtype, weak_type))
