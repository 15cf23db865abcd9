"""Finding the cycle in a pytree that contains itself (for spmdc.core.tree's errors).

Flattening is recursive, so a container that holds itself (``a = [1]; a.append(a)``)
recurses until Python's recursion limit. Rather than pay for cycle detection on every
flatten, the flatteners catch the ``RecursionError`` and ask ``cycle_error`` whether a
cycle was the cause; it walks the tree again without recursion, keeping the containers
on the current path, and names the two paths that are one object.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["cycle_error", "raise_if_cycle"]

_MAX_DEPTH = 100_000      # registered nodes may build fresh children forever: give up


def _find_cycle(tree: Any, is_leaf: Callable[[Any], bool] | None
                ) -> tuple[tuple[Any, ...], tuple[Any, ...], type] | None:
    """``(path, ancestor_path, type)`` where the node at ``path`` is the same object as
    its ancestor at ``ancestor_path``, or None."""
    from .tree import _node_parts, _node_types
    leave = object()
    on_path: dict[int, tuple[Any, ...]] = {}
    stack: list[tuple[Any, Any]] = [(tree, ())]
    while stack:
        x, path = stack.pop()
        if path is leave:
            del on_path[id(x)]
            continue
        if is_leaf is not None and is_leaf(x):
            continue
        parts = _node_parts(x)
        if parts is None:
            continue
        if id(x) in on_path:
            return path, on_path[id(x)], type(x)
        if len(path) > _MAX_DEPTH:
            return None
        on_path[id(x)] = path
        stack.append((x, leave))
        kind, aux, children = parts
        keys = _node_types[kind].keys(x, aux, len(children))
        stack.extend((child, (*path, key))
                     for key, child in reversed(list(zip(keys, children, strict=True))))
    return None


def cycle_error(tree: Any, is_leaf: Callable[[Any], bool] | None,
                error: BaseException, root: str = "") -> BaseException:
    """The error to raise for ``error`` (a RecursionError while flattening ``tree``): a
    ValueError naming the cycle when ``tree`` contains itself, else ``error``. ``root``
    names the tree in paths (``args`` gives ``args[0][1]``)."""
    found = _find_cycle(tree, is_leaf)
    if found is None:
        return error
    from .tracing import where
    from .tree import keystr
    path, ancestor, kind = found
    outer = f"the {kind.__name__} at {root}{keystr(ancestor)}" if ancestor or root else \
        f"the whole tree (a {kind.__name__})"
    return ValueError(
        f"a pytree contains itself: the value at {root}{keystr(path)} is {outer}{where()}. "
        "A pytree must be a finite tree of containers; remove the reference cycle (or "
        "register the type as a leaf) before passing it to spmdc")


def raise_if_cycle(args: tuple[Any, ...], kwargs: dict[str, Any], error: BaseException
                   ) -> None:
    """For an error from a call (jaxlib's C++ pytree registry fails on arguments that
    contain themselves with a RecursionError, or after one with a SystemError or another
    confused error): raise the cycle's ValueError when the arguments contain themselves;
    otherwise return (the caller re-raises ``error``)."""
    for tree, root in ((args, "args"), (kwargs, "kwargs")):
        found = cycle_error(tree, None, error, root)
        if found is not error:
            raise found from None
