"""``jax.api_util``: the function-transformation helpers libraries build their own
transformations from (Flax's lifted transforms and ``lazy_init``, NumPyro's
provenance, distrax's jaxpr interpreters): ``flatten_fun`` / ``flatten_fun_nokwargs``
turn a ``linear_util.WrappedFun`` of pytrees into one of flat argument lists, with a
thunk giving the output's tree structure after the call; ``debug_info`` describes a
function for the jaxprs traced from it; ``shaped_abstractify`` gives a value's abstract
value; ``safe_map`` is ``map`` over equally long sequences, as a list."""
from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from .core.abstract import ShapedArray, typeof
from .core.tree import keystr, tree_flatten, tree_leaves_with_path, tree_unflatten
from .extend.linear_util import WrappedFun, transformation_with_aux2
from .transforms.jaxpr_view import DebugInfo

__all__ = ["flatten_fun", "flatten_fun_nokwargs", "debug_info", "shaped_abstractify",
           "safe_map"]


def _flatten_fun(f: Callable[..., Any], store: Any, in_tree: Any, *args_flat: Any) -> Any:
    args, kwargs = tree_unflatten(in_tree, args_flat)
    out_flat, out_tree = tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return out_flat


def _flatten_fun_nokwargs(f: Callable[..., Any], store: Any, in_tree: Any,
                          *args_flat: Any) -> Any:
    out_flat, out_tree = tree_flatten(f(*tree_unflatten(in_tree, args_flat)))
    store.store(out_tree)
    return out_flat


def flatten_fun(fun: WrappedFun, in_tree: Any) -> tuple[WrappedFun, Callable[[], Any]]:
    """``fun(*args, **kwargs)`` as a function of the flat leaves of ``(args, kwargs)``
    (whose tree structure is ``in_tree``) returning a flat list of leaves; the thunk
    gives the output's tree structure once the function has run."""
    return transformation_with_aux2(_flatten_fun, fun, in_tree)


def flatten_fun_nokwargs(fun: WrappedFun, in_tree: Any
                         ) -> tuple[WrappedFun, Callable[[], Any]]:
    """As ``flatten_fun``, for ``in_tree`` the structure of the positional-argument
    tuple alone."""
    return transformation_with_aux2(_flatten_fun_nokwargs, fun, in_tree)


def _source_info(fun: Callable[..., Any]) -> str:
    inner = inspect.unwrap(fun) if callable(fun) else fun
    name = getattr(inner, "__qualname__", None) or getattr(inner, "__name__", None) or \
        type(inner).__name__
    try:
        filename = inspect.getsourcefile(inner)
        _, line = inspect.getsourcelines(inner)
    except (TypeError, OSError):
        return str(name)
    return f"{name} at {filename}:{line}"


def _arg_names(fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
               static_argnums: Sequence[int], static_argnames: Sequence[str]
               ) -> tuple[str, ...] | None:
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    static_names = set(static_argnames)
    params = list(inspect.signature(fun).parameters)
    static_names.update(params[i] for i in static_argnums if -len(params) <= i < len(params))
    names: list[str] = []
    for name, value in bound.arguments.items():
        if name not in static_names:
            names += [name + keystr(path) for path, _ in tree_leaves_with_path(value)]
    return tuple(names)


def debug_info(traced_for: str, fun: Callable[..., Any], args: Sequence[Any],
               kwargs: dict[str, Any], *, static_argnums: Sequence[int] = (),
               static_argnames: Sequence[str] = (),
               result_paths_thunk: Callable[[], tuple[str, ...]] | None = None,
               sourceinfo: str | None = None) -> DebugInfo:
    """What ``traced_for`` (e.g. ``'jit'``) records about ``fun`` called on ``args``
    and ``kwargs``: its name and source line (``sourceinfo`` overrides), a name per
    non-static argument leaf (None where ``args`` do not bind to ``fun``'s signature)
    and, when ``result_paths_thunk`` is given, the result leaves' paths."""
    return DebugInfo(traced_for, sourceinfo or _source_info(fun),
                     _arg_names(fun, tuple(args), dict(kwargs), static_argnums,
                                static_argnames),
                     None if result_paths_thunk is None else tuple(result_paths_thunk()))


def shaped_abstractify(x: Any) -> ShapedArray:
    """The abstract value (shape, dtype, weak type) of an array-like value."""
    return typeof(x)


def safe_map(f: Callable[..., Any], *seqs: Sequence[Any]) -> list[Any]:
    """``list(map(f, *seqs))``, for sequences of one length (a ValueError otherwise)."""
    lists = [list(s) for s in seqs]
    lengths = {len(s) for s in lists}
    if len(lengths) > 1:
        raise ValueError(f"safe_map: the sequences have different lengths "
                         f"{[len(s) for s in lists]}")
    return list(map(f, *lists))
