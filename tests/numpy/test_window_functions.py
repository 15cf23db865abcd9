"""spmdc/numpy/misc_extra.py against NumPy."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("M", [0, 1, 2, 7])
def test_windows(name, M):
    np.testing.assert_allclose(getattr(jnp, name)(M), getattr(np, name)(M), atol=1e-6)


def test_kaiser_i0():
    np.testing.assert_allclose(jnp.kaiser(7, 3.5), np.kaiser(7, 3.5), rtol=1e-5)
    x = np.array([0.0, 1.5, -3.0], np.float32)
    np.testing.assert_allclose(jnp.i0(x), np.i0(x), rtol=1e-6)
    np.testing.assert_allclose(spmdc.grad(lambda t: jnp.i0(t))(np.float32(1.5)),
                               0.9816664, rtol=1e-5)    # d/dx I0 = I1; I1(1.5) = 0.9816664


def test_ldexp_bitwise_count_geomspace():
    np.testing.assert_array_equal(jnp.ldexp(np.float32(3), np.array([1, -2])),
                                  np.ldexp(np.float32(3), np.array([1, -2])))
    v = np.array([-1, 7, 255, -256], np.int32)
    np.testing.assert_array_equal(jnp.bitwise_count(v), np.bitwise_count(v))
    assert jnp.bitwise_count(v).dtype == np.uint8
    np.testing.assert_allclose(jnp.geomspace(1, 1000, 4), np.geomspace(1, 1000, 4), rtol=1e-6)
    np.testing.assert_allclose(jnp.geomspace(-2, -32, 5, endpoint=False),
                               np.geomspace(-2, -32, 5, endpoint=False), rtol=1e-6)
    with pytest.raises(ValueError, match="non-zero"):
        jnp.geomspace(0, 1)


def test_resize_piecewise_trim_zeros():
    a = np.array([1, 2, 3])
    np.testing.assert_array_equal(jnp.resize(a, (2, 4)), np.resize(a, (2, 4)))
    np.testing.assert_array_equal(jnp.resize(a, 2), np.resize(a, 2))
    x = np.linspace(-2, 2, 5).astype(np.float32)
    funcs = [lambda v: -v, lambda v: v * 2, 9.0]
    np.testing.assert_array_equal(jnp.piecewise(x, [x < 0, x > 0], funcs),
                                  np.piecewise(x, [x < 0, x > 0], funcs))
    np.testing.assert_array_equal(spmdc.jit(lambda t: jnp.piecewise(t, [t < 0], [1.0]))(x),
                                  np.piecewise(x, [x < 0], [1.0]))
    z = np.array([0, 0, 1, 2, 0])
    np.testing.assert_array_equal(jnp.trim_zeros(z), np.trim_zeros(z))
    np.testing.assert_array_equal(jnp.trim_zeros(z, "b"), np.trim_zeros(z, "b"))
    with pytest.raises(TypeError, match="traced"):
        spmdc.jit(jnp.trim_zeros)(z)


def test_iscomplex_isreal():
    z = np.array([1 + 0j, 2 + 1j, 3 - 0j, -1j], np.complex64)
    np.testing.assert_array_equal(jnp.iscomplex(z), np.iscomplex(z))
    np.testing.assert_array_equal(jnp.isreal(z), np.isreal(z))
    r = np.array([1.0, -2.0], np.float32)
    np.testing.assert_array_equal(jnp.iscomplex(r), np.iscomplex(r))
    np.testing.assert_array_equal(spmdc.jit(jnp.isreal)(r), np.isreal(r))
