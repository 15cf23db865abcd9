"""jnp.array_equal: a boolean scalar array (not a Python bool, so that it can be traced,
as chex's jittable tree assertions need), ``equal_nan=`` as NumPy's."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

NAN = np.float32(np.nan)
CASES = [
    (np.array([1.0, NAN, 3.0], np.float32), np.array([1.0, NAN, 3.0], np.float32)),
    (np.array([1.0, NAN], np.float32), np.array([1.0, 2.0], np.float32)),
    (np.array([1, 2, 3], np.int32), np.array([1, 2, 3], np.int32)),
    (np.array([1, 2, 3], np.int32), np.array([1, 2, 4], np.int32)),
    (np.array([1, 2, 3], np.int32), np.array([1, 2], np.int32)),
    (np.array([[1.0, NAN]], np.float32), np.array([[1.0, NAN]], np.float32).T),
]


@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_array_equal_matches_numpy_eagerly_and_under_jit(case, equal_nan):
    a, b = CASES[case]
    expected = np.array_equal(a, b, equal_nan=equal_nan)
    eager = jnp.array_equal(a, b, equal_nan=equal_nan)
    assert isinstance(eager, spmdc.Array) and eager.dtype == np.bool_ and eager.shape == ()
    assert bool(eager) == expected
    traced = spmdc.jit(lambda x, y: jnp.array_equal(x, y, equal_nan=equal_nan))(a, b)
    assert bool(traced) == expected
