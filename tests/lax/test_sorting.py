"""spmdc/lax/sorting.py: top_k (ties, grad, errors) and approx_max_k/approx_min_k, exact on
the CPU backend, against NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def test_top_k():
    x = np.array([[3.0, 1.0, 3.0, 2.0], [0.0, 5.0, 5.0, -1.0]], np.float32)
    values, indices = spmdc.jit(lambda t: lax.top_k(t, 3))(x)
    np.testing.assert_array_equal(values, [[3, 3, 2], [5, 5, 0]])
    np.testing.assert_array_equal(indices, [[0, 2, 3], [1, 2, 0]])     # ties: lower index first
    assert indices.dtype == np.int32
    g = spmdc.grad(lambda t: lax.top_k(t, 2)[0].sum())(x)
    np.testing.assert_array_equal(g, [[1, 0, 1, 0], [0, 1, 1, 0]])
    with pytest.raises(ValueError, match="k=5"):
        lax.top_k(x, 5)


@settings(max_examples=20)     # 12 programs (k, dim) compile: more examples rerun them
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.sampled_from([0, 1, -1]))
def test_approx_max_min_k_are_exact_on_cpu(seed, k, dim):
    x = np.random.default_rng(seed).integers(0, 5, size=(4, 6)).astype(np.float32)  # ties
    for fn, largest in ((lax.approx_max_k, True), (lax.approx_min_k, False)):
        values, idx = fn(x, k, reduction_dimension=dim)
        moved = np.moveaxis(x, dim, -1)
        order = np.argsort(-moved if largest else moved, axis=-1, kind="stable")[..., :k]
        np.testing.assert_array_equal(idx, np.moveaxis(order, -1, dim))
        np.testing.assert_array_equal(values, np.moveaxis(
            np.take_along_axis(moved, order, -1), -1, dim))
        assert idx.dtype == np.int32


def test_approx_max_k_grad_and_errors():
    x = np.array([[3.0, 1.0, 4.0, 1.5]], np.float32)
    g = spmdc.grad(lambda x: jnp.sum(lax.approx_max_k(x, 2)[0]))(x)
    np.testing.assert_array_equal(g, [[1, 0, 1, 0]])
    with pytest.raises(TypeError, match="floating"):
        lax.approx_max_k(np.arange(5), 2)
    with pytest.raises(NotImplementedError, match="aggregate_to_topk"):
        lax.approx_min_k(x, 2, aggregate_to_topk=False)
    with pytest.raises(ValueError, match="k=9"):
        lax.approx_max_k(x, 9)


def test_approx_max_k_and_min_k():
    values, idx = lax.approx_max_k(np.array([[3.0, 1, 4, 1, 5]], np.float32), 2)
    np.testing.assert_array_equal(values, [[5, 4]])
    np.testing.assert_array_equal(idx, [[4, 2]])
    values, idx = lax.approx_min_k(np.array([3.0, 1, 4, 1, 5], np.float32), 3)
    np.testing.assert_array_equal(values, [1, 1, 3])
    np.testing.assert_array_equal(idx, [1, 3, 0])
