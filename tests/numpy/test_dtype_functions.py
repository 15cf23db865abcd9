"""spmdc/numpy/dtype_functions.py: astype, copy, promote_types,
can_cast, isrealobj, iscomplexobj, isscalar against NumPy."""
from __future__ import annotations

import numpy as np

import spmdc.numpy as jnp

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


def test_dtype_helpers():
    assert jnp.promote_types(np.int8, np.uint8) == np.int16
    assert jnp.promote_types(np.int32, np.float32) == np.float32      # JAX's lattice
    assert jnp.can_cast(np.int32, np.float64) and not jnp.can_cast(np.float32, np.int32)
    assert jnp.isscalar(3.0) and jnp.isscalar(jnp.asarray(1)) and not jnp.isscalar(np.ones(2))
    assert jnp.iscomplexobj(1j) and jnp.isrealobj(X)
    assert jnp.astype(X, jnp.int32).dtype == np.int32
    np.testing.assert_array_equal(jnp.copy(X), X)
