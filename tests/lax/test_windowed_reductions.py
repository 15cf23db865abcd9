"""Windowed reductions (compiler/primitives/windowed.py, spmdc/lax/windowed_reductions.py): the
primitives against their NumPy references (lowering, vmap, grad vs finite differences,
jvp) with hypothesis over small shapes and every window option; lax.reduce_window (the
monoids and a general computation over pytrees), lax.reduce_precision and
jnp.convolve/correlate against values recorded from JAX 0.10.2; errors."""
from __future__ import annotations

import json

import numpy as np
import oracle
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from primcheck import check_grad, check_jvp, check_lowering, check_vmap

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.primitives import windowed as W
from spmdc.compiler.primitives import windowed_select as S

FEW = settings(max_examples=8, deadline=None)
DATA = oracle.recorded("conv_reference.npz")
MONOIDS = [W.reduce_window_sum_p, W.reduce_window_max_p, W.reduce_window_min_p]


@st.composite
def windows(draw, dilation=True, no_empty=False):
    """(shape, window params); ``no_empty``: no window lies wholly in padding or holes
    (a max over nothing is -inf, where finite differences are NaN)."""
    n = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(n))
    params = dict(
        window_dimensions=tuple(draw(st.integers(1, 3)) for _ in range(n)),
        window_strides=tuple(draw(st.integers(1, 2)) for _ in range(n)),
        padding=tuple((draw(st.integers(0 if not dilation else -1, 2)),
                       draw(st.integers(0, 2))) for _ in range(n)),
        base_dilation=tuple(draw(st.integers(1, 2 if dilation else 1)) for _ in range(n)),
        window_dilation=tuple(draw(st.integers(1, 2 if dilation else 1)) for _ in range(n)))
    params["padding"] = tuple((max(lo, 1 - s), hi) for (lo, hi), s in
                              zip(params["padding"], shape, strict=True))
    if no_empty:
        params["padding"] = tuple((min(lo, w - 1), min(hi, w - 1)) for (lo, hi), w in
                                  zip(params["padding"], params["window_dimensions"],
                                      strict=True))
        params["base_dilation"] = (1,) * n
        params["padding"] = tuple((0, 0) if d > 1 else p for p, d in
                                  zip(params["padding"], params["window_dilation"],
                                      strict=True))
    return shape, params


@pytest.mark.parametrize("prim", MONOIDS, ids=lambda p: p.name)
@FEW
@given(case=windows(), seed=st.integers(0, 2**31), dtype=st.sampled_from([np.float32,
                                                                          np.int32]))
def test_monoid_lowering(prim, case, seed, dtype):
    shape, params = case
    x = (np.random.default_rng(seed).normal(size=shape) * 4).astype(dtype)
    check_lowering(prim, [x], params)


@pytest.mark.parametrize("prim", MONOIDS, ids=lambda p: p.name)
@FEW
@given(case=windows(), seed=st.integers(0, 2**31), data=st.data())
def test_monoid_vmap(prim, case, seed, data):
    shape, params = case
    d = data.draw(st.integers(0, len(shape)))
    batched = list(shape)
    batched.insert(d, 2)
    x = np.random.default_rng(seed).normal(size=batched).astype(np.float32)
    check_vmap(prim, [x], params, [d], 2)


@pytest.mark.parametrize("prim", MONOIDS, ids=lambda p: p.name)
@FEW
@given(data=st.data(), seed=st.integers(0, 2**31))
def test_monoid_grad_and_jvp(prim, data, seed):
    # max/min have a VJP without dilation only (as in JAX); their JVP takes any.
    monoid = prim is W.reduce_window_sum_p
    shape, params = data.draw(windows(dilation=monoid, no_empty=not monoid))
    x = np.random.default_rng(seed).permutation(np.prod(shape)).reshape(shape) * 0.5
    check_grad(prim, [x.astype(np.float64)], params)
    shape, params = data.draw(windows(no_empty=not monoid))
    x = np.random.default_rng(seed).permutation(np.prod(shape)).reshape(shape) * 0.5
    check_jvp(prim, [x.astype(np.float64)], params)


def test_max_pool_second_order():
    x = np.random.default_rng(0).permutation(35).reshape(5, 7) * 0.25
    params = dict(window_dimensions=(2, 3), window_strides=(2, 2), padding=((1, 0), (0, 1)),
                  base_dilation=(1, 1), window_dilation=(1, 1))
    check_grad(W.reduce_window_max_p, [x], params, second_order=True)


@settings(max_examples=5, deadline=None)     # lowering, vmap and grad compile per example
@given(case=windows(dilation=False), seed=st.integers(0, 2**31),
       select=st.sampled_from(["ge", "le"]))
