"""lax.ragged_dot (spmdc/lax/ragged.py) against the products of its groups: values,
vmap, precision= and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def _ragged_reference(lhs, rhs, group_sizes):
    out = np.zeros((lhs.shape[0], rhs.shape[2]), np.float64)
    start = 0
    for g, size in enumerate(group_sizes):
        stop = min(start + int(size), lhs.shape[0])
        out[start:stop] = lhs[start:stop] @ rhs[g]
        start = stop
    return out


@pytest.mark.parametrize("sizes", [[2, 0, 3], [4, 4, 4], [7, 0, 0], [0, 0, 0]])
def test_ragged_dot_matches_the_grouped_products(sizes):
    rng = np.random.default_rng(0)
    lhs = rng.normal(size=(7, 3)).astype(np.float32)
    rhs = rng.normal(size=(3, 3, 2)).astype(np.float32)
    gs = np.array(sizes, np.int32)
    f = spmdc.jit(lax.ragged_dot)                 # group sizes traced, not static
    np.testing.assert_allclose(f(lhs, rhs, gs), _ragged_reference(lhs, rhs, gs), rtol=1e-5,
                               atol=1e-6)
    # gradients: d/dlhs = ct @ rhs[g]^T per row; d/drhs[g] = lhs_g^T @ ct_g
    ct = rng.normal(size=(7, 2)).astype(np.float32)
    gl, gr = spmdc.grad(lambda a, b: jnp.sum(lax.ragged_dot(a, b, gs) * ct), (0, 1))(lhs, rhs)
    want_l, want_r, start = np.zeros_like(lhs), np.zeros_like(rhs), 0
    for g, size in enumerate(sizes):
        stop = min(start + size, 7)
        want_l[start:stop] = ct[start:stop] @ rhs[g].T
        want_r[g] = lhs[start:stop].T @ ct[start:stop]
        start = stop
    np.testing.assert_allclose(gl, want_l, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gr, want_r, rtol=1e-5, atol=1e-6)


def test_ragged_dot_vmap_precision_and_errors():
    rng = np.random.default_rng(1)
    lhs = rng.normal(size=(2, 5, 3)).astype(np.float32)
    rhs = rng.normal(size=(2, 2, 3, 4)).astype(np.float32)
    gs = np.array([[1, 4], [3, 2]], np.int32)
    out = spmdc.vmap(lax.ragged_dot)(lhs, rhs, gs)
    for i in range(2):
        np.testing.assert_allclose(out[i], _ragged_reference(lhs[i], rhs[i], gs[i]),
                                   rtol=1e-5, atol=1e-6)
    text = spmdc.jit(lambda a, b, g: lax.ragged_dot(a, b, g, precision="highest")).lower(
        lhs[0], rhs[0], gs[0]).as_text()
    assert "precision = [HIGHEST, HIGHEST]" in text
    ints = lax.ragged_dot(np.ones((3, 2), np.int8), np.full((1, 2, 2), 100, np.int8),
                          np.array([3], np.int32), preferred_element_type=np.int32)
    assert ints.dtype == np.int32 and int(ints[0, 0]) == 200
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(lhs[0], rhs[0], gs[0], group_offset=np.zeros(1, np.int32))
    with pytest.raises(TypeError, match="do not fit"):
        lax.ragged_dot(lhs[0], rhs[0], np.array([1, 2, 2], np.int32))
    with pytest.raises(TypeError, match="integers"):
        lax.ragged_dot(lhs[0], rhs[0], np.array([1.0, 4.0], np.float32))
