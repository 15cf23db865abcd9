"""Typed keys are single leaves to users' tree functions and are carried whole by the
transformations (Note [array nodes] in spmdc/core/tree.py); expected values are JAX
0.10.2's (``jax.tree.leaves(key) == [key]``, ``jax.tree.structure(key)`` is ``*``)."""
import numpy as np
import pytest

import spmdc
from spmdc import lax, random
from spmdc._src.tree_util import _registry


def _data(k):
    return np.asarray(random.key_data(k))


def test_a_key_is_one_leaf_to_users():
    k = random.key(3)
    ks = random.split(k, 6).reshape(2, 3)
    tree = {"a": k, "b": [ks, 1.0]}
    leaves = spmdc.tree.leaves(tree)
    assert len(leaves) == 3 and leaves[0] is k and leaves[1] is ks
    assert repr(spmdc.tree.structure(tree)) == "PyTreeDef({'a': *, 'b': [*, *]})"
    assert repr(spmdc.tree_util.tree_structure(k)) == "PyTreeDef(*)"
    assert spmdc.tree.map(np.shape, tree) == {"a": (), "b": [(2, 3), ()]}
    [(path, leaf)] = spmdc.tree_util.tree_flatten_with_path({"k": k})[0]
    assert spmdc.tree_util.keystr(path) == "['k']" and leaf is k
    assert spmdc.tree_util.all_leaves([k, ks]) and not spmdc.tree_util.is_tree_node(k)
    assert type(k) not in _registry and dict in _registry and list(_registry)
    leaves, treedef = spmdc.tree.flatten(tree)
    assert treedef.unflatten(leaves)["a"] is k


def test_keys_through_transformations_keep_their_type():
    k = random.key(0)
    ks = random.split(k, 3)
    out = spmdc.jit(lambda t: {"k": random.split(t["k"])[1], "n": t["n"] + 1})(
        {"k": k, "n": 1})
    np.testing.assert_array_equal(_data(out["k"]), _data(random.split(k)[1]))
    assert out["k"].dtype == k.dtype
    split = spmdc.vmap(random.split)(ks)
    assert split.shape == (3, 2) and split.dtype == k.dtype
    np.testing.assert_array_equal(_data(split[1]), _data(random.split(ks[1])))

    def body(carry, _):
        key, n = carry
        return (random.split(key)[0], n + 1), random.uniform(key)
    (last, n), draws = lax.scan(body, (k, 0), None, length=3)
    assert last.dtype == k.dtype and int(n) == 3 and draws.shape == (3,)
    np.testing.assert_array_equal(_data(last), _data(
        random.split(random.split(random.split(k)[0])[0])[0]))
    picked = lax.cond(False, lambda key: key, lambda key: random.split(key)[1], k)
    np.testing.assert_array_equal(_data(picked), _data(random.split(k)[1]))
    assert spmdc.jit(lambda t: spmdc.tree.leaves(t)[0])({"k": k}).dtype == k.dtype


def test_the_key_dtype_has_jaxs_itemsize():
    # Flax's nnx.tabulate counts a key's bytes as size * dtype.itemsize; JAX's key<fry> is
    # 8 bytes (two uint32 words).
    ks = random.split(random.key(0), 3)
    assert ks.dtype.itemsize == 8 and ks.dtype.name == "key<fry>"
    assert ks.size * ks.dtype.itemsize == np.asarray(random.key_data(ks)).nbytes


def test_result_type_of_keys_is_the_key_dtype():
    # As JAX (Flax's tabulate asks jnp.result_type of a key); spmdc read the key's weak
    # type, which a key array has not. A key promotes with nothing else: JAX's ValueError.
    k = random.key(0)
    assert spmdc.numpy.result_type(k) == k.dtype
    assert spmdc.numpy.result_type(random.split(k), k.dtype) == k.dtype
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        spmdc.numpy.result_type(k, 1.0)
