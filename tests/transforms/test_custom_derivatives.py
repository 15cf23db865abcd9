"""custom_jvp and custom_vjp (issue 14): JAX's standard examples (a numerically safe
log1pexp, gradient clipping, a stop_gradient-style rule, implicit differentiation of a
fixed point), defjvp/defjvps, nondiff_argnums, symbolic zeros, pytree residuals, under
jit, vmap, pmap (with collectives) and higher order, the dump, and the errors JAX gives."""
from __future__ import annotations

from functools import partial

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.passes import recording
from spmdc.core import dtypes


@pytest.fixture(autouse=True)
def x64():
    previous = dtypes.enable_x64(True)
    yield
    dtypes.enable_x64(previous)


def close(got, want, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


# --- custom_jvp ------------------------------------------------------------------------------

@spmdc.custom_jvp
def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp(x), (1.0 - 1.0 / (1.0 + jnp.exp(x))) * t


def test_log1pexp_is_numerically_safe_under_grad_jit_vmap_and_higher_order():
    close(log1pexp(3.0), np.log1p(np.exp(3.0)))
    close(spmdc.grad(log1pexp)(100.0), 1.0)              # the naive rule gives nan here
    close(spmdc.jit(spmdc.grad(log1pexp))(3.0), sigmoid(3.0))
    xs = np.array([-2.0, 0.0, 5.0, 100.0])
    close(spmdc.vmap(spmdc.grad(log1pexp))(xs), sigmoid(xs))
    close(spmdc.grad(lambda v: jnp.sum(spmdc.vmap(log1pexp)(v)))(xs), sigmoid(xs))
    close(spmdc.grad(spmdc.grad(log1pexp))(3.0), sigmoid(3.0) * (1 - sigmoid(3.0)))
    y, t = spmdc.jvp(log1pexp, (100.0,), (2.0,))
    close(t, 2.0)
    close(spmdc.jacfwd(spmdc.vmap(log1pexp))(xs), np.diag(sigmoid(xs)))
    close(spmdc.jvp(spmdc.vmap(log1pexp), (xs,), (np.ones(4),))[1], sigmoid(xs))


def test_the_dump_shows_the_call_when_traced_and_the_rule_after_grad():
    with recording() as stages:
        spmdc.jit(spmdc.grad(log1pexp)).lower(3.0)
    traced = [str(f) for name, f in stages if name == "traced"]
    assert "custom_jvp_call" in traced[0] and "jvp=@log1pexp_jvp" in traced[0]
    cleaned = [str(f) for name, f in stages if name == "cleanup"][0]
    assert "custom_jvp_call" not in cleaned and "div" in cleaned   # the rule's equations


def test_defjvps_nondiff_argnums_and_pytrees():
    @spmdc.custom_jvp
    def f(x, y):
        return jnp.sin(x) * y

    f.defjvps(lambda t, ans, x, y: jnp.cos(x) * t * y, lambda t, ans, x, y: jnp.sin(x) * t)
    x, y = 0.3, 2.0
    gx, gy = spmdc.grad(f, argnums=(0, 1))(x, y)
    close(gx, np.cos(x) * y)
    close(gy, np.sin(x))

    @partial(spmdc.custom_jvp, nondiff_argnums=(0,))
    def app(fn, p):
        return fn(p["a"]) * p["b"]

    @app.defjvp
    def app_jvp(fn, primals, tangents):
        (p,), (tp,) = primals, tangents
        return app(fn, p), 2.0 * tp["a"] + tp["b"]          # a deliberately odd rule

    p = {"a": 1.5, "b": 3.0}
    g = spmdc.grad(lambda q: app(jnp.sin, q))(p)
    close(g["a"], 2.0)
    close(g["b"], 1.0)
    close(spmdc.jit(lambda q: app(jnp.sin, q))(p), np.sin(1.5) * 3.0)


def test_symbolic_zeros_let_the_rule_see_which_tangents_are_zero():
    seen = []

    @spmdc.custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        seen.append(tuple(type(t).__name__ == "SymbolicZero" for t in tangents))
        out = jnp.zeros_like(x)
        if type(tx).__name__ != "SymbolicZero":
            out = out + tx * y
        if type(ty).__name__ != "SymbolicZero":
            out = out + 10.0 * ty           # odd on purpose: proves this branch ran
        return f(x, y), out

    f.defjvp(f_jvp, symbolic_zeros=True)
    close(spmdc.grad(f)(2.0, 3.0), 3.0)
    close(spmdc.jvp(lambda y: f(2.0, y), (3.0,), (1.0,))[1], 10.0)
    # JAX 0.10.2's flags for these two calls: under grad the undifferentiated y is a
    # symbolic zero too
    assert seen == [(False, True), (True, False)]


def test_stop_gradient_style_rule_and_integer_arguments():
    @spmdc.custom_jvp
    def straight_through_round(x, n):
        return jnp.round(x) + n

    @straight_through_round.defjvp
    def _(primals, tangents):
        x, n = primals
        assert tangents[1].dtype == spmdc.float0
        return straight_through_round(x, n), tangents[0]    # identity gradient

    g = spmdc.grad(lambda x: jnp.sum(straight_through_round(x, 2) ** 2))(np.array([0.4, 1.6]))
    close(g, 2 * (np.round([0.4, 1.6]) + 2))


def test_custom_jvp_errors():
    @spmdc.custom_jvp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No JVP defined"):
        spmdc.jit(f)(1.0)

    @spmdc.custom_jvp
    def g(x):
        return jnp.sin(x)

    g.defjvp(lambda p, t: (g(*p), (t[0], t[0])))
    with pytest.raises(TypeError, match="tangent output"):
        spmdc.grad(g)(1.0)

    def closes_over(w):
        @spmdc.custom_jvp
        def h(x):
            return x * w
        h.defjvp(lambda p, t: (h(*p), t[0] * w))
        return h(2.0)

    with pytest.raises(TypeError, match="closed-over value"):
        spmdc.jvp(closes_over, (3.0,), (1.0,))
    with pytest.raises(TypeError, match="closed-over value"):
        spmdc.grad(closes_over)(3.0)

    def closes_over_vjp(w):
        @spmdc.custom_vjp
        def h(x):
            return x * w
        h.defvjp(lambda x: (h(x), None), lambda r, g: (g * 2.0,))
        return h(2.0)

    with pytest.raises(TypeError, match="closed-over value"):
        spmdc.grad(closes_over_vjp)(3.0)
    # a closed-over value that is not differentiated is fine (here: batched by vmap)
    close(spmdc.vmap(lambda w: spmdc.grad(lambda x: closes_over_vjp(w) * x)(1.0))(
        np.array([1.0, 2.0])), [2.0, 4.0])
    close(spmdc.jvp(log1pexp, (0.0,), (1.0,))[1], 0.5)      # still works afterwards


# --- custom_vjp ------------------------------------------------------------------------------

@spmdc.custom_vjp
def clip_gradient(lo, hi, x):
    return x


def _clip_fwd(lo, hi, x):
    return x, (lo, hi)


def _clip_bwd(res, g):
    lo, hi = res
    return None, None, jnp.clip(g, lo, hi)


clip_gradient.defvjp(_clip_fwd, _clip_bwd)


def test_gradient_clipping_under_jit_vmap_and_grad_of_vmap():
    def f(x):
        return clip_gradient(-0.75, 0.75, jnp.sin(x) * 3.0)

    xs = np.array([0.1, 1.0, 2.0, 3.0])
    want = np.clip(1.0, -0.75, 0.75) * 3.0 * np.cos(xs)
    close(spmdc.grad(f)(0.1), want[0])
    close(spmdc.jit(spmdc.vmap(spmdc.grad(f)))(xs), want)
    close(spmdc.grad(lambda v: jnp.sum(spmdc.vmap(f)(v)))(xs), want)
    close(spmdc.vmap(f)(xs), np.sin(xs) * 3.0)
    with pytest.raises(TypeError, match="forward-mode"):
        spmdc.jvp(f, (0.1,), (1.0,))


def test_batched_unbatched_argument_gets_the_summed_cotangent():
    @spmdc.custom_vjp
    def scale(w, x):
        return w * x

    scale.defvjp(lambda w, x: (w * x, (w, x)),
                 lambda res, g: (jnp.sum(g * res[1]), g * res[0]))
    w, xs = 1.5, np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    gw = spmdc.grad(lambda w: jnp.sum(spmdc.vmap(lambda x: scale(w, x))(xs) ** 2))(w)
    close(gw, np.sum(2 * w * xs * xs))
    gx = spmdc.grad(lambda v: jnp.sum(spmdc.vmap(lambda x: scale(w, x), in_axes=1)(v)))(xs)
    close(gx, np.full_like(xs, w))


@partial(spmdc.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    def cond_fun(carry):
        x_prev, x = carry
        return jnp.abs(x_prev - x) > 1e-10

    def body_fun(carry):
        _, x = carry
        return x, f(a, x)

    return lax.while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))[1]


