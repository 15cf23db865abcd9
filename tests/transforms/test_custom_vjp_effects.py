"""A custom_vjp's bwd is the user's backward code: its debug prints run in the backward
sweep, once per call; ``vjp``'s ``vjp_fn`` does not print the primal's prints again
(Note [effects] in spmdc/compiler/passes/cleanup.py). The lines are JAX 0.10.2's
(debug.print is unordered there, so they are compared as a set where several run)."""
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def _printing_custom_vjp():
    @spmdc.custom_vjp
    def f(x):
        return x * 2

    def fwd(x):
        return x * 2, x

    def bwd(x, g):
        def body(c):
            i, g = c
            spmdc.debug.print("bwd step {i}", i=i)
            return i + 1, g
        _, g = lax.while_loop(lambda c: c[0] < 2, body, (0, g))
        spmdc.debug.print("bwd {g}", g=g)
        return (g * 2,)
    f.defvjp(fwd, bwd)
    return f


def test_debug_prints_of_bwd_run_in_the_backward_sweep(capfd):
    f = _printing_custom_vjp()
    value, grad = spmdc.jit(spmdc.value_and_grad(lambda x: f(x).sum()))(jnp.ones(2))
    assert float(value) == 4.0
    np.testing.assert_allclose(np.asarray(grad), [2.0, 2.0])
    expected = ["bwd [1. 1.]", "bwd step 0", "bwd step 1"]
    assert sorted(capfd.readouterr().out.splitlines()) == expected
    spmdc.grad(lambda x: f(x).sum())(jnp.ones(2))                 # eagerly too
    assert sorted(capfd.readouterr().out.splitlines()) == expected


def _printing_sin(x):
    spmdc.debug.print("f {}", x)
    return jnp.sin(x) * 2


def _doubling_with_printing_bwd():
    @spmdc.custom_vjp
    def h(x):
        return x * 2

    def bwd(x, g):
        spmdc.debug.print("bwd {}", g)
        return (g * 2,)
    h.defvjp(lambda x: (x * 2, x), bwd)
    return h


def test_vjp_fn_does_not_print_the_primal_again(capfd):
    h = _doubling_with_printing_bwd()

    @spmdc.jit
    def pulled(x):
        y, vjp_fn = spmdc.vjp(lambda x: h(_printing_sin(x)), x)
        return y, vjp_fn(jnp.ones_like(y))[0]
    y, ct = pulled(1.0)
    np.testing.assert_allclose([float(y), float(ct)], [3.3658838, 2.161209], rtol=1e-6)
    assert sorted(capfd.readouterr().out.splitlines()) == ["bwd 1.0", "f 1.0"]

    y, vjp_fn = spmdc.vjp(lambda x: h(_printing_sin(x)), 2.0)        # eagerly
    assert capfd.readouterr().out.splitlines() == ["f 2.0"]
    np.testing.assert_allclose(float(vjp_fn(1.0)[0]), -1.6645874, rtol=1e-6)
    assert capfd.readouterr().out.splitlines() == ["bwd 1.0"]


def test_a_loop_body_pulling_back_in_a_cond_prints_each_step_once(capfd):
    """Equinox's checkpointed while_loop: each step takes a vjp of the body and pulls
    back in one branch of a cond; the body's print runs once per step."""
    def body(c):
        i, v, ct = c
        y, vjp_fn = spmdc.vjp(lambda v: _printing_sin(v) + i, v)
        ct2 = lax.cond(i % 2 == 0, lambda: vjp_fn(ct)[0], lambda: ct)
        return i + 1, y, ct2
    _, v, ct = spmdc.jit(lambda x: lax.while_loop(lambda c: c[0] < 3, body, (0, x, 1.0)))(0.5)
    np.testing.assert_allclose([float(v), float(ct)], [2.9667892, -3.0729518], rtol=1e-6)
    assert capfd.readouterr().out.splitlines() == [
        "f 0.5", "f 0.9588510990142822", "f 2.637064218521118"]
