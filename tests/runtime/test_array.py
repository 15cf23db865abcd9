"""spmdc.Array and the device API: shape/dtype, host conversion, NumPy-like printing,
eager arithmetic and indexing (cached one-op executables), scalars, device placement."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

X = np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.devices(8)
def test_devices():
    devs = spmdc.devices()
    assert len(devs) == spmdc.device_count() == spmdc.local_device_count() == 8
    assert spmdc.local_devices() == devs
    assert [d.id for d in devs] == list(range(8))


def test_what_an_array_is():
    a = spmdc.device_put(X)
    assert isinstance(a, spmdc.Array)
    assert (a.shape, a.dtype, a.ndim, a.size, a.nbytes) == ((3, 4), np.float32, 2, 12, 48)
    assert a.devices() == {spmdc.devices()[0]}
    assert len(a) == 3
    np.testing.assert_array_equal(np.asarray(a), X)
    assert a.tolist() == X.tolist()
    assert a.block_until_ready() is a


def test_printing_like_numpy():
    a = spmdc.device_put(X)
    assert repr(a) == "Array(" + np.array2string(X, separator=", ", prefix="Array(") + \
        ", dtype=float32)"
    assert str(a) == str(X)
    assert repr(jnp.asarray(2.0)) == "Array(2., dtype=float32, weak_type=True)"
    # JAX's weak_type attribute, on arrays and on traced values (Equinox's tree_pformat)
    assert jnp.array(1).weak_type and not a.weak_type
    assert spmdc.jit(lambda x, y: np.array([x.weak_type, y.weak_type]))(1.0, a).tolist() \
        == [True, False]
    assert f"{jnp.asarray(2.0):.3f}" == "2.000"
    assert float(jnp.asarray(2.5)) == 2.5 and int(jnp.asarray(7)) == 7
    assert bool(jnp.asarray(True)) is True


# Recorded from JAX 0.10.2 (Note [Array text] in spmdc/runtime/array.py): the wrapping of
# long arrays, the dtype= that does not fit the last line, empty and summarised arrays.
_JAX_ARRAY_TEXT = [
    (lambda: jnp.arange(30.0, dtype=jnp.float32),
     "Array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12.,\n"
     "       13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25.,\n"
     "       26., 27., 28., 29.], dtype=float32)"),
    (lambda: jnp.arange(12, dtype=jnp.int32).reshape(3, 4) * 1.5,
     "Array([[ 0. ,  1.5,  3. ,  4.5],\n"
     "       [ 6. ,  7.5,  9. , 10.5],\n"
     "       [12. , 13.5, 15. , 16.5]], dtype=float32, weak_type=True)"),
    (lambda: jnp.zeros((0, 3)), "Array([], shape=(0, 3), dtype=float32)"),
    (lambda: jnp.arange(1001, dtype=jnp.int32),
     "Array([   0,    1,    2, ...,  998,  999, 1000], dtype=int32)"),
    (lambda: jnp.arange(10, dtype=jnp.bfloat16) * 1.37,
     "Array([0, 1.36719, 2.73438, 4.09375, 5.46875, 6.84375, 8.1875, 9.5625,\n"
     "       10.9375, 12.3125], dtype=bfloat16)"),
    (lambda: jnp.arange(24, dtype=jnp.float32) * 100.5,
     "Array([   0. ,  100.5,  201. ,  301.5,  402. ,  502.5,  603. ,  703.5,\n"
     "        804. ,  904.5, 1005. , 1105.5, 1206. , 1306.5, 1407. , 1507.5,\n"
     "       1608. , 1708.5, 1809. , 1909.5, 2010. , 2110.5, 2211. , 2311.5],"
     "      dtype=float32)"),
]


@pytest.mark.parametrize("make, text", _JAX_ARRAY_TEXT)
def test_printing_as_jax(make, text):
    assert repr(make()) == text


def test_iteration():
    # Explicit iteration: x[i] clamps, so indexing until IndexError would never stop.
    a, b = jnp.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(b), [3, 4, 5])
    assert [int(v) for v in jnp.arange(3)] == [0, 1, 2]
    with pytest.raises(TypeError, match="iteration over a 0-d array"):
        iter(jnp.asarray(1.0))


def test_printing_follows_numpy_print_options():
    with np.printoptions(linewidth=40):         # recorded from JAX 0.10.2
        assert repr(jnp.arange(16, dtype=jnp.int32)) == (
            "Array([ 0,  1,  2,  3,  4,  5,  6,  7,\n"
            "        8,  9, 10, 11, 12, 13, 14, 15],      dtype=int32)")


def test_eager_arithmetic_and_indexing_match_numpy():
    a = spmdc.device_put(X)
    cases = [(a + 1, X + 1), (2 * a, 2 * X), (a - a.T.T, X - X), (a / 4, X / 4),
             (a // 3, X // 3), (a % 5, X % 5), (a ** 2, X ** 2), (-a, -X), (abs(-a), X),
             (a @ a.T, X @ X.T), (a > 5, X > 5), (a[1], X[1]), (a[:, 1:3], X[:, 1:3]),
             (a[None, ..., -1], X[None, ..., -1]), (a[np.array([2, 0])], X[[2, 0]]),
             (a.sum(axis=0), X.sum(0)), (a.mean(), X.mean()), (a.max(1), X.max(1)),
             (a.reshape(4, 3), X.reshape(4, 3)), (a.astype(jnp.int32), X.astype(np.int32))]
    for got, want in cases:
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_at_updates_are_functional():
    a = jnp.zeros(5)
    b = a.at[1:3].set(7.0).at[jnp.array([0, 4])].add(1.0).at[2].multiply(2.0)
    np.testing.assert_array_equal(np.asarray(b), [1, 7, 14, 0, 1])
    np.testing.assert_array_equal(np.asarray(a), np.zeros(5))


def test_scalar_conversions_need_one_element():
    with pytest.raises(TypeError, match=r"float\(\) needs an array with one element.*\(3, 4\)"):
        float(spmdc.device_put(X))
    with pytest.raises(TypeError, match="not hashable"):
        hash(spmdc.device_put(X))


@pytest.mark.devices(4)
def test_device_put_and_get():
    d3 = spmdc.devices()[3]
    a = spmdc.device_put(X, d3)
    assert a.devices() == {d3}
    doubled = spmdc.jit(lambda v: v * 2)(a)            # runs where its input lives
    assert doubled.devices() == {d3}
    tree = spmdc.device_get({"a": a, "b": [doubled, 1.0]})
    assert isinstance(tree["a"], np.ndarray) and tree["b"][1] == 1.0
    np.testing.assert_array_equal(tree["b"][0], X * 2)


@pytest.mark.devices(4)
def test_device_put_with_a_device_list_shards_the_leading_axis():
    four = spmdc.devices()[:4]
    a = spmdc.device_put(X.reshape(4, 3), four)
    assert a.devices() == set(four) and a.shape == (4, 3)
    np.testing.assert_array_equal(np.asarray(a), X.reshape(4, 3))
    with pytest.raises(ValueError, match="leading axis has size 4; got shape \\(3, 4\\)"):
        spmdc.device_put(X, four)


def test_float64_becomes_float32_without_x64():
    a = jnp.asarray(np.ones(3))
    assert a.dtype == np.float32
    assert jnp.arange(3).dtype == np.int32


@pytest.mark.devices(8)
def test_the_type_users_see():
    out = spmdc.pmap(lambda v: v * 2)(np.arange(8.0))
    assert type(out) is spmdc.Array and str(type(out)) == "<class 'spmdc.Array'>"
