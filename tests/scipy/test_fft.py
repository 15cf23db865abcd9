"""spmdc.scipy.fft: dct, idct, dctn and idctn against scipy.fft (float32 and float64, both
norms, truncated and padded lengths, every axis, complex inputs), round trips, jit, vmap,
grad against the transform's matrix, and JAX's errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.fft as sf

import spmdc
import spmdc.scipy.fft as jsf
from spmdc.core import dtypes

RNG = np.random.default_rng(0)
X = RNG.normal(size=(5, 6)).astype(np.float32)
ODD = RNG.normal(size=(3, 7, 4)).astype(np.float32)


@pytest.fixture
def x64():
    previous = dtypes.enable_x64(True)
    yield
    dtypes.enable_x64(previous)


def close(got, want, tol=3e-5):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("name", ["dct", "idct"])
@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
@pytest.mark.parametrize("n", [None, 2, 9])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_one_dimensional_against_scipy(name, norm, n, axis):
    got = getattr(jsf, name)(X, n=n, axis=axis, norm=norm)
    assert got.dtype == np.float32
    close(got, getattr(sf, name)(X, n=n, axis=axis, norm=norm))


@pytest.mark.parametrize("name", ["dctn", "idctn"])
@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("s, axes", [(None, None), ([5], None), ([2, 9], None),
                                     ([2], [0]), (None, [2, 0]), ([6, 3, 5], None),
                                     (None, (1,)), (3, 1)])
def test_multidimensional_against_scipy(name, norm, s, axes):
    got = getattr(jsf, name)(ODD, s=s, axes=axes, norm=norm)
    close(got, getattr(sf, name)(ODD, s=s, axes=axes, norm=norm))


def test_float64_is_exact_to_double_precision(x64):
    x = RNG.normal(size=(4, 11))
    for name in ("dct", "idct", "dctn", "idctn"):
        got = getattr(jsf, name)(x, norm="ortho")
        assert got.dtype == np.float64
        close(got, getattr(sf, name)(x, norm="ortho"), tol=1e-12)


def test_complex_input_is_transformed_by_parts():
    z = X + 1j * X[::-1]
    for name in ("dct", "idct", "dctn", "idctn"):
        got = getattr(jsf, name)(z.astype(np.complex64))
        assert got.dtype == np.complex64
        close(got, getattr(sf, name)(z), tol=1e-4)


def test_integers_promote_to_the_default_float():
    got = jsf.dct(np.arange(6))
    assert got.dtype == np.float32
    close(got, sf.dct(np.arange(6.0)))


@pytest.mark.parametrize("norm", [None, "ortho"])
def test_round_trips(norm):
    close(jsf.idct(jsf.dct(X, norm=norm), norm=norm), X, tol=1e-5)
    close(jsf.idctn(jsf.dctn(ODD, norm=norm), norm=norm), ODD, tol=1e-5)


def test_jit_and_vmap_agree_with_scipy():
    got = spmdc.jit(lambda x: jsf.dct(x, norm="ortho"))(X)
    close(got, sf.dct(X, norm="ortho"))
    got = spmdc.vmap(lambda row: jsf.idct(row, n=8))(X)
    close(got, sf.idct(X, n=8, axis=-1))


@pytest.mark.parametrize("name", ["dct", "idct"])
def test_grad_is_the_transposed_matrix(name):
    # the transform is linear: d/dx sum(w * T x) = T^T w
    size = 7
    matrix = getattr(sf, name)(np.eye(size), axis=0, norm="ortho" if name == "dct" else None)
    w = RNG.normal(size=size).astype(np.float32)
    grad = spmdc.grad(lambda x: (w * getattr(jsf, name)(
        x, norm="ortho" if name == "dct" else None)).sum())(np.zeros(size, np.float32))
    close(grad, matrix.T @ w, tol=1e-5)


def test_errors_are_jax_s():
    with pytest.raises(NotImplementedError, match="only DCT type 2"):
        jsf.dct(X, type=3)
    with pytest.raises(ValueError, match="norm='forward' is not implemented"):
        jsf.idctn(X, norm="forward")
    with pytest.raises(ValueError, match="at most x.ndim"):
        jsf.dctn(X, s=[2, 2, 2])
    with pytest.raises(ValueError, match="axis 2 is out of range"):
        jsf.dct(X, axis=2)
    with pytest.raises(ValueError, match="must be positive"):
        jsf.idct(X, n=0)