def _fixed_point_fwd(f, a, x_init):
    x_star = fixed_point(f, a, x_init)
    return x_star, {"a": a, "x_star": x_star}          # residuals as a pytree


def _rev_iter(f, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = spmdc.vjp(lambda x: f(a, x), x_star)
    return x_star_bar + vjp_x(u)[0]


def _fixed_point_bwd(f, res, x_star_bar):
    a, x_star = res["a"], res["x_star"]
    _, vjp_a = spmdc.vjp(lambda a: f(a, x_star), a)
    (a_bar,) = vjp_a(fixed_point(partial(_rev_iter, f), (a, x_star, x_star_bar), x_star_bar))
    return a_bar, jnp.zeros_like(x_star)


fixed_point.defvjp(_fixed_point_fwd, _fixed_point_bwd)


def newton_sqrt(a):
    return fixed_point(lambda a, x: 0.5 * (x + a / x), a, a)


def test_implicit_differentiation_of_a_fixed_point_to_second_order():
    close(newton_sqrt(2.0), np.sqrt(2.0))
    close(spmdc.jit(newton_sqrt)(2.0), np.sqrt(2.0))
    close(spmdc.grad(newton_sqrt)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-8)
    close(spmdc.grad(spmdc.grad(newton_sqrt))(2.0), -0.25 * 2.0 ** -1.5, rtol=1e-7)
    close(spmdc.vmap(spmdc.grad(newton_sqrt))(np.array([1.0, 4.0, 9.0])),
          0.5 / np.sqrt([1.0, 4.0, 9.0]), rtol=1e-8)


@pytest.mark.devices(4)
def test_grad_of_custom_vjp_under_pmap_with_collectives_matches_named_vmap():
    @spmdc.custom_vjp
    def f(x):
        return jnp.sin(x)

    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (2.0 * c * g,))  # doubled

    def loss(w, x):
        return lax.psum(jnp.sum(f(w * x)), "i")

    def step(w, x):
        return lax.pmean(spmdc.grad(loss)(w, x), "i")

    xs = np.random.default_rng(0).normal(size=(4, 3))
    got = spmdc.pmap(step, axis_name="i", in_axes=(None, 0))(0.7, xs)
    want = spmdc.vmap(step, axis_name="i", in_axes=(None, 0))(0.7, xs)
    close(got, want)
    # psum transposes to psum (Note [collective transpose]): each device's cotangent is 4
    close(want[0], 4 * np.mean(np.sum(2.0 * np.cos(0.7 * xs) * xs, axis=1)), rtol=1e-12)


