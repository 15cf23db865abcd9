"""jax.fwd_and_bwd (Note [residuals of fwd_and_bwd] in spmdc/transforms/fwd_and_bwd.py):
the forward and backward passes as two jitted functions, the backward compiled once
across iterations, with JAX 0.10.2's values (recorded)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

X = np.arange(16, dtype=np.float32).reshape(4, 4) / 10
W = np.ones((4, 4), np.float32) * 0.5
CT = np.full((4, 4), 2.0, np.float32)


def f(x, w):
    return jnp.tanh(x @ w)


def test_forward_and_backward_as_jaxs_and_compiled_once():
    fwd, bwd = spmdc.fwd_and_bwd(f, argnums=(0, 1))
    for _ in range(3):
        y, res = fwd(X, W)
        cx, cw = bwd(res, CT)
    np.testing.assert_allclose([np.asarray(y).sum(), np.asarray(cx).sum(),
                                np.asarray(cw).sum()], [12.156226, 22.045639, 14.090606],
                               rtol=1e-6)
    assert len(bwd._cache) == 1 and len(fwd._cache) == 1
    y_ref, f_vjp = spmdc.vjp(f, X, W)
    np.testing.assert_allclose(cx, f_vjp(CT)[0], rtol=1e-6)


def test_has_aux_int_argnums_and_unjitted():
    fwd, bwd = spmdc.fwd_and_bwd(lambda x, w: (f(x, w), x.sum()), argnums=1, has_aux=True,
                                 jitted=False)
    y, res, aux = fwd(X, W)
    assert float(aux) == 12.0
    np.testing.assert_allclose(np.asarray(bwd(res, CT)).sum(), 14.090606, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(res(CT)[0]).sum(), 14.090606, rtol=1e-6)
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):
        spmdc.fwd_and_bwd(3, 0)
