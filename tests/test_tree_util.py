"""spmdc.tree and spmdc.tree_util's helpers (spmdc/tree.py, spmdc/tree_util.py): the tree
namespace, transpose and broadcast, registering dataclasses and pytrees with keys,
Partial as a pytree. Flattening, treedefs and paths themselves: tests/core/test_tree.py."""
from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import tree_util


def test_tree_namespace_matches_tree_util():
    t = {"b": (1, 2), "a": [3, {"c": 4}]}
    assert spmdc.tree.leaves(t) == [3, 4, 1, 2]
    assert spmdc.tree.map(lambda x: x * 10, t) == {"b": (10, 20), "a": [30, {"c": 40}]}
    leaves, treedef = spmdc.tree.flatten(t)
    assert spmdc.tree.unflatten(treedef, leaves) == t
    assert spmdc.tree.structure(t) == treedef
    assert spmdc.tree.reduce(lambda a, b: a + b, t) == 10
    assert spmdc.tree.reduce(lambda a, b: a + b, t, 100) == 110
    assert spmdc.tree.all({"a": True, "b": (1, 2)}) and not spmdc.tree.all([1, 0])
    paths = [tree_util.keystr(p) for p, _ in spmdc.tree.leaves_with_path(t)]
    assert paths == ["['a'][0]", "['a'][1]['c']", "['b'][0]", "['b'][1]"]
    doubled = spmdc.tree.map_with_path(lambda p, x: (tree_util.keystr(p), x * 2), [1, 2])
    assert doubled == [("[0]", 2), ("[1]", 4)]


def test_tree_reduce_of_empty_tree_needs_initializer():
    with pytest.raises(TypeError, match="initializer"):
        spmdc.tree.reduce(lambda a, b: a + b, [])
    assert spmdc.tree.reduce(lambda a, b: a + b, [], 7) == 7


def test_tree_transpose():
    outer = spmdc.tree.structure([0, 0, 0])
    inner = spmdc.tree.structure({"x": 0, "y": 0})
    rows = [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}]
    assert spmdc.tree.transpose(outer, inner, rows) == {"x": [1, 3, 5], "y": [2, 4, 6]}
    assert spmdc.tree.transpose(outer, None, rows) == {"x": [1, 3, 5], "y": [2, 4, 6]}
    with pytest.raises(TypeError, match="outer leaf 1"):
        spmdc.tree.transpose(outer, inner, [rows[0], {"x": 1}, rows[2]])


def test_tree_broadcast():
    assert spmdc.tree.broadcast([1, 2], [(0, 0), {"a": 0}]) == [(1, 1), {"a": 2}]


def test_register_dataclass_under_jit():
    @functools.partial(tree_util.register_dataclass, data_fields=["w", "b"],
                       meta_fields=["name"])
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object
        name: str

    layer = Layer(jnp.ones((2, 2)), jnp.zeros(2), "dense")
    out = spmdc.jit(lambda p, x: x @ p.w + p.b)(layer, jnp.ones(2))
    np.testing.assert_allclose(out, [2.0, 2.0])
    leaves, treedef = tree_util.tree_flatten(layer)
    assert len(leaves) == 2
    assert tree_util.tree_unflatten(treedef, leaves).name == "dense"
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_leaves_with_path(layer)]
    assert paths == [".w", ".b"]


def test_register_dataclass_from_field_metadata_and_errors():
    @tree_util.register_dataclass
    @dataclasses.dataclass
    class P:
        x: object
        n: int = dataclasses.field(metadata=dict(static=True))

    leaves, treedef = tree_util.tree_flatten(P(1.0, 3))
    assert leaves == [1.0]
    assert tree_util.tree_unflatten(treedef, [2.0]) == P(2.0, 3)

    @dataclasses.dataclass
    class Q:
        a: object
        b: object
    with pytest.raises(ValueError, match=r"\['b'\] are neither"):
        tree_util.register_dataclass(Q, data_fields=["a"], meta_fields=[])


def test_register_pytree_with_keys_names_children():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tree_util.register_pytree_with_keys(
        Pair,
        lambda p: (((tree_util.GetAttrKey("a"), p.a), (tree_util.GetAttrKey("b"), p.b)), None),
        lambda aux, ch: Pair(*ch))
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_leaves_with_path(Pair(1, 2))]
    assert paths == [".a", ".b"]
    assert tree_util.tree_map(lambda x: x + 1, Pair(1, 2)).b == 3


def test_partial_is_a_pytree_through_jit():
    def scale(k, x):
        return k * x
    p = tree_util.Partial(scale, jnp.float32(3.0))
    out = spmdc.jit(lambda f, x: f(x))(p, jnp.ones(2))
    np.testing.assert_allclose(out, [3.0, 3.0])
    assert tree_util.tree_leaves(p) == [p.args[0]]
    nested = tree_util.Partial(functools.partial(scale, 2.0))
    assert tree_util.tree_leaves(nested) == [] and nested(5.0) == 10.0


def test_is_tree_node_and_flatten_one_level():
    assert tree_util.is_tree_node((1, 2)) and not tree_util.is_tree_node(1.0)
    assert tree_util.flatten_one_level({"a": 1, "b": (2,)})[0] == [1, (2,)]
    with pytest.raises(ValueError, match="leaf"):
        tree_util.flatten_one_level(1.0)


def test_is_leaf_takes_path():
    # Flax nnx's graphlib stops at a subtree by its path (JAX 0.10.2's values).
    tree = {"a": [1, 2], "b": {"c": 3}}

    def stop(path, x):
        return len(path) == 1 and path[0].key == "a"

    pairs, treedef = tree_util.tree_flatten_with_path(tree, stop, is_leaf_takes_path=True)
    assert [(tree_util.keystr(p), x) for p, x in pairs] == [("['a']", [1, 2]),
                                                            ("['b']['c']", 3)]
    assert treedef.num_leaves == 2
    assert len(spmdc.tree.leaves_with_path(tree, stop, is_leaf_takes_path=True)) == 2
    expected = {"a": 1, "b": {"c": 2}}
    assert spmdc.tree.map_with_path(lambda p, x: len(p), tree, is_leaf=stop,
                                    is_leaf_takes_path=True) == expected
    assert tree_util.tree_map_with_path(lambda p, x: len(p), tree, is_leaf=stop,
                                        is_leaf_takes_path=True) == expected
    assert len(tree_util.tree_leaves_with_path(tree, lambda x: x == 3)) == 3
