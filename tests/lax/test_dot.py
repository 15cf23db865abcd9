"""spmdc/lax/dot.py: dot and batch_matmul (with its precision) against NumPy. dot_general
is tested with its primitive in tests/compiler/primitives."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
from spmdc import lax

X = np.array([[1.5, -2.5, 0.25], [0.5, 3.0, -0.75]], np.float32)


def test_batch_matmul_and_its_precision():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 2, 4)).astype(np.float32), rng.normal(size=(3, 4, 5)) \
        .astype(np.float32)
    np.testing.assert_allclose(lax.batch_matmul(a, b), a @ b, rtol=1e-5, atol=1e-6)
    text = spmdc.jit(lambda a, b: lax.batch_matmul(a, b, "highest")).lower(a, b).as_text()
    assert "precision = [HIGHEST, HIGHEST]" in text
    with pytest.raises(ValueError, match="same rank"):
        lax.batch_matmul(a, b[0])


def test_dot():
    np.testing.assert_allclose(lax.dot(X, X[0]), X @ X[0], rtol=1e-6)
    np.testing.assert_allclose(lax.dot(X, X.T), X @ X.T, rtol=1e-6)


def test_batch_matmul():
    a, b = np.random.default_rng(0).normal(size=(2, 2, 3, 4)).astype(np.float32)[:, :, :, :]
    np.testing.assert_allclose(lax.batch_matmul(a, np.swapaxes(b, -1, -2)),
                               a @ np.swapaxes(b, -1, -2), rtol=1e-5)
    with pytest.raises(ValueError, match="same rank|one rank"):
        lax.batch_matmul(np.ones((2, 3, 4)), np.ones((4, 5)))


def test_dot_general_takes_jaxs_out_sharding_keyword():
    # Flax's nnx.Linear calls lax.dot_general(..., out_sharding=None).
    x, y = np.arange(6.0, dtype=np.float32).reshape(2, 3), np.ones((3, 2), np.float32)
    out = lax.dot_general(x, y, (((1,), (0,)), ((), ())), out_sharding=None)
    np.testing.assert_array_equal(out, x @ y)
    with pytest.raises(ValueError, match="out_sharding"):
        lax.dot_general(x, y, (((1,), (0,)), ((), ())), out_sharding="x")
