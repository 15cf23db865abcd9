"""Structured control flow: lax.cond / switch / while_loop / fori_loop / scan.

Values against Python loops and the NumPy reference interpreter, jit / vmap / grad of each
(grads against central finite differences), pytree carries, closures over traced values,
control flow inside pmap with a collective in the body, the IR text round trip, CSE, and
the user-facing errors; lax.optimization_barrier and lax.platform_dependent."""
import functools

import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.interpreter import evaluate
from spmdc.compiler.ir import check, parse
from spmdc.compiler.passes.cleanup import cleanup
from spmdc.compiler.passes.collectives import ReplicationError
from spmdc.compiler.primitives.control_flow import DivergentCollectiveError, WhileLoopVJPError

SMALL = settings(max_examples=8)


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


# finite differences with a step that suits float32 programs
numeric_grad = functools.partial(oracle.numeric_grad, eps=1e-3)


def reference(fun, *args):
    """``fun`` traced, run by the NumPy reference interpreter (the primitives' impls)."""
    lowered = spmdc.jit(fun).lower(*args)
    return evaluate(lowered.func, *args, *(np.asarray(c) for c in lowered.consts))


# --- cond / switch ---------------------------------------------------------------------------

def branchy(p, x):
    return lax.cond(p > 0, lambda v: jnp.sin(v) * 2.0, lambda v: jnp.cos(v) - 1.0, x)


@SMALL
@given(st.floats(-3, 3), st.lists(st.floats(-2, 2), min_size=3, max_size=3))
def test_cond_values_match_python(p, xs):
    x, p = np.asarray(xs, np.float32), np.float32(p)
    want = np.sin(x) * 2 if p > 0 else np.cos(x) - 1
    close(spmdc.jit(branchy)(np.float32(p), x), want)
    close(reference(branchy, np.float32(p), x)[0], want)


def test_cond_pytrees_closures_and_eager_call():
    def f(p, x, w):
        # a pytree of operands and of results; branches close over the traced w
        return lax.cond(p, lambda t: {"a": t[0] * w, "b": t[1]},
                        lambda t: {"a": t[0] + w, "b": t[1] * 2}, (x, x + 1))
    out = spmdc.jit(f)(True, np.float32(3), np.float32(2))
    assert set(out) == {"a", "b"}
    close(out["a"], 6.0)
    close(out["b"], 4.0)
    out = spmdc.jit(f)(False, np.float32(3), np.float32(2))
    close(out["a"], 5.0)
    close(out["b"], 8.0)
    close(lax.cond(False, lambda x: x + 1, lambda x: x - 1, 3.0), 2.0)  # eager


def test_switch_clamps_the_index_like_jax():
    branches = [lambda x: x, lambda x: x * 2, lambda x: x * 3]
    f = spmdc.jit(lambda i, x: lax.switch(i, branches, x))
    for i, k in [(-5, 1), (0, 1), (1, 2), (2, 3), (9, 3)]:
        close(f(i, np.float32(1.5)), 1.5 * k)


def test_vmap_cond_with_batched_and_unbatched_predicate():
    p = np.array([1.0, -1.0, 2.0, -0.5], np.float32)
    x = np.linspace(-1, 1, 4 * 3).reshape(4, 3).astype(np.float32)
    want = np.where(p[:, None] > 0, np.sin(x) * 2, np.cos(x) - 1)
    close(spmdc.vmap(branchy)(p, x), want)                          # batched predicate
    close(spmdc.vmap(branchy, in_axes=(None, 0))(np.float32(1), x), np.sin(x) * 2)
    close(spmdc.vmap(branchy, in_axes=(0, None))(p, x[0]),        # only pred batched
          np.where(p[:, None] > 0, np.sin(x[0]) * 2, np.cos(x[0]) - 1))


def test_vmap_switch_with_batched_index():
    branches = [lambda x: x, lambda x: x * 2, lambda x: x * 3]
    i = np.array([-1, 0, 1, 2, 7])
    got = spmdc.vmap(lambda i, x: lax.switch(i, branches, x))(i, np.ones(5, np.float32))
    close(got, [1, 1, 2, 3, 3])


