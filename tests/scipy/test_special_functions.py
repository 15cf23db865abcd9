"""spmdc.scipy.special's functions beyond the classic ones (exponential integrals, ...):
values, values under jit and derivatives against JAX 0.10.2's (recorded by
`tools/record.py special_functions`, x32 and x64) and against SciPy's."""
from __future__ import annotations

import types

import numpy as np
import oracle
import pytest
import scipy.special as ss
from special_function_cases import (
    ERF_X,
    EXPI_X,
    EXPN_N,
    EXPN_X,
    POCH_M,
    POCH_Z,
    SICI_X,
    SPENCE_X,
    ZETA_Q,
    ZETA_S,
    cases,
)

import spmdc
import spmdc.scipy.special as sp
from spmdc.core import dtypes

LIB = types.SimpleNamespace(special=sp, jit=spmdc.jit, vmap=spmdc.vmap, grad=spmdc.grad,
                            jacfwd=spmdc.jacfwd)
# JAX's own float32 and float64 runs differ by this much from run to run of XLA's fusion
# choices; the series and continued fractions accumulate a few ulps per term.
RTOL = {"x32": 4e-6, "x64": 1e-14}
# erfcx' = 2 x erfcx(x) - 2/sqrt(pi) and dawsn' = 1 - 2 x dawsn(x) cancel for large |x|:
# there the two agree to a few ulps of the terms (XLA may contract the product and the
# difference into one fused multiply-add), not of the result.
CANCELLING = {"erfcx.grad", "dawsn.grad"}


@pytest.fixture(params=[pytest.param("x32", marks=pytest.mark.slow), "x64"])
def mode(request):       # make test checks the float64 values; make test-slow float32 too
    previous = dtypes.enable_x64(request.param == "x64")
    yield request.param
    dtypes.enable_x64(previous)


@pytest.mark.parametrize("name", sorted(cases(False)))
def test_values_and_derivatives_match_jax(mode, name):
    want = oracle.recorded(f"special_functions_{mode}.npz")[name]
    if name == "expi":
        assert np.isnan(want[EXPI_X.index(0.0)])     # JAX's Ei(0), where SciPy has -inf
    got = np.asarray(cases(mode == "x64")[name](LIB))
    assert got.dtype == want.dtype and got.shape == want.shape
    atol = 8 * float(np.finfo(want.dtype).eps) if name in CANCELLING else 0.0
    np.testing.assert_allclose(got, want, rtol=RTOL[mode], atol=atol)


def test_exponential_integrals_match_scipy(mode):
    f = np.float64 if mode == "x64" else np.float32
    rtol = 4e-6 if mode == "x32" else 1e-13
    # Ei(0) is -inf in SciPy; JAX's (and so spmdc's) Cephes port gives NaN there.
    x, xp = np.array([v for v in EXPI_X if v != 0], f), np.array(EXPN_X, f)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(np.asarray(sp.expi(x), np.float64),
                                   ss.expi(x.astype(np.float64)).astype(f), rtol=rtol)
        np.testing.assert_allclose(np.asarray(sp.exp1(xp), np.float64),
                                   ss.exp1(xp.astype(np.float64)).astype(f), rtol=rtol)
        # At x = 0 JAX gives E_n(0) = 1/n for n >= 2 where SciPy (rightly) has 1/(n - 1):
        # compared to JAX's recorded values only.
        n, xp = np.array(EXPN_N, f)[:, None], xp[xp != 0]
        np.testing.assert_allclose(np.asarray(sp.expn(n, xp), np.float64),
                                   ss.expn(n.astype(int), xp.astype(np.float64)).astype(f),
                                   rtol=rtol)


def test_exponential_integral_derivatives_are_the_closed_forms():
    x = np.array([-3.0, -0.5, 0.25, 1.5, 4.0, 30.0], np.float32)
    np.testing.assert_allclose(spmdc.vmap(spmdc.grad(sp.expi))(x), np.exp(x) / x, rtol=1e-6)
    xp = np.abs(x)
    np.testing.assert_allclose(spmdc.vmap(spmdc.grad(sp.exp1))(xp), -np.exp(-xp) / xp,
                               rtol=1e-6)
    np.testing.assert_allclose(spmdc.vmap(spmdc.grad(lambda v: sp.expn(4, v)))(xp),
                               -ss.expn(3, xp.astype(np.float64)), rtol=1e-5)


def test_erfcx_and_dawsn_match_scipy(mode):
    f = np.float64 if mode == "x64" else np.float32
    rtol = 4e-6 if mode == "x32" else 1e-14
    x = np.array(ERF_X, f)
    with np.errstate(over="ignore"):
        want_erfcx = ss.erfcx(x.astype(np.float64)).astype(f)
    np.testing.assert_allclose(np.asarray(sp.erfcx(x)), want_erfcx, rtol=rtol)
    np.testing.assert_allclose(np.asarray(sp.dawsn(x)), ss.dawsn(x.astype(np.float64)),
                               rtol=rtol, atol=0.0)


