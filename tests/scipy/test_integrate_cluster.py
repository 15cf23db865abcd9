"""spmdc.scipy.integrate.trapezoid, spmdc.scipy.cluster.vq.vq and
spmdc.scipy.interpolate.RegularGridInterpolator: JAX 0.10.2's values
(recorded by `tools/record.py scipy_small` from tests/scipy_small_cases.py), SciPy's, and
JAX's exceptions for bad arguments."""
from __future__ import annotations

import numpy as np
import oracle
import pytest
import scipy.cluster.vq as svq
import scipy.integrate as sint
import scipy.interpolate as sinterp
import scipy_small_cases as cases_module

import spmdc
from spmdc.scipy.cluster import vq
from spmdc.scipy.integrate import trapezoid
from spmdc.scipy.interpolate import RegularGridInterpolator

RECORDED = oracle.recorded_cases("scipy_small_reference.json")
CASES = cases_module.cases(spmdc)


def test_every_case_is_recorded():
    assert sorted(CASES) == sorted(RECORDED)


@pytest.mark.parametrize("name", oracle.one_per_method(CASES))  # every case: test-slow
def test_matches_jax(name):
    oracle.assert_matches_recorded(CASES[name](), RECORDED[name], name, rtol=1e-5, atol=1e-6)


def test_matches_scipy():
    np.testing.assert_allclose(trapezoid(cases_module.Y, cases_module.X),
                               sint.trapezoid(cases_module.Y, cases_module.X), rtol=1e-5)
    code, distance = vq.vq(cases_module.OBS, cases_module.CODES)
    want_code, want_distance = svq.vq(cases_module.OBS, cases_module.CODES)
    np.testing.assert_array_equal(code, want_code)
    np.testing.assert_allclose(distance, want_distance, rtol=1e-5)


def test_interpolator_matches_scipy_and_passes_through_jit():
    points = (cases_module.GRID_X, cases_module.GRID_Y)
    ours = RegularGridInterpolator(points, cases_module.GRID_VALUES, fill_value=None)
    theirs = sinterp.RegularGridInterpolator(points, cases_module.GRID_VALUES,
                                             bounds_error=False, fill_value=None)
    np.testing.assert_allclose(ours(cases_module.SAMPLES), theirs(cases_module.SAMPLES),
                               rtol=1e-5, atol=1e-6)
    jitted = spmdc.jit(lambda f, x: f(x))(ours, cases_module.SAMPLES)
    np.testing.assert_allclose(jitted, theirs(cases_module.SAMPLES), rtol=1e-5, atol=1e-6)


def test_bad_arguments_raise_jax_exceptions():
    points = (cases_module.GRID_X, cases_module.GRID_Y)
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(points, cases_module.GRID_VALUES, method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(points, cases_module.GRID_VALUES, bounds_error=True)
    with pytest.raises(ValueError, match="3 point arrays, but values has 2 dimensions"):
        RegularGridInterpolator(points + (cases_module.GRID_X,), cases_module.GRID_VALUES)
    with pytest.raises(ValueError, match="fill_value must be either None"):
        RegularGridInterpolator(points, cases_module.GRID_VALUES, fill_value=1j)
    with pytest.raises(ValueError, match="have dimension 3"):
        RegularGridInterpolator(points, cases_module.GRID_VALUES)(np.ones((2, 3)))
    with pytest.raises(ValueError, match="same rank"):
        vq.vq(cases_module.OBS, cases_module.CODES[0])
    with pytest.raises(ValueError, match="ndim different than 1 or 2"):
        vq.vq(cases_module.OBS[None], cases_module.CODES[None])