def test_grad_of_cond_matches_finite_differences():
    def f(x):
        return jnp.sum(lax.cond(jnp.sum(x) > 0, lambda v: jnp.sin(v) * v,
                                lambda v: jnp.exp(v) * 3.0, x))
    g = spmdc.jit(spmdc.grad(f))
    for x in (np.array([0.3, 0.5, -0.2]), np.array([-0.3, -0.5, 0.2])):
        close(g(x.astype(np.float32)),
              numeric_grad(lambda v: f(v.astype(np.float32)), x), 2e-2)


def test_grad_through_cond_closure_and_vmap_of_grad():
    def f(w, x):
        return lax.cond(x > 0, lambda v: v * w * w, lambda v: v + w, x)
    close(spmdc.grad(f)(np.float32(3), np.float32(2)), 12.0)     # d(x w^2)/dw = 2xw
    close(spmdc.grad(f)(np.float32(3), np.float32(-2)), 1.0)
    xs = np.array([2.0, -2.0, 1.0], np.float32)
    close(spmdc.vmap(spmdc.grad(f), in_axes=(None, 0))(np.float32(3), xs), [12, 1, 6])


# --- while_loop / fori_loop -------------------------------------------------------------------

def collatz_steps(n):
    def body(state):
        k, steps = state
        k = jnp.where(k % 2 == 0, k // 2, 3 * k + 1)
        return k, steps + 1
    return lax.while_loop(lambda s: s[0] != 1, body, (n, 0))[1]


def python_collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@SMALL
@given(st.integers(1, 60))
def test_while_loop_values_match_python(n):
    assert int(spmdc.jit(collatz_steps)(n)) == python_collatz(n)


def test_vmap_while_loop_with_batched_predicate():
    ns = np.array([1, 6, 7, 27], np.int32)
    assert list(np.asarray(spmdc.vmap(collatz_steps)(ns))) == [python_collatz(int(n))
                                                               for n in ns]
    # the predicate is batched through a closed-over limit; the body through a const
    def doubling(limit, step):
        return lax.while_loop(lambda c: c[1] < limit, lambda c: (c[0] + 1, c[1] * step),
                              (0, 1.0))
    limits = np.array([1.0, 5.0, 100.0], np.float32)
    n, v = spmdc.vmap(doubling, in_axes=(0, None))(limits, np.float32(2))
    assert list(np.asarray(n)) == [0, 3, 7]
    close(v, [1, 8, 128])
    n, v = spmdc.vmap(doubling, in_axes=(None, 0))(np.float32(10), np.array([2.0, 3.0]))
    assert list(np.asarray(n)) == [4, 3]
    close(v, [16, 27])


def test_while_loop_pytree_carry_closure_and_reference():
    def f(x, limit):
        def body(c):
            return {"n": c["n"] + 1, "v": c["v"] * x}
        return lax.while_loop(lambda c: c["v"][0] < limit, body,
                              {"n": 0, "v": jnp.ones(2)})
    out = spmdc.jit(f)(np.float32(2), np.float32(20))
    assert int(out["n"]) == 5
    close(out["v"], [32, 32])
    n, v = reference(f, np.float32(2), np.float32(20))
    assert int(n) == 5
    close(v, [32, 32])


@SMALL
@given(st.integers(-2, 6), st.integers(-2, 8))
def test_fori_loop_static_and_traced_bounds(lo, hi):
    want = float(sum(i * 0.5 for i in range(lo, hi))) + 1.0
    body = lambda i, x: x + i * 0.5          # noqa: E731
    close(lax.fori_loop(lo, hi, body, 1.0), want)
    close(spmdc.jit(lambda a, b: lax.fori_loop(a, b, body, 1.0))(lo, hi), want)


def test_fori_loop_promotes_a_weakly_typed_init_like_jax():
    out = lax.fori_loop(0, 3, lambda i, x: x + jnp.float32(1.5), 0)
    assert out.dtype == np.float32 and float(out) == 4.5


def test_fori_loop_with_static_bounds_is_differentiable():
    cube = lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0)  # noqa: E731
    close(spmdc.grad(cube)(2.0), 12.0)
    close(spmdc.grad(spmdc.grad(cube))(2.0), 12.0)                # d2 x^3 = 6x
    # concrete (not traced) array bounds are static too, as in JAX
    cube_np = lambda x: lax.fori_loop(np.int32(0), jnp.asarray(3),  # noqa: E731
                                      lambda i, c: c * x, 1.0)
    close(spmdc.grad(cube_np)(2.0), 12.0)


