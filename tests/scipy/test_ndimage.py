"""spmdc.scipy.ndimage.map_coordinates: JAX 0.10.2's values (recorded by `tools/record.py
ndimage` from tests/ndimage_cases.py) for every mode and order, eagerly and under jit,
SciPy's inside the array, and JAX's exceptions for bad arguments."""
from __future__ import annotations

import ndimage_cases
import numpy as np
import oracle
import pytest
import scipy.ndimage as sndi

import spmdc
import spmdc.scipy.ndimage as ndimage

RECORDED = oracle.recorded_cases("ndimage_reference.json")
CASES = ndimage_cases.cases(spmdc)


def test_every_case_is_recorded():
    assert sorted(CASES) == sorted(RECORDED)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax(name):
    oracle.assert_matches_recorded(CASES[name](), RECORDED[name], name, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["reflect.order1", "constant.order0.int"])
def test_matches_jax_under_jit(name):
    oracle.assert_matches_recorded(spmdc.jit(CASES[name])(), RECORDED[name], name,
                                   rtol=1e-5, atol=1e-6)


def test_linear_interpolation_matches_scipy_inside_the_image():
    image = ndimage_cases.IMAGE.astype(np.float64)
    rows = np.array([0.0, 0.3, 1.5, 2.75, 4.0])
    cols = np.array([5.0, 0.6, 2.25, 4.5, 0.0])
    np.testing.assert_allclose(ndimage.map_coordinates(image, [rows, cols], 1),
                               sndi.map_coordinates(image, [rows, cols], order=1), rtol=1e-6)


def test_gradient_is_the_interpolation_weights():
    image = ndimage_cases.IMAGE
    grad = spmdc.grad(lambda img: ndimage.map_coordinates(img, [np.float32(1.25),
                                                                np.float32(2.5)], 1))(image)
    want = np.zeros_like(image)
    want[1, 2], want[1, 3], want[2, 2], want[2, 3] = 0.375, 0.375, 0.125, 0.125
    np.testing.assert_allclose(grad, want, rtol=1e-6)


def test_bad_arguments_raise_jax_exceptions():
    image = ndimage_cases.IMAGE
    with pytest.raises(ValueError, match="sequence of length input.ndim, but 1 != 2"):
        ndimage.map_coordinates(image, [ndimage_cases.ROWS], 1)
    with pytest.raises(NotImplementedError, match="mode 'grid-wrap'"):
        ndimage.map_coordinates(image, [ndimage_cases.ROWS, ndimage_cases.COLS], 1,
                                mode="grid-wrap")
    with pytest.raises(NotImplementedError, match="order=3"):
        ndimage.map_coordinates(image, [ndimage_cases.ROWS, ndimage_cases.COLS], 3)