def test_select_and_scatter_add(case, seed, select):
    shape, params = case
    params = {k: v for k, v in params.items() if k in ("window_dimensions", "window_strides",
                                                        "padding")}
    rng = np.random.default_rng(seed)
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32)
    out_shape = W.window_output_shape("t", shape, **params)
    source = rng.normal(size=out_shape).astype(np.float32)
    check_lowering(S.select_and_scatter_add_p, [source, x], dict(select=select, **params))
    check_vmap(S.select_and_scatter_add_p, [np.stack([source, 2 * source]), x],
               dict(select=select, **params), [0, None], 2)
    check_grad(S.select_and_scatter_add_p, [source.astype(np.float64), x.astype(np.float64)],
               dict(select=select, **params), wrt=[0])


@FEW
@given(case=windows(), seed=st.integers(0, 2**31), select=st.sampled_from(["ge", "le"]))
def test_select_and_gather_add(case, seed, select):
    shape, params = case
    rng = np.random.default_rng(seed)
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32)
    t = rng.normal(size=shape).astype(np.float32)
    check_lowering(S.select_and_gather_add_p, [t, x], dict(select=select, **params))
    check_vmap(S.select_and_gather_add_p, [np.stack([t, -t]), x],
               dict(select=select, **params), [0, None], 2)


def test_reduce_precision():
    x = np.random.default_rng(0).normal(size=(50,)).astype(np.float32) * 1e3
    x[:3] = [np.inf, -np.inf, 7e4]
    for e, m in ((5, 10), (8, 7), (4, 2), (8, 23)):
        check_lowering(W.reduce_precision_p, [x], dict(exponent_bits=e, mantissa_bits=m))
    half = lax.reduce_precision(x, 5, 10)
    with np.errstate(over="ignore"):                       # 7e4 is inf in float16
        np.testing.assert_array_equal(half, x.astype(np.float16).astype(np.float32))
    grad = spmdc.grad(lambda v: jnp.sum(lax.reduce_precision(v, 8, 7) * 3.0))(x)
    np.testing.assert_array_equal(grad, np.full_like(x, 3.0))


# --- the frontend against JAX --------------------------------------------------------------------

def _keys(prefix):
    return sorted(k[:-len(".kwargs")] for k in DATA.files
                  if k.startswith(prefix) and k.endswith(".kwargs"))


_OPS = {"max": (lax.max, -np.inf), "min": (lax.min, np.inf), "sum": (lax.add, 0.0),
        "prod": (lax.mul, 1.0)}


