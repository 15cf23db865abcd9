"""Explaining a flatten that ran out of recursion (for spmdc.core.tree's errors): the
pytree contains itself, or it is nested too deep.

Flattening is recursive, so a container that holds itself (``a = [1]; a.append(a)``)
recurses until Python's recursion limit, and so does a tree nested thousands of levels
deep. Rather than pay for cycle detection on every flatten, the flatteners catch the
``RecursionError`` and ask ``cycle_error`` what caused it.

Note [linear cycle search]
~~~~~~~~~~~~~~~~~~~~~~~~~~
The search walks the tree again without recursion (an explicit stack), keeping the
containers on the current path in a dict from their id to their depth, and the child
numbers of the current path in one list that is cut back to a node's depth when the
node is reached (keys are made for the path found alone). So it takes time and memory
linear in the size of the tree, whatever its depth (a path kept per node would be
quadratic: minutes and gigabytes at 30,000 levels). A cycle is named by the two paths
that are one object; a tree with no cycle that is nested deeper than a tenth of the
recursion limit is the "too deep" RecursionError, which says how deep; anything else
(a shallow tree: the recursion was elsewhere, in a registered flatten function for
instance) is the original error.
"""
from __future__ import annotations

import sys
from collections.abc import Callable
from itertools import repeat
from typing import Any

__all__ = ["cycle_error", "raise_if_cycle"]

_MAX_DEPTH = 100_000      # registered nodes may build fresh children forever: give up


def _find_cycle(tree: Any, is_leaf: Callable[[Any], bool] | None
                ) -> tuple[tuple[tuple[Any, ...], tuple[Any, ...], type] | None, int]:
    """``((path, ancestor_path, type), depth)`` where the node at ``path`` is the same
    object as its ancestor at ``ancestor_path``, or ``(None, depth)`` when the tree holds
    no cycle; ``depth``: how deep its containers nest (the search stops past
    ``_MAX_DEPTH``). See Note [linear cycle search]."""
    from .tree import _node_parts
    leave = -1
    on_path: dict[int, int] = {}            # id of a container on the path -> its depth
    indices: list[int] = []                 # indices[:depth]: child numbers to the node
    stack: list[tuple[Any, int, int]] = [(tree, 0, 0)]
    deepest = 0
    while stack:
        x, depth, index = stack.pop()
        if index == leave:
            del on_path[id(x)]
            continue
        if depth:
            del indices[depth - 1:]
            indices.append(index)
        if is_leaf is not None and is_leaf(x):
            continue
        parts = _node_parts(x)
        if parts is None:
            continue
        if id(x) in on_path:
            path = _keys_along(tree, indices)
            return (path, path[:on_path[id(x)]], type(x)), depth
        deepest = max(deepest, depth)
        if depth > _MAX_DEPTH:
            return None, deepest
        on_path[id(x)] = depth
        stack.append((x, depth, leave))
        children = parts[2]
        stack.extend(zip(reversed(children), repeat(depth + 1),
                         range(len(children) - 1, -1, -1)))
    return None, deepest


def _keys_along(tree: Any, indices: list[int]) -> tuple[Any, ...]:
    """The keys of the path that takes child ``indices[0]``, then ``indices[1]`` ...
    from the root (only the path found is given keys: the walk keeps numbers)."""
    from .tree import _node_parts, _node_types
    keys = []
    for index in indices:
        kind, aux, children = _node_parts(tree)
        keys.append(_node_types[kind].keys(tree, aux, len(children))[index])
        tree = children[index]
    return tuple(keys)


def cycle_error(tree: Any, is_leaf: Callable[[Any], bool] | None,
                error: BaseException, root: str = "") -> BaseException:
    """The error to raise for ``error`` (a RecursionError while flattening ``tree``): a
    ValueError naming the cycle when ``tree`` contains itself, a RecursionError saying
    how deep it nests when it is too deep, else ``error``. ``root`` names the tree in
    paths (``args`` gives ``args[0][1]``)."""
    found, depth = _find_cycle(tree, is_leaf)
    from .tracing import where
    if found is None:
        limit = sys.getrecursionlimit()
        if depth < limit // 10:
            return error
        what = f"more than {_MAX_DEPTH}" if depth > _MAX_DEPTH else f"{depth}"
        name = f"the pytree {root}" if root else "a pytree"
        return RecursionError(
            f"{name} nests containers {what} levels deep{where()}, too deep to flatten within "
            f"Python's recursion limit ({limit}). Make the structure shallower (a list of "
            "leaves rather than nested pairs, for instance), or register the deep type as "
            "a leaf")
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
    confused error): raise the cycle's ValueError when the arguments contain themselves,
    the too-deep RecursionError when they nest too deep (Note [linear cycle search]);
    otherwise return (the caller re-raises ``error``)."""
    for tree, root in ((args, "args"), (kwargs, "kwargs")):
        found = cycle_error(tree, None, error, root)
        if found is not error:
            raise found from None
