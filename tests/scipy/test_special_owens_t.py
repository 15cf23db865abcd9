"""spmdc.scipy.special.owens_t (Note [Owen's T] in spmdc/scipy/special_owens_t.py):
values against SciPy over both regions of |a| and the exact cases, float32 and float64,
and derivatives against JAX 0.10.2's and SciPy's finite differences."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as ss

import spmdc
import spmdc.scipy.special as sp

RNG = np.random.default_rng(0)
H = np.concatenate([RNG.uniform(-8, 8, 300), [0.0, 0.5, -1.0, 3.0, 10.0, 0.1, 0.2, 2.0]])
A = np.concatenate([RNG.uniform(-10, 10, 300), [2.0, 1.0, -1.0, 0.3, 5.0, 0.0, 4.0, -0.5]])


@pytest.mark.parametrize("dtype, atol, rtol", [(np.float32, 2e-8, 1e-5),
                                               (np.float64, 1e-16, 1e-9)])
def test_values_match_scipy(dtype, atol, rtol):
    with spmdc.enable_x64(dtype == np.float64):
        got = sp.owens_t(H.astype(dtype), A.astype(dtype))
        assert got.dtype == dtype and got.shape == H.shape
        np.testing.assert_allclose(np.asarray(got, np.float64), ss.owens_t(H, A),
                                   rtol=rtol, atol=atol)


def test_special_arguments():
    np.testing.assert_allclose(np.asarray(sp.owens_t(0.0, [0.5, -2.0])),
                               np.arctan([0.5, -2.0]) / (2 * np.pi), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(sp.owens_t([0.3, -1.5], 1.0)),
                               ss.owens_t([0.3, -1.5], 1.0), rtol=1e-6)
    assert np.isnan(np.asarray(sp.owens_t(np.nan, 1.0)))
    assert np.isnan(np.asarray(sp.owens_t(1.0, np.nan)))
    np.testing.assert_allclose(np.asarray(sp.owens_t(1.0, np.inf)), ss.owens_t(1.0, np.inf),
                               rtol=1e-6)
    got = sp.owens_t(np.ones((2, 1), np.float32), np.array([0.5, 2.0], np.float32))
    assert got.shape == (2, 2)                  # the arguments broadcast
    assert sp.owens_t(1, 2).dtype == np.float32  # ints promote to the default float


def test_derivatives():
    with spmdc.enable_x64():
        g = spmdc.grad(sp.owens_t, argnums=(0, 1))(0.7, 1.3)
        # JAX 0.10.2 gives (-0.09948059, 0.03060878); SciPy's central differences agree.
        eps = 1e-6
        fd = [(ss.owens_t(0.7 + eps, 1.3) - ss.owens_t(0.7 - eps, 1.3)) / (2 * eps),
              (ss.owens_t(0.7, 1.3 + eps) - ss.owens_t(0.7, 1.3 - eps)) / (2 * eps)]
        np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-7)
        np.testing.assert_allclose(np.asarray(g), [-0.09948059, 0.03060878], rtol=1e-6)
        g = spmdc.jit(spmdc.vmap(spmdc.grad(sp.owens_t)))(np.array([0.5, -2.0]),
                                                           np.array([3.0, 0.2]))
        fd = [(ss.owens_t(h + eps, a) - ss.owens_t(h - eps, a)) / (2 * eps)
              for h, a in [(0.5, 3.0), (-2.0, 0.2)]]
        np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-6)


def test_complex_arguments_are_refused():
    with pytest.raises(TypeError, match="owens_t: h and a must be real"):
        sp.owens_t(1j, 1.0)