@pytest.mark.parametrize("key", _keys("reduce_window."))
def test_reduce_window_same_as_jax(key):
    kw = json.loads(str(DATA[f"{key}.kwargs"]))
    if isinstance(kw["padding"], list):
        kw["padding"] = [tuple(p) for p in kw["padding"]]
    op, init = _OPS[str(DATA[f"{key}.kind"])]

    def f(a):
        return lax.reduce_window(a, init, op, **kw)
    x = DATA[f"{key}.x"]
    np.testing.assert_allclose(f(x), DATA[f"{key}.out"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(spmdc.jit(f)(x), DATA[f"{key}.out"], rtol=1e-5, atol=1e-6)
    if f"{key}.gx" in DATA.files:
        w = DATA[f"{key}.weights"]
        g = spmdc.jit(spmdc.grad(lambda a: jnp.sum(f(a) * w)))(x)
        np.testing.assert_allclose(g, DATA[f"{key}.gx"], rtol=1e-5, atol=1e-6)


def test_convolve_and_correlate_same_as_jax():
    keys = sorted({k.rsplit(".", 1)[0] for k in DATA.files if k.startswith("convolve.")})
    assert len(keys) == 12
    for key in keys:
        a, v, mode = DATA[f"{key}.a"], DATA[f"{key}.v"], key.split(".")[-1]
        np.testing.assert_allclose(jnp.convolve(a, v, mode=mode), DATA[f"{key}.convolve"],
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(spmdc.jit(lambda p, q, m=mode: jnp.correlate(p, q, mode=m))(
            a, v), DATA[f"{key}.correlate"], rtol=1e-5, atol=1e-6)
    assert jnp.convolve(np.arange(3), np.arange(2)).dtype == np.float32   # ints: inexact


def test_general_reduce_window_pytree_and_jvp():
    # An argmax-with-value reduction over (value, index) pairs: a general computation.
    x = np.array([[3., 1., 4., 1., 5.], [9., 2., 6., 5., 3.]], np.float32)
    idx = np.arange(x.size, dtype=np.float32).reshape(x.shape)

    def pick(acc, new):
        take = new[0] > acc[0]
        return (jnp.where(take, new[0], acc[0]), jnp.where(take, new[1], acc[1]))

    def f(v):
        return lax.reduce_window((v, idx), (-np.inf, -1.0), pick, (1, 2), (1, 1), "VALID")
    vals, where = f(x)
    np.testing.assert_array_equal(vals, np.maximum(x[:, :-1], x[:, 1:]))
    np.testing.assert_array_equal(where, np.where(x[:, 1:] > x[:, :-1], idx[:, 1:],
                                                  idx[:, :-1]))
    np.testing.assert_array_equal(spmdc.jit(f)(x)[0], vals)
    # vmap: batch of operands
    stacked = spmdc.vmap(lambda v: lax.reduce_window(v, 1.0, lax.mul, (2,), (1,), "VALID"))(x)
    np.testing.assert_allclose(stacked, x[:, :-1] * x[:, 1:])
    # forward mode through a product window: d(a*b) = da*b + a*db
    t = np.ones_like(x)
    _, tangent = spmdc.jvp(lambda v: lax.reduce_window(v, 1.0, lax.mul, (1, 2), (1, 1),
                                                       "VALID"), (x,), (t,))
    np.testing.assert_allclose(tangent, x[:, :-1] + x[:, 1:])


@pytest.mark.parametrize("call,error,fragment", [
    (lambda x: spmdc.grad(lambda v: lax.reduce_window(v, 1.0, lax.mul, (2, 2)).sum())(x),
     NotImplementedError, "general computation"),
    (lambda x: spmdc.grad(lambda v: lax.reduce_window(
        v, -np.inf, lax.max, (2, 2), window_dilation=(2, 1)).sum())(x),
     NotImplementedError, "window_dilation"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2,)), ValueError,
     "window_dimensions has 1 entries"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (2, 2), padding="FULL"), ValueError,
     "unrecognised padding"),
    (lambda x: lax.reduce_window(x, np.int32(0), lambda a, b: a + b, (2, 2)), TypeError,
     "inconsistent dtypes"),
    (lambda x: lax.reduce_window(x.astype(np.int32), -np.inf, lambda a, b: lax.max(a, b),
                                 (2, 2)), TypeError, "inconsistent dtypes"),
    (lambda x: lax.reduce_window(x, 0.0, lambda a, b: (a, b), (2, 2)), ValueError,
     "tree structure"),
    (lambda x: lax.reduce_window(x, 0.0, lax.add, (0, 2)), TypeError, "must be positive"),
    (lambda x: spmdc.jit(lambda v: lax.reduce_window(v, 0.0, lambda a, b: a + b * v[0, 0],
                                                     (2, 2)))(x), TypeError, "closes over"),
    (lambda x: jnp.convolve(x, x), ValueError, "1-dimensional"),
    (lambda x: jnp.correlate(x[0], x[1], mode="middle"), ValueError, "mode must be"),
    (lambda x: lax.reduce_precision(x, 0, 3), TypeError, "exponent_bits"),
])
def test_errors(call, error, fragment):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(error) as info:
        call(x)
    assert fragment in str(info.value)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_correlate_and_convolve_of_complex_arrays(mode):
    # correlate conjugates its second argument, as NumPy's (it raised before the complex
    # conjugate existed)
    a = np.array([1 + 2j, 3 - 1j, 0.5j, 2], np.complex64)
    v = np.array([1 - 1j, 2 + 0.5j], np.complex64)
    np.testing.assert_allclose(jnp.correlate(a, v, mode=mode), np.correlate(a, v, mode=mode),
                               atol=1e-5)
    np.testing.assert_allclose(jnp.correlate(v, a, mode=mode), np.correlate(v, a, mode=mode),
                               atol=1e-5)
    np.testing.assert_allclose(jnp.convolve(a, v, mode=mode), np.convolve(a, v, mode=mode),
                               atol=1e-5)


def test_a_monoid_initial_value_is_the_identity_of_its_own_dtype():
    # JAX tests the initial value against the identity of its own dtype: -inf starts a
    # max over an integer operand (Equinox's MaxPool on integers), 0.0 a sum; the
    # windowed primitive then ignores it (regression: spmdc refused -inf for int32)
    x = np.arange(8, dtype=np.int32).reshape(1, 8)
    for run in (lambda f, *a: f(*a), lambda f, *a: spmdc.jit(f)(*a)):
        got = run(lambda v: lax.reduce_window(v, -np.inf, lax.max, (1, 2), (1, 2)), x)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, [[1, 3, 5, 7]])
    got = lax.reduce_window(x.astype(np.uint8), -np.inf, lax.max, (1, 2), (1, 2))
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, [[1, 3, 5, 7]])
    np.testing.assert_array_equal(lax.reduce_window(x, 0.0, lax.add, (1, 2), (1, 2)),
                                  [[1, 5, 9, 13]])
