"""spmdc.flatten_util: ``ravel_pytree`` (``jax.flatten_util``), which Optax's projections
and NumPyro's samplers use to see a pytree of parameters as one vector.

The vector's dtype is the promotion of the leaves' dtypes (float32 for a tree with no
leaves, by JAX's convention); the returned ``unravel`` splits a vector of that length
back into the tree, each leaf converted back to its own dtype. ``unravel`` compares and
hashes by what it does (the treedef, shapes and dtypes), so it may be a static argument
of ``jit`` as JAX's ``HashablePartial`` may.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import lax
from . import numpy as jnp
from .core import dtypes as _dtypes
from .core.tree import PyTreeDef, tree_flatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``(vector, unravel)``: the leaves of ``pytree`` raveled and concatenated into one
    1-D array, and the function that turns such a vector back into the tree."""
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return jnp.zeros((0,), np.float32), _Unravel(treedef, (), (), (), None)
    from_dtypes = tuple(_dtypes.dtype_and_weak(x)[0] for x in leaves)
    to_dtype = _dtypes.result_type(*from_dtypes)[0]
    sizes = tuple(int(np.size(x)) for x in leaves)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    if all(d == to_dtype for d in from_dtypes):
        # one dtype: unravel keeps whatever dtype it is given (JAX's issue 7809)
        flat = jnp.concatenate([lax.reshape(x, (np.size(x),)) for x in leaves])
        return flat, _Unravel(treedef, sizes, shapes, None, None)
    flat = jnp.concatenate([lax.reshape(lax.convert_element_type(x, to_dtype), (size,))
                            for x, size in zip(leaves, sizes, strict=True)])
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)


class _Unravel:
    """A vector back into the tree ``treedef`` with leaves of ``shapes`` (converted back
    to ``from_dtypes``, from ``to_dtype``, when the leaves had several dtypes)."""

    def __init__(self, treedef: PyTreeDef, sizes: tuple[int, ...],
                 shapes: tuple[tuple[int, ...], ...], from_dtypes: tuple[Any, ...] | None,
                 to_dtype: Any):
        self.treedef, self.sizes, self.shapes = treedef, sizes, shapes
        self.from_dtypes, self.to_dtype = from_dtypes, to_dtype

    def _key(self) -> tuple[Any, ...]:
        return (self.treedef, self.sizes, self.shapes, self.from_dtypes, self.to_dtype)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unravel) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __call__(self, flat: Any) -> Any:
        if not self.sizes:
            return self.treedef.unflatten([])
        flat = jnp.asarray(flat)
        if np.shape(flat) != (sum(self.sizes),):
            raise ValueError(f"unravel expects a vector of shape ({sum(self.sizes)},), got "
                             f"one of shape {np.shape(flat)}")
        if self.to_dtype is not None and flat.dtype != self.to_dtype:
            raise TypeError(f"unravel function given array of dtype {flat.dtype}, but "
                            f"expected dtype {self.to_dtype}")
        chunks = jnp.split(flat, np.cumsum(self.sizes)[:-1].tolist())
        leaves = [jnp.reshape(c, s) for c, s in zip(chunks, self.shapes, strict=True)]
        if self.from_dtypes is not None:
            leaves = [lax.convert_element_type(x, d)
                      for x, d in zip(leaves, self.from_dtypes, strict=True)]
        return self.treedef.unflatten(leaves)
