"""make_jaxpr: what tracing a function gives, as JAX's ``jax.make_jaxpr`` returns it.

``make_jaxpr(f)(*args)`` traces ``f`` with every array leaf abstract and returns a
``ClosedJaxpr`` in JAX's form (transforms/jaxpr_view.py): a view of the traced IR Func
under JAX's primitive names and params, printed in JAX's jaxpr syntax, with the values
it captured (``.consts``, its constvars) and the abstract values of its inputs and
outputs. ``make_ir`` gives the IR Func itself. With ``axis_env=[(name, size), ...]``
collectives over those axis names can be traced, as under ``pmap`` /
``vmap(axis_name=...)``.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from ..compiler.ir import check
from ..compiler.passes import checks_enabled
from ..core.abstract import ShapeDtypeStruct
from ..core.pytree_tracing import fun_name, trace_pytree
from ..core.tracing import type_of
from ..core.tree import tree_unflatten
from .jaxpr_view import ClosedJaxpr, closed_jaxpr
from .jit import Jitted

__all__ = ["make_jaxpr", "ClosedJaxpr"]


def _axis_env(axis_env: Any) -> dict[str, int] | None:
    if axis_env is None:
        return None
    env: dict[str, int] = {}
    try:
        pairs = list(axis_env)
        for pair in pairs:
            name, size = pair
            if isinstance(size, bool) or not isinstance(size, int) or size < 1:
                raise TypeError
            hash(name)
            env[name] = size
    except (TypeError, ValueError):
        raise TypeError(f"make_jaxpr: axis_env must be a sequence of (axis name, size) "
                        f"pairs with positive int sizes, e.g. [('i', 4)]; got {axis_env!r}"
                        ) from None
    return env


def make_jaxpr(fun: Callable[..., Any], static_argnums: int | Sequence[int] = (),
               axis_env: Sequence[tuple[Any, int]] | None = None,
               return_shape: bool = False) -> Callable[..., Any]:
    """``make_jaxpr(f)(*args)``: the ClosedJaxpr of ``f`` at ``args`` (and, with
    ``return_shape=True``, also the pytree of ShapeDtypeStructs ``f`` returns)."""
    jitted = Jitted(fun, static_argnums)      # for its static-argument handling
    env = _axis_env(axis_env)
    name = fun_name(fun)

    def make(*args: Any, **kwargs: Any) -> Any:
        statics, args, kwargs = jitted._split(args, kwargs)
        func, out_weak, consts, out_tree, leaves = trace_pytree(
            jitted._with_statics(statics), args, kwargs, name, axis_env=env)
        if checks_enabled():
            check(func)
        closed = closed_jaxpr(func, consts, len(leaves), [type_of(x)[1] for x in leaves],
                              out_weak)
        if not return_shape:
            return closed
        shapes = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                  for a in closed.out_avals]
        return closed, tree_unflatten(out_tree, shapes)
    functools.update_wrapper(make, fun)
    make.__module__ = "spmdc"
    if hasattr(fun, "__qualname__"):
        make.__qualname__ = f"make_jaxpr({fun.__qualname__})"
    if hasattr(fun, "__name__"):
        make.__name__ = f"make_jaxpr({fun.__name__})"
    return make