def test_grad_of_while_loop_is_a_clear_error():
    with pytest.raises(WhileLoopVJPError, match="fori_loop with Python int"):
        spmdc.grad(lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * x, 1.0))(2.0)
    with pytest.raises(WhileLoopVJPError, match="test_control_flow.py"):
        spmdc.grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, 1.0))(2.0, 3)
    # an integer-only loop carries no gradient: differentiating around it is fine
    f = lambda x: x * lax.fori_loop(0, jnp.asarray(3), lambda i, c: c + i, 0)  # noqa: E731
    close(spmdc.grad(f)(2.0), 3.0)


# --- scan ------------------------------------------------------------------------------------

def cumulative(c, x):
    c = c * 0.5 + x
    return c, jnp.sin(c)


def python_scan(f, init, xs, reverse=False):
    carry, ys = init, [None] * len(xs)
    for i in (reversed(range(len(xs))) if reverse else range(len(xs))):
        carry, ys[i] = f(carry, xs[i])
    return carry, np.stack(ys)


@SMALL
@given(st.lists(st.floats(-2, 2), min_size=5, max_size=5), st.booleans())
def test_scan_values_match_a_python_loop(xs, reverse):
    xs = np.asarray(xs, np.float32)
    f = spmdc.jit(lambda xs: lax.scan(cumulative, 0.0, xs, reverse=reverse))
    carry, ys = f(xs)
    want_c, want_ys = python_scan(lambda c, x: (c * 0.5 + x, np.sin(c * 0.5 + x)),
                                  0.0, xs, reverse)
    close(carry, want_c)
    close(ys, want_ys)
    ref_c, ref_ys = reference(lambda xs: lax.scan(cumulative, 0.0, xs, reverse=reverse), xs)
    close(ref_c, want_c)
    close(ref_ys, want_ys)


def test_scan_pytrees_length_only_and_no_ys():
    def step(c, x):
        return {"s": c["s"] + x["a"] * x["b"], "n": c["n"] + 1}, (x["a"], None)
    xs = {"a": np.arange(4.0, dtype=np.float32), "b": np.full((4, 2), 2.0, np.float32)}
    carry, (ys, none) = spmdc.jit(lambda xs: lax.scan(
        step, {"s": jnp.zeros(2), "n": 0}, xs))(xs)
    close(carry["s"], [12, 12])
    assert int(carry["n"]) == 4 and none is None
    close(ys, xs["a"])
    c, ys = lax.scan(lambda c, _: (c + 1, c * 2), 0, None, length=3)   # xs=None
    assert int(c) == 3 and list(np.asarray(ys)) == [0, 2, 4]


def test_empty_scans_and_operandless_branches():
    carry, ys = spmdc.jit(lambda c, xs: lax.scan(lambda c, x: (c + x[0], x * 2), c, xs))(
        np.float32(5), np.zeros((0, 2), np.float32))
    assert float(carry) == 5.0 and np.asarray(ys).shape == (0, 2)
    assert lax.fori_loop(4, 2, lambda i, c: c + 1.0, 0.5) == 0.5           # empty range
    pick = lambda p: lax.cond(p, lambda: 1.0, lambda: 2.0)                  # noqa: E731
    close(spmdc.jit(pick)(False), 2.0)
    close(spmdc.vmap(pick)(np.array([True, False])), [1.0, 2.0])


