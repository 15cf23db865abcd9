"""spmdc/numpy/window_functions.py against NumPy: bartlett,
blackman, hamming, hanning and kaiser (with i0)."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
@pytest.mark.parametrize("M", [0, 1, 2, 7])
def test_windows(name, M):
    np.testing.assert_allclose(getattr(jnp, name)(M), getattr(np, name)(M), atol=1e-6)


def test_kaiser_i0():
    np.testing.assert_allclose(jnp.kaiser(7, 3.5), np.kaiser(7, 3.5), rtol=1e-5)
    x = np.array([0.0, 1.5, -3.0], np.float32)
    np.testing.assert_allclose(jnp.i0(x), np.i0(x), rtol=1e-6)
    np.testing.assert_allclose(spmdc.grad(lambda t: jnp.i0(t))(np.float32(1.5)),
                               0.9816664, rtol=1e-5)    # d/dx I0 = I1; I1(1.5) = 0.9816664
