"""spmdc/lax/shape.py against NumPy: collapse, expand_dims, squeeze, reshape, broadcast,
broadcasted_iota, full, tile, broadcast_to_rank, stack (with grad), empty (with an
out_sharding over 8 devices) and broadcast_like."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.sharding import PartitionSpec as P

X = np.array([[1.5, -2.5, 0.25], [0.5, 3.0, -0.75]], np.float32)


def test_stack_unstack_round_trip_and_grad():
    xs = [np.arange(6.0, dtype=np.float32).reshape(2, 3) + i for i in range(3)]
    for axis in (0, 1, -1):
        out = lax.stack(xs, axis)
        np.testing.assert_array_equal(out, np.stack(xs, axis))
        back = lax.unstack(out, axis)
        assert isinstance(back, tuple) and len(back) == 3
        for got, want in zip(back, xs, strict=True):
            np.testing.assert_array_equal(got, want)
    g = spmdc.grad(lambda x: jnp.sum(lax.stack([x, 2 * x], 1) ** 2))(xs[0])
    np.testing.assert_allclose(g, 10 * xs[0], rtol=1e-6)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.stack([np.ones(2, np.float32), np.ones(2, np.int32)])
    with pytest.raises(TypeError, match="same shapes"):
        lax.stack([np.ones(2, np.float32), np.ones(3, np.float32)])


@pytest.mark.devices(8)
def test_empty_broadcast_like_and_dtype():
    e = lax.empty((2, 3), np.int16)
    assert e.shape == (2, 3) and e.dtype == np.int16
    np.testing.assert_array_equal(lax.broadcast_like(np.arange(3), np.zeros((2, 3))),
                                  np.broadcast_to(np.arange(3), (2, 3)))
    assert lax.dtype(1.0) == np.float32 and lax.dtype(1) == np.int32
    assert lax.dtype(np.int8(1)) == np.int8 and lax.dtype("float64") == np.float32
    assert lax.dtype(jnp.ones(2, jnp.bfloat16)) == jnp.bfloat16
    mesh = spmdc.make_mesh((8,), ("x",))
    laid = lax.empty((8, 2), np.float32, out_sharding=spmdc.NamedSharding(mesh, P("x")))
    assert laid.shape == (8, 2) and len(laid.addressable_shards) == 8


def test_shape_ops():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    assert lax.collapse(x, 1).shape == (2, 12)
    assert lax.collapse(x, 0, 2).shape == (6, 4)
    np.testing.assert_array_equal(lax.expand_dims(x, (0, -1)), x[None, ..., None])
    np.testing.assert_array_equal(lax.squeeze(x[:, :1], (1,)), x[:, 0])
    np.testing.assert_array_equal(lax.reshape(x, (4, 6), (2, 1, 0)),
                                  x.transpose(2, 1, 0).reshape(4, 6))
    np.testing.assert_array_equal(lax.broadcasted_iota(np.int32, (2, 3), 1),
                                  np.broadcast_to(np.arange(3), (2, 3)))
    np.testing.assert_array_equal(lax.broadcast(x[0, 0], (2,)), np.stack([x[0, 0]] * 2))
    full = lax.full((2, 2), 3, np.int32)
    assert full.dtype == np.int32 and (np.asarray(full) == 3).all()
    assert lax.full_like(x, 1.0).shape == x.shape


def test_tile_and_broadcast_to_rank():
    np.testing.assert_array_equal(lax.tile(X, (2, 1)), np.tile(X, (2, 1)))
    assert lax.broadcast_to_rank(X[0], 3).shape == (1, 1, 3)


def test_stack_and_empty():
    np.testing.assert_array_equal(lax.stack([np.ones(2), np.zeros(2)], axis=1),
                                  [[1, 0], [1, 0]])
    assert lax.empty((2, 3), np.float32).shape == (2, 3)
