"""A custom_jvp / custom_vjp called under jit leaves no Tracer alive once its trace ends
(Note [rules hold no traced values] in spmdc/transforms/custom_derivatives.py):
``check_tracer_leaks`` passes, as in JAX. NumPyro's truncated StudentT calls TFP's
betainc (a custom_jvp around scipy's betainc, itself a custom_jvp) under jit with leak
checking on."""
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc.scipy.special import betainc


@spmdc.custom_jvp
def scaled_sin(a, x):
    return jnp.sin(x) * a


# The rule calls the function itself, so a custom_jvp call happens inside the rule's trace.
scaled_sin.defjvp(lambda p, t: (scaled_sin(*p), jnp.cos(p[1]) * p[0] * t[1]))


@spmdc.custom_vjp
def cube(x):
    return x ** 3


cube.defvjp(lambda x: (cube(x), x), lambda x, g: (3 * x ** 2 * g,))


def test_no_leak_and_values_under_jit():
    with spmdc.check_tracer_leaks():
        got = spmdc.jit(lambda x: scaled_sin(1.5, x))(0.3)
        grad = spmdc.jit(spmdc.grad(lambda x: scaled_sin(1.5, x)))(0.3)
        second = spmdc.jit(spmdc.grad(spmdc.grad(lambda x: scaled_sin(1.5, x))))(0.3)
        vjp_grad = spmdc.jit(spmdc.grad(cube))(2.0)
        inc = spmdc.jit(lambda x: betainc(1.5, 0.5, x))(0.3)
    np.testing.assert_allclose(float(got), 1.5 * np.sin(0.3), rtol=1e-6)
    np.testing.assert_allclose(float(grad), 1.5 * np.cos(0.3), rtol=1e-6)
    np.testing.assert_allclose(float(second), -1.5 * np.sin(0.3), rtol=1e-6)
    np.testing.assert_allclose(float(vjp_grad), 12.0, rtol=1e-6)
    np.testing.assert_allclose(float(inc), 0.077274255, rtol=1e-6)   # JAX 0.10.2's value