def test_vmap_scan_batched_xs_and_batched_consts():
    xs = np.arange(12.0, dtype=np.float32).reshape(3, 4)     # 3 sequences of 4
    got_c, got_ys = spmdc.vmap(lambda xs: lax.scan(cumulative, 0.0, xs))(xs)
    for k in range(3):
        c, ys = python_scan(lambda c, x: (c * 0.5 + x, np.sin(c * 0.5 + x)), 0.0, xs[k])
        close(got_c[k], c)
        close(got_ys[k], ys)
    # only a closed-over value is batched: the carry becomes batched through the body
    w = np.array([1.0, 2.0, 3.0], np.float32)
    got = spmdc.vmap(lambda w: lax.scan(lambda c, x: (c * w + x, c), 0.0, xs[0])[0])(w)
    close(got, [python_scan(lambda c, x: (c * v + x, c), 0.0, xs[0])[0] for v in w])
    # batched along another axis of xs
    got_c, _ = spmdc.vmap(lambda xs: lax.scan(cumulative, 0.0, xs), in_axes=1)(xs.T)
    close(got_c, [python_scan(lambda c, x: (c * 0.5 + x, 0), 0.0, xs[k])[0]
                  for k in range(3)])


def test_grad_of_scan_matches_finite_differences():
    def loss(params, xs):
        w, b = params
        def step(h, x):
            h = jnp.tanh(w * h + x + b)
            return h, h * h
        h, ys = lax.scan(step, jnp.zeros(2), xs)
        return jnp.sum(h) + jnp.sum(ys)
    xs = np.linspace(-1, 1, 10).reshape(5, 2).astype(np.float32)
    w, b = np.float32(0.7), np.array([0.1, -0.2], np.float32)
    gw, gb = spmdc.jit(spmdc.grad(loss))((w, b), xs)
    close(gw, numeric_grad(lambda v: loss((np.float32(v), b), xs), w), 2e-2)
    close(gb, numeric_grad(lambda v: loss((w, v.astype(np.float32)), xs), b), 2e-2)
    gx = spmdc.grad(loss, argnums=1)((w, b), xs)
    close(gx, numeric_grad(lambda v: loss((w, b), v.astype(np.float32)), xs), 2e-2)


def test_grad_of_reverse_scan_and_grad_vmap_commute():
    def f(x):
        return jnp.sum(lax.scan(lambda c, v: (jnp.sin(c) * v, c), x[0], x, reverse=True)[1])
    x = np.array([1.0, 2.0, 0.5], np.float32)
    close(spmdc.grad(f)(x), numeric_grad(lambda v: f(v.astype(np.float32)), x), 2e-2)
    xs = np.stack([x, x * 0.5])
    close(spmdc.grad(lambda xs: jnp.sum(spmdc.vmap(f)(xs)))(xs),
          spmdc.vmap(spmdc.grad(f))(xs))


def test_hessian_through_scan_and_cond_matches_finite_differences():
    def f(x):
        c, ys = lax.scan(lambda c, v: (c * v + jnp.sin(c), c * c), x[0], x)
        return c + jnp.sum(ys) + lax.cond(x[1] > 0, lambda v: jnp.sum(v ** 3), jnp.sum, x)
    x = np.array([0.3, 0.7, -0.4])
    g = spmdc.jit(spmdc.grad(f))
    want = np.stack([numeric_grad(lambda v: np.asarray(g(v.astype(np.float32)))[j], x)
                     for j in range(3)])
    close(spmdc.hessian(f)(x.astype(np.float32)), want, 5e-2)


# --- pmap, IR, cleanup ----------------------------------------------------------------------------

