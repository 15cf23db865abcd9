"""jnp.size(a, axis) (Optax's smoothing losses count one axis): the elements along one
axis or several, as JAX 0.10.2 counts them, with NumPy's axis errors."""

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


def test_size_along_axes():
    x = np.zeros((2, 3, 4), np.float32)
    assert [jnp.size(x), jnp.size(x, 1), jnp.size(x, (0, 2)), jnp.size(x, -1),
            jnp.size(3.0)] == [24, 3, 8, 4, 1]
    assert type(jnp.size(x, 1)) is int
    assert spmdc.jit(lambda a: a * jnp.size(a, 0))(x[:, 0, 0]).dtype == np.float32
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 3"):
        jnp.size(x, 3)
    with pytest.raises(ValueError, match="repeated axis"):
        jnp.size(x, (0, 0))
