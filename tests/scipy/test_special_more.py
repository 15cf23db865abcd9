"""spmdc.scipy.special's Fresnel integrals, Faddeeva function and hypergeometric
functions: values, values under jit and derivatives against JAX 0.10.2's (recorded by
`tools/record.py special_more`, x32 and x64) and against SciPy's."""
from __future__ import annotations

import types

import numpy as np
import oracle
import pytest
import scipy.special as ss
from special_more_cases import (
    FRESNEL_X,
    HYP1F1_A,
    HYP1F1_B,
    HYP1F1_X,
    HYP2F1_A,
    HYP2F1_B,
    HYP2F1_C,
    HYP2F1_X,
    SPH_M,
    SPH_N,
    SPH_PHI,
    SPH_THETA,
    WOFZ_Z,
    cases,
)

import spmdc
import spmdc.scipy.special as sp
from spmdc.core import dtypes

LIB = types.SimpleNamespace(special=sp, jit=spmdc.jit, vmap=spmdc.vmap, grad=spmdc.grad,
                            jacfwd=spmdc.jacfwd)
RTOL = {"x32": 4e-6, "x64": 1e-14}
# w'(x) = -2 x w(x) + 2i/sqrt(pi) cancels for large real x: there the two agree to a few
# ulps of the terms (XLA's fusion choices differ), not of the result.
CANCELLING = {"wofz.grad_real"}


@pytest.fixture(params=[pytest.param("x32", marks=pytest.mark.slow), "x64"])
def mode(request):
    previous = dtypes.enable_x64(request.param == "x64")
    yield request.param
    dtypes.enable_x64(previous)


# the cases that take seconds (hyp2f1's loops traced per branch): make test-slow
SLOW = {"hyp2f1", "hyp2f1.jit", "hyp2f1.grad_x"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in sorted(cases(False))])
def test_values_and_derivatives_match_jax(mode, name):
    want = oracle.recorded(f"special_more_{mode}.npz")[name]
    got = np.asarray(cases(mode == "x64")[name](LIB))
    assert got.dtype == want.dtype and got.shape == want.shape
    eps = float(np.finfo(want.dtype).eps)
    atol = 4e3 * eps if name in CANCELLING else 0.0
    np.testing.assert_allclose(got, want, rtol=RTOL[mode], atol=atol)


def test_fresnel_and_wofz_match_scipy(mode):
    f, c = (np.float64, np.complex128) if mode == "x64" else (np.float32, np.complex64)
    x, z = np.array(FRESNEL_X, f), np.array(WOFZ_Z, c)
    rtol = 1e-12 if mode == "x64" else 3e-5      # Cephes fresnlf: float32 accuracy
    s, cc = sp.fresnel(x)
    want_s, want_c = ss.fresnel(x.astype(np.float64))
    np.testing.assert_allclose(np.asarray(s), want_s, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(np.asarray(cc), want_c, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(np.asarray(sp.wofz(z)), ss.wofz(z.astype(np.complex128)),
                               rtol=rtol)
    np.testing.assert_allclose(np.asarray(sp.erfcx(z)), ss.erfcx(z.astype(np.complex128)),
                               rtol=rtol)


@pytest.fixture
def x64():
    previous = dtypes.enable_x64(True)
    yield
    dtypes.enable_x64(previous)


def test_hypergeometric_functions_match_scipy(x64):
    # Where JAX and SciPy agree: not at a = b = 0 (JAX: 1, SciPy: NaN), nor at x = -30,
    # where 1F1's Taylor series cancels (JAX's relative error there is 1e-4 too).
    a, b, x = (np.array(v) for v in (HYP1F1_A, HYP1F1_B, HYP1F1_X))
    keep = np.isfinite(ss.hyp1f1(a, b, x)) & (x > -30) & ~((a == 0) & (b == 0))
    np.testing.assert_allclose(np.asarray(sp.hyp1f1(a[keep], b[keep], x[keep])),
                               ss.hyp1f1(a[keep], b[keep], x[keep]), rtol=1e-13)
    a, b, c, x = (np.array(v) for v in (HYP2F1_A, HYP2F1_B, HYP2F1_C, HYP2F1_X))
    want = ss.hyp2f1(a, b, c, x)
    got = np.asarray(sp.hyp2f1(a, b, c, x))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-9)
    assert np.all(np.isinf(got[~finite]))


@pytest.mark.slow
def test_fresnel_of_float16_is_computed_in_float32():
    s, c = sp.fresnel(np.float16([0.5, 3.0]))
    assert s.dtype == c.dtype == np.float16
    np.testing.assert_allclose(np.asarray(s, np.float64), ss.fresnel([0.5, 3.0])[0], rtol=1e-3)


def test_spherical_harmonics_match_scipy(x64):
    args = (np.array(SPH_N), np.array(SPH_M), np.array(SPH_THETA), np.array(SPH_PHI))
    np.testing.assert_allclose(np.asarray(sp.sph_harm_y(*args)), ss.sph_harm_y(*args),
                               rtol=1e-12, atol=1e-15)


def test_dtypes_and_errors_follow_jax():
    assert sp.wofz(np.float32(1.0)).dtype == np.complex64
    assert sp.wofz(1).dtype == np.complex64                      # an int: the default float
    assert sp.erfcx(np.complex64(1j)).dtype == np.complex64
    with pytest.raises(NotImplementedError, match="complex"):    # JAX's class
        sp.fresnel(np.complex64(1.0))
    with pytest.raises(ValueError, match="complex"):
        sp.hyp1f1(1.0, 2.0, np.complex64(1.0))
    assert sp.hyp1f1(1, 2, 3).dtype == np.float32
    with pytest.raises(NotImplementedError, match="diff_n"):     # JAX's class
        sp.sph_harm_y(np.array([1]), np.array([0]), np.array([0.5]), np.array([0.1]), diff_n=1)
    with pytest.raises(spmdc.errors.ConcretizationTypeError):    # n_max must be static
        spmdc.jit(sp.sph_harm_y)(np.array([1]), np.array([0]), np.array([0.5]),
                                 np.array([0.1]))
