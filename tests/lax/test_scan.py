"""lax.scan and lax.map: values against Python loops and the NumPy reference interpreter,
pytrees, length-only and empty scans, vmap of batched xs and consts, grad and hessian
(against central finite differences), lax.map's batch_size, and the misuse errors."""
import functools

import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

SMALL = settings(max_examples=8)


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


# finite differences with a step that suits float32 programs


numeric_grad = functools.partial(oracle.numeric_grad, eps=1e-3)


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
    ref_c, ref_ys = oracle.interpreted(
        lambda xs: lax.scan(cumulative, 0.0, xs, reverse=reverse), xs)
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
    with pytest.raises(ValueError, match="leading axis to map over.*test_scan.py"):
        spmdc.jit(lambda x: lax.map(jnp.sin, x))(np.float32(1.0))
    with pytest.raises(ValueError, match=r"same leading axis size, got sizes \[2, 3\]"):
        lax.map(lambda p: p[0] + p[1].sum(), (np.ones(2), np.ones((3, 1))))
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        lax.map(jnp.sin, np.ones(3), batch_size=0)
    np.testing.assert_allclose(lax.map(jnp.cos, np.zeros(3)), np.ones(3))


def test_split_transpose_argument():
    # Flax nnx's scan passes JAX's _split_transpose=False; True is refused.
    carry, ys = spmdc.lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(3.0, dtype=np.float32),
                               _split_transpose=False)
    assert float(carry) == 3.0
    np.testing.assert_array_equal(np.asarray(ys), [0.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="_split_transpose=True"):
        spmdc.lax.scan(lambda c, x: (c, x), 0.0, np.ones(2, np.float32), _split_transpose=True)


def test_an_eager_scan_traces_its_body_once_per_function_and_types():
    # See Note [eager control flow traces once per function]: as JAX (Flax nnx's scan
    # counts the traces of its body); spmdc traced the body on every eager call.
    traces = []

    def body(c, x):
        traces.append(1)
        return c + 1, x ** 2
    x = jnp.arange(5)
    c1, y1 = lax.scan(body, jnp.array(0), x)
    c2, y2 = lax.scan(body, c1, x)
    assert len(traces) == 1 and int(c1) == 5 and int(c2) == 10
    np.testing.assert_array_equal(np.asarray(y2), np.arange(5) ** 2)
    lax.scan(body, jnp.array(0.0), x)               # another carry type: traced again
    assert len(traces) == 2
    lax.scan(lambda c, v: body(c, v), 0, x)          # another function: traced again
    assert len(traces) == 3
