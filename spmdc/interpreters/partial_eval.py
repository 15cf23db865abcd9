"""``jax.interpreters.partial_eval``: ``PartialVal``, a value that is either known (a
constant) or unknown (only its abstract value), as function-transformation plumbing
passes them around (spmdc's own partial evaluation is passes/forward.py
``partial_eval``, on the IR)."""
from __future__ import annotations

from typing import Any

from ..core.abstract import AbstractValue, typeof

__all__ = ["PartialVal"]


class PartialVal(tuple):
    """``(aval, None)`` for an unknown value, ``(None, const)`` for a known one."""

    def __new__(cls, xs: tuple[Any, Any]) -> PartialVal:
        aval, const = xs
        if (aval is None) == (const is None):
            raise ValueError(f"PartialVal{tuple(xs)!r}: exactly one of the abstract value "
                             "and the constant is None")
        if aval is not None and not isinstance(aval, AbstractValue):
            raise TypeError(f"PartialVal: {aval!r} is not an abstract value")
        return tuple.__new__(cls, (aval, const))

    @classmethod
    def known(cls, const: Any) -> PartialVal:
        return cls((None, const))

    @classmethod
    def unknown(cls, aval: Any) -> PartialVal:
        return cls((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self) -> Any:
        """The constant if known, else None."""
        return self[1] if self[0] is None else None

    def get_aval(self) -> Any:
        """The abstract value (of the constant, when known)."""
        return typeof(self[1]) if self[0] is None else self[0]
