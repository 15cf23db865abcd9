"""``f.lower(x)`` then ``f(x)`` traces ``f`` once, as in JAX (Note [a call after lower]
in jit.py); Flax's nnx summary counts traces."""
import numpy as np

import spmdc
import spmdc.numpy as jnp


def test_a_call_after_lower_reuses_its_trace():
    traced = []

    def f(x):
        traced.append(x.shape)
        return x * 2

    jf = spmdc.jit(f)
    x = jnp.arange(3.0)
    lowered = jf.lower(x)
    assert traced == [(3,)]
    np.testing.assert_array_equal(np.asarray(jf(x)), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(jf(x)), [0.0, 2.0, 4.0])
    assert traced == [(3,)] and jf.trace_count == 1
    np.testing.assert_array_equal(np.asarray(lowered.compile()(x)), [0.0, 2.0, 4.0])
    # another signature traces anew
    np.testing.assert_array_equal(np.asarray(jf(jnp.arange(2.0))), [0.0, 2.0])
    assert traced == [(3,), (2,)]


def test_lower_at_one_signature_does_not_serve_another():
    traced = []

    def f(x):
        traced.append(x.dtype)
        return x + 1

    jf = spmdc.jit(f)
    jf.lower(np.zeros(2, np.float32))
    assert jf(np.zeros(2, np.int32)).dtype == np.int32
    assert traced == [np.float32, np.int32]


def test_lower_then_call_inside_another_trace_traces_once():
    # Flax's nnx.tabulate lowers and then calls each submodule's jit inside the
    # enclosing module's trace; JAX traces the submodule once
    traced = []

    def inner(x):
        traced.append(x.shape)
        return jnp.sin(x)

    inner_jit = spmdc.jit(inner)

    def outer(x):
        inner_jit.lower(x)
        return inner_jit(x) + 1

    x = np.array([0.0, 0.5], np.float32)
    np.testing.assert_allclose(np.asarray(spmdc.jit(outer)(x)), np.sin(x) + 1, rtol=1e-6)
    assert traced == [(2,)]
