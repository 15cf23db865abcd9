"""Forward mode over custom_vjp as JAX has it (Note [forward mode of custom_vjp]): its
JVP runs ``fwd`` and emits ``custom_lin``, so ``linearize`` works and its linear function
can be transposed (by ``bwd``), while evaluating the forward tangent raises. Also the
rest of what Diffrax's neural ODE needs from custom_vjp: Python scalars among fwd's
residuals (Note [static residuals]) and bwd cotangents with None where the argument has
None. The bwd rules scale by 10 so that a result shows it came from bwd, not from
differentiating the function."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.errors import CustomVJPForwardModeError

X = np.array([0.1, 0.5, 1.0], np.float32)
ONES = np.ones(3, np.float32)


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


@spmdc.custom_vjp
def f(x, y):
    return jnp.sin(x) * y


def _f_fwd(x, y):
    return jnp.sin(x) * y, (x, y)


def _f_bwd(res, g):
    x, y = res
    return g * jnp.cos(x) * y * 10, jnp.sum(g * jnp.sin(x))


f.defvjp(_f_fwd, _f_bwd)


def f_bwd_numpy(x, y, g):
    return g * np.cos(x) * y * 10, np.sum(g * np.sin(x))


def test_linearize_gives_the_output_and_its_transpose_is_bwd():
    out, f_jvp = spmdc.linearize(f, X, np.float32(2.0))
    close(out, np.sin(X) * 2.0)
    gx, gy = spmdc.linear_transpose(f_jvp, X, np.float32(2.0))(ONES)
    want_x, want_y = f_bwd_numpy(X, 2.0, ONES)
    close(gx, want_x)
    close(gy, want_y)
    vx, vy = spmdc.vjp(f, X, np.float32(2.0))[1](ONES)
    close(vx, gx)
    close(vy, gy)


def test_evaluating_the_forward_tangent_raises():
    _, f_jvp = spmdc.linearize(f, X, np.float32(2.0))
    with pytest.raises(CustomVJPForwardModeError, match="forward-mode autodiff"):
        f_jvp(X, np.float32(1.0))
    with pytest.raises(CustomVJPForwardModeError, match="forward-mode autodiff"):
        spmdc.jvp(f, (X, np.float32(2.0)), (X, np.float32(1.0)))
    with pytest.raises(CustomVJPForwardModeError):
        spmdc.jacfwd(lambda x: f(x, 2.0))(X)
    # reverse mode through the tangent needs bwd's own derivative, as in JAX: an error
    with pytest.raises(CustomVJPForwardModeError):
        spmdc.grad(lambda x: jnp.sum(spmdc.jvp(lambda x: f(x, 2.0), (x,), (x,))[1]))(X)


def test_linearize_and_transpose_inside_jit():
    def pullback(x):
        out, f_jvp = spmdc.linearize(lambda x: f(x, 2.0), x)
        return spmdc.linear_transpose(f_jvp, x)(out)[0]

    close(spmdc.jit(pullback)(X), f_bwd_numpy(X, 2.0, np.sin(X) * 2.0)[0])


def test_linearize_and_transpose_of_a_scan_over_custom_vjp():
    def h(x):
        return lax.scan(lambda c, _: (f(c, 2.0), None), x, None, length=2)[0]

    out, h_jvp = spmdc.linearize(h, X)
    c1 = np.sin(X) * 2.0
    close(out, np.sin(c1) * 2.0)
    want = f_bwd_numpy(X, 2.0, f_bwd_numpy(c1, 2.0, ONES)[0])[0]
    close(spmdc.linear_transpose(h_jvp, X)(ONES)[0], want)
    close(spmdc.vjp(h, X)[1](ONES)[0], want)


def test_transpose_of_a_linearized_scan_matches_jax():
    # Note [dead scan carries]: the transpose no longer computes the tangent carry
    def h(x):
        return lax.scan(lambda c, _: (jnp.sin(c) * 2.0, None), x, None, length=2)[0]

    _, h_jvp = spmdc.linearize(h, X)
    close(spmdc.linear_transpose(h_jvp, X)(ONES)[0],
          [3.9009445, 2.0165472, -0.24186234])            # JAX 0.10.2


def test_linearize_in_one_argument_and_vmap_of_the_transpose():
    _, fy = spmdc.linearize(lambda y: f(X, y), np.float32(2.0))
    close(spmdc.linear_transpose(fy, np.float32(2.0))(ONES)[0], np.sum(np.sin(X)))
    _, fx = spmdc.linearize(lambda x: f(x, 2.0), X)
    rows = spmdc.vmap(spmdc.linear_transpose(fx, X))(np.eye(3, dtype=np.float32))[0]
    close(rows, np.diag(f_bwd_numpy(X, 2.0, ONES)[0]))


def test_symbolic_zeros_fwd_sees_what_linearize_perturbs():
    seen = []

    @spmdc.custom_vjp
    def g(x, y):
        return x * y

    def g_fwd(x, y):
        seen.append((x.perturbed, y.perturbed))
        return x.value * y.value, (x.value, y.value)

    def g_bwd(res, ct):
        return ct * res[1] * 10, jnp.sum(ct * res[0]) * 10

    g.defvjp(g_fwd, g_bwd, symbolic_zeros=True)
    _, g_jvp = spmdc.linearize(lambda y: g(X, y), np.float32(3.0))
    assert seen == [(False, True)]
    close(spmdc.linear_transpose(g_jvp, np.float32(3.0))(ONES)[0], np.sum(X) * 10)


def test_make_jaxpr_shows_custom_lin():
    _, f_jvp = spmdc.linearize(lambda x: f(x, 2.0), X)
    text = str(spmdc.make_jaxpr(f_jvp)(X))
    assert "custom_lin[" in text and "bwd=_f_bwd" in text and "num_res=2" in text


def test_python_scalars_among_the_residuals_reach_bwd_as_values():
    @spmdc.custom_vjp
    def scaled(x, flag):
        return x * 2.0

    def scaled_fwd(x, flag):
        return x * 2.0, (x, True)          # a Python bool residual, as Equinox saves

    def scaled_bwd(res, g):
        x, keep = res
        if keep:                            # bwd branches on it in Python
            return g * 20.0, None
        return g * 0.0, None

    scaled.defvjp(scaled_fwd, scaled_bwd)
    close(spmdc.grad(lambda x: jnp.sum(scaled(x, 1.0)))(X), np.full(3, 20.0))
    close(spmdc.jit(spmdc.grad(lambda x: jnp.sum(scaled(x, 1.0))))(X), np.full(3, 20.0))


def test_bwd_cotangent_may_hold_none_where_the_argument_does():
    @spmdc.custom_vjp
    def first(pair):
        return pair[0] * 3.0

    first.defvjp(lambda pair: (pair[0] * 3.0, None),
                 lambda res, g: ((g * 30.0, None),))
    close(spmdc.grad(lambda x: jnp.sum(first((x, None))))(X), np.full(3, 30.0))


def test_tracer_aval_is_its_shaped_array():
    def probe(x):
        assert x.aval.shape == (3,) and x.aval.dtype == np.float32
        return x

    close(spmdc.jit(probe)(X), X)


def test_bwd_gets_a_cotangent_for_every_output_the_result_uses():
    # as JAX's: an output that does not depend on the differentiated input (y here)
    # still gets its cotangent when the result uses it (Equinox's symbolic-zero test)
    given = []

    @spmdc.custom_vjp
    def pair(x, y):
        return x * 2.0, y

    def pair_bwd(res, ct):
        given.append(tuple(not isinstance(c, spmdc.custom_derivatives.SymbolicZero)
                           for c in ct))
        return ct[0] * 20.0, ct[1]

    pair.defvjp(lambda x, y: (pair(x.value, y.value), None), pair_bwd, symbolic_zeros=True)
    def loss(x):
        a, b = pair(x, np.float32(1.0))
        return jnp.sum(a) + b

    close(spmdc.grad(loss)(X), np.full(3, 20.0))
    assert given == [(True, True)]
