"""``jax._src.tree_util``: the names libraries read from JAX's private pytree module.
Flax's nnx graph code asks ``type(x) in _registry`` to tell pytree nodes from leaves, so
``_registry`` is spmdc's own table of node types (spmdc/core/tree.py's ``_node_types``,
builtin containers and registered classes; named tuples join it once seen) as users see
it: typed key arrays are leaves there (Note [array nodes] in spmdc/core/tree.py); the
public names are spmdc.tree_util's. ``prefix_errors`` (Flax's tests ask it for the message
a ``vmap`` would give) describes every place where a tree is not a prefix of another."""
from __future__ import annotations

import difflib
import textwrap
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ..core.tree import (
    DictKey,
    _array_nodes,
    _node_types,
    keystr,
    tree_structure,
    user_node_type,
)
from ..tree_util import *  # noqa: F401,F403
from ..tree_util import __all__ as _public


class _UserRegistry(Mapping[type, Any]):
    """A live read-only view of ``_node_types`` without the array nodes."""

    def __getitem__(self, kind: type) -> Any:
        if kind in _array_nodes:
            raise KeyError(kind)
        return _node_types[kind]

    def __contains__(self, kind: object) -> bool:
        return kind in _node_types and kind not in _array_nodes

    def __iter__(self) -> Iterator[type]:
        return (k for k in list(_node_types) if k not in _array_nodes)

    def __len__(self) -> int:
        return sum(1 for _ in self)


_registry = _UserRegistry()


def prefix_errors(prefix_tree: Any, full_tree: Any,
                  is_leaf: Callable[[Any], bool] | None = None
                  ) -> list[Callable[[str], ValueError]]:
    """One function per place where ``prefix_tree`` is not a prefix of ``full_tree``: given
    the name the prefix goes by (``'in_axes'``), it makes the ValueError naming that key
    path and what differs there (JAX's messages); empty when it is a prefix."""
    return list(_mismatches((), prefix_tree, full_tree, is_leaf))


def _mismatches(path: tuple[Any, ...], prefix: Any, full: Any,
                is_leaf: Callable[[Any], bool] | None
                ) -> Iterator[Callable[[str], ValueError]]:
    structure = tree_structure(prefix, is_leaf=is_leaf)
    if structure.num_nodes == 1 and structure.num_leaves == 1:    # a leaf prefixes anything
        return
    where = keystr(path)
    head = "pytree structure error: different {what} at key path\n    {name}" + where + "\n"
    if type(prefix) is not type(full):
        yield lambda name: ValueError(
            head.format(what="types", name=name)
            + f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\nbut at the same key path the full pytree has a subtree "
            f"of different type\n    {type(full)}.")
        return
    node = user_node_type(type(prefix))
    p_children, p_aux = node.flatten(prefix)
    f_children, f_aux = node.flatten(full)
    p_children, f_children = list(p_children), list(f_children)
    p_keys = node.keys(prefix, p_aux, len(p_children))
    f_keys = node.keys(full, f_aux, len(f_children))
    if isinstance(prefix, (list, tuple)) and len(prefix) != len(full):
        kind = type(prefix).__name__
        yield lambda name: ValueError(
            head.format(what=f"lengths of {kind}", name=name)
            + f"At that key path, the prefix pytree {name} has a subtree of type {kind} of "
            f"length {len(prefix)}, but the full pytree has a subtree of the same type but "
            f"of length {len(full)}.")
        return
    if len(p_children) != len(f_children):
        try:
            differ = " ".join(map(_key_text, set(p_keys) ^ set(f_keys)))
            sym = f"so the symmetric difference on key sets is\n    {differ}"
        except TypeError:                       # unhashable keys
            sym = ""
        yield lambda name: ValueError(
            head.format(what="numbers of pytree children", name=name)
            + f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\nwith {len(p_children)} child keys\n"
            f"    {' '.join(map(_key_text, p_keys))}\nbut at the same key path the full pytree "
            f"has a subtree of the same type but with {len(f_children)} child keys\n"
            f"    {' '.join(map(_key_text, f_keys))}\n" + sym)
        return
    if p_aux != f_aux:
        diff = textwrap.indent("\n".join(difflib.ndiff(str(p_aux).splitlines(),
                                                       str(f_aux).splitlines())), "    ")
        yield lambda name: ValueError(
            head.format(what="pytree metadata", name=name)
            + f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix)}\nwith metadata\n    {p_aux}\nbut at the same key path the "
            f"full pytree has a subtree of the same type but with metadata\n    {f_aux}\n"
            f"so the diff in the metadata at these pytree nodes is\n{diff}")
        return
    for key, p, f in zip(p_keys, p_children, f_children, strict=True):
        yield from _mismatches((*path, key), p, f, is_leaf)


def _key_text(key: Any) -> str:
    """A child's key as JAX lists a node's keys: a dict's keys bare."""
    return str(key.key) if isinstance(key, DictKey) else str(key)


__all__ = [*_public, "_registry", "prefix_errors"]
