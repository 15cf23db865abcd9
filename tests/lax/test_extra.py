"""spmdc/lax/extra.py: Precision, axis_size, pbroadcast, pswapaxes, stack/unstack, empty,
batch_matmul, approx_max_k/min_k, index_take, reduce_xor, clz, dtype, the incomplete
gamma/beta names, optimization_barrier; and the products' precision= and
preferred_element_type= (numpy/products.py)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

X = np.arange(32, dtype=np.float32).reshape(8, 4)


@pytest.mark.devices(8)
def test_collectives_over_a_named_axis():
    np.testing.assert_array_equal(spmdc.pmap(lambda v: lax.pbroadcast(v, "i", 3), "i")(X),
                                  np.broadcast_to(X[3], X.shape))
    np.testing.assert_array_equal(
        spmdc.vmap(lambda v: lax.pbroadcast(v, "i", 5), axis_name="i")(X),
        np.broadcast_to(X[5], X.shape))
    assert spmdc.pmap(lambda v: v * lax.axis_size("i"), "i")(X)[1, 0] == 8 * X[1, 0]
    y = np.arange(64, dtype=np.float32).reshape(8, 8)
    swapped = spmdc.pmap(lambda v: lax.pswapaxes(v, "i", 0), "i")(y)
    np.testing.assert_array_equal(swapped, y.T)
    with pytest.raises(ValueError, match="source 9 is out of range"):
        spmdc.pmap(lambda v: lax.pbroadcast(v, "i", 9), "i")(X)


def test_array_names():
    np.testing.assert_array_equal(lax.stack([np.ones(2), np.zeros(2)], axis=1),
                                  [[1, 0], [1, 0]])
    parts = lax.unstack(np.arange(6).reshape(2, 3), axis=1)
    assert len(parts) == 3 and np.array_equal(parts[2], [2, 5])
    assert lax.empty((2, 3), np.float32).shape == (2, 3)
    a, b = np.random.default_rng(0).normal(size=(2, 2, 3, 4)).astype(np.float32)[:, :, :, :]
    np.testing.assert_allclose(lax.batch_matmul(a, np.swapaxes(b, -1, -2)),
                               a @ np.swapaxes(b, -1, -2), rtol=1e-5)
    with pytest.raises(ValueError, match="same rank|one rank"):
        lax.batch_matmul(np.ones((2, 3, 4)), np.ones((4, 5)))
    values, idx = lax.approx_max_k(np.array([[3.0, 1, 4, 1, 5]], np.float32), 2)
    np.testing.assert_array_equal(values, [[5, 4]])
    np.testing.assert_array_equal(idx, [[4, 2]])
    values, idx = lax.approx_min_k(np.array([3.0, 1, 4, 1, 5], np.float32), 3)
    np.testing.assert_array_equal(values, [1, 1, 3])
    np.testing.assert_array_equal(idx, [1, 3, 0])
    np.testing.assert_array_equal(lax.index_take(np.arange(12).reshape(3, 4),
                                                 [np.array([0, 2, 5]), np.array([1, 3, -1])],
                                                 [0, 1]), [1, 11, 11])
    assert lax.dtype(1.0) == np.float32 and lax.dtype(np.int16(3)) == np.int16


def test_bit_reductions_match_numpy():
    a = np.random.default_rng(1).integers(-2**31, 2**31 - 1, size=(4, 9), dtype=np.int32)
    np.testing.assert_array_equal(lax.reduce_xor(a, [1]), np.bitwise_xor.reduce(a, 1))
    np.testing.assert_array_equal(lax.reduce_xor(a % 2 == 0, [0]),
                                  np.logical_xor.reduce(a % 2 == 0, 0))
    x = np.array([1, 0, 255, -1, 2**20, 2**31 - 1], np.int32)
    want = [32 - int(v).bit_length() if v >= 0 else 0 for v in x]
    np.testing.assert_array_equal(lax.clz(x), want)
    np.testing.assert_array_equal(lax.clz(np.array([1, 128, 0], np.uint8)), [7, 0, 8])


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


def test_products_take_precision_and_preferred_element_type():
    ones = np.ones((2, 3), np.int8)
    for f, b in ((jnp.dot, ones.T), (jnp.matmul, ones.T), (jnp.inner, ones),
                 (lambda x, y, **k: jnp.tensordot(x, y, 1, **k), ones.T)):
        out = f(ones, b, precision=lax.Precision.HIGHEST, preferred_element_type=np.int32)
        assert out.dtype == np.int32 and int(np.asarray(out).ravel()[0]) == 3
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("bfloat16") is lax.Precision.DEFAULT
    with pytest.raises(ValueError, match="unknown precision"):
        jnp.dot(np.ones(2), np.ones(2), precision="sloppy")


def test_vdot_conjugates_its_first_argument():
    # regression: vdot was dot of the flattened arrays, wrong for complex ones
    a = np.array([1 + 2j, 3 - 1j], np.complex64)
    b = np.array([2 - 1j, 1j], np.complex64)
    np.testing.assert_allclose(jnp.vdot(a, b), np.vdot(a, b), rtol=1e-6)
    np.testing.assert_allclose(jnp.vdot(a.reshape(2, 1), b), np.vdot(a, b), rtol=1e-6)
    assert float(jnp.vdot(np.arange(3.0), np.arange(3.0))) == 5.0


def test_matmul_of_a_batch_by_a_matrix_is_one_unbatched_dot():
    # issue 18: [b, s, d] @ [d, e] broadcast the matrix and made a batched dot_general (and
    # the weight gradient a batch of outer products); JAX emits one dot over the last axis
    r = np.random.default_rng(0)
    h = r.normal(size=(4, 6, 8)).astype(np.float32)
    w = r.normal(size=(8, 3)).astype(np.float32)
    np.testing.assert_allclose(jnp.matmul(h, w), h @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(jnp.matmul(w.T, h.transpose(0, 2, 1)),
                               w.T @ h.transpose(0, 2, 1), rtol=1e-5, atol=1e-5)
    text = spmdc.jit(spmdc.grad(lambda w, h: jnp.sum(jnp.tanh(h @ w)))).lower(w, h).as_text()
    dots = [line for line in text.splitlines() if "stablehlo.dot_general" in line]
    assert len(dots) == 2 and not any("batching_dims" in line for line in dots), dots
    assert "contracting_dims = [0, 1] x [0, 1]" in text       # the weight's gradient


def test_a_size_one_axis_broadcasts_without_a_squeeze_first():
    # issue 18 (W11): x - max(x, keepdims=True) squeezed the size-1 axis with a reshape
    # before broadcast_in_dim; broadcast_in_dim stretches it itself, as JAX emits it
    x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)

    def f(x):
        return x - jnp.max(x, axis=-1, keepdims=True)
    ir = str(spmdc.make_ir(f)(x))
    assert ir.count("reshape(") == 1, ir                 # the keepdims one only
    assert "broadcast_dimensions=(0, 1, 2)" in ir, ir
    shifted = x - x.max(-1, keepdims=True)
    np.testing.assert_allclose(spmdc.jit(f)(x), shifted, rtol=1e-6)
    np.testing.assert_allclose(spmdc.vmap(f)(x), shifted, rtol=1e-6)
    # d/dx sum((x - max x)^2): 2 (x - max) and, at the maximum, minus the row's sum of it
    row = 2 * shifted
    expected = row - (x == x.max(-1, keepdims=True)) * row.sum(-1, keepdims=True)
    np.testing.assert_allclose(spmdc.grad(lambda x: jnp.sum(f(x) ** 2))(x), expected,
                               rtol=1e-5, atol=1e-6)


def test_a_numpy_operand_is_captured_unbroadcast():
    # A NumPy operand was broadcast on the host and captured at the full shape: comparing
    # a [64, 48, 1] index with np.arange(48) made a [64, 48, 48] constant argument.
    def f(p):
        return jnp.expand_dims(p, -1) == np.arange(48, dtype=np.int32)
    p = np.random.default_rng(0).integers(0, 48, size=(64, 48)).astype(np.int32)
    main = spmdc.jit(f).lower(p).as_text().splitlines()[1]
    assert "tensor<48xi32>" in main and "64x48x48xi32" not in main, main
    np.testing.assert_array_equal(spmdc.jit(f)(p), p[..., None] == np.arange(48))
    np.testing.assert_array_equal(f(p), p[..., None] == np.arange(48))        # eagerly
    np.testing.assert_array_equal(spmdc.vmap(f)(p), p[..., None] == np.arange(48))


def test_eye_triangles_and_fills_are_built_in_the_program():
    # jnp.eye, tri, tril and triu under a trace captured their N x M masks as constant
    # arguments (a causal mask of a sequence of 2048 was a 4 MB argument of every call),
    # and jnp.full's scalar was an argument too, which XLA cannot fold (x + zeros); JAX
    # builds arange(n) with an iota
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    cases = [(lambda x: x + jnp.eye(5, 6, 1), x + np.eye(5, 6, 1)),
             (lambda x: x + jnp.zeros((5, 6)), x),
             (lambda x: x * jnp.full((5, 6), -1, jnp.uint8), x * 255),
             (lambda x: x + jnp.arange(6), x + np.arange(6)),
             (lambda x: x + jnp.arange(6, dtype=jnp.uint8), x + np.arange(6)),
             (lambda x: x * jnp.tri(5, 6, -1), x * np.tri(5, 6, -1)),
             (lambda x: jnp.tril(x, -1), np.tril(x, -1)),
             (lambda x: jnp.triu(x, 2), np.triu(x, 2))]
    for f, expected in cases:
        main = spmdc.jit(f).lower(x).as_text().splitlines()[1]
        assert main.count("%arg") == 1, main
        np.testing.assert_array_equal(spmdc.jit(f)(x), expected.astype(np.float32))
        np.testing.assert_array_equal(f(x), expected.astype(np.float32))      # eagerly


def test_a_batched_solve_permutes_rows_with_a_gather():
    # issue 18 (W12): the LU solve permuted a batch of right-hand sides with one-hot
    # permutation matrices (a batched matrix product reading n times more than a gather)
    r = np.random.default_rng(0)
    x = r.normal(size=(8, 6, 6)).astype(np.float32)
    a = x @ x.transpose(0, 2, 1) + 6 * np.eye(6, dtype=np.float32)
    b = r.normal(size=(8, 6, 2)).astype(np.float32)
    text = spmdc.jit(jnp.linalg.solve).lower(a, b).as_text()
    assert "stablehlo.dot_general" not in text and "stablehlo.gather" in text
    np.testing.assert_allclose(jnp.linalg.solve(a, b), np.linalg.solve(a, b),
                               rtol=1e-4, atol=1e-5)
    lu_piv = spmdc.scipy.linalg.lu_factor(a)
    np.testing.assert_allclose(spmdc.scipy.linalg.lu_solve(lu_piv, b, trans=1),
                               np.linalg.solve(a.transpose(0, 2, 1), b), rtol=1e-4, atol=1e-5)


def test_reduce_with_monoids_and_general_computations():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7
    np.testing.assert_array_equal(lax.reduce(x, 0.0, lax.add, (0, 2)), x.sum((0, 2)))
    np.testing.assert_array_equal(lax.reduce(x, -np.inf, lax.max, (1,)), x.max(1))
    np.testing.assert_array_equal(lax.reduce(x, 5.0, lax.add, (1,)), x.sum(1) + 5)
    np.testing.assert_allclose(lax.reduce(x, 0.0, lambda a, b: a + b * b, (0,)),
                               (x * x).sum(0))
    s, m = lax.reduce((x, 2 * x), (0.0, -np.inf),
                      lambda a, b: (a[0] + b[0], jnp.maximum(a[1], b[1])), (2,))
    np.testing.assert_array_equal(s, x.sum(2))
    np.testing.assert_array_equal(m, (2 * x).max(2))
    np.testing.assert_array_equal(lax.reduce(x > 0, True, lax.bitwise_and, (1,)),
                                  (x > 0).all(1))
    np.testing.assert_array_equal(
        spmdc.grad(lambda v: lax.reduce(v, 0.0, lax.add, (1,)).sum())(x), np.ones_like(x))
    np.testing.assert_array_equal(lax.reduce(np.zeros((2, 0)), 3.0, lax.max, (1,)), [3, 3])
    with pytest.raises(ValueError, match="same tree structure"):
        lax.reduce((x, x), 0.0, lax.add, (0,))


def test_reduce_grad_from_an_initial_value_other_than_the_identity():
    # JAX differentiates lax.reduce with any initial value; spmdc sent a monoid from a
    # non-identity initial value down the general reduction, whose grad raised.
    x = np.array([[0.2, 0.9, -1.0], [0.7, 0.1, -2.0]], np.float32)
    got = spmdc.grad(lambda v: lax.reduce(v, np.float32(0.5), lax.max, (0,)).sum())(x)
    np.testing.assert_array_equal(got, [[0, 1, 0], [1, 0, 0]])      # -1 and -2 lose to 0.5
    np.testing.assert_array_equal(lax.reduce(x, np.float32(0.5), lax.max, (0,)),
                                  [x[1, 0], x[0, 1], 0.5])
    got = spmdc.grad(lambda v: lax.reduce(v, np.float32(3.0), lax.mul, (1,)).sum())(x)
    np.testing.assert_allclose(got, 3 * np.prod(x, 1, keepdims=True) / x, rtol=1e-6)
    np.testing.assert_array_equal(lax.reduce(x, -1.0, lax.min, (1,)), [-1.0, -2.0])
