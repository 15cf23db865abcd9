"""spmdc/numpy/tensor_contractions.py: matmul, dot, vdot, inner,
tensordot, kron, cross against NumPy, and the programs they emit."""
from __future__ import annotations

import numpy as np

import spmdc
import spmdc.numpy as jnp


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


def test_vdot_conjugates_the_first_operand():
    # Regression: jnp.vdot and jnp.linalg.vecdot did not conjugate complex operands.
    a = np.array([1 + 2j, 3 - 1j], np.complex64)
    b = np.array([2 + 1j, 1 - 1j], np.complex64)
    np.testing.assert_allclose(jnp.vdot(a, b), np.vdot(a, b), rtol=1e-6)
    np.testing.assert_allclose(jnp.linalg.vecdot(a[None], b, precision="highest"),
                               np.linalg.vecdot(a[None], b), rtol=1e-6)


A = np.random.RandomState(0).randn(4, 3).astype(np.float32)


B = np.random.RandomState(1).randn(4, 3).astype(np.float32)


def test_cross():
    np.testing.assert_allclose(jnp.cross(A, B), np.cross(A, B), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.cross(A.T, B.T, axisa=0, axisb=0, axisc=0),
                               np.cross(A.T, B.T, axisa=0, axisb=0, axisc=0), rtol=1e-5,
                               atol=1e-6)
    a2 = np.concatenate([A[:, :2], np.zeros((4, 1), np.float32)], 1)
    np.testing.assert_allclose(jnp.cross(A[:, :2], B), np.cross(a2, B), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jnp.cross(A[:, :2], B[:, :2]),
                               A[:, 0] * B[:, 1] - A[:, 1] * B[:, 0], rtol=1e-6)
    g = spmdc.grad(lambda a: jnp.cross(a, B[0]).sum())(A[0])
    np.testing.assert_allclose(g, np.cross(B[0], np.ones(3, np.float32)), rtol=1e-6)