def test_erfcx_and_dawsn_of_narrow_floats_are_computed_in_float32():
    x = np.array([-2.0, 0.5, 4.0, 12.0], np.float16)
    got = sp.erfcx(x)
    assert got.dtype == np.float16
    np.testing.assert_allclose(np.asarray(got, np.float64), ss.erfcx(x.astype(np.float64)),
                               rtol=2e-3)
    np.testing.assert_allclose(np.asarray(sp.dawsn(x), np.float64),
                               ss.dawsn(x.astype(np.float64)), rtol=2e-3)


def test_spence_zeta_poch_and_bernoulli_match_scipy(mode):
    f = np.float64 if mode == "x64" else np.float32
    rtol = 4e-6 if mode == "x32" else 1e-13
    x = np.array([v for v in SPENCE_X if v >= 0], f)    # SciPy's spence(-1) is complex-only
    np.testing.assert_allclose(np.asarray(sp.spence(x)), ss.spence(x.astype(np.float64)),
                               rtol=rtol, atol=1e-15)
    assert np.isnan(sp.spence(f(-1.0)))
    s, q = np.array(ZETA_S, f)[:, None], np.array(ZETA_Q, f)
    # zeta(30, 100) is below float32's normal range (XLA flushes it to 0).
    np.testing.assert_allclose(np.asarray(sp.zeta(s, q)), ss.zeta(s.astype(np.float64), q),
                               rtol=rtol, atol=float(np.finfo(f).tiny))
    z, m = np.array(POCH_Z, f)[:, None], np.array(POCH_M, f)
    np.testing.assert_allclose(np.asarray(sp.poch(z, m)), ss.poch(z.astype(np.float64), m),
                               rtol=rtol)
    # JAX's series stops at k = 49, which leaves 3e-6 of B_4 out (in float64 too).
    np.testing.assert_allclose(np.asarray(sp.bernoulli(20)), ss.bernoulli(20), rtol=1e-5,
                               atol=1e-15)


def test_sici_matches_scipy(mode):
    f = np.float64 if mode == "x64" else np.float32
    x = np.array([v for v in SICI_X if np.isfinite(v)], f)
    si, ci = sp.sici(x)
    want_si, want_ci = ss.sici(x.astype(np.float64))
    rtol = 4e-6 if mode == "x32" else 1e-13
    np.testing.assert_allclose(np.asarray(si), want_si, rtol=rtol)
    # Past 1e9, Ci is sin(x)/x, off by O(1/x**2) (2.5e-19 at 2e9).
    np.testing.assert_allclose(np.asarray(ci), want_ci, rtol=rtol, atol=1e-18)
    si, ci = sp.sici(np.array([np.inf, -np.inf], f))
    np.testing.assert_array_equal(np.asarray(si), np.array([np.pi / 2, -np.pi / 2], f))
    assert np.asarray(ci)[0] == 0 and np.isnan(np.asarray(ci)[1])


def test_zeta_and_poch_derivatives_against_finite_differences(x64):
    eps = 1e-6
    s, q = np.array([2.5, 4.0]), np.array([1.5, 3.0])
    grad_s, grad_q = spmdc.vmap(spmdc.grad(sp.zeta, argnums=(0, 1)))(s, q)
    np.testing.assert_allclose(grad_s, (ss.zeta(s + eps, q) - ss.zeta(s - eps, q)) / (2 * eps),
                               rtol=1e-6)
    np.testing.assert_allclose(grad_q, -s * ss.zeta(s + 1, q), rtol=1e-10)
    z, m = np.array([1.5, 4.0]), np.array([2.0, 0.5])
    grad_z, grad_m = spmdc.vmap(spmdc.grad(sp.poch, argnums=(0, 1)))(z, m)
    np.testing.assert_allclose(grad_z, (ss.poch(z + eps, m) - ss.poch(z - eps, m)) / (2 * eps),
                               rtol=1e-6)
    np.testing.assert_allclose(grad_m, (ss.poch(z, m + eps) - ss.poch(z, m - eps)) / (2 * eps),
                               rtol=1e-6)


@pytest.fixture
def x64():
    previous = dtypes.enable_x64(True)
    yield
    dtypes.enable_x64(previous)


@pytest.mark.parametrize("call, error", [
    (lambda: sp.zeta(2.0), NotImplementedError),
    (lambda: sp.bernoulli(-1), ValueError),
    (lambda: sp.bernoulli(2.5), TypeError),
    (lambda: sp.spence(np.arange(3)), TypeError),
    (lambda: sp.poch(np.complex64(1.0), 2.0), ValueError),
    (lambda: sp.sici(np.complex64(1.0)), ValueError),
])
def test_bad_arguments_raise_what_jax_raises(call, error):
    with pytest.raises(error):
        call()


def test_integer_arguments_become_the_default_float():
    assert sp.expi(np.arange(1, 4)).dtype == np.float32
    np.testing.assert_allclose(sp.expn(np.int32(2), np.int32(3)), ss.expn(2, 3.0), rtol=1e-6)


@pytest.mark.parametrize("call", [lambda: sp.expi(np.complex64(1.0)),
                                  lambda: sp.exp1(np.complex64(1.0)),
                                  lambda: sp.expn(1, np.complex64(1.0)),
                                  lambda: sp.dawsn(np.complex64(1.0))])
def test_complex_arguments_are_rejected(call):
    with pytest.raises(ValueError, match="complex"):
        call()
