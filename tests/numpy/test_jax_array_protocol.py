"""Objects with ``__jax_array__`` (Note [__jax_array__] in spmdc/core/operands.py): jnp
functions and Array operators compute with what it returns, eagerly and when it is a
traced value (Flax's nnx.Variable holds one inside nnx.jit/nnx.vmap and is passed to
jnp.dot and to ``array + variable``; JAX 0.10.2 accepts both)."""
import numpy as np

import spmdc
import spmdc.numpy as jnp


class Holder:
    """Stands for the array it holds, as Flax's Variable does (and defines no operators)."""

    def __init__(self, value):
        self.value = value

    def __jax_array__(self):
        return self.value


X = np.array([1.0, 2.0, 3.0], np.float32)


def uses(x):
    w = Holder(x * 2)
    return [jnp.dot(x, w), x + w, w + x if hasattr(w, "__add__") else jnp.add(w, x),
            x * w, jnp.sin(w), jnp.multiply(w, 3.0), jnp.where(x > 1, w, 0.0),
            jnp.asarray(w), x < w]


def expected(x):
    w = x * 2
    return [np.dot(x, w), x + w, w + x, x * w, np.sin(w), w * 3, np.where(x > 1, w, 0),
            w, x < w]


def test_eager_jit_and_vmap_unwrap_the_holder():
    for got in (uses(jnp.asarray(X)), spmdc.jit(uses)(X)):
        for g, e in zip(got, expected(X), strict=True):
            np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6)
    xs = np.stack([X, -X])
    got = spmdc.vmap(lambda x: jnp.dot(x, Holder(x * 2)) + Holder(x).value.sum())(xs)
    np.testing.assert_allclose(got, [np.dot(x, 2 * x) + x.sum() for x in xs], rtol=1e-6)
