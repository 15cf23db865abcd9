"""Mutable array references (spmdc/core/refs.py, Note [refs as threaded state]): eager use,
refs under jit, loops and branches, and under grad and vmap; values recorded from JAX
0.10.2's tests/mutable_array_test.py cases run with JAX."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


def test_eager_read_write_and_repr():
    r = spmdc.new_ref(jnp.arange(5.0))
    assert repr(r) == "Ref([0., 1., 2., 3., 4.], dtype=float32)"
    assert str(spmdc.typeof(r)) == "Ref{float32[5]}"
    assert (r.shape, r.dtype, r.ndim, r.size, len(r)) == ((5,), np.float32, 1, 5, 5)
    r[3] = 100.0
    r[1] += 2
    np.testing.assert_array_equal(r[...], [0, 3, 2, 100, 4])
    np.testing.assert_array_equal(r[1:3], [3, 2])
    np.testing.assert_array_equal(spmdc.freeze(r), [0, 3, 2, 100, 4])
    assert repr(spmdc.new_ref(1.0)) == "Ref(1., dtype=float32, weak_type=True)"
    assert str(spmdc.typeof(spmdc.new_ref(1.0))) == "Ref{float32[]}"
    assert repr(spmdc.new_ref(jnp.zeros((2, 2), jnp.int32))) == (
        "Ref([[0, 0],\n       [0, 0]], dtype=int32)")


def test_abstract_ref_type_and_module_path():
    from spmdc._src.state.types import AbstractRef
    r = spmdc.new_ref(jnp.zeros(3), kind="no_grad_no_remat")
    t = spmdc.typeof(r)
    assert isinstance(t, AbstractRef) and t.kind == "no_grad_no_remat"
    assert t == spmdc.typeof(spmdc.new_ref(jnp.ones(3)))
    assert str(t.inner_aval) == "float32[3]" and t.shape == (3,)
    assert not isinstance(r, spmdc.Array) and isinstance(r, spmdc.Ref)
    assert spmdc.tree_util.tree_leaves([r])[0] is r          # a ref is a leaf


def test_indexed_writes_and_state_functions():
    r = spmdc.new_ref(jnp.zeros(3))
    r[jnp.array([0, 2])] = jnp.ones(2) * 7
    np.testing.assert_array_equal(r[...], [7, 0, 7])
    np.testing.assert_array_equal(r[jnp.array([0, 2])], [7, 7])
    x = spmdc.new_ref(jnp.zeros(3))
    np.testing.assert_array_equal(spmdc.ref.swap(x, (), jnp.ones(3)), [0, 0, 0])
    spmdc.ref.addupdate(x, 0, 5.0)
    np.testing.assert_array_equal(spmdc.ref.get(x, ()), [6, 1, 1])
    spmdc.ref.set(x, (), jnp.zeros(3))
    np.testing.assert_array_equal(x[...], [0, 0, 0])


def test_bad_writes_raise_as_jax():
    r = spmdc.new_ref(jnp.zeros(3))
    with pytest.raises(ValueError, match="Invalid shape for `swap`"):
        r[...] = 1.0                           # JAX does not broadcast a written value
    with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
        r[...] = jnp.ones(3, jnp.float16)
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`"):
        r.addupdate(1.0)
    with pytest.raises(TypeError, match="new_ref"):
        spmdc.new_ref([1, 2])
    np.testing.assert_array_equal(r[...], [0, 0, 0])


def test_empty_ref_has_the_type_asked_for():
    e = spmdc.empty_ref(spmdc.ShapeDtypeStruct((2,), jnp.int32))
    assert str(spmdc.typeof(e)) == "Ref{int32[2]}"
    e[...] = jnp.ones(2, jnp.int32)
    np.testing.assert_array_equal(spmdc.freeze(e), [1, 1])