@pytest.mark.devices(4)
def test_control_flow_inside_pmap_with_psum_in_the_body():
    x = np.arange(4.0, dtype=np.float32)
    f = spmdc.pmap(lambda x: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(x, "i"), x),
                   axis_name="i")
    close(f(x), x + 18)
    g = spmdc.pmap(lambda x: lax.while_loop(lambda c: c < 20.0,
                                            lambda c: c + lax.psum(x, "i"), 0.0),
                   axis_name="i")
    close(g(x), [24] * 4)
    h = spmdc.pmap(lambda x: lax.cond(lax.psum(x, "i") > 1, lambda v: lax.pmax(v, "i"),
                                      lambda v: v, x), axis_name="i")
    close(h(x), [3] * 4)
    k = spmdc.pmap(lambda x: lax.scan(lambda c, v: (c + lax.psum(v * x, "i"), c), 0.0,
                                      jnp.arange(3.0))[0], axis_name="i")
    close(k(x), [18] * 4)


@pytest.mark.devices(4)
def test_pmap_of_grad_through_scan_and_cond_with_collectives_matches_named_vmap():
    def loss(w, x):
        c, ys = lax.scan(lambda c, v: (jnp.tanh(c * w + lax.psum(v * x, "i")), c), 0.1,
                         jnp.arange(3.0))
        return c + jnp.sum(ys) + lax.cond(lax.psum(x, "i") > 0, lambda: w * w, lambda: w)
    x = np.arange(4.0, dtype=np.float32) / 4
    w = np.full(4, 0.5, np.float32)
    value, grads = spmdc.pmap(spmdc.value_and_grad(loss), axis_name="i")(w, x)
    close(grads, spmdc.vmap(spmdc.grad(loss), axis_name="i")(w, x))
    close(value, spmdc.vmap(loss, axis_name="i")(w, x))


@pytest.mark.devices(4)
def test_the_spmd_reference_interpreter_refuses_collectives_in_loop_bodies():
    from spmdc.compiler.interpreter_spmd import evaluate_spmd
    f = spmdc.pmap(lambda x: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(x, "i"), x),
                   axis_name="i")
    func = f.lower(np.arange(4.0, dtype=np.float32)).func
    with pytest.raises(NotImplementedError, match="collective in a sub-function"):
        evaluate_spmd(func, (("i", 4),), np.arange(4.0, dtype=np.float32))


@pytest.mark.devices(4)
def test_loop_results_kept_equal_by_a_psum_may_be_returned_replicated():
    x = np.arange(4.0, dtype=np.float32)
    f = spmdc.pmap(lambda x: lax.fori_loop(0, 3, lambda i, c: c + lax.psum(x, "i"), 0.0),
                   axis_name="i", out_axes=None)
    close(f(x), 18.0)
    g = spmdc.pmap(lambda x: lax.scan(lambda c, v: (c + v, c), 0.0, x)[0], axis_name="i",
                   out_axes=None)
    with pytest.raises(ReplicationError):            # the carry takes in the varying x
        g(np.ones((4, 3), np.float32))


@pytest.mark.devices(4)
def test_a_collective_under_a_device_dependent_predicate_is_an_error_not_a_hang():
    x = np.arange(4.0, dtype=np.float32)
    h = spmdc.pmap(lambda x: lax.cond(x > 1, lambda v: lax.psum(v, "i"), lambda v: v, x),
                   axis_name="i")
    with pytest.raises(DivergentCollectiveError, match=r"psum over axis 'i' \(at .*"
                                                       r"test_control_flow.py"):
        h(x)
    w = spmdc.pmap(lambda x: lax.while_loop(lambda c: c < x, lambda c: c + lax.psum(
        x, "i"), 0.0), axis_name="i")
    with pytest.raises(DivergentCollectiveError, match="lax.while_loop whose predicate"):
        w(x)


def test_ir_round_trip_of_a_function_with_loops():
    def f(x, n):
        c, ys = lax.scan(lambda c, v: (c + v, c * v), 0.0, x)
        m = lax.fori_loop(0, n, lambda i, t: t * 2.0, c)
        return lax.cond(m > 3, lambda v: v + 1, lambda v: v, ys)
    args = (np.arange(3.0, dtype=np.float32), np.int32(2))
    lowered = spmdc.jit(f).lower(*args)
    text = lowered.ir()
    assert "scan(" in text and "while(" in text and "cond(" in text
    parsed = check(parse(text))
    assert str(parsed) == text
    consts = [np.asarray(c) for c in lowered.consts]
    close(evaluate(parsed, *args, *consts)[0], spmdc.jit(f)(*args))


