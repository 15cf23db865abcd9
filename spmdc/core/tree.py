"""Pytrees: nested containers of leaves (exposed to users as ``spmdc.tree_util``).

Names and semantics follow ``jax.tree_util``. Node types are ``tuple``, ``list``,
``dict`` (children in sorted-key order; insertion order if the keys do not sort),
``None`` (a node with no children, *not* a leaf), namedtuples, ``OrderedDict`` and
``defaultdict`` (insertion / sorted order), and types registered with
``register_pytree_node``. The type test is exact: a subclass of ``list`` is a leaf unless
registered itself. Everything else is a leaf.

A ``PyTreeDef`` wraps an immutable nested-tuple description of the structure::

    node := LEAF | (kind, aux, (node, ...))

``kind`` is the node's Python type, ``aux`` its auxiliary data (dict keys, registered
nodes' aux data). Equality is that of the nested tuple; the hash leaves out registered
nodes' aux data (Note [treedef hash]) and is computed once per treedef. See Note [pytree
fast path].
"""
from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..runtime import pjrt
from .tree_cycles import cycle_error

__all__ = ["PyTreeDef", "dict_keys", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves",
           "tree_structure", "tree_flatten_with_path", "tree_leaves_with_path", "keystr",
           "register_pytree_node", "register_pytree_node_class", "broadcast_prefix",
           "all_leaves", "treedef_is_leaf", "SequenceKey", "DictKey", "GetAttrKey",
           "FlattenedIndexKey"]


class _Leaf:
    """The marker for a leaf position in a treedef (prints as ``*``)."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "*"


_LEAF = _Leaf()
_NoneType = type(None)


# --- keys: the steps of a path from the root to a leaf ---------------------------------------

@dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclass(frozen=True)
class DictKey:
    key: Any

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclass(frozen=True)
class FlattenedIndexKey:
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


def keystr(path: Iterable[Any], *, simple: bool = False, separator: str = "") -> str:
    """Render a key path like JAX: ``[0]['w']``, ``.field``; ``simple`` drops the brackets."""
    if simple:
        return separator.join(str(_key_value(k)) for k in path)
    return separator.join(str(k) for k in path)


def _key_value(key: Any) -> Any:
    for attr in ("idx", "key", "name"):
        if hasattr(key, attr):
            return getattr(key, attr)
    return key


# --- node types ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _NodeType:
    """How to take one node type apart and put it back together.

    ``flatten(x) -> (children, aux)``; ``unflatten(aux, children) -> x``;
    ``keys(x, aux, n) -> one key per child`` (only used for paths and error messages).
    """
    flatten: Callable[[Any], tuple[Iterable[Any], Any]]
    unflatten: Callable[[Any, Any], Any]
    keys: Callable[[Any, Any, int], list[Any]]


def _sequence_keys(x: Any, aux: Any, n: int) -> list[Any]:
    return [SequenceKey(i) for i in range(n)]


def dict_keys(d: dict[Any, Any]) -> tuple[Any, ...]:
    """A dict's keys in the order its values flatten."""
    try:
        return tuple(sorted(d))
    except TypeError:                       # keys of mixed types: keep insertion order
        return tuple(d)


def _dict_flatten(d: dict[Any, Any]) -> tuple[list[Any], Any]:
    keys = dict_keys(d)
    return [d[k] for k in keys], keys


def _defaultdict_flatten(d: Any) -> tuple[list[Any], Any]:
    keys = dict_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


_node_types: dict[type, _NodeType] = {
    tuple: _NodeType(lambda x: (x, None), lambda aux, ch: tuple(ch), _sequence_keys),
    list: _NodeType(lambda x: (x, None), lambda aux, ch: list(ch), _sequence_keys),
    dict: _NodeType(_dict_flatten, lambda aux, ch: dict(zip(aux, ch, strict=True)),
                    lambda x, aux, n: [DictKey(k) for k in aux]),
    _NoneType: _NodeType(lambda x: ((), None), lambda aux, ch: None, _sequence_keys),
    collections.OrderedDict: _NodeType(
        lambda x: (list(x.values()), tuple(x)),
        lambda aux, ch: collections.OrderedDict(zip(aux, ch, strict=True)),
        lambda x, aux, n: [DictKey(k) for k in aux]),
    collections.defaultdict: _NodeType(
        _defaultdict_flatten,
        lambda aux, ch: collections.defaultdict(aux[0], zip(aux[1], ch, strict=True)),
        lambda x, aux, n: [DictKey(k) for k in aux[1]]),
}
_registered: set[type] = set()       # types registered by users (duplicates are an error)
_leaf_types: set[type] = set()       # types seen and found to be leaves (a cache)
_array_nodes: set[type] = set()      # nodes to transformations, leaves to users (below)


