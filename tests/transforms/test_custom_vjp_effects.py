"""A custom_vjp's bwd is the user's backward code: its debug prints run in the backward
sweep, once per call (Note [effects] in spmdc/compiler/passes/cleanup.py); the lines
are JAX 0.10.2's (debug.print is unordered there, so they are compared as a set)."""
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
