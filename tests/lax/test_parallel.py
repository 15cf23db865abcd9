"""spmdc/lax/parallel.py: the collectives over a named axis and the axis-name helpers
(axis_size, pbroadcast, pswapaxes) under pmap over 8 devices, vmap with an axis name and
shard_map. axis_index_groups is tested in test_grouped.py, the collective primitives in
tests/compiler/primitives/test_collectives.py."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.sharding import PartitionSpec as P

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


@pytest.mark.devices(8)
def test_axis_size_is_static_under_pmap_vmap_and_shard_map():
    sizes = []
    spmdc.pmap(lambda v: sizes.append(lax.axis_size("i")) or v, axis_name="i")(np.ones(8))
    spmdc.vmap(lambda v: sizes.append(lax.axis_size("j")) or v, axis_name="j")(np.ones(5))
    mesh = spmdc.make_mesh((2, 4), ("x", "y"))
    spmdc.shard_map(lambda v: sizes.append(lax.axis_size(("x", "y"))) or v, mesh=mesh,
                    in_specs=P("x", "y"), out_specs=P("x", "y"))(np.ones((4, 8)))
    assert sizes == [8, 5, 8] and all(type(s) is int for s in sizes)
    out = spmdc.pmap(lambda v: v * lax.axis_size("i"), axis_name="i")(np.ones(8, np.float32))
    np.testing.assert_array_equal(out, np.full(8, 8.0))
    with pytest.raises(NameError, match="k"):
        spmdc.vmap(lambda v: lax.axis_size("k") * v, axis_name="j")(np.ones(2))


@pytest.mark.devices(8)
def test_pbroadcast_under_pmap_vmap_and_grad():
    x = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    want = np.broadcast_to(x[5], x.shape)
    f = lambda v: lax.pbroadcast(v, "i", 5)  # noqa: E731
    np.testing.assert_array_equal(spmdc.pmap(f, axis_name="i")(x), want)
    np.testing.assert_array_equal(spmdc.vmap(f, axis_name="i")(x), want)
    b = x > 10
    np.testing.assert_array_equal(spmdc.pmap(lambda v: lax.pbroadcast(v, "i", 3),
                                             axis_name="i")(b), np.broadcast_to(b[3], b.shape))
    # d/dx of sum_devices w_d . x[5] is sum_d w_d at row 5, zero elsewhere
    w = np.arange(8, dtype=np.float32)[:, None] + 1
    g = spmdc.grad(lambda x: jnp.sum(spmdc.vmap(lambda v, u: f(v) * u, axis_name="i")(x, w)))(x)
    want_g = np.zeros_like(x)
    want_g[5] = w.sum()
    np.testing.assert_allclose(g, want_g)
    with pytest.raises(ValueError, match="source 8 is out of range"):
        spmdc.pmap(lambda v: lax.pbroadcast(v, "i", 8), axis_name="i")(x)


@pytest.mark.devices(8)
def test_pbroadcast_over_mesh_axes_in_shard_map():
    mesh = spmdc.make_mesh((2, 4), ("x", "y"))
    a = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)

    rows = P(("x", "y"))

    def sm(f, out=rows):
        return spmdc.shard_map(f, mesh=mesh, in_specs=rows, out_specs=out)
    both = sm(lambda v: lax.pbroadcast(v, ("x", "y"), 5))(a)       # member 5 of all 8
    np.testing.assert_array_equal(both, np.broadcast_to(a[5], a.shape))
    inner = sm(lambda v: lax.pbroadcast(v, "y", 2))(a)            # member 2 of each row
    np.testing.assert_array_equal(inner, a[[2, 2, 2, 2, 6, 6, 6, 6]])
    # the result is the same on every member: replicated, so out_specs may say so
    np.testing.assert_array_equal(sm(lambda v: lax.pbroadcast(v, ("x", "y"), 5), P())(a),
                                  a[5:6])


@pytest.mark.devices(8)
def test_pswapaxes_under_pmap_and_vmap():
    x = np.arange(8 * 8 * 2, dtype=np.float32).reshape(8, 8, 2)
    want = np.swapaxes(x, 0, 1)
    f = lambda v: lax.pswapaxes(v, "i", 0)  # noqa: E731
    np.testing.assert_array_equal(spmdc.pmap(f, axis_name="i")(x), want)
    np.testing.assert_array_equal(spmdc.vmap(f, axis_name="i")(x), want)
    y = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)
    got = spmdc.pmap(lambda v: lax.pswapaxes(v, "i", 0, axis_index_groups=[[0, 1, 2, 3],
                                                                          [4, 5, 6, 7]]),
                     axis_name="i")(y)
    for g in (np.arange(0, 4), np.arange(4, 8)):
        np.testing.assert_array_equal(got[g], y[g].T)