def _node_type(t: type) -> _NodeType | None:
    """The node type for Python type ``t``, or None when its instances are leaves."""
    node_type = _node_types.get(t)
    if node_type is not None or t in _leaf_types:
        return node_type
    if issubclass(t, tuple) and hasattr(t, "_fields"):          # a namedtuple class
        node_type = _node_types[t] = _NodeType(
            lambda x: (x, None), lambda aux, ch, t=t: t(*ch),
            lambda x, aux, n, t=t: [GetAttrKey(f) for f in t._fields])
        return node_type
    _leaf_types.add(t)
    return None


def register_pytree_node(nodetype: type, flatten_func: Callable[[Any], tuple[Any, Any]],
                         unflatten_func: Callable[[Any, Any], Any],
                         flatten_with_keys_func: Callable[[Any], tuple[Any, Any]] | None = None
                         ) -> None:
    """Make ``nodetype`` a pytree node.

    ``flatten_func(x) -> (children, aux_data)`` and ``unflatten_func(aux_data, children)``;
    ``aux_data`` must be hashable and comparable (it is part of the treedef). The optional
    ``flatten_with_keys_func(x) -> (((key, child), ...), aux_data)`` names the children in
    paths; without it they are ``[<flat index i>]``.
    """
    if nodetype in _registered or nodetype in (tuple, list, dict, _NoneType,
                                               collections.OrderedDict,
                                               collections.defaultdict):
        raise ValueError(f"duplicate pytree node registration for type {nodetype.__name__}")

    def keys(x: Any, aux: Any, n: int) -> list[Any]:
        if flatten_with_keys_func is None:
            return [FlattenedIndexKey(i) for i in range(n)]
        return [k for k, _ in flatten_with_keys_func(x)[0]]

    _registered.add(nodetype)
    _leaf_types.discard(nodetype)
    _node_types[nodetype] = _NodeType(flatten_func, unflatten_func, keys)
    pjrt.register_node(nodetype, flatten_func, unflatten_func)   # for jit's C++ dispatch


def register_array_node(nodetype: type, flatten_func: Callable[[Any], tuple[Any, Any]],
                        unflatten_func: Callable[[Any, Any], Any]) -> None:
    """Make the array class ``nodetype`` a node that spmdc's transformations take apart and
    its users see as a leaf. See Note [array nodes]."""
    register_pytree_node(nodetype, flatten_func, unflatten_func)
    _array_nodes.add(nodetype)


def is_array_node(x: Any) -> bool:
    """Whether ``x`` is of a class registered with ``register_array_node``."""
    return type(x) in _array_nodes


def user_node_type(t: type) -> _NodeType | None:
    """``_node_type`` as users see it: array nodes are leaves. See Note [array nodes]."""
    return None if t in _array_nodes else _node_type(t)


# Note [array nodes]
# ~~~~~~~~~~~~~~~~~~
# JAX's typed PRNG keys are arrays of an extended dtype, so jax.tree.leaves(key) is
# [key] and every transformation moves a key as one array. spmdc's IR has no extended
# dtypes: a key array is a Python object around its uint32 data (Note [typed keys] in
# spmdc/random/keys.py). Such a class is registered with ``register_array_node``: it is
# a pytree node with its data as child for the flattening this module's functions do,
# which is what jit, vmap, grad, scan, cond and the rest use, so they carry the data and
# rebuild the key on the other side; and it is a leaf for the functions users call
# (spmdc.tree_util, spmdc.tree, jax._src.tree_util._registry), which flatten with
# ``user_node_type``. A treedef made by either view unflattens by its own structure, so
# the two never need to meet.


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: ``x.tree_flatten() -> (children, aux)`` and the classmethod
    ``cls.tree_unflatten(aux, children)`` make ``cls`` a pytree node."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


# --- treedefs --------------------------------------------------------------------------------

