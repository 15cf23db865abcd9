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


def test_copy_has_new_buffers():
    # As JAX's: a copy is a new array, so donating it leaves the original (Flax nnx's
    # clone(arrays=True) then jit with donate_argnums).
    import spmdc
    x = jnp.arange(3.0)
    c, m = jnp.copy(x), x.copy()
    assert c is not x and m is not x
    spmdc.jit(lambda v: v + 1, donate_argnums=0)(c)
    assert c.is_deleted() and not x.is_deleted()
    np.testing.assert_array_equal(np.asarray(x), [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(m), [0.0, 1.0, 2.0])
    assert str(spmdc.typeof(jnp.copy(jnp.asarray(2.0)))) == "~float32[]"


def test_promote_types_takes_python_types_as_weak():
    # JAX 0.10.2: float16 with float is float16, float8 with float is float8, int8 with int
    # is int8 (Python's types are weak, as their values are).
    assert jnp.promote_types(jnp.float16, float) == np.float16
    assert jnp.promote_types(jnp.float8_e4m3fn, float) == jnp.float8_e4m3fn
    assert jnp.promote_types(int, jnp.int8) == np.int8
