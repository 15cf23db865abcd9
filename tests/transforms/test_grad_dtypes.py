"""Narrow floats (bfloat16, float16) through reading back, casts and reverse mode.

bfloat16 is not a NumPy float kind (``dtype.kind == 'V'``), which is how it used to fall
through: results could not be read back, the cotangent through a cast from bfloat16 was
dropped (a zero gradient) and ``vjp`` treated a bfloat16 primal as not differentiable.
Each case compares against the same computation in float32, within the narrow type's
precision.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

NARROW = [jnp.bfloat16, jnp.float16]
X = np.array([0.5, -1.25, 2.0, 3.5], np.float32)


def _close(got, want, dtype):
    tol = float(ml_dtypes.finfo(dtype).eps) * 4
    assert np.asarray(got).dtype == np.dtype(np.asarray(want).dtype)
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32),
                               rtol=tol, atol=tol)


@pytest.mark.devices(8)
@pytest.mark.parametrize("dtype", NARROW, ids=lambda d: np.dtype(d).name)
def test_narrow_results_read_back(dtype):
    x = X.astype(dtype)
    np.testing.assert_array_equal(np.asarray(jnp.ones(4, dtype)), np.ones(4, dtype))
    np.testing.assert_array_equal(np.asarray(spmdc.jit(lambda v: v * 2)(x)), x * 2)
    assert float(jnp.ones((), dtype)) == 1.0
    assert np.asarray(jnp.ones((2, 3), dtype)).dtype == np.dtype(dtype)
    sharded = spmdc.pmap(lambda v: v + 1)(np.arange(8, dtype=np.float32).astype(dtype))
    np.testing.assert_array_equal(np.asarray(sharded), np.arange(1, 9).astype(dtype))
    assert "1" in repr(jnp.ones(2, dtype))


@pytest.mark.parametrize("dtype", NARROW, ids=lambda d: np.dtype(d).name)
def test_grad_through_casts_to_and_from_narrow_floats(dtype):
    f32 = jnp.float32
    # to: float32 -> narrow -> float32
    g = spmdc.grad(lambda v: v.astype(dtype).astype(f32).sum())(X)
    np.testing.assert_array_equal(np.asarray(g), np.ones(4, np.float32))
    g = spmdc.grad(lambda v: jnp.sin(v.astype(dtype)).astype(f32).sum())(X)
    _close(g, np.cos(X), dtype)
    # from: a narrow input, computed in float32
    g = spmdc.grad(lambda v: (jnp.exp(v.astype(f32)) * 3).sum())(X.astype(dtype))
    _close(g, (3 * np.exp(X.astype(dtype).astype(np.float32))).astype(dtype), dtype)
    # a cast to an integer carries no gradient, the float path next to it does
    g = spmdc.grad(lambda v: v.astype(jnp.int32).astype(f32).sum() + v.astype(f32).sum())(
        X.astype(dtype))
    _close(g, np.ones(4, dtype), dtype)


@pytest.mark.parametrize("dtype", NARROW, ids=lambda d: np.dtype(d).name)
def test_vjp_with_respect_to_a_narrow_primal(dtype):
    x = X.astype(dtype)
    _, pull = spmdc.vjp(lambda v: v * 3.0, x)
    (g,) = pull(jnp.ones(4, dtype))
    _close(g, np.full(4, 3.0, dtype), dtype)
    _, pull = spmdc.vjp(lambda v, w: v.astype(jnp.float32) * w, x, X)
    gv, gw = pull(jnp.ones(4))
    _close(gv, X.astype(dtype), dtype)
    _close(gw, x.astype(np.float32), np.float32)
    # grad and vjp agree
    _, pull = spmdc.vjp(lambda v: jnp.tanh(v).sum(), x)
    _close(pull(jnp.ones((), dtype))[0], spmdc.grad(lambda v: jnp.tanh(v).sum())(x), dtype)