class PyTreeDef:
    """The structure of a pytree: hashable, comparable, and able to rebuild the tree."""
    __slots__ = ("_node", "num_leaves", "_hash")

    def __init__(self, node: Any, num_leaves: int):
        self._node = node
        self.num_leaves = num_leaves
        self._hash: int | None = None

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is PyTreeDef and
                                 self.num_leaves == other.num_leaves and
                                 self._node == other._node)

    def __hash__(self) -> int:
        # See Note [treedef hash]
        h = self._hash
        if h is None:
            h = self._hash = hash(_hash_key(self._node))
        return h

    @property
    def num_nodes(self) -> int:
        """Nodes in the tree, leaves included (``(*, *)`` has 3)."""
        return _count_nodes(self._node)

    def node_data(self) -> tuple[type, Any] | None:
        """The root node's type and aux data (``(dict, keys)``, ``(tuple, None)`` ...), or
        None when the tree is a leaf (JAX's ``PyTreeDef.node_data``)."""
        if self._node is _LEAF:
            return None
        return self._node[0], self._node[1]

    def children(self) -> list[PyTreeDef]:
        if self._node is _LEAF:
            return []
        return [PyTreeDef(c, _count_leaves(c)) for c in self._node[2]]

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"{'too few' if len(leaves) < self.num_leaves else 'too many'} "
                             f"leaves for {self!r}: expected {self.num_leaves}, got "
                             f"{len(leaves)}")
        node = self._node
        if node is _LEAF:
            return leaves[0]
        return _build(node, iter(leaves))

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """This structure with every leaf replaced by ``inner`` (JAX's ``compose``)."""
        return PyTreeDef(_replace_leaves(self._node, inner._node),
                         self.num_leaves * inner.num_leaves)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` at this treedef's leaf positions (``tree`` must have this
        structure as a prefix)."""
        out: list[Any] = []
        try:
            _up_to(self._node, tree, out)
        except _Mismatch as m:
            raise ValueError(f"tree structure mismatch at {keystr(m.path) or 'the top level'}: "
                             f"expected {m.expected} but got {m.got} (full structure: "
                             f"{self!r})") from None
        return out

    def __repr__(self) -> str:
        return f"PyTreeDef({_node_repr(self._node)})"

    def __reduce__(self) -> Any:
        raise TypeError("PyTreeDef objects cannot be pickled")

    # A treedef is immutable: a copy is itself (Flax's nnx deep-copies modules that
    # hold one; JAX's treedefs copy).
    def __copy__(self) -> PyTreeDef:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> PyTreeDef:
        return self


# Note [treedef hash]
# Equal treedefs have equal node types, arities and aux data (compared with ==), but a
# registered node's aux data need not be hashable: Equinox's filter_grad wrapper keeps
# the user's keyword arguments (a dict) there, and filter_jit passes that treedef to jit
# as a static argument. JAX's hash of a treedef is that of its node kinds and arities
# (and a custom node's registered type), never of its aux data, so such a treedef is
# hashable and two of them are told apart by ==. spmdc's hashes the same way for
# registered nodes; a built-in node's aux data (dict keys, a namedtuple's type) is
# always hashable and is kept in the hash, as it spreads dicts with different keys.

def _hash_key(node: Any) -> Any:
    """What a treedef's hash is taken of: its nodes without registered nodes' aux data."""
    if node is _LEAF:
        return node
    kind, aux, children = node
    return (kind, None if kind in _registered else aux,
            tuple(_hash_key(c) for c in children))


def _replace_leaves(node: Any, by: Any) -> Any:
    if node is _LEAF:
        return by
    kind, aux, children = node
    return (kind, aux, tuple(_replace_leaves(c, by) for c in children))


def _count_leaves(node: Any) -> int:
    return 1 if node is _LEAF else sum(_count_leaves(c) for c in node[2])


def _count_nodes(node: Any) -> int:
    return 1 if node is _LEAF else 1 + sum(_count_nodes(c) for c in node[2])


def _build(node: Any, leaves: Any) -> Any:
    kind, aux, children = node
    values = []
    for c in children:                  # a loop, not a comprehension: fewer calls per node
        values.append(next(leaves) if c is _LEAF else _build(c, leaves))
    if kind is tuple:
        return tuple(values)
    if kind is list:
        return values
    if kind is dict:
        return dict(zip(aux, values, strict=True))
    return _node_types[kind].unflatten(aux, values)


def _node_repr(node: Any) -> str:
    if node is _LEAF:
        return "*"
    kind, aux, children = node
    parts = [_node_repr(c) for c in children]
    if kind is tuple:
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
    if kind is list:
        return f"[{', '.join(parts)}]"
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(aux, parts, strict=True)) + "}"
    if kind is _NoneType:
        return "None"
    if kind not in _registered and issubclass(kind, tuple):        # a namedtuple
        return f"CustomNode(namedtuple[{kind.__name__}], [{', '.join(parts)}])"
    # See Note [treedef text]
    return f"CustomNode({kind.__name__}[{aux}], [{', '.join(parts)}])"


# Note [treedef text]
# ~~~~~~~~~~~~~~~~~~~
# A treedef prints as JAX's: tuples, lists, dicts and None in Python's syntax, every
# other node as ``CustomNode(<type name>[<aux data>], [<children>])`` with the aux data
# written by ``str`` (``Counter[Counter_class_as_pytree_node]``, not its repr). That
# covers OrderedDict (aux: its keys), defaultdict (aux: factory and sorted keys) and
# namedtuples, which JAX prints as ``namedtuple[<class name>]``. Programs compare and
# parse this text, so it follows JAX's character for character.


# --- flattening ------------------------------------------------------------------------------

# Note [pytree fast path]
# tree_flatten runs on every call of a jitted function, so the common shapes skip the
# general recursion: a leaf; a tuple, list or dict of leaves; and ``(args, {})`` with
# ``args`` a tuple of leaves (what jit flattens for a call without keyword arguments).
# Their treedefs come from small caches, so equal structures are the *same* object:
# equality is an identity test and the hash is computed once. A type is known to be a
# leaf after its first lookup (_leaf_types). The general path builds the nested node
# tuple in one recursive pass.

_LEAF_TREEDEF = PyTreeDef(_LEAF, 1)
_EMPTY_DICT_NODE = (dict, (), ())
_cached_treedefs: dict[Any, PyTreeDef] = {}


def _cached_treedef(kind: type, aux: Any, n: int, in_args: bool) -> PyTreeDef:
    """The treedef of a flat node (``in_args``: as ``args`` of an ``(args, {})`` pair)."""
    key = (kind, aux, n, in_args)
    treedef = _cached_treedefs.get(key)
    if treedef is None:
        node = (kind, aux, (_LEAF,) * n)
        treedef = PyTreeDef((tuple, None, (node, _EMPTY_DICT_NODE)) if in_args else node, n)
        if len(_cached_treedefs) > 4096:            # keep the cache bounded
            _cached_treedefs.clear()
        _cached_treedefs[key] = treedef
    return treedef


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], PyTreeDef]:
    """``(leaves, treedef)``; ``is_leaf(x)`` true stops the descent at ``x``. A tree that
    contains itself is a ValueError naming the cycle."""
    return flatten_checked(tree, is_leaf, _node_type)


def flatten_checked(tree: Any, is_leaf: Callable[[Any], bool] | None,
                    node_type: Callable[[type], _NodeType | None]
                    ) -> tuple[list[Any], PyTreeDef]:
    """``tree_flatten`` by ``node_type``'s registry (spmdc's view of typed keys, or the
    user's: Note [array nodes]), a self-containing tree a ValueError naming the cycle."""
    try:
        return _tree_flatten(tree, is_leaf, node_type)
    except RecursionError as e:
        raise cycle_error(tree, is_leaf, e) from None


def _tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None,
                  node_type: Callable[[type], _NodeType | None] = _node_type
                  ) -> tuple[list[Any], PyTreeDef]:
    if is_leaf is not None:
        leaves: list[Any] = []
        node = _flatten_until(tree, leaves, is_leaf, node_type)
        return leaves, PyTreeDef(node, len(leaves))
    t = type(tree)              # See Note [pytree fast path]
    if t in _leaf_types:
        return [tree], _LEAF_TREEDEF
    flat, kind, aux, in_args = tree, t, None, False
    if t is tuple and len(tree) == 2 and type(tree[0]) is tuple and \
            type(tree[1]) is dict and not tree[1]:
        flat, kind, in_args = tree[0], tuple, True
    elif t is dict:
        aux = dict_keys(tree)
        flat = [tree[k] for k in aux]
    if kind is tuple or kind is list or kind is dict:
        for child in flat:
            if type(child) not in _leaf_types:
                break
        else:
            return list(flat), _cached_treedef(kind, aux, len(flat), in_args)
    leaves = []
    node = _flatten(tree, leaves, node_type)
    return leaves, PyTreeDef(node, len(leaves))


def _flatten(x: Any, leaves: list[Any], node_type_of: Callable[[type], _NodeType | None]
             ) -> Any:
    t = type(x)
    if t in _leaf_types:
        leaves.append(x)
        return _LEAF
    if t is tuple or t is list:
        children = x
        aux = None
    elif t is dict:
        if not x:
            return _EMPTY_DICT_NODE
        aux = dict_keys(x)
        children = [x[k] for k in aux]
    else:
        node_type = node_type_of(t)
        if node_type is None:
            leaves.append(x)
            return _LEAF
        children, aux = node_type.flatten(x)
    nodes = []
    for c in children:
        if type(c) in _leaf_types:                  # inline the commonest case
            leaves.append(c)
            nodes.append(_LEAF)
        else:
            nodes.append(_flatten(c, leaves, node_type_of))
    return (t, aux, tuple(nodes))


def _flatten_until(x: Any, leaves: list[Any], is_leaf: Callable[[Any], bool],
                   node_type: Callable[[type], _NodeType | None]) -> Any:
    parts = None if is_leaf(x) else _node_parts(x, node_type)
    if parts is None:
        leaves.append(x)
        return _LEAF
    kind, aux, children = parts
    return (kind, aux, tuple([_flatten_until(c, leaves, is_leaf, node_type)
                              for c in children]))


def _node_parts(x: Any, node_type_of: Callable[[type], _NodeType | None] = _node_type
                ) -> tuple[type, Any, Any] | None:
    """``(kind, aux, children)`` of a node, or None for a leaf."""
    node_type = node_type_of(type(x))
    if node_type is None:
        return None
    children, aux = node_type.flatten(x)
    return type(x), aux, tuple(children)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef._node is _LEAF


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every element is a leaf (a pytree of exactly itself)."""
    return all_leaves_by(tree_structure, iterable, is_leaf)


def all_leaves_by(structure: Callable[..., PyTreeDef], iterable: Iterable[Any],
                  is_leaf: Callable[[Any], bool] | None) -> bool:
    """``all_leaves`` with ``structure`` as the ``tree_structure`` to judge by."""
    return all(structure(x, is_leaf) == _LEAF_TREEDEF for x in iterable)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leafwise; each of ``rest`` must have ``tree``'s structure as a prefix."""
    return map_by(tree_flatten, f, tree, rest, is_leaf)


def map_by(flatten: Callable[..., tuple[list[Any], PyTreeDef]], f: Callable[..., Any],
           tree: Any, rest: Sequence[Any], is_leaf: Callable[[Any], bool] | None) -> Any:
    """``tree_map`` with ``flatten`` as the ``tree_flatten`` to descend by."""
    leaves, treedef = flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten([f(x) for x in leaves])
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(leaves, *others, strict=True)])


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False,
                           node_type: Callable[[type], _NodeType | None] = _node_type
                           ) -> tuple[list[tuple[tuple[Any, ...], Any]], PyTreeDef]:
    """``([(path, leaf), ...], treedef)``; a path is a tuple of keys (see ``keystr``).
    ``is_leaf(x)`` stops at a subtree; with ``is_leaf_takes_path`` it is
    ``is_leaf(path, x)``, as in JAX."""
    out: list[tuple[tuple[Any, ...], Any]] = []
    stop = None if is_leaf is None else (
        is_leaf if is_leaf_takes_path else lambda _, x: is_leaf(x))
    try:
        node = _with_path(tree, (), out, stop, node_type)
    except RecursionError as e:
        raise cycle_error(tree, None if is_leaf_takes_path else is_leaf, e) from None
    return out, PyTreeDef(node, len(out))


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False
                          ) -> list[tuple[tuple[Any, ...], Any]]:
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def _with_path(x: Any, path: tuple[Any, ...], out: list[Any],
               is_leaf: Callable[[tuple[Any, ...], Any], bool] | None,
               node_type: Callable[[type], _NodeType | None]) -> Any:
    parts = None if is_leaf is not None and is_leaf(path, x) else _node_parts(x, node_type)
    if parts is None:
        out.append((path, x))
        return _LEAF
    kind, aux, children = parts
    keys = _node_types[kind].keys(x, aux, len(children))
    return (kind, aux, tuple([_with_path(child, (*path, key), out, is_leaf, node_type)
                              for key, child in zip(keys, children, strict=True)]))


# --- matching one tree against another -------------------------------------------------------

class _Mismatch(Exception):
    """Internal: structures disagree; ``path`` is filled in while unwinding."""

    def __init__(self, expected: str, got: str):
        super().__init__(expected, got)
        self.expected, self.got, self.path = expected, got, []


def _describe(kind: type | None, aux: Any, n: int) -> str:
    """A node's structure in words, for error messages (kind None: a leaf)."""
    if kind is None:
        return "a leaf"
    if kind is _NoneType:
        return "None"
    entries = f"{n} {'entry' if n == 1 else 'entries'}"
    if kind is tuple or kind is list:
        return f"a {kind.__name__} of {entries}"
    if kind is dict or kind is collections.OrderedDict:
        article = "a" if kind is dict else "an"
        return f"{article} {kind.__name__} with keys {list(aux)}"
    if kind is collections.defaultdict:
        return f"a defaultdict with keys {list(aux[1])}"
    if kind not in _registered and issubclass(kind, tuple):
        return f"a {kind.__name__} namedtuple"
    return f"a {kind.__name__} node with {entries} (aux data {aux!r})"


def _matching_children(kind: type, aux: Any, n: int, x: Any) -> tuple[Any, ...]:
    """The children of ``x``, which must be a node of this kind, aux data and arity."""
    parts = _node_parts(x)
    if parts is None or parts[0] is not kind or parts[1] != aux or len(parts[2]) != n:
        got = _describe(None, None, 0) if parts is None else \
            _describe(parts[0], parts[1], len(parts[2]))
        raise _Mismatch(_describe(kind, aux, n), got)
    return parts[2]


def _child_key(x: Any, i: int) -> Any:
    kind, aux, children = _node_parts(x)
    return _node_types[kind].keys(x, aux, len(children))[i]


def _up_to(node: Any, x: Any, out: list[Any]) -> None:
    if node is _LEAF:
        out.append(x)
        return
    kind, aux, children = node
    values = _matching_children(kind, aux, len(children), x)
    for i, (child, value) in enumerate(zip(children, values, strict=True)):
        try:
            _up_to(child, value, out)
        except _Mismatch as m:
            m.path.insert(0, _child_key(x, i))
            raise


def broadcast_prefix(prefix: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None,
                     what: str = "in_axes") -> list[Any]:
    """One leaf of ``prefix`` per leaf of ``full_tree``, which ``prefix`` must be a tree
    prefix of (each prefix leaf stands for the whole subtree at its position).

    ``None`` in ``prefix`` is a leaf (JAX's "unmapped"); ``is_leaf`` applies to ``prefix``
    only, while ``full_tree`` is flattened as ``tree_flatten`` does, so the result lines
    up with ``tree_leaves(full_tree)``. ``what`` names ``prefix`` in the error message;
    when ``full_tree`` is the ``(args, kwargs)`` pair that transformations flatten, paths
    render as ``args[i]`` / ``kwargs['k']``.
    """
    if prefix is None or type(prefix) in _leaf_types:                 # the common case
        return [prefix] * len(tree_leaves(full_tree))
    out: list[Any] = []
    try:
        _broadcast(prefix, full_tree, is_leaf, out)
    except _Mismatch as m:
        raise ValueError(_prefix_error(what, full_tree, m)) from None
    return out


def _broadcast(prefix: Any, full: Any, is_leaf: Callable[[Any], bool] | None,
               out: list[Any]) -> None:
    if prefix is None or (is_leaf is not None and is_leaf(prefix)):
        parts = None
    else:
        parts = _node_parts(prefix)
    if parts is None:
        out.extend([prefix] * len(tree_leaves(full)))
        return
    kind, aux, children = parts
    values = _matching_children(kind, aux, len(children), full)
    for i, (child, value) in enumerate(zip(children, values, strict=True)):
        try:
            _broadcast(child, value, is_leaf, out)
        except _Mismatch as m:
            m.path.insert(0, _child_key(full, i))
            raise


def _prefix_error(what: str, full_tree: Any, m: _Mismatch) -> str:
    path = m.path
    args_kwargs = (type(full_tree) is tuple and len(full_tree) == 2 and
                   type(full_tree[0]) is tuple and type(full_tree[1]) is dict)
    if "out_axes" in what:
        whole, one, root = "the outputs", "the output", "output"
    elif "in_axes" in what or args_kwargs:
        whole, one, root = "the arguments", "the argument", "args"
    else:
        whole, one, root = "the tree", "the subtree", "tree"
    if args_kwargs and path:
        root = "args" if path[0] == SequenceKey(0) else "kwargs"
        path = path[1:]
    where = (root + keystr(path)) if (path or args_kwargs and m.path) else "the top level"
    return (f"{what} is not a tree prefix of {whole}: at {where}, {what} has {m.expected} "
            f"but {one} is {m.got}")
