"""Which values reverse mode differentiates (Note [activity] in passes/autodiff.py).

A loop or branch output that does not depend on the differentiated input carries no
cotangent, even when another output of the same equation does. That matters most for
while loops, which have no VJP: grad must work around one that the differentiated input
does not reach (as in JAX), and still raise for one that it does. The expected values
are the closed forms of each program.
"""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.primitives.control_flow import WhileLoopVJPError

X, Y = 1.25, 0.5


def count_up(y):                       # 0.5 -> 3.5 in three steps: a float while loop
    return lax.while_loop(lambda c: c < 3.5, lambda c: c + 1.0, y)


def while_with_two_carries(x, y):
    _, b = lax.while_loop(lambda c: c[1] < 10.0, lambda c: (c[0] * 2.0, c[1] + 1.0), (x, y))
    return b * x                       # b does not depend on x; the other carry does


def scan_around_a_while(x, y):
    def step(c, t):
        return c * count_up(y) + t, c * 2.0
    c, ys = lax.scan(step, x, jnp.arange(3.0))
    return c + ys.sum()


def cond_with_a_while_branch(x, y):
    u, v = lax.cond(x > 0, lambda a, b: (a * 2.0, count_up(b)),
                    lambda a, b: (a * 3.0, b), x, y)
    return u * v + v * x


def fori_with_a_traced_bound(x, y):
    n = jnp.int32(2) + jnp.asarray(y > 0).astype(jnp.int32)
    return lax.fori_loop(0, n, lambda i, c: c * 1.5, y) * x ** 2


def fori_static_carrying_a_while(x, y):
    a, b = lax.fori_loop(0, 3, lambda i, c: (c[0] * x, count_up(c[1])), (x, y))
    return a * b


K = 3.5                                # count_up(Y)
CASES = {
    while_with_two_carries: 10.5,                      # d/dx (b x) = b
    scan_around_a_while: K ** 3 + 2 * (1 + K + K ** 2),
    cond_with_a_while_branch: 2 * K + K,               # u = 2x, v = K
    fori_with_a_traced_bound: 2 * X * Y * 1.5 ** 3,
    fori_static_carrying_a_while: 4 * X ** 3 * K,      # a = x^4, b = K
}


@pytest.mark.parametrize("fun", CASES, ids=lambda f: f.__name__)
def test_grad_around_a_while_loop_the_input_does_not_reach(fun):
    np.testing.assert_allclose(float(spmdc.grad(fun)(X, Y)), CASES[fun], rtol=1e-6)
    value, g = spmdc.jit(spmdc.value_and_grad(fun))(X, Y)
    np.testing.assert_allclose(float(g), CASES[fun], rtol=1e-6)
    np.testing.assert_allclose(float(value), float(fun(X, Y)), rtol=1e-6)


@pytest.mark.parametrize("fun", [while_with_two_carries, scan_around_a_while,
                                 cond_with_a_while_branch, fori_static_carrying_a_while],
                         ids=lambda f: f.__name__)
def test_grad_through_the_while_loop_itself_still_raises(fun):
    # y reaches the while loop: that needs its VJP, which does not exist (JAX raises too,
    # a ValueError there; ours is one as well)
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        spmdc.grad(fun, argnums=1)(X, Y)
    with pytest.raises(WhileLoopVJPError):
        spmdc.grad(fun, argnums=1)(X, Y)


def test_per_output_activity_of_scan_carries_reaches_a_fixed_point():
    # carry 1 only becomes dependent on x through carry 0 after one step
    def f(x):
        def step(c, _):
            a, b, z = c
            return (a * 2.0, b + a, count_up(z)), None
        (a, b, z), _ = lax.scan(step, (x, 0.0, 0.5), None, length=3)
        return b + z * 0.0
    np.testing.assert_allclose(float(spmdc.grad(f)(1.0)), 1 + 2 + 4, rtol=1e-6)
