"""spmdc.tree_util: pytrees (flatten, unflatten, map, paths, registration), as
jax.tree_util. The core (flattening, treedefs, keys) is spmdc/core/tree.py; this module
adds what is built on it: reductions, transposition, dataclass and keyed registration,
``Partial``."""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .core import tree as _core
from .core.tree import *  # noqa: F401,F403
from .core.tree import (
    PyTreeDef,
    broadcast_prefix,
    register_pytree_node,
    user_node_type,
)
from .core.tree import __all__ as _core_all

__all__ = [*_core_all, "tree_reduce", "tree_all", "tree_transpose", "tree_broadcast",
           "tree_map_with_path", "treedef_children", "treedef_tuple", "is_tree_node",
           "register_dataclass", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "register_static", "Partial",
           "flatten_one_level", "flatten_one_level_with_keys", "tree_reduce_associative",
           "KeyEntry", "KeyPath"]

KeyEntry = TypeVar("KeyEntry", bound=Any)
"""One step of a path: a ``SequenceKey``, ``DictKey``, ``GetAttrKey`` ... (JAX's
annotation)."""
KeyPath = tuple[KeyEntry, ...]
"""A path from the root to a leaf, as ``tree_flatten_with_path`` gives it."""

_NO_INITIAL = object()


# The functions users call flatten as users see trees: a typed key array is one leaf
# (Note [array nodes] in spmdc/core/tree.py); spmdc's transformations flatten with
# spmdc.core.tree's functions of the same names.

def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """``(leaves, treedef)``; ``is_leaf(x)`` true stops the descent at ``x``. A tree that
    contains itself is a ValueError naming the cycle."""
    return _core.flatten_checked(tree, is_leaf, user_node_type)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def all_leaves(iterable: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every element is a leaf (a pytree of exactly itself)."""
    return _core.all_leaves_by(tree_structure, iterable, is_leaf)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise; each of ``rest`` must have ``tree``'s structure as a prefix."""
    return _core.map_by(tree_flatten, f, tree, rest, is_leaf)


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[tuple[Any, ...], Any]], PyTreeDef]:
    """``([(path, leaf), ...], treedef)``; a path is a tuple of keys (see ``keystr``).
    ``is_leaf(x)`` stops at a subtree; with ``is_leaf_takes_path`` it is
    ``is_leaf(path, x)``, as in JAX."""
    return _core.tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path, user_node_type)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False
                          ) -> list[tuple[tuple[Any, ...], Any]]:
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = _NO_INITIAL,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``functools.reduce`` over the leaves."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        if not leaves:
            raise TypeError("tree_reduce of a tree with no leaves needs an initializer")
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf is truthy."""
    return all(tree_leaves(tree, is_leaf))


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """``f(path, leaf, *others)`` for every leaf; ``rest`` have ``tree``'s structure.
    With ``is_leaf_takes_path``, ``is_leaf`` is called ``is_leaf(path, x)``."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(path, x, *xs) for (path, x), *xs in
                              zip(pairs, *others, strict=True)])


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """``prefix_tree`` with each leaf repeated over the subtree of ``full_tree`` at its
    position, so it has ``full_tree``'s structure."""
    leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf)
    return tree_structure(full_tree, is_leaf).unflatten(leaves)


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    return treedef.children()


