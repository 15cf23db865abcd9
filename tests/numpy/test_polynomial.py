"""spmdc/numpy/polynomial.py against NumPy: polyadd, polysub, polymul, polyder, polyint,
polyval, vander.
roots and poly of a matrix are tested with eig in
tests/compiler/primitives/test_linalg_eig.py, the recorded cases in test_setops.py."""
from __future__ import annotations

import numpy as np

import spmdc.numpy as jnp


def test_vander_select():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(jnp.vander(x), np.vander(x))
    np.testing.assert_array_equal(jnp.vander(x, 2, True), np.vander(x, 2, True))
    v = np.arange(6)
    np.testing.assert_array_equal(jnp.select([v < 2, v > 3], [v, v ** 2], -1),
                                  np.select([v < 2, v > 3], [v, v ** 2], -1))


def test_polynomials():
    a, b = np.array([1.0, 2.0, 3.0], np.float32), np.array([4.0, 5.0], np.float32)
    np.testing.assert_array_equal(jnp.polyadd(a, b), np.polyadd(a, b))
    np.testing.assert_array_equal(jnp.polysub(b, a), np.polysub(b, a))
    np.testing.assert_allclose(jnp.polymul(a, b), np.polymul(a, b), rtol=1e-6)
    np.testing.assert_array_equal(jnp.polyder(a, 2), np.polyder(a, 2))
    np.testing.assert_array_equal(jnp.polyder(np.array([1, 2, 3])), np.polyder([1, 2, 3]))
    np.testing.assert_allclose(jnp.polyint(a), np.polyint(a), rtol=1e-6)
    np.testing.assert_allclose(jnp.polyint(a, 2, [1, 2]), np.polyint(a, 2, [1, 2]), rtol=1e-6)
    np.testing.assert_allclose(jnp.polyint(a, 2, 3), np.polyint(a, 2, 3), rtol=1e-6)
