"""custom_derivatives.linear_call: the examples of JAX 0.10.2's docstring (values
recorded from JAX), jvp, grad, transposes of transposes, and the residual error."""
import functools

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.custom_derivatives import linear_call


def _transpose(f, example):
    return lambda y: spmdc.linear_transpose(f, example)(y)[0]


def _div_add(x, denom):
    return x + linear_call(lambda r, x: x / r, lambda r, t: t / r, denom, x)


def _scaled(x):              # a transpose that is not the true one, to see which runs
    return linear_call(lambda r, x: x * r, lambda r, c: c * r * 10, 2.0, x)


def test_linear_call_as_jax():
    assert float(_div_add(9.0, 3.0)) == 12.0
    div3 = functools.partial(_div_add, denom=3.0)
    assert float(_transpose(div3, 1.0)(18.0)) == 24.0
    np.testing.assert_allclose(float(_transpose(_transpose(div3, 1.0), 1.0)(2.0)), 8 / 3,
                               rtol=1e-6)
    assert float(_transpose(_scaled, 1.0)(1.0)) == 20.0              # fun_transpose's
    assert float(_transpose(_transpose(_scaled, 1.0), 1.0)(1.0)) == 2.0   # fun again
    assert float(spmdc.grad(_scaled)(1.0)) == 20.0
    primal, tangent = spmdc.jvp(_scaled, (1.0,), (1.0,))
    assert (float(primal), float(tangent)) == (2.0, 2.0)
    np.testing.assert_array_equal(np.asarray(spmdc.vmap(_scaled)(jnp.ones(2))), [2.0, 2.0])
    assert float(spmdc.jit(spmdc.grad(_scaled))(1.0)) == 20.0


def test_linear_call_errors():
    with pytest.raises(ValueError, match="differentiated with respect to residual_args"):
        spmdc.grad(lambda r: jnp.sum(linear_call(lambda r, x: x * r, lambda r, c: c * r, r,
                                                 jnp.ones(2))))(3.0)
    with pytest.raises(TypeError, match="must be callable"):
        linear_call(None, lambda r, c: c, (), 1.0)
    bad = functools.partial(linear_call, lambda r, x: x, lambda r, c: (c, c), ())
    with pytest.raises(TypeError, match="transpose output pytree structure must match"):
        spmdc.grad(bad)(1.0)