def test_cse_never_merges_different_loops():
    def f(x):
        a = lax.fori_loop(0, 3, lambda i, c: c * 2.0, x)
        b = lax.fori_loop(0, 3, lambda i, c: c * 3.0, x)
        return a, b
    func = cleanup(spmdc.make_ir(f)(np.float32(1)))
    assert str(func).count("scan(") == 2
    a, b = spmdc.jit(f)(np.float32(1))
    assert float(a) == 8.0 and float(b) == 27.0


def test_cleanup_also_cleans_loop_bodies():
    def f(x):
        def step(c, v):
            unused = jnp.exp(v) * 3.0            # noqa: F841  (dead code)
            return c + jnp.sin(v) * jnp.sin(v), v
        return lax.scan(step, 0.0, x)[0]
    text = str(cleanup(spmdc.make_ir(f)(np.arange(3.0, dtype=np.float32))))
    assert "exp" not in text and text.count("sin(") == 1


# --- errors ---------------------------------------------------------------------------------

def test_carry_type_change_names_the_leaf_both_types_and_the_line():
    body = lambda c: (c[0] + 1, c[1].astype(jnp.int32))   # noqa: E731
    with pytest.raises(TypeError, match=r"init_val\[1\] has type float32\[3\].*int32\[3\]") \
            as e:
        lax.while_loop(lambda c: c[0] < 3, body, (0, jnp.zeros(3, jnp.float32)))
    assert "test_control_flow.py" in str(e.value) and "carry" in str(e.value)
    with pytest.raises(TypeError, match=r"shapes do not match"):
        lax.scan(lambda c, x: (jnp.stack([c, c]), x), jnp.float32(0), np.arange(3.0))
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.fori_loop(0, 2, lambda i, c: (c, c), 1.0)
    body = lambda i, c: {"a": c["a"].astype(jnp.int32)}      # noqa: E731
    for loop in (lambda x, hi: lax.fori_loop(0, 3, body, {"a": x}),     # a scan
                 lambda x, hi: lax.fori_loop(0, hi, body, {"a": x})):   # a while loop
        with pytest.raises(TypeError, match=r"init_val\['a'\] has type float32\[\].*int32"):
            spmdc.jit(loop)(1.0, 3)


def test_cond_branches_of_different_types_are_an_error():
    with pytest.raises(TypeError, match=r"true_fun and false_fun must return identical "
                                        r"types.*float32\[\].*int32\[\]"):
        lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), jnp.float32(1))
    with pytest.raises(TypeError, match="same pytree structure"):
        lax.cond(True, lambda x: (x, x), lambda x: x, 1.0)
    with pytest.raises(TypeError, match="pred must be a scalar"):
        lax.cond(jnp.ones(2) > 0, lambda x: x, lambda x: x, 1.0)


def test_other_misuse_is_an_error():
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: c, lambda c: c + 1, 1.0)
    with pytest.raises(ValueError, match="length=4"):
        lax.scan(lambda c, x: (c, x), 0.0, np.arange(3.0), length=4)
    with pytest.raises(ValueError, match="no xs"):
        lax.scan(lambda c, x: (c, x), 0.0, None)
    with pytest.raises(TypeError, match="must return a pair"):
        lax.scan(lambda c, x: c, 0.0, np.arange(3.0))
    close(lax.cond(True, lambda x: x + 1, lambda x: x, 1.0), 2.0)   # still works afterwards


# --- lax.map -----------------------------------------------------------------------------------

