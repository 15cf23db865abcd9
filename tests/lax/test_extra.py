"""spmdc/lax/extra.py against NumPy references (the values JAX 0.10.2 gives are NumPy's
here), under jit, vmap and grad where they apply: the array names (dtype, stack/unstack,
empty, broadcast_like, index_take, batch_matmul, approx_max_k/min_k, reduce,
optimization_barrier, platform_dependent), the integer bits (mulhi, clz with its
primitive, reduce_xor), the axis-name helpers (axis_size, pbroadcast, pswapaxes) under
pmap over 8 devices, vmap with an axis name and shard_map, and
conv_general_dilated_local. The incomplete gamma and beta names are tested in
test_special.py."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from primcheck import check_lowering, check_vmap

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.primitives.misc import clz_p
from spmdc.sharding import PartitionSpec as P

X = np.arange(32, dtype=np.float32).reshape(8, 4)


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


def test_batch_matmul_and_its_precision():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 2, 4)).astype(np.float32), rng.normal(size=(3, 4, 5)) \
        .astype(np.float32)
    np.testing.assert_allclose(lax.batch_matmul(a, b), a @ b, rtol=1e-5, atol=1e-6)
    text = spmdc.jit(lambda a, b: lax.batch_matmul(a, b, "highest")).lower(a, b).as_text()
    assert "precision = [HIGHEST, HIGHEST]" in text
    with pytest.raises(ValueError, match="same rank"):
        lax.batch_matmul(a, b[0])


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


def test_index_take_matches_numpy_and_wraps():
    src = np.arange(24).reshape(2, 3, 4)
    i, j = np.array([0, 1, -1]), np.array([2, 5, 1])
    want = np.moveaxis(src, (0, 2), (0, 1))[i % 2, j % 4]
    np.testing.assert_array_equal(lax.index_take(src, (i, j), (0, 2)), want)
    g = spmdc.grad(lambda s: jnp.sum(lax.index_take(s, (i, j), (0, 2))))(src.astype(np.float32))
    want_g = np.zeros(src.shape, np.float32)
    for a, c in zip(i % 2, j % 4, strict=True):      # each taken slice counts once
        want_g[a, :, c] += 1
    np.testing.assert_array_equal(g, want_g)


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


@pytest.mark.cpu_platform
def test_platform_dependent_takes_the_cpu_branch():
    x = np.float32(2.0)
    f = lambda x: lax.platform_dependent(x, cpu=lambda v: v + 1, tpu=lambda v: v * 10,  # noqa
                                         default=lambda v: v - 1)
    assert float(spmdc.jit(f)(x)) == 3.0
    assert float(spmdc.grad(f)(x)) == 1.0
    np.testing.assert_allclose(lax.platform_dependent(x, cuda=jnp.sin, default=jnp.cos), np.cos(x))
    with pytest.raises(ValueError, match="no branch for the 'cpu' platform"):
        lax.platform_dependent(x, tpu=jnp.sin)
    with pytest.raises(ValueError, match="'cuda' or 'rocm'"):
        lax.platform_dependent(x, gpu=jnp.sin, default=jnp.cos)


# --- integer bits: mulhi, clz, reduce_xor -------------------------------------------------

INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]


def _mulhi_reference(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = 8 * x.dtype.itemsize
    full = x.astype(object) * y.astype(object)          # exact Python integers
    return np.array([int(v) >> bits for v in full.ravel()], np.int64).reshape(x.shape) \
        .astype(x.dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_mulhi_matches_the_exact_product(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(np.dtype(dtype).num)
    x = rng.integers(info.min, info.max, size=200, endpoint=True, dtype=dtype)
    y = rng.integers(info.min, info.max, size=200, endpoint=True, dtype=dtype)
    edges = np.array([info.min, info.max, 0, 1, info.min + 1, info.max - 1], dtype)
    x = np.concatenate([x, np.repeat(edges, len(edges))])
    y = np.concatenate([y, np.tile(edges, len(edges))])
    np.testing.assert_array_equal(spmdc.jit(lax.mulhi)(x, y), _mulhi_reference(x, y))
    np.testing.assert_array_equal(spmdc.jit(spmdc.vmap(lax.mulhi))(x[:8], y[:8]),
                                  _mulhi_reference(x[:8], y[:8]))


def test_mulhi_broadcasts_and_checks():
    x = np.array([[-100], [7]], np.int8)
    np.testing.assert_array_equal(lax.mulhi(x, np.int8(100)), [[-40], [2]])
    with pytest.raises(TypeError, match="same number of dimensions"):
        lax.mulhi(np.ones(2, np.int32), np.ones((3, 1), np.int32))
    with pytest.raises(TypeError, match="integers of one dtype"):
        lax.mulhi(np.ones(2, np.int32), np.ones(2, np.uint32))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_clz(dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, 2, 3, info.max, info.min, info.max // 3], dtype)
    bits = 8 * x.dtype.itemsize
    unsigned = x.view(np.dtype(f"u{x.dtype.itemsize}"))
    want = np.array([bits - int(v).bit_length() for v in unsigned], dtype)
    np.testing.assert_array_equal(lax.clz(x), want)
    check_lowering(clz_p, [x], {})
    check_vmap(clz_p, [np.stack([x, x[::-1]])], {}, [0], 2)


def test_clz_rejects_floats():
    with pytest.raises(TypeError, match="clz"):
        lax.clz(np.ones(3, np.float32))


def test_bit_reductions_match_numpy():
    a = np.random.default_rng(1).integers(-2**31, 2**31 - 1, size=(4, 9), dtype=np.int32)
    np.testing.assert_array_equal(lax.reduce_xor(a, [1]), np.bitwise_xor.reduce(a, 1))
    np.testing.assert_array_equal(lax.reduce_xor(a % 2 == 0, [0]),
                                  np.logical_xor.reduce(a % 2 == 0, 0))
    x = np.array([1, 0, 255, -1, 2**20, 2**31 - 1], np.int32)
    want = [32 - int(v).bit_length() if v >= 0 else 0 for v in x]
    np.testing.assert_array_equal(lax.clz(x), want)
    np.testing.assert_array_equal(lax.clz(np.array([1, 128, 0], np.uint8)), [7, 0, 8])


# --- axis names ---------------------------------------------------------------------------

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
    for g in ([0, 1, 2, 3], [4, 5, 6, 7]):
        np.testing.assert_array_equal(got[g], y[g].T)


# --- conv_general_dilated_local -----------------------------------------------------------

def _local_reference(x, w, fs, strides, padding, rhs_dilation=(1, 1)):
    """NCHW/OIHW by loops: output position (i, j) contracts its (dilated) window of the
    padded input, features major, with w[:, :, i, j]."""
    n, c, h, wd = x.shape
    (plo, phi), (qlo, qhi) = padding
    xp = np.pad(x, ((0, 0), (0, 0), (plo, phi), (qlo, qhi)))
    oh, ow = w.shape[2:]
    out = np.zeros((n, w.shape[0], oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            rows = i * strides[0] + rhs_dilation[0] * np.arange(fs[0])
            cols = j * strides[1] + rhs_dilation[1] * np.arange(fs[1])
            patch = xp[:, :, rows][:, :, :, cols].reshape(n, -1)     # (n, c*fh*fw)
            out[:, :, i, j] = patch @ w[:, :, i, j].T
    return out


def test_conv_general_dilated_local_matches_loops_and_layouts():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 6, 5)).astype(np.float32)
    fs = (3, 2)
    w = rng.normal(size=(4, 3 * 6, 3, 2)).astype(np.float32)     # the output is 3 x 2
    pads = ((1, 1), (0, 1))
    out = lax.conv_general_dilated_local(x, w, (2, 2), pads, fs, rhs_dilation=(1, 2),
                                         precision="highest")
    np.testing.assert_allclose(out, _local_reference(x, w, fs, (2, 2), pads, (1, 2)),
                               rtol=1e-5, atol=1e-5)
    # the same in NHWC / HWIO layouts
    out_nhwc = lax.conv_general_dilated_local(
        np.moveaxis(x, 1, -1), np.moveaxis(w, (0, 1), (-1, -2)), (2, 2), pads, fs,
        rhs_dilation=(1, 2), dimension_numbers=("NHWC", "HWIO", "NHWC"))
    np.testing.assert_allclose(np.moveaxis(np.asarray(out_nhwc), -1, 1), out, rtol=1e-5,
                               atol=1e-5)
    text = spmdc.jit(lambda x, w: lax.conv_general_dilated_local(
        x, w, (2, 2), pads, fs, rhs_dilation=(1, 2), precision="highest")).lower(x, w).as_text()
    assert "precision = [HIGHEST, HIGHEST]" in text


def test_conv_general_dilated_local_grad_and_vmap():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(1, 2, 4, 4)).astype(np.float32)
    w = rng.normal(size=(3, 2 * 4, 3, 3)).astype(np.float32)
    f = lambda x, w: lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2))  # noqa
    ct = rng.normal(size=(1, 3, 3, 3)).astype(np.float32)
    gw = spmdc.grad(lambda w: jnp.sum(f(x, w) * ct))(w)
    patches = np.asarray(lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID"))
    np.testing.assert_allclose(gw, np.einsum("nkhw,nohw->okhw", patches, ct), rtol=1e-5,
                               atol=1e-5)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(spmdc.vmap(f, (0, None))(xs, w),
                               np.stack([f(x, w), f(2 * x, w)]), rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="rhs dimension"):
        f(x, w[:, :5])
