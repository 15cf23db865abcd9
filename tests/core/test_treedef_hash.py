"""A treedef is hashable even when a registered node's aux data is not, as JAX's is
(Note [treedef hash] in spmdc/core/tree.py): Equinox's filter_jit passes such a treedef
(its filter_grad wrapper keeps keyword arguments, a dict, as aux data) to jit as a
static argument."""
from __future__ import annotations

import numpy as np

import spmdc
from spmdc import tree_util


class Wrapper:
    def __init__(self, child, options):
        self.child, self.options = child, options


tree_util.register_pytree_node(Wrapper, lambda w: ((w.child,), w.options),
                               lambda options, children: Wrapper(children[0], options))


def test_treedef_with_unhashable_aux_data_hashes_and_compares():
    a = tree_util.tree_structure(Wrapper(1.0, {"k": 1}))
    b = tree_util.tree_structure(Wrapper(2.0, {"k": 1}))
    c = tree_util.tree_structure(Wrapper(2.0, {"k": 2}))
    assert hash(a) == hash(b) and a == b
    assert a != c                          # told apart by the aux data's ==
    assert len({a, b, c}) == 2


def test_builtin_nodes_hash_by_their_keys():
    a = tree_util.tree_structure({"x": 1, "y": 2})
    assert a == tree_util.tree_structure({"x": 3, "y": 4})
    assert hash(a) == hash(tree_util.tree_structure({"x": 3, "y": 4}))
    assert a != tree_util.tree_structure({"x": 1, "z": 2})


def test_such_a_treedef_is_a_static_jit_argument():
    calls = []

    def f(x, treedef):
        calls.append(treedef)
        return tree_util.tree_unflatten(treedef, [x * 2]).child

    jf = spmdc.jit(f, static_argnums=1)
    t = tree_util.tree_structure(Wrapper(0.0, {"k": [1]}))
    np.testing.assert_allclose(np.asarray(jf(np.float32(3.0), t)), 6.0)
    np.testing.assert_allclose(np.asarray(jf(np.float32(4.0), t)), 8.0)
    assert len(calls) == 1                 # the second call found the first's program
    t2 = tree_util.tree_structure(Wrapper(0.0, {"k": [2]}))
    np.testing.assert_allclose(np.asarray(jf(np.float32(5.0), t2)), 10.0)
    assert len(calls) == 2                 # a different aux data is a different program
