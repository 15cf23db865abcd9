"""``jax.ref``: mutable array references (``new_ref``, ``Ref``, ``freeze``, ``empty_ref``,
``free_ref``) and the functions reading and writing them at an index (``get``, ``set``,
``swap``, ``addupdate``), all spmdc/core/refs.py's (Note [refs as threaded state] there)."""
from __future__ import annotations

from .core.refs import (
    AbstractRef,
    Ref,
    addupdate,
    empty_ref,
    free_ref,
    freeze,
    get,
    new_ref,
    swap,
)
from .core.refs import set_ as set  # noqa: A001  (JAX's name)

__all__ = ["AbstractRef", "Ref", "addupdate", "free_ref", "freeze", "get", "new_ref",
           "empty_ref", "set", "swap"]
