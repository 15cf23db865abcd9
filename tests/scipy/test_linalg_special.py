"""SciPy's special-matrix constructors (spmdc/scipy/linalg_special.py) against SciPy."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import spmdc
import spmdc.scipy.linalg as jsl

C = np.array([1.0, 2.0, 3.0], np.float32)
R = np.array([9.0, 5.0, 6.0, 7.0], np.float32)
POLY = np.array([2.0, 3.0, 4.0, 5.0, 6.0], np.float32)

CASES = {
    "toeplitz": (lambda m: m.toeplitz(C, R), 0),
    "toeplitz_symmetric": (lambda m: m.toeplitz(C), 0),
    "hankel": (lambda m: m.hankel(C, R), 0),
    "hankel_default": (lambda m: m.hankel(C), 0),
    "circulant": (lambda m: m.circulant(C), 0),
    "companion": (lambda m: m.companion(POLY), 1e-6),
    "fiedler": (lambda m: m.fiedler(C), 0),
    "fiedler_companion": (lambda m: m.fiedler_companion(POLY), 1e-6),
    "leslie": (lambda m: m.leslie(np.array([0.1, 2.0, 1.0]), np.array([0.2, 0.8])), 1e-7),
    "convolution_full": (lambda m: m.convolution_matrix(C, 4), 0),
    "convolution_same": (lambda m: m.convolution_matrix(C, 5, "same"), 0),
    "convolution_valid": (lambda m: m.convolution_matrix(C, 4, "valid"), 0),
    "hadamard": (lambda m: m.hadamard(8), 0),
    "helmert": (lambda m: m.helmert(5), 1e-6),
    "helmert_full": (lambda m: m.helmert(4, full=True), 1e-6),
    "hilbert": (lambda m: m.hilbert(4), 1e-6),
    "invhilbert": (lambda m: m.invhilbert(4), 1e-3),
    "pascal": (lambda m: m.pascal(5), 1e-5),
    "pascal_lower": (lambda m: m.pascal(4, "lower"), 1e-5),
    "invpascal": (lambda m: m.invpascal(4, "upper"), 1e-5),
    "dft": (lambda m: m.dft(4, "sqrtn"), 1e-6),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_scipy(name):
    build, tol = CASES[name]
    got, want = np.asarray(build(jsl)), build(scipy.linalg)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_under_jit_and_errors():
    np.testing.assert_array_equal(spmdc.jit(jsl.toeplitz)(C, R), scipy.linalg.toeplitz(C, R))
    np.testing.assert_array_equal(spmdc.jit(jsl.circulant)(C), scipy.linalg.circulant(C))
    for call, fragment in [(lambda: jsl.hadamard(6), "power of 2"),
                           (lambda: jsl.companion(np.ones(1)), "at least 2"),
                           (lambda: jsl.leslie(np.ones(3), np.ones(3)), "one shorter"),
                           (lambda: jsl.convolution_matrix(C, 0), "positive"),
                           (lambda: jsl.convolution_matrix(C, 3, "wide"), "mode"),
                           (lambda: jsl.pascal(3, "diagonal"), "kind"),
                           (lambda: jsl.dft(3, dtype=np.float32), "complex")]:
        with pytest.raises(ValueError, match=fragment):
            call()
