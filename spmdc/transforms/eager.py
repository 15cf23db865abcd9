"""Eager execution of single primitives: a primitive bound with no trace current runs at
once, through a cached jit of its one equation (Note [eager execution] in
core/tracing.py, which says why this module installs itself there)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core import tracing
from ..core.config import disable_jit_enabled, runtime_checks
from .jit import Jitted

__all__ = ["apply_primitive"]

_eager: dict[Any, Jitted] = {}


def apply_primitive(prim: Any, args: Sequence[Any], params: dict[str, Any],
                    weak: bool) -> Any:
    """Run one primitive on concrete values, through a cached one-equation jit."""
    try:
        key = (prim, tuple(params.items()), weak)
        fn = _eager.get(key)
    except TypeError:                       # unhashable params: no caching
        key, fn = None, None
    if fn is None:
        fn = Jitted(lambda *xs: tracing.bind(prim, *xs, weak=weak, **params))
        fn.__name__ = prim.name
        if key is not None:
            _eager[key] = fn
    if runtime_checks and disable_jit_enabled():
        # Under disable_jit a jit runs its Python function, which would bind this
        # primitive eagerly again, forever: one primitive is run compiled regardless.
        return fn._call(args, {})[0]
    return fn(*args)


tracing.set_eager_runner(apply_primitive)
