"""nn.initializers with complex dtypes (Flax's Dense(param_dtype=complex64)): the
variance-scaling family draws on the complex plane with JAX's keys and formulas, so the
values are JAX's bit for bit; recorded from JAX 0.10.2."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.nn import initializers

# jax.nn.initializers.variance_scaling(2.0, 'fan_in', d)(jax.random.key(0), (2, 3),
# jnp.complex64), JAX 0.10.2
JAX_VALUES = {
    "uniform": [[1.2965695 + 0.05946137j, 0.5987558 + 0.07904915j, -0.5877485 - 0.33001193j],
                [-0.31756687 + 0.37497008j, 0.10442673 + 0.61050963j,
                 0.8796552 + 0.8186799j]],
    "normal": [[0.70994526 - 1.727077j, -0.6408772 - 1.4394435j, -0.52903765 + 0.14534172j],
               [-0.82828146 - 0.24999774j, -0.6160546 - 0.538797j,
                0.4163714 - 0.8333619j]],
    "truncated_normal": [[1.3880054 + 0.06365467j, 0.46200234 + 0.06099463j,
                          -0.45955777 - 0.25803474j],
                         [-0.24083224 + 0.28436497j, 0.0807972 + 0.4723644j,
                          0.85307616 + 0.7939433j]],
}


def test_complex_variance_scaling_gives_jaxs_values():
    key = spmdc.random.key(0)
    draw = spmdc.jit(lambda k: [initializers.variance_scaling(2.0, "fan_in", d)(
        k, (2, 3), jnp.complex64) for d in JAX_VALUES])
    for name, got in zip(JAX_VALUES, draw(key), strict=True):
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, np.array(JAX_VALUES[name], np.complex64),
                                   rtol=2e-6, atol=2e-7, err_msg=name)


def test_complex_normal_initializer_and_real_only_uniform():
    got = initializers.normal(1.0)(spmdc.random.key(0), (3,), jnp.complex64)
    np.testing.assert_allclose(got, np.array(JAX_VALUES["normal"][0], np.complex64),
                               rtol=2e-6)
    with pytest.raises(TypeError, match="real floating type, got complex64"):
        initializers.uniform()(spmdc.random.key(0), (3,), jnp.complex64)
