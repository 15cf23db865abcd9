"""Values of mutable hi-types (``jax.experimental.hijax.MutableHiType``: Flax's hijax
``Variable``) crossing a transformation's boundary: when their flattening into lo values
is allowed, how it is refused otherwise, and how a caller's value takes the state its
traced copy ended with. See Note [mutable hi values through jit].

Note [mutable hi values through jit]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
JAX traces a mutable hi value passed to ``jit`` as one tracer whose type carries its
current state (``cur_qdd()``); the function may change that state (``v[...] = x``, a
new key in a dict held by the value), and after the call JAX writes the final state
back into the caller's object. spmdc's traced values are arrays (Note [hi-types as their
lo values] in spmdc/experimental/hitypes.py), so jit does the same through lo values:

- the transformations' flattening takes a mutable hi value ``v`` apart into
  ``ty.read_loval(qdd, v)`` with ``qdd = v.cur_qdd()`` and keeps ``(ty, qdd)`` as the
  node's auxiliary data (so the state is part of the jit cache key, as it is of JAX's
  types); rebuilding is ``ty.new_from_loval(qdd, *lo_values)``, a fresh value the
  traced function sees and may change;
- jit calls the function through a wrapper that also returns the rebuilt values of the
  mutable hi arguments, as they are when the function returns; after the call each
  caller's value takes that state: ``ty.update_from_loval(qdd, v, *lo_values)`` with
  the returned value's ``qdd`` and lo values (``write_back``).

``grad`` and ``value_and_grad`` do the same for mutable hi arguments they do not
differentiate, the returned values being an auxiliary output (differentiating with
respect to one is a TypeError). Only those write back, so only while they flatten
(``allowing_flatten``) is the flattening allowed, and while ``eval_shape`` does (it runs
nothing, so the caller's value keeps its state); any other transformation (vmap, scan,
...) would drop the function's changes, and flattening there raises
``MutableHiArgument`` (a TypeError) saying so. While the function runs, a transformation
inside it refuses them again (or, for jit and grad, writes back into its copy).
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ..errors import MutableHiArgument
from .abstract import aval_rules

__all__ = ["MutableHiArgument", "allowing_flatten", "flatten_allowed", "register_class",
           "is_mutable_hi", "any_registered", "write_back"]


_allowed = [0]          # > 0 while jit flattens its arguments and results
_classes: set[type] = set()


@contextlib.contextmanager
def allowing_flatten(allowed: bool) -> Iterator[None]:
    """Allow (or, inside the function jit runs, refuse again) the transformations'
    flattening of mutable hi values. See Note [mutable hi values through jit]."""
    saved = _allowed[0]
    _allowed[0] = saved + 1 if allowed else 0
    try:
        yield
    finally:
        _allowed[0] = saved


def flatten_allowed() -> bool:
    return _allowed[0] > 0


def register_class(cls: type) -> None:
    """``cls`` is registered with ``register_hitype``: its values may be mutable ones."""
    _classes.add(cls)


def any_registered() -> bool:
    """Whether any class of mutable hi values is registered (else none can be met)."""
    return bool(_classes)


def is_mutable_hi(x: Any) -> bool:
    """Whether ``x`` is a value of a registered class whose hi-type is mutable."""
    return type(x) in _classes and bool(getattr(aval_rules[type(x)](x), "has_qdd", False))


def write_back(caller: Any, returned: Any) -> None:
    """Give ``caller`` (a mutable hi value passed to jit) the state of ``returned`` (its
    traced copy as the function left it)."""
    ty = aval_rules[type(caller)](caller)
    qdd = returned.cur_qdd()
    ty.update_from_loval(qdd, caller, *ty.read_loval(qdd, returned))
