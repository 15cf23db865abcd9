"""``numpy_dtype_promotion`` (config ``jax_numpy_dtype_promotion``; Note [strict
promotion] in spmdc/core/dtypes.py): each case gives what JAX 0.10.2 gives in each mode
(recorded below: the result dtype, or TypePromotionError)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.dtypes import TypePromotionError


def _jitted_add():
    return spmdc.jit(lambda a, b: a + b)


_ADD = _jitted_add()
_PMAP_ADD = spmdc.pmap(lambda a, b: a + b)

# name: (program, JAX's result under 'strict', under 'standard'); E: TypePromotionError
E = TypePromotionError
CASES = {
    "f32+f32": (lambda: jnp.ones(2, "float32") + jnp.ones(2, "float32"), "float32", "float32"),
    "f32+1.0": (lambda: jnp.ones(2, "float32") + 1.0, "float32", "float32"),
    "i32+1.0": (lambda: jnp.ones(2, "int32") + 1.0, E, "float32"),
    "i32+1": (lambda: jnp.ones(2, "int32") + 1, "int32", "int32"),
    "f32+i32": (lambda: jnp.ones(2, "float32") + jnp.ones(2, "int32"), E, "float32"),
    "f32+bf16": (lambda: jnp.ones(2, "float32") + jnp.ones(2, "bfloat16"), E, "float32"),
    "i8+i32": (lambda: jnp.ones(2, "int8") + jnp.ones(2, "int32"), E, "int32"),
    "f32+np f32": (lambda: jnp.ones(2, "float32") + np.ones(2, "float32"), "float32",
                   "float32"),
    "promote_types": (lambda: jnp.promote_types(jnp.float32, jnp.int32), E, "float32"),
    "jit f32+i32": (lambda: _jitted_add()(jnp.ones(2), jnp.ones(2, "int32")), E, "float32"),
    "where": (lambda: jnp.where(True, jnp.ones(2), jnp.ones(2, "int32")), E, "float32"),
    "concatenate": (lambda: jnp.concatenate([jnp.ones(2), jnp.ones(2, "int32")]), E,
                    "float32"),
    "asarray": (lambda: jnp.asarray([1, 2.0]), "float32", "float32"),
    "lax.add": (lambda: lax.add(jnp.ones(2, "float32"), 1.0), "float32", "float32"),
    "bool+i32": (lambda: jnp.ones(2, bool) + jnp.ones(2, "int32"), E, "int32"),
    "i32+True": (lambda: jnp.ones(2, "int32") + True, E, "int32"),
    "c64+1j": (lambda: jnp.ones(2, "complex64") + 1j, "complex64", "complex64"),
    "f32+1j": (lambda: jnp.ones(2, "float32") + 1j, E, "complex64"),
    "1+2.0": (lambda: jnp.add(1, 2.0), "float32", "float32"),
    # compiled and granted to the C++ dispatcher under 'standard' first
    "cached jit": (lambda: _ADD(jnp.ones(2), jnp.ones(2, "int32")), E, "float32"),
    "cached pmap": (lambda: _PMAP_ADD(jnp.ones((1, 2)), jnp.ones((1, 2), "int32")), E,
                    "float32"),
}


@pytest.mark.parametrize("mode", ["strict", "standard"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_promotion_as_jax(name, mode):
    program, strict, standard = CASES[name]
    for _ in range(2):                # standard: compiled, then cached (C++ dispatch)
        _ADD(jnp.ones(2), jnp.ones(2, "int32"))
        _PMAP_ADD(jnp.ones((1, 2)), jnp.ones((1, 2), "int32"))
    expected = strict if mode == "strict" else standard
    with spmdc.numpy_dtype_promotion(mode):
        assert spmdc.config.jax_numpy_dtype_promotion == mode
        if expected is E:
            with pytest.raises(TypePromotionError, match="no available implicit dtype "
                                                         "promotion path"):
                program()
        else:
            out = program()
            assert getattr(out, "dtype", out) == np.dtype(expected)
    assert spmdc.config.jax_numpy_dtype_promotion == "standard"


def test_the_message_names_the_dtypes_and_the_way_out():
    with spmdc.numpy_dtype_promotion("strict"), pytest.raises(TypePromotionError) as info:
        jnp.ones(2, "int32") + 1.0
    message = str(info.value)
    assert "'int32'" in message and "<class 'float'>" in message
    assert "set jax_numpy_dtype_promotion=standard" in message
    assert isinstance(info.value, ValueError)


def test_config_update_and_bad_modes():
    spmdc.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        with pytest.raises(TypePromotionError):
            jnp.ones(2) + jnp.ones(2, "int32")
    finally:
        spmdc.config.update("jax_numpy_dtype_promotion", "standard")
    assert (jnp.ones(2) + jnp.ones(2, "int32")).dtype == np.float32
    with pytest.raises(ValueError, match="takes 'standard' or 'strict'"):
        with spmdc.numpy_dtype_promotion("foo"):
            pass
    assert spmdc.config.jax_numpy_dtype_promotion == "standard"
