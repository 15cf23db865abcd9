"""grad, value_and_grad, vjp, jacrev, hessian through the autodiff pass (issue 4): options
(argnums, has_aux, pytrees), higher order and composition with vmap and jit checked
against NumPy, analytic values and central finite differences (float64), the size of
the gradient program of an MLP, and user-facing errors."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import numeric_grad

import spmdc
import spmdc.numpy as jnp
from spmdc.compiler.passes.cleanup import cleanup
from spmdc.core import dtypes


@pytest.fixture(autouse=True)
def x64():
    previous = dtypes.enable_x64(True)
    yield
    dtypes.enable_x64(previous)


def close(got, want, rtol=1e-9, atol=1e-9):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


# --- options: argnums, has_aux, pytrees ---------------------------------------------------

def f2(x, y):
    return jnp.sum(jnp.sin(x) * y ** 2)


def test_argnums_int_and_tuple():
    x, y = np.array([0.1, 0.7, -1.2]), np.array([2.0, -0.5, 1.5])
    close(spmdc.grad(f2)(x, y), np.cos(x) * y ** 2)
    close(spmdc.grad(f2, argnums=1)(x, y), 2 * np.sin(x) * y)
    gx, gy = spmdc.grad(f2, argnums=(0, 1))(x, y)
    close(gx, np.cos(x) * y ** 2)
    close(gy, 2 * np.sin(x) * y)
    (gy_only,) = spmdc.grad(f2, argnums=(1,))(x, y)
    close(gy_only, 2 * np.sin(x) * y)
    close(spmdc.grad(f2, argnums=-1)(x, y), 2 * np.sin(x) * y)
    value, (gx, gy) = spmdc.value_and_grad(f2, argnums=(0, 1))(x, y)
    close(value, np.sum(np.sin(x) * y ** 2))
    close(gy, 2 * np.sin(x) * y)


def test_has_aux():
    def f(x):
        return jnp.sum(x ** 3), {"mean": jnp.mean(x), "n": 3}

    x = np.array([1.0, 2.0, -1.0])
    g, aux = spmdc.grad(f, has_aux=True)(x)
    close(g, 3 * x ** 2)
    close(aux["mean"], np.mean(x))
    (value, aux), g = spmdc.value_and_grad(f, has_aux=True)(x)
    close(value, np.sum(x ** 3))
    close(g, 3 * x ** 2)
    close(aux["mean"], np.mean(x))


def test_pytree_arguments():
    params = {"w": np.array([[1.0, 2.0], [3.0, -1.0]]), "b": (np.array([0.5, -0.5]), 2.0)}
    x = np.array([0.3, -0.2])

    def loss(p, x):
        bias, scale = p["b"]
        return scale * jnp.sum((p["w"] @ x + bias) ** 2)

    g = spmdc.grad(loss)(params, x)
    assert set(g) == {"w", "b"} and isinstance(g["b"], tuple)
    r = params["w"] @ x + params["b"][0]
    close(g["w"], 2 * 2.0 * np.outer(r, x))
    close(g["b"][0], 2 * 2.0 * r)
    close(g["b"][1], np.sum(r ** 2))
    gx = spmdc.grad(loss, argnums=1)(params, x)
    close(gx, 2 * 2.0 * params["w"].T @ r)


def test_vjp_pytree_cotangents_and_aux():
    def f(x, y):
        return {"prod": x * y, "sum": jnp.sum(x) + y[0]}, jnp.max(x)

    x, y = np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 4.0])
    out, pull, aux = spmdc.vjp(f, x, y, has_aux=True)
    close(out["prod"], x * y)
    close(aux, 3.0)
    ct = {"prod": np.array([1.0, 10.0, 100.0]), "sum": np.array(2.0)}
    gx, gy = pull(ct)
    close(gx, ct["prod"] * y + 2.0)
    close(gy, ct["prod"] * x + np.array([2.0, 0.0, 0.0]))
    out, pull = spmdc.vjp(lambda t: (t[0] * t[1], jnp.exp(t[0])), (x, y))
    (g,) = pull((np.ones(3), np.full(3, 2.0)))
    close(g[0], y + 2 * np.exp(x))
    close(g[1], x)


def test_jacrev_and_hessian():
    x = np.array([0.5, -1.0, 2.0])
    a = np.array([[1.0, 2.0, 0.0], [0.0, -1.0, 3.0]])
    close(spmdc.jacrev(lambda x: jnp.tanh(a @ x))(x), (1 - np.tanh(a @ x) ** 2)[:, None] * a)
    jx, ja = spmdc.jacrev(lambda x, a: a @ x, argnums=(0, 1))(x, a)
    close(jx, a)
    want = np.zeros((2, 2, 3))
    for i in range(2):
        want[i, i, :] = x
    close(ja, want)
    # f(x) = sum(x^4) / 4 + x0 * x1: H = diag(3 x^2) + offdiag
    h = spmdc.hessian(lambda x: jnp.sum(x ** 4) / 4 + x[0] * x[1])(x)
    want = np.diag(3 * x ** 2)
    want[0, 1] = want[1, 0] = 1.0
    close(h, want)


def test_stop_gradient():
    def f(x):
        return jnp.sum(x * spmdc.lax.stop_gradient(x) + jnp.sin(spmdc.lax.stop_gradient(x)))

    x = np.array([0.3, -2.0])
    close(spmdc.grad(f)(x), x)
    close(spmdc.jit(spmdc.grad(f))(x), x)
    # second order: d/dx x*sg(x) = sg(x); its derivative is zero
    close(spmdc.grad(lambda s: spmdc.grad(
        lambda t: t * spmdc.lax.stop_gradient(t))(s))(1.5), 0.0)


# --- higher order and composition -------------------------------------------------------

def test_grad_of_grad():
    f = lambda x: jnp.sin(x) * x ** 3    # noqa: E731
    for x in (0.3, -1.7, 2.5):
        close(spmdc.grad(f)(x), np.cos(x) * x ** 3 + 3 * x ** 2 * np.sin(x))
        close(spmdc.grad(spmdc.grad(f))(x),
              -np.sin(x) * x ** 3 + 6 * x ** 2 * np.cos(x) + 6 * x * np.sin(x))
        close(spmdc.jit(spmdc.grad(spmdc.grad(f)))(x),
              -np.sin(x) * x ** 3 + 6 * x ** 2 * np.cos(x) + 6 * x * np.sin(x))
    third = spmdc.grad(spmdc.grad(spmdc.grad(jnp.exp)))
    close(third(0.7), np.exp(0.7))


def _np_f(w):
    return np.sum(np.tanh(w) ** 2) + w[0] * w[1] * w[2]


def _f(w):
    return jnp.sum(jnp.tanh(w) ** 2) + w[0] * w[1] * w[2]


@settings(max_examples=5)
@given(st.lists(st.floats(-2, 2), min_size=3, max_size=3),
       st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_hessian_vector_product(w, v):
    w, v = np.array(w), np.array(v)
    hvp = spmdc.jit(lambda w, v: spmdc.grad(lambda w: jnp.vdot(spmdc.grad(_f)(w), v))(w))
    np_grad = lambda w: numeric_grad(_np_f, w)   # noqa: E731
    want = numeric_grad(lambda w: np.vdot(np_grad(w), v), w, eps=1e-4)
    close(hvp(w, v), want, rtol=1e-5, atol=1e-5)
    close(hvp(w, v), spmdc.hessian(_f)(w) @ v)


def _loss(w, x, y):
    return (jnp.tanh(jnp.dot(x, w)) - y) ** 2


def _np_loss_grad(w, x, y):
    t = np.tanh(x @ w)
    return 2 * (t - y) * (1 - t ** 2) * x


def test_per_example_gradients():
    rng = np.random.default_rng(0)
    w, xs, ys = rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=5)
    per_example = spmdc.vmap(spmdc.grad(_loss), in_axes=(None, 0, 0))
    want = np.stack([_np_loss_grad(w, x, y) for x, y in zip(xs, ys, strict=True)])
    loop = np.stack([np.asarray(spmdc.grad(_loss)(w, x, y)) for x, y in zip(xs, ys, strict=True)])
    close(per_example(w, xs, ys), want)
    close(loop, want)
    close(spmdc.jit(per_example)(w, xs, ys), want)
    close(spmdc.vmap(spmdc.jit(spmdc.grad(_loss)), in_axes=(None, 0, 0))(w, xs, ys), want)


def test_grad_of_vmap():
    rng = np.random.default_rng(1)
    w, xs, ys = rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=5)

    def total(w):
        return jnp.sum(spmdc.vmap(_loss, in_axes=(None, 0, 0))(w, xs, ys))

    want = sum(_np_loss_grad(w, x, y) for x, y in zip(xs, ys, strict=True))
    close(spmdc.grad(total)(w), want)
    close(spmdc.jit(spmdc.grad(total))(w), want)
    close(spmdc.grad(spmdc.jit(total))(w), want)
    # grad(vmap(f)) summed equals vmap(grad(f)) summed over the batch
    per = spmdc.vmap(spmdc.grad(_loss), in_axes=(None, 0, 0))(w, xs, ys)
    close(np.sum(np.asarray(per), axis=0), want)


def test_jit_inside_and_around():
    inner = spmdc.jit(lambda x: jnp.sin(x) * x)
    f = lambda x: inner(x) ** 2     # noqa: E731
    x = 0.8
    want = 2 * np.sin(x) * x * (np.cos(x) * x + np.sin(x))
    close(spmdc.grad(f)(x), want)
    close(spmdc.jit(spmdc.grad(f))(x), want)
    close(spmdc.grad(spmdc.jit(f))(x), want)
    close(spmdc.jit(spmdc.grad(spmdc.jit(spmdc.grad(f))))(x),
          numeric_grad(lambda t: float(spmdc.grad(f)(float(t))), np.array(x)), rtol=1e-6)


def test_nested_closures_no_perturbation_confusion():
    def outer(a):
        return spmdc.grad(lambda b: jnp.sin(a * b))(2.0)

    a = 0.3
    want = np.cos(2 * a) - 2 * a * np.sin(2 * a)
    close(spmdc.grad(outer)(a), want)
    close(spmdc.jit(spmdc.grad(outer))(a), want)
    close(spmdc.grad(spmdc.jit(outer))(a), want)
    # the classic: d/dx [x * d/dy (x + y)] = 1, not 2
    close(spmdc.grad(lambda x: x * spmdc.grad(lambda y: x + y)(1.0))(3.0), 1.0)


# --- efficiency -------------------------------------------------------------------------

def _mlp_loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return jnp.mean((h @ w + b - y) ** 2)


def _mlp_params(rng):
    sizes = [4, 8, 8, 2]
    return [(rng.normal(size=(m, n)), rng.normal(size=n))
            for m, n in zip(sizes[:-1], sizes[1:], strict=True)]


def test_mlp_gradient_program_has_no_duplicated_forward():
    rng = np.random.default_rng(2)
    params, x, y = _mlp_params(rng), rng.normal(size=(6, 4)), rng.normal(size=(6, 2))
    forward = spmdc.make_ir(_mlp_loss)(params, x, y)
    backward = spmdc.make_ir(spmdc.grad(_mlp_loss))(params, x, y)
    assert len(backward.eqns) <= 3 * len(forward.eqns), (len(forward.eqns), len(backward.eqns))
    fwd_count = Counter(e.prim.name for e in forward.eqns)
    bwd_count = Counter(e.prim.name for e in backward.eqns)
    assert fwd_count["tanh"] == 2
    assert bwd_count["tanh"] == 2         # each layer's tanh once, reused by its VJP
    # x ** 2 feeds only the loss value, which grad discards; its VJP needs x alone
    assert fwd_count["integer_pow"] == 1 and bwd_count["integer_pow"] == 0
    assert bwd_count["dot_general"] <= 3 * fwd_count["dot_general"]
    # grad hands back a program that DCE and CSE cannot shrink further; the forward's
    # final division feeds only the discarded value, so it is gone
    assert len(cleanup(backward).eqns) == len(backward.eqns)
    assert bwd_count["div"] < fwd_count["div"] + 1
    # the same holds for the program a vjp pullback inlines
    _, pull = spmdc.vjp(_mlp_loss, params, x, y)
    pullback = spmdc.make_ir(pull)(np.array(1.0))
    assert len(cleanup(pullback).eqns) == len(pullback.eqns)
    assert Counter(e.prim.name for e in pullback.eqns)["tanh"] == 2
    # and the numbers are right
    g = spmdc.grad(_mlp_loss)(params, x, y)
    flat = [a for layer in params for a in layer]

    def np_loss(k, v):
        p = [list(layer) for layer in params]
        p[k // 2][k % 2] = v
        h = x
        for w, b in p[:-1]:
            h = np.tanh(h @ w + b)
        return np.mean((h @ p[-1][0] + p[-1][1] - y) ** 2)

    for k, (got, a) in enumerate(zip([t for layer in g for t in layer], flat, strict=True)):
        close(got, numeric_grad(lambda v, k=k: np_loss(k, v), a), rtol=1e-6, atol=1e-7)


# --- errors -----------------------------------------------------------------------------

def _still_works():
    close(spmdc.grad(lambda x: x * x)(3.0), 6.0)


def test_error_non_scalar_output():
    with pytest.raises(TypeError, match=r"scalar.*shape \(3,\)"):
        spmdc.grad(lambda x: x * 2)(np.ones(3))
    _still_works()
    with pytest.raises(TypeError, match="scalar.*pytree"):
        spmdc.value_and_grad(lambda x: (x, x))(1.0)
    _still_works()
    with pytest.raises(TypeError, match=r"scalar.*pytree.*'a'"):     # one leaf, in a dict
        spmdc.grad(lambda x: {"a": x})(1.0)
    _still_works()
    with pytest.raises(TypeError, match="real-valued.*complex64"):
        spmdc.grad(lambda x: x * 1j)(np.complex64(1.0))
    _still_works()
    with pytest.raises(ValueError, match=r"cotangent has shape \(2,\).*shape \(3,\)"):
        spmdc.vjp(lambda x: x * 2, np.ones(3))[1](np.ones(2))
    _still_works()


def test_error_integer_input():
    with pytest.raises(TypeError, match="int"):
        spmdc.grad(lambda x: x * 2)(3)
    _still_works()
    with pytest.raises(TypeError, match=r"args\[1\].*int"):
        spmdc.grad(lambda x, n: x * n, argnums=(0, 1))(1.0, np.array(2))
    _still_works()
    # an integer argument that is not differentiated is fine
    close(spmdc.grad(lambda x, n: x * n)(1.5, 4), 4.0)


def test_error_has_aux_without_pair():
    with pytest.raises(TypeError, match="pair"):
        spmdc.grad(lambda x: x * x, has_aux=True)(1.0)
    _still_works()
    with pytest.raises(TypeError, match="pair"):
        spmdc.value_and_grad(lambda x: (x, x, x), has_aux=True)(1.0)
    _still_works()


def test_error_argnums_out_of_range():
    with pytest.raises(ValueError, match=r"argnums=2 is out of range.*2 positional"):
        spmdc.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0)
    _still_works()
    with pytest.raises(ValueError, match="out of range"):
        spmdc.grad(lambda x: x, argnums=(0, -2))(1.0)
    _still_works()
