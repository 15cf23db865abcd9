"""Loop bodies are traced once, as in JAX, so their Python side effects run once per trace
(a weakly typed carry whose output is strong but of the same dtype needs no retrace)."""
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def test_scan_with_weak_init_traces_its_body_once():
    calls = []

    def body(c, x):
        calls.append(1)
        return c + x, c

    carry, ys = spmdc.jit(lambda xs: lax.scan(body, 0.0, xs))(jnp.ones(3))
    assert len(calls) == 1
    assert float(carry) == 3.0 and not carry.weak
    np.testing.assert_allclose(ys, [0.0, 1.0, 2.0])
    assert ys.weak                     # the body saw a weak carry, as JAX's does
    calls.clear()
    assert float(spmdc.grad(lambda x: lax.scan(body, x, jnp.ones(3))[0])(1.0)) == 1.0
    assert len(calls) == 1


def test_while_loop_with_weak_init_traces_its_body_once():
    calls = []

    def body(c):
        calls.append(1)
        return c + jnp.float32(1)

    assert float(spmdc.jit(lambda: lax.while_loop(lambda c: c < 10, body, 0.0))()) == 10.0
    assert len(calls) == 1


def test_a_dtype_change_still_promotes_the_carry():
    # an int carry that the body turns into floats: JAX promotes the weak init and retraces
    out = spmdc.jit(lambda: lax.fori_loop(0, 3, lambda i, c: c + 0.5, 0))()
    assert out.dtype == np.float32 and float(out) == 1.5