@pytest.mark.devices(4)
def test_custom_jvp_under_pmap_and_vmap_of_jvp():
    def body(x):
        return lax.psum(log1pexp(x), "i")

    xs = np.array([-1.0, 0.0, 2.0, 100.0])
    got = spmdc.pmap(lambda x: spmdc.jvp(body, (x,), (1.0,))[1], axis_name="i")(xs)
    close(got, np.full(4, np.sum(sigmoid(xs))))         # the psum of the tangents
    got = spmdc.vmap(lambda x: spmdc.jvp(log1pexp, (x,), (1.0,))[1])(xs)
    close(got, sigmoid(xs))


def test_custom_vjp_errors():
    @spmdc.custom_vjp
    def f(x):
        return x

    with pytest.raises(AttributeError, match="No VJP defined"):
        spmdc.jit(f)(1.0)
    f.defvjp(lambda x: (x, None), lambda r, g: (g, g))
    with pytest.raises(TypeError, match="returned 2 cotangents for 1"):
        spmdc.grad(f)(1.0)
    f.defvjp(lambda x: x, lambda r, g: (g,))
    with pytest.raises(TypeError, match="must return a pair"):
        spmdc.grad(f)(1.0)
    close(spmdc.grad(clip_gradient, argnums=2)(0.0, 1.0, 3.0), 1.0)


def test_jvp_rule_applying_the_function_to_its_tangents():
    # Lineax's _asarray: the rule returns f(x), f(tx); reverse mode transposes f(tx) as
    # the function (Note [custom_jvp applied to tangents]) instead of recursing
    @partial(spmdc.custom_jvp, nondiff_argnums=(0,))
    def as_dtype(dtype, x):
        return jnp.asarray(x, dtype=dtype) * 3.0

    @as_dtype.defjvp
    def as_dtype_jvp(dtype, primals, tangents):
        return as_dtype(dtype, primals[0]), as_dtype(dtype, tangents[0])

    xs = np.array([1.0, 2.0])
    close(spmdc.grad(lambda v: jnp.sum(as_dtype(np.float64, v) ** 2))(xs), 18.0 * xs)
    close(spmdc.jit(spmdc.grad(lambda v: jnp.sum(as_dtype(np.float64, v))))(xs), [3.0, 3.0])


