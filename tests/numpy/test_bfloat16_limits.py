"""jnp.nan_to_num and jnp.frexp on bfloat16 (Optax's schedule-free optimizer runs
nan_to_num on bfloat16 states): bfloat16's limits come from ml_dtypes, as NumPy's finfo
has none; values recorded with JAX 0.10.2."""

import numpy as np

import spmdc.numpy as jnp


def test_bfloat16_nan_to_num_and_frexp():
    x = jnp.array([np.nan, np.inf, -np.inf, 1.5], jnp.bfloat16)
    big = float(jnp.finfo(jnp.bfloat16).max)                   # 3.38953e+38
    got = jnp.nan_to_num(x)
    assert got.dtype == jnp.bfloat16
    np.testing.assert_array_equal(got.astype(np.float32), [0, big, -big, 1.5])
    np.testing.assert_array_equal(
        jnp.nan_to_num(x, nan=0.0, posinf=jnp.inf).astype(np.float32), [0, np.inf, -big, 1.5])
    mantissa, exponent = jnp.frexp(x[3:])
    assert mantissa.dtype == jnp.bfloat16 and exponent.dtype == np.int32
    assert float(mantissa[0]) == 0.75 and int(exponent[0]) == 1
