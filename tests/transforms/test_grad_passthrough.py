"""grad's arguments that it does not differentiate pass through to the function as they
are, as in JAX (Note [what grad traces] in spmdc/transforms/grad.py): Equinox's
filter_grad passes a model's non-array half (activation functions) that way."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


def _loss(w, act, xs, *, scale=1.0):
    return scale * jnp.sum(act(xs @ w) ** 2)


def _expected(w, xs, scale):
    # d/dw scale * sum(tanh(xs @ w)^2) = scale * xs^T (2 tanh(z) (1 - tanh(z)^2))
    z = np.tanh(xs @ w)
    return scale * xs.T @ (2 * z * (1 - z ** 2))


XS = np.array([[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]], np.float32)
W = np.array([0.3, -0.2], np.float32)


def test_function_argument_and_keyword_pass_through_at_top_level():
    g = spmdc.grad(_loss)(W, jnp.tanh, XS, scale=3.0)
    np.testing.assert_allclose(np.asarray(g), _expected(W, XS, 3.0), rtol=1e-5)


def test_function_argument_passes_through_under_jit():
    @spmdc.jit
    def step(w, xs):
        return spmdc.value_and_grad(_loss)(w, jnp.tanh, xs, scale=0.5)

    value, g = step(W, XS)
    np.testing.assert_allclose(float(value), 0.5 * np.sum(np.tanh(XS @ W) ** 2), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(g), _expected(W, XS, 0.5), rtol=1e-5)


def test_python_number_argument_stays_a_python_number_under_jit():
    seen = []

    def f(x, n):
        seen.append(type(n))
        return x ** 3 if n > 2 else x ** 2      # Python control flow on n

    g = spmdc.jit(lambda x: spmdc.grad(f)(x, 3))(2.0)
    assert float(g) == 12.0
    assert seen == [int]


def test_array_argument_not_differentiated_is_a_constant():
    c = jnp.array([1.0, 2.0])
    g = spmdc.grad(lambda x, c: jnp.sum(x * c * c))(jnp.array([1.0, 1.0]), c)
    np.testing.assert_allclose(np.asarray(g), [1.0, 4.0])


def test_argnums_out_of_order_gives_gradients_in_argnums_order():
    ga, gb = spmdc.grad(lambda a, b: a * b.sum(), argnums=(1, 0))(2.0, jnp.arange(3.0))
    np.testing.assert_allclose(np.asarray(ga), [2.0, 2.0, 2.0])
    assert float(gb) == 3.0


def test_differentiated_argument_must_be_arrays():
    with pytest.raises(TypeError, match="function"):
        spmdc.grad(lambda act, x: act(x))(jnp.tanh, 1.0)


def test_aux_leaves_that_are_not_traced_come_back_as_they_are():
    # recorded from JAX 0.10.2: ('hi', 1.0, 3, None)
    g, aux = spmdc.grad(lambda x: (x * 2, ("hi", x, 3, None)), has_aux=True)(1.0)
    assert float(g) == 2.0
    assert aux[0] == "hi" and float(aux[1]) == 1.0 and aux[2] == 3 and type(aux[2]) is int
    assert aux[3] is None
    out = spmdc.jit(lambda y: spmdc.value_and_grad(
        lambda x: (x * x, {"name": "sq", "x": x}), has_aux=True)(y)[0][1]["x"])(3.0)
    assert float(out) == 3.0


def test_vjp_aux_leaves_that_are_not_traced_come_back_as_they_are():
    # recorded from JAX 0.10.2: out 2.0, aux (o, 'hi', 3), cotangent (2.0,)
    o = object()
    out, f, aux = spmdc.vjp(lambda x: (x * 2, (o, "hi", 3, x + 1)), 1.0, has_aux=True)
    assert float(out) == 2.0
    assert aux[0] is o and aux[1] == "hi" and aux[2] == 3 and float(aux[3]) == 2.0
    assert float(f(1.0)[0]) == 2.0
