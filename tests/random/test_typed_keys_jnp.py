"""Typed keys (spmdc/random/keys.py, Note [typed keys]) in the jnp functions Flax nnx's
Rngs uses on them (broadcast_to, array_equal, allclose), ``key[...]`` and ``key.copy()``;
expected values are JAX 0.10.2's."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import random


def test_ellipsis_index_is_the_key_and_copy_is_a_key():
    k = random.key(0)
    assert k[...] is k and k[()] is k
    c = k.copy()
    assert c is not k and c.dtype == k.dtype
    np.testing.assert_array_equal(np.asarray(random.key_data(c)), [0, 0])


@pytest.mark.parametrize("jit", [False, True])
def test_broadcast_to(jit):
    f = spmdc.jit(jnp.broadcast_to, static_argnums=1) if jit else jnp.broadcast_to
    out = f(random.key(1), (2,))
    assert out.shape == (2,) and out.dtype == random.key(0).dtype
    np.testing.assert_array_equal(np.asarray(random.key_data(out)), [[0, 1], [0, 1]])
    assert f(random.split(random.key(0), 3), (2, 3)).shape == (2, 3)


def test_equal_and_close():
    k0, k1 = random.key(0), random.key(1)
    ks = random.split(k0, 3)
    assert bool(jnp.allclose(k0, k0)) and not bool(jnp.allclose(k0, k1))
    assert bool(jnp.array_equal(ks, ks)) and not bool(jnp.array_equal(ks, ks[:2]))
    np.testing.assert_array_equal(np.asarray(jnp.isclose(ks, ks[0])), [True, False, False])
    with pytest.raises(TypeError, match="array_equal does not accept dtypes key<fry>, int"):
        jnp.array_equal(k0, 3)
