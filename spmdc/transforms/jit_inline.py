"""A jit called under another transformation: its trace, kept per signature.

Note [inlined jit traces once per signature]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Under a transformation (grad, vmap, scan, an outer jit) a jitted function is not
compiled on its own: its trace is inlined into the enclosing one. JAX traces it once per
abstract signature and reuses the jaxpr (pjit's cache), so a custom_vjp inside it has
its fwd and bwd traced once, however often ``grad(jit(f))(x)`` is called eagerly;
Equinox's tests count those traces. spmdc keeps the traced Func of an inlined call in
a dict shared like the compiled entries (Note [shared jit cache] in jit.py), keyed by
what the trace depends on: the argument structure and static values, each leaf's type
and weak flag, the modes that change programs (x64, promotion, rank promotion, default
precision, and the states jit's own key holds: softmax_custom_jvp, user contexts), the
axis names bound around the call (``psum`` over a vmap's name reads
them) and whether vmap is batching the enclosing trace (threefry's hash is traced
unrolled then: Note [threefry rolled for small draws]). A trace is not kept when it
read a value (it is specialised: Note [concrete values while tracing] in
core/concrete.py), when it captured a value of an enclosing
trace (that value belongs to one trace only), or while a pass emits (Note [rules on
values]). As in JAX, a global read at trace time stays baked into the kept trace until
``clear_caches()``. ``lower()`` under a transformation keeps its trace the same way, so
the call that follows it does not trace again (Note [a call after lower] in jit.py).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..compiler.ir import Func
from ..core import dtypes, tracing
from ..core import precision as _precision
from ..core import rank_promotion as _rank_promotion
from ..core.concrete import concretisations
from ..core.tracing import Tracer, type_of
from ..core.tree import tree_flatten
from ..runtime import config_states

__all__ = ["inlined_trace", "keep_trace", "signature_key"]

Traced = tuple[Func, list[bool], list[Any], Any, list[Any]]


def _key(statics: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
         ) -> tuple[Any, list[Any]] | None:
    trace = tracing._state.current
    if trace is None or trace.emitting is not None or trace.explicit is not None:
        return None     # (a trace with shardings in types: its inputs' specs would count)
    from .vmap import batching  # vmap.py imports jit.py, which imports this module

    leaves, in_tree = tree_flatten((args, kwargs))
    try:
        key = (in_tree, statics, dtypes._x64, dtypes._promotion[0],
               _rank_promotion._mode[0], _precision._default[0],
               config_states.jit_key_values(), tuple(sorted(trace.axis_env.items())),
               batching(),
               *[type_of(x) for x in leaves])
        hash(key)
    except TypeError:             # an unhashable static or axis value, a non-array leaf
        return None
    return key, leaves


def signature_key(statics: tuple[Any, ...], args: tuple[Any, ...], kwargs: dict[str, Any]
                  ) -> Any | None:
    """What a trace of a call with these arguments depends on (as the kept jit traces are
    keyed), or None where such a trace may not be kept."""
    keyed = _key(statics, args, kwargs)
    return None if keyed is None else keyed[0]


def inlined_trace(cache: dict[Any, Any], statics: tuple[Any, ...], args: tuple[Any, ...],
                  kwargs: dict[str, Any],
                  trace: Callable[[tuple[Any, ...], tuple[Any, ...], dict[str, Any]], Traced]
                  ) -> Traced:
    """``trace(statics, args, kwargs)``, or the trace ``cache`` kept for an equal call.
    See Note [inlined jit traces once per signature]."""
    keyed = _key(statics, args, kwargs)
    if keyed is None:
        return trace(statics, args, kwargs)
    key, leaves = keyed
    kept = cache.get(key)
    if kept is not None:
        func, out_weak, captured, out_tree = kept
        return func, out_weak, captured, out_tree, leaves
    read = concretisations()
    traced = trace(statics, args, kwargs)
    if concretisations() == read and not any(isinstance(c, Tracer) for c in traced[2]):
        cache[key] = traced[:4]
    return traced


def keep_trace(cache: dict[Any, Any], statics: tuple[Any, ...], args: tuple[Any, ...],
               kwargs: dict[str, Any], traced: Traced) -> None:
    """Keep ``traced``, made for this call by ``lower()`` with no value read, for the
    inlined calls equal to it (Note [a call after lower] in jit.py)."""
    keyed = _key(statics, args, kwargs)
    if keyed is not None and not any(isinstance(c, Tracer) for c in traced[2]):
        cache.setdefault(keyed[0], traced[:4])