def treedef_tuple(treedefs: Sequence[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose elements have ``treedefs``."""
    placeholder = tuple(t.unflatten([_Slot()] * t.num_leaves) for t in treedefs)
    return tree_structure(placeholder, is_leaf=lambda x: isinstance(x, _Slot))


class _Slot:
    """A stand-in leaf, used to build treedefs from others."""


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn an outer tree of inner trees into an inner tree of outer trees."""
    flat = outer_treedef.flatten_up_to(pytree_to_transpose)
    if inner_treedef is None:
        if not flat:
            raise ValueError("tree_transpose needs inner_treedef when the outer tree is empty")
        inner_treedef = tree_structure(flat[0])
    inner_leaves = []
    for i, sub in enumerate(flat):
        leaves, treedef = tree_flatten(sub)
        if treedef != inner_treedef:
            raise TypeError(f"tree_transpose: outer leaf {i} has structure {treedef}, "
                            f"expected the inner structure {inner_treedef}")
        inner_leaves.append(leaves)
    columns = [outer_treedef.unflatten(col) for col in zip(*inner_leaves, strict=True)] \
        if inner_leaves else [outer_treedef.unflatten([])] * inner_treedef.num_leaves
    return inner_treedef.unflatten(columns)


def is_tree_node(x: Any) -> bool:
    """Whether ``x`` is a pytree node rather than a leaf."""
    return user_node_type(type(x)) is not None


def flatten_one_level(tree: Any) -> tuple[list[Any], Any]:
    """The children of a node and its aux data; a leaf is an error."""
    node = user_node_type(type(tree))
    if node is None:
        raise ValueError(f"can't flatten a leaf of type {type(tree).__name__}")
    children, aux = node.flatten(tree)
    return list(children), aux


def flatten_one_level_with_keys(tree: Any) -> tuple[tuple[tuple[Any, Any], ...], Any]:
    """The children of a node with their keys, ``((key, child), ...)``, and its aux
    data; a leaf is an error."""
    node = user_node_type(type(tree))
    if node is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    children, aux = node.flatten(tree)
    children = list(children)
    keys = node.keys(tree, aux, len(children))
    return tuple(zip(keys, children, strict=True)), aux


def tree_reduce_associative(operation: Callable[[Any, Any], Any], tree: Any, *,
                            identity: Any = _NO_INITIAL,
                            is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Reduce the leaves with an associative ``operation`` as a balanced tree: the two
    halves of the leaves are reduced first, then joined (JAX's order, so rounding is
    JAX's). ``identity`` is the result for a tree with no leaves."""
    return _balanced_reduce(tree_leaves(tree, is_leaf), operation, identity)


def _balanced_reduce(leaves: list[Any], operation: Callable[[Any, Any], Any],
                     identity: Any) -> Any:
    if not leaves:
        if identity is _NO_INITIAL:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    if len(leaves) == 1:
        return leaves[0]
    half = len(leaves) // 2
    return operation(_balanced_reduce(leaves[:half], operation, identity),
                     _balanced_reduce(leaves[half:], operation, identity))


def register_pytree_with_keys(nodetype: type,
                              flatten_with_keys: Callable[[Any], tuple[Any, Any]],
                              unflatten_func: Callable[[Any, Any], Any],
                              flatten_func: Callable[[Any], tuple[Any, Any]] | None = None
                              ) -> None:
    """Register ``nodetype`` with ``flatten_with_keys(x) -> (((key, child), ...), aux)``,
    which names its children in paths."""
    if flatten_func is None:
        def flatten_func(x: Any) -> tuple[list[Any], Any]:
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls: type) -> type:
    """Class decorator: ``tree_flatten_with_keys`` and ``tree_unflatten`` methods."""
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten,
                              None if flatten is None else (lambda x: x.tree_flatten()))
    return cls


def register_dataclass(nodetype: type, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> type:
    """Register a dataclass as a pytree: ``data_fields`` are children, ``meta_fields``
    are aux data (hashable, part of the treedef). Without both, a dataclass's fields
    marked ``field(metadata=dict(static=True))`` are meta and the rest data."""
    from .core.tree import GetAttrKey
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(f"register_dataclass({nodetype.__name__}) needs data_fields and "
                            "meta_fields unless the class is a dataclass")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass takes both data_fields and meta_fields, or neither")
    data_fields, meta_fields = list(data_fields), list(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        missing = init_fields - set(data_fields) - set(meta_fields) - set(drop_fields)
        if missing:
            raise ValueError(f"register_dataclass({nodetype.__name__}): fields "
                             f"{sorted(missing)} are neither data_fields nor meta_fields")

    def flatten_with_keys(x: Any) -> tuple[list[tuple[Any, Any]], Any]:
        return ([(GetAttrKey(n), getattr(x, n)) for n in data_fields],
                tuple(getattr(x, n) for n in meta_fields))

    def flatten(x: Any) -> tuple[list[Any], Any]:
        return ([getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields))

    def unflatten(meta: Any, data: Any) -> Any:
        kwargs = dict(zip(meta_fields, meta, strict=True))
        kwargs.update(zip(data_fields, data, strict=True))
        return nodetype(**kwargs)

    register_pytree_node(nodetype, flatten, unflatten, flatten_with_keys)
    return nodetype


def register_static(cls: type) -> type:
    """Make instances of ``cls`` nodes with no children: the whole object is aux data
    (so it must be hashable), as JAX's register_static."""
    register_pytree_node(cls, lambda x: ((), x), lambda aux, _: aux)
    return cls


class Partial(functools.partial):
    """``functools.partial`` that is a pytree: the bound arguments are its children and
    the function is aux data, so it can be passed to and returned from jit."""

    def __new__(cls, func: Callable[..., Any], *args: Any, **kwargs: Any) -> Partial:
        if isinstance(func, functools.partial):
            # functools.partial would merge the two, moving the inner one's arguments
            # into the aux data; keep them apart, as JAX does
            func = _Wrapped(func)
        return super().__new__(cls, func, *args, **kwargs)


class _Wrapped:
    """A partial inside a Partial, kept as an opaque callable."""

    def __init__(self, func: Callable[..., Any]):
        self.func = func

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def __eq__(self, other: object) -> bool:
        return type(other) is _Wrapped and other.func is self.func

    def __hash__(self) -> int:
        return id(self.func)


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]))
