"""Arrays a jitted function closes over are constants of its program, as in JAX, so XLA
folds them as it does under JAX (Note [captured arrays are constants] in
transforms/stages.py)."""
import ml_dtypes
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

X = np.linspace(-3.0, 3.0, 12, dtype=np.float32)
C = np.array([3.0, 7.0, 10.0, 0.3, 1.7, 9.1, 11.0, 13.0, 0.7, 2.9, 6.1, 17.0], np.float32)
# jax.jit(lambda x: x / C)(X) under JAX 0.10.2 on CPU: XLA turns the division by the
# constant into a multiplication by its reciprocal, which differs from the division
# (NumPy's, or one by an argument) at positions 1, 6, 9 and 10
JAX_BITS = [0xbf800000, 0xbeb38851, 0xbe437dac, 0xc091745d, 0xbef66ac7, 0xbcf583b5,
            0x3ccb1b82, 0x3d80e526, 0x3ff959c5, 0x3f2886d1, 0x3ece0557, 0x3e34b4b5]


@pytest.mark.parametrize("captured", ["numpy", "array"])
def test_division_by_a_captured_array_gives_jaxs_bits(captured):
    c = C if captured == "numpy" else spmdc.device_put(C)
    f = spmdc.jit(lambda x: x / c)
    for x in (X, spmdc.device_put(X), spmdc.device_put(X)):     # Python path, then C++
        out = np.asarray(f(x))
        assert [int(v) for v in out.view(np.uint32)] == JAX_BITS
    assert list(np.nonzero(out != X / C)[0]) == [1, 6, 9, 10]
    by_argument = np.asarray(spmdc.jit(lambda x, c: x / c)(X, C))
    np.testing.assert_array_equal(by_argument, X / C)


def test_the_lowered_program_holds_the_constant_and_takes_the_arguments_alone():
    c = spmdc.device_put(C[:3])
    text = spmdc.jit(lambda x, y: x / c + y).lower(X[:3], X[:3]).as_text()
    assert "@main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> " in text
    assert "stablehlo.constant dense<[3.000000e+00, 7.000000e+00, 1.000000e+01]>" in text
    traced = spmdc.jit(lambda x: x / c).trace(X[:3]).lower().as_text()
    assert "@main(%arg0: tensor<3xf32>) -> " in traced and "dense<[3.0" in traced


def test_functions_of_one_code_with_different_constants_keep_their_own_values():
    def divide_by(c):
        return spmdc.jit(lambda x: x / c)

    x = spmdc.device_put(X)
    for _ in range(2):
        for k in (1.0, 2.0, 4.0):
            np.testing.assert_array_equal(divide_by(C * k)(x), X * (1 / (C * k)))


def test_eager_transformations_of_one_program_with_different_constants():
    # an eager grad's executable is shared by program structure: it must not hold a value
    for k in (1.0, 2.0, 3.0):
        c = C * k
        g = spmdc.grad(lambda x: jnp.sum(x * c))(X)
        np.testing.assert_array_equal(g, c)


def test_constants_of_every_kind():
    mask = np.arange(12) % 3 == 0
    halves = np.arange(12).astype(ml_dtypes.bfloat16)
    key = spmdc.random.key(0)
    f = spmdc.jit(lambda x: (jnp.where(mask, x, 0.0), x * halves,
                             x.sum() + np.zeros((0, 3), np.float32).sum(),
                             (x + 1j) / (C + 2j)))
    where, scaled, total, quotient = f(X)
    np.testing.assert_array_equal(where, np.where(mask, X, 0.0))
    np.testing.assert_array_equal(scaled, X * halves.astype(np.float32))
    assert float(total) == pytest.approx(float(X.sum()), abs=1e-6)
    np.testing.assert_allclose(quotient, (X + 1j) / (C + 2j), rtol=1e-6)
    # jax.random.normal(jax.random.key(0), (3,)) under jit in JAX 0.10.2
    np.testing.assert_allclose(spmdc.jit(lambda: spmdc.random.normal(key, (3,)))(),
                               [1.6226422, 2.0252647, -0.43359444], rtol=1e-6)


def test_donation_with_constants():
    c = spmdc.device_put(C)
    f = spmdc.jit(lambda x, y: (x / c, y + 1), donate_argnums=0)
    x = spmdc.device_put(X)
    out, y = f(x, X)
    assert x.is_deleted()
    assert [int(v) for v in np.asarray(out).view(np.uint32)] == JAX_BITS
    np.testing.assert_array_equal(y, X + 1)
