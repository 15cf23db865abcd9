"""The pytree names of JAX 0.10.2 added to spmdc.tree_util and spmdc.tree
(``flatten_one_level_with_keys``, ``tree_reduce_associative``, ``jax.tree.static``,
``KeyPath``) and ``jax._src.tree_util``'s ``_registry`` and ``prefix_errors``, against JAX's
recorded results."""
from __future__ import annotations

import collections
import dataclasses

import pytest

import spmdc
from spmdc import tree_util
from spmdc._src.tree_util import _registry, prefix_errors


def test_flatten_one_level_with_keys():
    # JAX: (((DictKey(key='a'), 1), (DictKey(key='b'), [2])), ('a', 'b'))
    assert tree_util.flatten_one_level_with_keys({"b": [2], "a": 1}) == (
        ((tree_util.DictKey("a"), 1), (tree_util.DictKey("b"), [2])), ("a", "b"))
    assert tree_util.flatten_one_level_with_keys([1, 2]) == (
        ((tree_util.SequenceKey(0), 1), (tree_util.SequenceKey(1), 2)), None)
    assert tree_util.flatten_one_level_with_keys(None) == ((), None)
    with pytest.raises(ValueError, match="can't tree-flatten type: <class 'int'>"):
        tree_util.flatten_one_level_with_keys(1)


def test_reduce_associative_is_balanced():
    # JAX: ((ab)(c(de)))
    assert tree_util.tree_reduce_associative(lambda a, b: f"({a}{b})", list("abcde")) == \
        "((ab)(c(de)))"
    assert spmdc.tree.reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError, match="Must specify identity"):
        spmdc.tree.reduce_associative(lambda a, b: a + b, [])


def test_static_fields_are_aux_data():
    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        x: float
        op: str = spmdc.tree.static(default="add", metadata={"doc": "kind"})

    leaves, treedef = spmdc.tree.flatten(Op(1.0))
    assert leaves == [1.0] and str(treedef) == "PyTreeDef(CustomNode(Op[('add',)], [*]))"
    assert dataclasses.fields(Op)[1].metadata == {"static": True, "doc": "kind"}


def test_key_path_annotates_paths():
    paths = [p for p, _ in tree_util.tree_flatten_with_path({"a": [1]})[0]]
    assert paths == [(tree_util.DictKey("a"), tree_util.SequenceKey(0))]
    assert tree_util.KeyPath == tuple[tree_util.KeyEntry, ...]


def test_registry_holds_the_node_types():
    # Flax's nnx: ``type(x) in JAX_PYTREE_REGISTRY``
    assert {tuple, list, dict, type(None), collections.OrderedDict} <= set(_registry)
    assert int not in _registry

    class Node:
        pass
    assert Node not in _registry
    tree_util.register_pytree_node(Node, lambda n: ((), None), lambda a, c: Node())
    assert Node in _registry


def test_prefix_errors_name_each_mismatch_as_jax_does():
    # Flax's struct test raises prefix_errors(...)[0]('in_axes') and matches 'in_axes.y'.
    @tree_util.register_dataclass
    @dataclasses.dataclass
    class Point:
        x: float
        y: object
    assert prefix_errors((1, 0), (1, [2, 3])) == [] and prefix_errors(0, {"a": [1]}) == []
    (e,) = prefix_errors(Point(1.0, [2.0]), Point(1.0, 2.0))
    assert str(e("in_axes")) == (  # JAX 0.10.2's text
        "pytree structure error: different types at key path\n    in_axes.y\n"
        "At that key path, the prefix pytree in_axes has a subtree of type\n"
        "    <class 'list'>\nbut at the same key path the full pytree has a subtree of "
        "different type\n    <class 'float'>.")
    first, second = prefix_errors({"a": [1, 2], "b": (0, 0)}, {"a": [1], "b": 3})
    assert isinstance(first("f"), ValueError) and str(first("f")).splitlines()[1:] == [
        "    f['a']", "At that key path, the prefix pytree f has a subtree of type list of "
        "length 2, but the full pytree has a subtree of the same type but of length 1."]
    assert str(second("f")).splitlines()[:2] == [
        "pytree structure error: different types at key path", "    f['b']"]
    (e,) = prefix_errors({"a": 1}, {"a": 1, "b": 2})
    assert str(e("t")).splitlines()[-5:] == [
        "    a", "but at the same key path the full pytree has a subtree of the same type "
        "but with 2 child keys", "    a b", "so the symmetric difference on key sets is",
        "    b"]
