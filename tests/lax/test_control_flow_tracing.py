"""Loop bodies are traced once, as in JAX, so their Python side effects run once per trace
(a weakly typed carry whose output is strong but of the same dtype needs no retrace)."""
import numpy as np
import pytest

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


def test_while_loop_traces_cond_then_body_and_both_again_after_a_promotion():
    # JAX 0.10.2 prints cond ~int32[], body ~int32[], cond float32[], body float32[]: the
    # promoted carry is strongly typed, and each pass traces cond first
    seen = []

    def cond(c):
        seen.append(("cond", str(spmdc.typeof(c))))
        return c < 3

    def body(c):
        seen.append(("body", str(spmdc.typeof(c))))
        return c + 1.0

    out = spmdc.jit(lambda: lax.while_loop(cond, body, 0))()
    assert seen == [("cond", "~int32[]"), ("body", "~int32[]"), ("cond", "float32[]"),
                    ("body", "float32[]")]
    assert float(out) == 3.0 and out.dtype == np.float32 and not out.weak


def test_a_function_given_for_several_branches_is_traced_once():
    # Haiku's stateful cond/switch check that each distinct branch runs once, as in JAX
    calls = []

    def square(x):
        calls.append(1)
        return x ** 2

    assert float(lax.cond(False, square, square, 3.0)) == 9.0
    assert len(calls) == 1
    calls.clear()
    cube = lambda x: x ** 3      # noqa: E731
    f = spmdc.jit(lambda i, x: lax.switch(i, [square, cube, square, square], x))
    assert [float(f(i, 2.0)) for i in range(4)] == [4.0, 8.0, 4.0, 4.0]
    assert len(calls) == 1       # one trace of the jitted function, square traced once
    y = 3.0
    grads = spmdc.grad(lambda x, y: lax.switch(2, [square, lambda x: x * y, square], x),
                       argnums=(0, 1))(2.0, y)
    assert [float(g) for g in grads] == [4.0, 0.0]


def test_branches_of_different_structures_give_jaxs_words():
    with pytest.raises(TypeError, match="cond branch outputs must have the same pytree "
                                        "structure"):
        lax.cond(False, lambda x: (x, x), lambda x: x, 1.0)
    with pytest.raises(TypeError, match="switch branch outputs must have the same pytree "
                                        "structure"):
        lax.switch(0, [lambda x: [x], lambda x: x], 1.0)


def test_control_flow_runs_under_disable_jit():
    # chex's fake_jit runs test suites under disable_jit; a staged loop used to call
    # itself again and again (RecursionError), random.randint's threefry among them
    with spmdc.disable_jit():
        assert int(lax.fori_loop(0, 3, lambda i, c: c + 1, 0)) == 3
        assert float(lax.cond(True, lambda x: x + 1, lambda x: x - 1, 1.0)) == 2.0
        assert int(lax.switch(1, [lambda x: x, lambda x: 2 * x], 4)) == 8
        carry, ys = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(3.0))
        key = spmdc.random.PRNGKey(27)
        drawn = spmdc.random.randint(key, (2, 3), 0, 10)
    assert float(carry) == 3.0
    np.testing.assert_array_equal(ys, [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(drawn, spmdc.random.randint(key, (2, 3), 0, 10))
