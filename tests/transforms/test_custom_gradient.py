"""spmdc.custom_gradient (JAX's ``jax.custom_gradient``, which TFP's JAX substrate
builds ``tf.custom_gradient`` on): the rule a function returns beside its value is its
VJP, under grad, jit, vmap, vjp and nested grad. Expected values recorded from JAX 0.10.2
(the docstring's examples and a few more)."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


@spmdc.custom_gradient
def square(x):
    return x ** 2, lambda g: (g * x,)


@spmdc.custom_gradient
def product(x, y):
    s = jnp.sin(x)
    return s * y, lambda g: [g * 2 * s, g * jnp.cos(y)]   # a list, as TFP's rules give


def test_the_rule_is_the_gradient_as_in_jax():
    assert float(square(3.0)) == 9.0
    assert float(spmdc.grad(square)(3.0)) == 3.0           # g * x, not 2x
    assert float(spmdc.jit(spmdc.grad(square))(3.0)) == 3.0
    np.testing.assert_array_equal(spmdc.vmap(spmdc.grad(square))(jnp.arange(3.0)),
                                  [0.0, 1.0, 2.0])
    gx, gy = spmdc.grad(product, argnums=(0, 1))(1.0, 2.0)
    np.testing.assert_allclose([gx, gy], [1.6829419, -0.41614684], rtol=1e-6)


def test_rules_of_one_argument_pytree_outputs_and_closures():
    @spmdc.custom_gradient
    def clip_gradient(x):
        return x, lambda g: (jnp.clip(g, -1.0, 1.0),)

    @spmdc.custom_gradient
    def scaled_tanh(x):
        return jnp.tanh(x), lambda g: g * 10.0             # a bare cotangent

    @spmdc.custom_gradient
    def pair(x):
        e = jnp.exp(x)                                     # closed over by the rule
        return (e, x.sum()), lambda ct: (ct[0] * e * 3.0 + ct[1],)

    assert float(spmdc.grad(lambda x: 5.0 * clip_gradient(x))(2.0)) == 1.0
    assert float(spmdc.grad(scaled_tanh)(0.5)) == 10.0
    x = jnp.array([0.0, 1.0])
    np.testing.assert_allclose(spmdc.grad(lambda v: pair(v)[0].sum() + 2 * pair(v)[1])(x),
                               [5.0, 10.154845], rtol=1e-6)
    (ct,) = spmdc.vjp(pair, x)[1]((jnp.ones(2), 1.0))
    np.testing.assert_allclose(ct, [4.0, 9.154845], rtol=1e-6)


def test_the_rule_is_differentiable():
    @spmdc.custom_gradient
    def cube(x):
        return x ** 3, lambda g: (g * 3 * x ** 2,)

    assert float(spmdc.grad(spmdc.grad(cube))(2.0)) == 12.0


def test_bad_uses_are_type_errors():
    with pytest.raises(TypeError, match="must return a pair"):
        spmdc.grad(spmdc.custom_gradient(lambda x: x))(1.0)
    with pytest.raises(TypeError, match="positional arguments only"):
        product(1.0, y=2.0)
    with pytest.raises(TypeError, match="expects a callable"):
        spmdc.custom_gradient(3)