def test_custom_vjp_nondiff_array_of_an_eager_grad_reaches_the_rules():
    # Note [traced nondiff arguments of custom_vjp]: JAX's eager grad leaves y concrete
    # (it differentiates x only), so its rules may use it, and fwd may call f itself
    # (Flax's nnx.custom_vjp over a module's other state); JAX gives cos(1) * 2 = 1.0806046
    @partial(spmdc.custom_vjp, nondiff_argnums=(1,))
    def f(x, y):
        return jnp.sin(x) * y

    def fwd(x, y):
        return f(x, y), jnp.cos(x)

    def bwd(y, res, g):
        return (res * g * y,)

    f.defvjp(fwd, bwd)
    got = spmdc.grad(lambda x, y: f(x, y))(1.0, jnp.array(2.0))
    np.testing.assert_allclose(float(got), 1.0806046, rtol=1e-6)
    got = spmdc.grad(lambda x, y: f(x, y) * x)(jnp.float32(1.0), jnp.array([2.0])[0])
    np.testing.assert_allclose(float(got), 1.0806046 + np.sin(1.0) * 2.0, rtol=1e-6)


def test_nondiff_argnums_may_name_a_parameter_left_at_its_default():
    # As JAX (resolve_kwargs applies the defaults): Flax's fp8 dot_general_with_precision
    # is custom_jvp(nondiff_argnums=(2, 3, 4)) and is called with three arguments.
    @partial(spmdc.custom_jvp, nondiff_argnums=(1, 2))
    def scaled(x, scale=2.0, shift=None):
        return x * scale

    @scaled.defjvp
    def scaled_jvp(scale, shift, primals, tangents):
        assert shift is None
        return scaled(primals[0], scale), tangents[0] * scale * 10.0

    assert float(scaled(3.0)) == 6.0
    assert float(spmdc.grad(scaled)(3.0)) == 20.0
    assert float(spmdc.jit(spmdc.grad(lambda x: scaled(x, 3.0)))(1.0)) == 30.0


def test_custom_vjp_rules_closing_over_a_stopped_value_of_an_eager_grad():
    # Note [rules closing over known values]: a root finder built inside grad keeps its
    # bracket (a stop_gradient of the input) and its fwd reruns the solver, as jaxopt's
    # Bisection under custom_root does (also under a grad of value_and_grad); JAX gives
    # the value 0.6 and the gradients below.
    def solver(c):
        @spmdc.custom_vjp
        def solve(x):
            return jnp.maximum(x - c, 0.0)

        def fwd(x):
            r = solve(x)
            return r, r

        def bwd(r, g):
            return (g * (r > 0),)

        solve.defvjp(fwd, bwd)
        return solve

    def loss(x):
        c = lax.stop_gradient(jnp.max(x)) - 0.5
        return jnp.sum(solver(c)(x))

    x = np.array([0.1, 0.5, -0.3, 0.9, 0.2])
    value, grad = spmdc.value_and_grad(loss)(x)
    close(value, 0.6)
    close(grad, [0.0, 1.0, 0.0, 1.0, 0.0])
    # the rule's own call, made inside fwd, is differentiated by the outer grad
    close(spmdc.grad(lambda v: spmdc.value_and_grad(loss)(v)[0])(x), grad)


def test_second_order_reverse_mode_of_a_custom_jvp_around_a_pure_callback():
    # jaxopt's isotonic regression: the function is a pure_callback, the rule calls the
    # function again; the rule here says d sin(u) = sin(u) du, so the numbers show it was
    # used at both orders (JAX gives the same).
    @spmdc.custom_jvp
    def f(y):
        return spmdc.pure_callback(lambda v: np.sin(v), spmdc.ShapeDtypeStruct(y.shape, y.dtype),
                                   y)

    @f.defjvp
    def f_jvp(primals, tangents):
        out = f(primals[0])
        return out, out * tangents[0]

    def loss(y):
        return jnp.mean(f(y ** 3) + f(y) ** 2)

    y = np.array([0.1, 0.2, 0.3])
    want = (9 * y ** 4 * np.sin(y ** 3) + 6 * y * np.sin(y ** 3) + 4 * np.sin(y) ** 2) / 3
    close(spmdc.grad(lambda v: jnp.sum(spmdc.grad(loss)(v)))(y), want)
