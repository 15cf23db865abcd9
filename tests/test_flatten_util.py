"""spmdc.flatten_util.ravel_pytree against JAX 0.10.2's results (recorded below)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.flatten_util import ravel_pytree


def _tree():
    return {"a": jnp.arange(3.0), "b": (jnp.ones((2, 2), jnp.int32), 2.5),
            "c": jnp.array(True)}


def test_several_dtypes_promote_and_come_back():
    flat, unravel = ravel_pytree(_tree())
    # JAX: [0. 1. 2. 1. 1. 1. 1. 2.5 1.] float32
    np.testing.assert_array_equal(flat, [0, 1, 2, 1, 1, 1, 1, 2.5, 1])
    assert flat.dtype == np.float32
    back = unravel(flat * 2)
    np.testing.assert_array_equal(back["a"], [0, 2, 4])
    assert back["b"][0].dtype == np.int32 and back["b"][0].shape == (2, 2)
    np.testing.assert_array_equal(back["b"][0], 2)
    assert float(back["b"][1]) == 5.0 and back["c"].dtype == np.bool_
    with pytest.raises(TypeError, match="given array of dtype int32, but expected dtype "
                                        "float32"):
        unravel(flat.astype(jnp.int32))
    with pytest.raises(ValueError, match="vector of shape"):
        unravel(flat[:3])


def test_one_dtype_keeps_the_dtype_it_is_given():
    flat, unravel = ravel_pytree([jnp.arange(3.0)])
    assert unravel(jnp.arange(3, dtype=jnp.int32))[0].dtype == np.int32   # as JAX's
    flat, unravel = ravel_pytree([jnp.ones(2, jnp.bfloat16), jnp.ones(1, jnp.float16)])
    assert flat.dtype == np.float32
    assert [x.dtype for x in unravel(flat)] == [jnp.bfloat16, np.float16]


def test_no_leaves_is_an_empty_float32_vector():
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and flat.dtype == np.float32 and unravel(flat) == {}


def test_weak_types_as_jax():
    # JAX: ravel_pytree([2.0])[0] is weakly typed; with an f32 array it is not
    assert "weak_type=True" in repr(ravel_pytree([2.0])[0])
    assert "weak_type" not in repr(ravel_pytree([2.0, jnp.ones(1)])[0])


def test_unravel_is_hashable_by_what_it_does():
    _, one = ravel_pytree(_tree())
    _, two = ravel_pytree(_tree())
    assert one == two and hash(one) == hash(two)
    assert one != ravel_pytree([jnp.ones(3)])[1]
    flat = ravel_pytree(_tree())[0]
    out = spmdc.jit(lambda u, v: u(v)["a"], static_argnums=0)(one, flat)
    np.testing.assert_array_equal(out, [0, 1, 2])


def test_under_transformations():
    flat = spmdc.jit(lambda t: ravel_pytree(t)[0])(_tree())
    np.testing.assert_array_equal(flat, [0, 1, 2, 1, 1, 1, 1, 2.5, 1])
    grads = spmdc.grad(lambda t: (ravel_pytree(t)[0] ** 2).sum())(
        {"a": jnp.arange(3.0), "b": 2.0})
    np.testing.assert_allclose(grads["a"], [0, 2, 4])
    np.testing.assert_allclose(grads["b"], 4.0)
