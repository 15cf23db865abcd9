"""spmdc.typing: JAX's static type annotations (``jax.typing``): ``ArrayLike`` and
``DTypeLike``, the same unions as JAX 0.10.2's, over spmdc's ``Array``.

Both are ``typing.Union``s of runtime classes, so ``isinstance(x, ArrayLike)`` works as
in JAX (Optax and NumPyro annotate with them; JAX's docs test inputs with them).
"""
from __future__ import annotations

import typing
from typing import Any, Protocol, Union

import numpy as np

from .runtime.array import Array

__all__ = ["ArrayLike", "DTypeLike"]


@typing.runtime_checkable
class SupportsDType(Protocol):
    """Anything with a ``dtype`` attribute (``jnp.float32``, an array)."""

    @property
    def dtype(self, /) -> np.dtype: ...


ArrayLike = Union[                      # noqa: UP007  (a Union object, as JAX's)
    Array,              # spmdc's arrays
    np.ndarray,         # NumPy arrays
    np.bool_, np.number,    # NumPy scalars
    bool, int, float, complex,  # Python scalars
]
"""Type annotation for values that convert to an array implicitly."""

DTypeLike = Union[                      # noqa: UP007
    str,                # 'float32', 'int32'
    type[Any],          # np.float32, float
    np.dtype,           # np.dtype('float32')
    SupportsDType,      # jnp.float32
]
"""Type annotation for values that name a dtype."""
