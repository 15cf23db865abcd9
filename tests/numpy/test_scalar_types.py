"""jnp's scalar types are JAX's (Note [jnp scalar types] in spmdc/numpy/scalar_types.py):
``.dtype``, calling one makes an spmdc array (also of a traced value), and they compare,
hash and convert as NumPy's types. ``jnp.result_type`` takes dtypes among its arguments."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.core.abstract import ShapedArray
from spmdc.runtime.array import Array


def test_scalar_types_have_dtype():
    assert jnp.bool_.dtype == np.dtype(bool)
    assert jnp.float32.dtype == np.dtype("float32")
    assert jnp.bfloat16.dtype == np.dtype(jnp.bfloat16)
    assert ShapedArray((), jnp.bool_.dtype).dtype == np.bool_     # Equinox's abstract eval
    assert jnp.single is jnp.float32 and jnp.double is jnp.float64 and jnp.bool is jnp.bool_


def test_calling_a_scalar_type_makes_an_array():
    x = jnp.float32(3)
    assert isinstance(x, Array) and x.dtype == np.float32 and x.shape == ()
    out = spmdc.jit(lambda v: jnp.int32(v) * 2)(np.float32(2.7))
    assert int(out) == 4 and out.dtype == np.int32
    np.testing.assert_allclose(np.asarray(jnp.float16([1.5, 2.5])), [1.5, 2.5])


def test_they_compare_hash_and_convert_as_numpy_types():
    assert jnp.float32 == np.float32 and np.float32 == jnp.float32
    assert jnp.float32 != np.float64
    assert {np.float32: "f"}[jnp.float32] == "f"
    assert np.dtype(jnp.int8) == np.int8
    assert np.zeros(2, jnp.float16).dtype == np.float16
    assert isinstance(np.float32(1), jnp.float32) and not isinstance(1.0, jnp.float32)
    assert jnp.zeros(2, jnp.int32).dtype == np.int32
    assert jnp.arange(3).astype(jnp.bool_).dtype == np.bool_
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert jnp.finfo(jnp.float32).eps == np.finfo(np.float32).eps


def test_a_scalar_type_is_not_an_array():
    with pytest.raises(TypeError):
        jnp.asarray(jnp.float32) + 1


def test_result_type_takes_dtypes():
    # recorded from JAX 0.10.2
    assert jnp.result_type(jnp.ones(2), np.dtype("float16")) == np.float32
    assert jnp.result_type(jnp.ones(2, jnp.float16), np.float32) == np.float32
    assert jnp.result_type(jnp.ones(2, jnp.float16), 2.0) == np.float16
    assert jnp.result_type(jnp.int32, "float16") == np.float16
    out = spmdc.vmap(lambda y: y.astype(jnp.result_type(y, np.dtype("float32"))))(
        jnp.ones((2, 2), jnp.float16))
    assert out.dtype == np.float32
