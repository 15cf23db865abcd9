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


def test_shape_functions_act_on_keys():
    # See Note [shape functions on keys]: each is the NumPy function on the key data
    # with the axes taken against the key array's rank.
    ks = random.split(random.key(0), 6).reshape(2, 3)
    d = np.asarray(random.key_data(ks))
    k0 = ks[0, 0]

    def check(out, expected):
        assert out.dtype == ks.dtype and out.shape == expected.shape[:-1]
        np.testing.assert_array_equal(np.asarray(random.key_data(out)), expected)
    check(jnp.swapaxes(ks, 0, -1), np.swapaxes(d, 0, 1))
    check(jnp.transpose(ks), d.transpose(1, 0, 2))
    check(jnp.moveaxis(ks, -1, 0), np.moveaxis(d, 1, 0))
    check(jnp.reshape(ks, (3, -1)), d.reshape(3, 2, 2))
    check(jnp.reshape(ks, (3, 2), order="F"),
          np.stack([d[..., i].reshape(3, 2, order="F") for i in range(2)], -1))
    check(jnp.ravel(ks), d.reshape(6, 2))
    check(jnp.expand_dims(ks, -1), d[:, :, None])
    check(jnp.squeeze(ks[:1]), d[0])
    check(jnp.flip(ks, -1), d[:, ::-1])
    check(jnp.concatenate([ks, ks], axis=-1), np.concatenate([d, d], 1))
    check(jnp.concatenate([ks, ks], axis=None), np.concatenate([d.reshape(6, 2)] * 2))
    check(jnp.stack([k0, k0]), np.stack([d[0, 0]] * 2))
    check(jnp.stack([ks, ks], axis=-1), np.stack([d, d], 2))
    check(jnp.take(ks, np.array([2, 0]), axis=1), d[:, [2, 0]])
    check(jnp.take(ks, np.array([4])), d.reshape(6, 2)[[4]])
    check(jnp.where(np.array([True, False, True]), ks[0], ks[1]),
          np.where(np.array([True, False, True])[:, None], d[0], d[1]))
    check(spmdc.jit(lambda k: jnp.swapaxes(k, 0, 1))(ks), np.swapaxes(d, 0, 1))
    np.testing.assert_array_equal(np.asarray(jnp.equal(ks[0], ks[0, 1])), [False, True, False])
    np.testing.assert_array_equal(np.asarray(jnp.not_equal(ks[0], ks[0, 1])),
                                  [True, False, True])
    with pytest.raises(TypeError, match="concatenate does not accept dtypes key<fry>"):
        jnp.concatenate([ks, np.zeros((2, 3))])
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        jnp.swapaxes(ks, 0, 2)
