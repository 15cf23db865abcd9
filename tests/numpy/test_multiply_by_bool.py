"""``x * b`` with one boolean operand gives JAX's values eagerly and under jit (Note
[multiplying by a boolean] in spmdc/numpy/ufuncs.py): XLA rewrites the product into a
select, so ``inf * False`` and ``nan * False`` are 0 in JAX 0.10.2 (values recorded by
running the same lines under JAX)."""
import numpy as np

import spmdc
import spmdc.numpy as jnp

INF, NAN = np.float32(np.inf), np.float32(np.nan)


def test_eager_product_with_a_bool_is_a_select():
    np.testing.assert_array_equal(np.asarray(jnp.inf * jnp.array(False)), 0.0)
    got = jnp.multiply(jnp.array([INF, NAN, 2.0, -3.0]), jnp.array([False, False, True, True]))
    np.testing.assert_array_equal(np.asarray(got), [0.0, 0.0, 2.0, -3.0])
    assert got.dtype == np.float32
    # The bool on the left, and a NumPy bool array.
    got = jnp.array([True, False]) * jnp.array([INF, INF])
    np.testing.assert_array_equal(np.asarray(got), [np.inf, 0.0])
    # Integers are unchanged by the select; bool * bool stays logical and.
    np.testing.assert_array_equal(np.asarray(jnp.array([3, 4]) * np.array([True, False])),
                                  [3, 0])
    assert (jnp.array([True, True]) * jnp.array([True, False])).dtype == np.bool_


def test_jitted_product_agrees_with_eager():
    # NumPyro's binary_cross_entropy_with_logits at the infinities.
    def bce(x, y):
        finite = jnp.isfinite(x)
        safe = jnp.where(finite, x, jnp.zeros_like(x))
        usual = jnp.clip(safe, 0) + jnp.log1p(jnp.exp(-jnp.abs(safe))) - safe * y
        return jnp.where(finite, usual, jnp.inf * jnp.logical_xor(y, x > 0))
    x = jnp.array([-INF, INF, -INF, INF])
    y = jnp.array([0.0, 0.0, 1.0, 1.0])
    want = [0.0, np.inf, np.inf, 0.0]
    np.testing.assert_array_equal(np.asarray(bce(x, y)), want)
    np.testing.assert_array_equal(np.asarray(spmdc.jit(bce)(x, y)), want)