@pytest.mark.parametrize("batch_size", [None, 1, 4, 6, 10])
def test_lax_map_matches_a_python_loop(batch_size):
    xs = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    pair = (xs, xs[:, 0] > 3)

    def f(p):
        x, flag = p
        return {"s": jnp.where(flag, x.sum(), -x.sum()), "d": jnp.sin(x) * 2}

    out = spmdc.jit(lambda p: lax.map(f, p, batch_size=batch_size))(pair)
    expected_s = [(x.sum() if x[0] > 3 else -x.sum()) for x in xs]
    np.testing.assert_allclose(out["s"], expected_s, rtol=1e-6)
    np.testing.assert_allclose(out["d"], np.sin(xs) * 2, rtol=1e-6)
    eager = lax.map(f, pair, batch_size=batch_size)            # outside jit too
    np.testing.assert_allclose(eager["d"], np.sin(xs) * 2, rtol=1e-6)


def test_lax_map_is_a_loop_and_composes_with_grad_and_vmap():
    xs = np.linspace(-1, 1, 10, dtype=np.float32).reshape(5, 2)
    text = spmdc.jit(lambda v: lax.map(jnp.tanh, v)).lower(xs).as_text()
    assert "stablehlo.while" in text
    g = spmdc.grad(lambda v: (lax.map(lambda r: jnp.tanh(r) * r, v) ** 2).sum())(xs)
    t = np.tanh(xs)
    np.testing.assert_allclose(g, 2 * t * xs * (t + xs * (1 - t ** 2)), rtol=1e-5)
    batched = spmdc.vmap(lambda v: lax.map(lambda r: r.sum(), v))(np.stack([xs, 2 * xs]))
    np.testing.assert_allclose(batched, [xs.sum(1), 2 * xs.sum(1)], rtol=1e-6)


def test_lax_map_errors_name_the_problem():
    with pytest.raises(ValueError, match="leading axis to map over.*test_control_flow.py"):
        spmdc.jit(lambda x: lax.map(jnp.sin, x))(np.float32(1.0))
    with pytest.raises(ValueError, match=r"same leading axis size, got sizes \[2, 3\]"):
        lax.map(lambda p: p[0] + p[1].sum(), (np.ones(2), np.ones((3, 1))))
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        lax.map(jnp.sin, np.ones(3), batch_size=0)
    np.testing.assert_allclose(lax.map(jnp.cos, np.zeros(3)), np.ones(3))


def test_cond_older_five_argument_form():
    out = lax.cond(True, 1.0, lambda x: x + 1, 2.0, lambda x: x - 1)
    assert float(out) == 2.0
    out = spmdc.jit(lambda p: lax.cond(p, 1.0, lambda x: x + 1, 2.0, lambda x: x - 1))(False)
    assert float(out) == 1.0


def test_optimization_barrier_is_the_identity_with_a_barrier():
    f = spmdc.jit(lambda a, b: lax.optimization_barrier((a * 2, b + 1)))
    out = f(np.ones(2, np.float32), np.ones(3, np.float32))
    np.testing.assert_array_equal(out[0], [2, 2])
    np.testing.assert_array_equal(out[1], [2, 2, 2])
    assert "stablehlo.optimization_barrier" in f.lower(np.ones(2), np.ones(3)).as_text()
    np.testing.assert_array_equal(
        spmdc.grad(lambda a: lax.optimization_barrier(a * a).sum())(np.ones(3)), [2, 2, 2])
    np.testing.assert_array_equal(
        spmdc.vmap(lambda a: lax.optimization_barrier(a * 2))(np.ones((2, 3))), 2)


@pytest.mark.cpu_platform
def test_platform_dependent_takes_the_cpu_branch():
    x = np.float32(2.0)
    f = lambda x: lax.platform_dependent(x, cpu=lambda v: v + 1, tpu=lambda v: v * 10,  # noqa
                                         default=lambda v: v - 1)
    assert float(spmdc.jit(f)(x)) == 3.0
    assert float(spmdc.grad(f)(x)) == 1.0
    np.testing.assert_allclose(lax.platform_dependent(x, cuda=jnp.sin, default=jnp.cos), np.cos(x))
    with pytest.raises(ValueError, match="no branch for the 'cpu' platform"):
        lax.platform_dependent(x, tpu=jnp.sin)
    with pytest.raises(ValueError, match="'cuda' or 'rocm'"):
        lax.platform_dependent(x, gpu=jnp.sin, default=jnp.cos)
