"""jnp.linalg.norm / vector_norm of bfloat16 and float16 operands (optax's
``safe_norm`` of bfloat16 parameters): they need no LAPACK kernel and keep their
dtype, with JAX 0.10.2's recorded values; the SVD-based norms still need one."""
import ml_dtypes
import numpy as np
import pytest

import spmdc.numpy as jnp


def test_bfloat16_norms_keep_the_dtype_and_jax_values():
    x = jnp.arange(6.0, dtype=jnp.bfloat16).reshape(2, 3)
    cases = [(jnp.linalg.norm(x, keepdims=True), [[7.40625]]),
             (jnp.linalg.norm(x, axis=1), [2.234375, 7.0625]),
             (jnp.linalg.norm(x, ord=1), 7.0),
             (jnp.linalg.vector_norm(x), 7.40625)]
    for got, want in cases:
        assert got.dtype == ml_dtypes.bfloat16
        np.testing.assert_array_equal(np.asarray(got, np.float32), np.float32(want))


def test_float16_and_integer_norms():
    half = jnp.linalg.norm(jnp.arange(3, dtype=jnp.float16))
    assert half.dtype == np.float16 and float(half) == pytest.approx(2.236, abs=1e-3)
    whole = jnp.linalg.norm(jnp.arange(3))
    assert whole.dtype == np.float32 and float(whole) == pytest.approx(5 ** 0.5, rel=1e-6)


def test_spectral_norm_of_bfloat16_needs_a_lapack_kernel():
    with pytest.raises(TypeError, match="svd: LAPACK has no bfloat16 kernels"):
        jnp.linalg.norm(jnp.ones((2, 2), jnp.bfloat16), ord=2)
