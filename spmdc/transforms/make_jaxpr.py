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
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from ..compiler.ir import check
from ..compiler.passes import checks_enabled
from ..core.abstract import ShapeDtypeStruct
from ..core.pytree_tracing import fun_name, trace_pytree
from ..core.tracing import type_of
from ..core.tree import keystr, tree_leaves_with_path, tree_unflatten
from .jaxpr_view import ClosedJaxpr, DebugInfo, closed_jaxpr
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


_STATIC = object()      # stands for a static argument when naming the others


def _debug_info(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                statics: Any, out_tree: Any, n_in: int, n_out: int) -> DebugInfo:
    """JAX's debug info of a make_jaxpr (traced for 'jit', as JAX's is): the function,
    its argument leaves named by parameter and key path in the order the jaxpr takes
    them, the result leaves' paths."""
    name = getattr(fun, "__name__", type(fun).__name__)
    code = getattr(fun, "__code__", None)
    source = f"{name} at {code.co_filename}:{code.co_firstlineno}" if code else name
    full = list(args)
    for at, _ in statics:
        if isinstance(at, int):
            full.insert(at, _STATIC)
    arg_names: list[str] | None = []
    try:
        signature = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        signature = []
    params = [p for p in signature
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    named = {p.name for p in signature if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    var_keyword = [p.name for p in signature if p.kind == p.VAR_KEYWORD]
    for i, value in enumerate(full):
        if value is _STATIC:
            continue
        if i < len(params) and params[i].kind != params[i].VAR_POSITIONAL:
            label = params[i].name
        elif params and params[-1].kind == params[-1].VAR_POSITIONAL:
            label = f"{params[-1].name}[{i - len(params) + 1}]"
        else:
            label = f"args[{i}]"
        arg_names += [label + keystr(path) for path, _ in tree_leaves_with_path(value)]
    for key in sorted(kwargs):
        label = key if key in named or not var_keyword else f"{var_keyword[0]}[{key!r}]"
        arg_names += [label + keystr(path) for path, _ in tree_leaves_with_path(kwargs[key])]
    if len(arg_names) != n_in:
        arg_names = None
    shape = tree_unflatten(out_tree, [_STATIC] * n_out)
    results = tuple("result" + keystr(path) for path, _ in tree_leaves_with_path(shape))
    return DebugInfo("jit", source, None if arg_names is None else tuple(arg_names),
                     results)


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
        info = _debug_info(fun, args, kwargs, statics, out_tree, len(leaves),
                           len(func.outputs))
        closed = closed_jaxpr(func, consts, len(leaves), [type_of(x)[1] for x in leaves],
                              out_weak, info)
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
