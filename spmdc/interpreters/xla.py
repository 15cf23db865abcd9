"""``jax.interpreters.xla``: ``canonicalize_dtype_handlers``, the table that makes the
values of a library's own class arrays (TFP's JAX substrate, and so distrax, registers
its ``Variable`` there at import). It is a view of spmdc's table of registered array
types (See Note [registered array types] in spmdc/core/dtypes.py). ``apply_primitive``
runs one primitive on values, compiled (what JAX's primitives do outside any
transformation; spmdc's eager primitives: Note [eager execution] in core/tracing.py),
and ``Backend`` is the class of jaxlib's client, which spmdc computes with."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..core import dtypes, tracing
from ..runtime import pjrt
from ..runtime.array import Array

__all__ = ["canonicalize_dtype_handlers", "apply_primitive", "Backend"]

Backend = pjrt.Client
"""jaxlib's client class (``isinstance(jax.extend.backend.get_backend(), Backend)``)."""


def apply_primitive(prim: Any, *args: Any, **params: Any) -> Any:
    """``prim`` applied to ``args`` with ``params``, compiled and run now as a
    one-equation program (a library's ``def_impl(partial(apply_primitive, prim))``
    runs its primitive through its lowering). Under a transformation, the equation is
    emitted into it, as JAX's compiled call would be."""
    if not isinstance(prim, tracing.Primitive):
        raise TypeError(f"apply_primitive: expected a primitive, got {type(prim).__name__}")
    return tracing.bind(prim, *args, **params)

# The types whose values spmdc takes as arrays without a registered handler.
_NATIVE = (np.ndarray, np.generic, bool, int, float, complex, Array)


def _canonicalize_native(value: Any) -> Any:
    """A NumPy array at its canonical dtype for any array-like ``value`` (the handler
    JAX's table gives for its own types; a registered class's values convert through
    ``np.asarray``)."""
    if isinstance(value, (np.ndarray, np.generic)) or not isinstance(
            value, (bool, int, float, complex, Array)):
        return dtypes.canonicalize_value(np.asarray(value))
    return value                         # Python scalars (weak) and Arrays are canonical


class _ValueHandlers:
    """``canonicalize_dtype_handlers``: ``table[cls] = handler`` registers ``cls``
    (``dtypes.register_value_handler``); ``table[cls]`` is its handler, or for a type
    spmdc takes natively (NumPy arrays and scalars, Python scalars, Arrays) the function
    giving its canonical value, so ``table[Mine] = table[np.ndarray]`` makes ``Mine``'s
    values NumPy-like arrays."""

    def __setitem__(self, cls: type, handler: Callable[[Any], Any]) -> None:
        dtypes.register_value_handler(cls, handler)

    def __getitem__(self, cls: type) -> Callable[[Any], Any]:
        handler = dtypes._value_handlers.get(cls)
        if handler is not None:
            return handler
        if isinstance(cls, type) and issubclass(cls, _NATIVE):
            return _canonicalize_native
        raise KeyError(f"jax.interpreters.xla.canonicalize_dtype_handlers: {cls!r} has no "
                       "handler; register one with canonicalize_dtype_handlers[cls] = "
                       "handler, or take a native type's: canonicalize_dtype_handlers"
                       "[np.ndarray]")

    def __contains__(self, cls: object) -> bool:
        return cls in dtypes._value_handlers or (
            isinstance(cls, type) and issubclass(cls, _NATIVE))


canonicalize_dtype_handlers = _ValueHandlers()
