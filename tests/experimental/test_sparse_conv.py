"""experimental.sparse.bcoo_conv_general_dilated (and sparsify's convolution rule), with
the data, indices and values JAX 0.10.2 gives (recorded)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
from spmdc import lax
from spmdc.experimental import sparse

X = np.array([[[0., 2, 0, 0, 3, 0, 1, 0]]], np.float32)
K = np.array([[[1., 0, -2]]], np.float32)
XS = sparse.BCOO.fromdense(X, n_batch=2)
KS = sparse.BCOO.fromdense(K, n_batch=2)


@pytest.mark.parametrize("lhs, rhs, padding, shape, nse, dense, indices", [
    (XS, K, "VALID", (1, 1, 6), 9, [0.0, 2.0, -6.0, 0.0, 1.0, 0.0],
     [1, 0, 0, 4, 3, 2, 6, 5, 4]),
    (X, KS, "SAME", (1, 1, 8), 16, [-4.0, 0.0, 2.0, -6.0, 0.0, 1.0, 0.0, 1.0],
     [1, 0, 2, 0, 3, 1, 4, 2, 5, 3, 6, 4, 7, 5, 8, 6]),
    (XS, KS, [(2, 1)], (1, 1, 9), 6, [0.0, -4.0, 0.0, 2.0, -6.0, 0.0, 1.0, 0.0, 1.0],
     [3, 1, 6, 4, 8, 6]),
])
def test_the_products_land_where_jaxs_do(lhs, rhs, padding, shape, nse, dense, indices):
    @spmdc.jit                                  # one compile per case
    def run(a, b):
        out = sparse.bcoo_conv_general_dilated(a, b, window_strides=(1,), padding=padding)
        return out, out.todense(), lax.conv_general_dilated(X, K, (1,), padding)
    out, as_dense, want = run(lhs, rhs)
    assert out.shape == shape and out.data.shape == (1, 1, nse)
    assert out.indices.shape == (1, 1, nse, 1)
    assert as_dense[0, 0].tolist() == dense
    assert np.asarray(out.indices).ravel().tolist() == indices
    np.testing.assert_array_equal(as_dense, want)


def test_under_sparsify():
    same = [-4.0, 0.0, 2.0, -6.0, 0.0, 1.0, 0.0, 1.0]
    f = sparse.sparsify(lambda a, b: lax.conv_general_dilated(a, b, (1,), "SAME"))

    @spmdc.jit
    def both(xs, k, x, ks):
        return f(xs, k), f(x, ks), f(xs, ks).todense()
    left, right, two = both(XS, K, X, KS)
    for out in (left, right):
        assert isinstance(out, sparse.BCOO) and out.todense()[0, 0].tolist() == same
    assert two[0, 0].tolist() == same


def test_what_jax_does_not_cover_is_not_implemented():
    with pytest.raises(NotImplementedError, match="non-unit window_strides"):
        sparse.bcoo_conv_general_dilated(XS, K, window_strides=(2,), padding="VALID")
    with pytest.raises(NotImplementedError, match="rhs_dilation"):
        sparse.bcoo_conv_general_dilated(XS, K, window_strides=(1,), padding="VALID",
                                         rhs_dilation=(2,))
    with pytest.raises(NotImplementedError, match="leading dimensions"):
        sparse.bcoo_conv_general_dilated(np.ones((2, 1, 8), np.float32), K,
                                         window_strides=(1,), padding="VALID")
