"""A jit called under another transformation is traced once per signature (Note
[inlined jit traces once per signature] in spmdc/transforms/jit_inline.py); the trace
counts are JAX 0.10.2's."""
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def test_grad_of_a_jitted_custom_vjp_traces_fwd_and_bwd_once():
    counts = {"f": 0, "fwd": 0, "bwd": 0}

    @spmdc.custom_vjp
    def f(x):
        counts["f"] += 1
        return jnp.sin(x)

    def fwd(x):
        counts["fwd"] += 1
        return jnp.sin(x), x

    def bwd(x, g):
        counts["bwd"] += 1
        return (g * 2.0 * jnp.cos(x),)

    f.defvjp(fwd, bwd)
    jf = spmdc.jit(f)
    for x in (1.0, 2.0, 3.0):
        np.testing.assert_allclose(float(spmdc.grad(jf)(x)), 2 * np.cos(x), rtol=1e-6)
    assert counts == {"f": 1, "fwd": 1, "bwd": 1}      # JAX: 1, 1, 1
    assert jf.trace_count == 1
    spmdc.grad(spmdc.jit(f))(1.0)                       # a fresh wrapper shares the trace
    assert jf.trace_count == 1 and counts["bwd"] == 1
    jnp_grad = spmdc.vmap(spmdc.grad(jf))(jnp.arange(3.0))   # another signature
    np.testing.assert_allclose(np.asarray(jnp_grad), 2 * np.cos(np.arange(3.0)), rtol=1e-6)


def test_the_trace_depends_on_the_axis_names_and_the_signature():
    @spmdc.jit
    def total(x):
        return lax.psum(x, "i")

    x = jnp.arange(4.0)
    np.testing.assert_allclose(np.asarray(spmdc.vmap(total, axis_name="i")(x)), [6.0] * 4)
    y = jnp.arange(6.0).reshape(2, 3)
    out = spmdc.vmap(spmdc.vmap(total, axis_name="i"), axis_name="j")(y)
    np.testing.assert_allclose(np.asarray(out), [[3.0] * 3, [12.0] * 3])
    out = spmdc.vmap(spmdc.vmap(total, axis_name="j"), axis_name="i")(y)
    np.testing.assert_allclose(np.asarray(out), [[3.0, 5.0, 7.0]] * 2)
    assert total.trace_count == 3
    scale = spmdc.jit(lambda a, k: a * k, static_argnums=1)
    np.testing.assert_allclose(float(spmdc.grad(scale)(1.0, 2.0)), 2.0)
    np.testing.assert_allclose(float(spmdc.grad(scale)(1.0, 3.0)), 3.0)
    np.testing.assert_allclose(np.asarray(spmdc.vmap(scale, in_axes=(0, None))(
        jnp.ones(2, jnp.int32), 3)), [3, 3])


def test_the_trace_depends_on_the_states_jit_keys_on():
    # a user context's value is part of jit's key (make_user_context), so also of the
    # trace kept for a jit under grad: a new value traces again and is read again
    ctx = spmdc.make_user_context(default_value=1.0)

    @spmdc.jit
    def scaled(x):
        return x * ctx.value

    np.testing.assert_allclose(float(spmdc.grad(scaled)(1.0)), 1.0)
    with ctx(3.0):
        np.testing.assert_allclose(float(spmdc.grad(scaled)(1.0)), 3.0)
    assert scaled.trace_count == 2


def test_the_trace_depends_on_whether_vmap_batches_it():
    # threefry is traced rolled for small draws, unrolled where vmap batches the trace
    split = spmdc.jit(lambda k: spmdc.random.split(k))
    key = spmdc.random.PRNGKey(0)
    spmdc.grad(lambda x: x * spmdc.random.normal(split(key)[0], ()))(1.0)   # kept unbatched
    batched = spmdc.jit(spmdc.vmap(lambda k: split(k)))
    assert "stablehlo.while" not in batched.lower(spmdc.random.split(key, 16)).as_text()
