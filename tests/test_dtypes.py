"""spmdc.dtypes' extended dtypes and TypePromotionError (Note [extended dtypes] in
spmdc/dtypes.py), against JAX 0.10.2's answers, and ``jax._src.dtypes`` under the alias
as Flax's fp8 ops and Equinox read it."""
from __future__ import annotations

import dataclasses
import textwrap

import alias_programs
import numpy as np
import pytest

import spmdc.numpy as jnp
from spmdc import dtypes, errors, random


def test_key_dtypes_are_extended_prng_keys():
    key_dtype = random.key(0).dtype
    # JAX 0.10.2: issubdtype(key.dtype, extended), (..., prng_key), (float32, extended),
    # (key.dtype, floating)
    assert [dtypes.issubdtype(key_dtype, dtypes.extended),
            dtypes.issubdtype(key_dtype, dtypes.prng_key),
            dtypes.issubdtype(jnp.float32, dtypes.extended),
            dtypes.issubdtype(key_dtype, jnp.floating)] == [True, True, False, False]
    assert isinstance(key_dtype, dtypes.ExtendedDType) and key_dtype.type is dtypes.prng_key
    assert dtypes.issubdtype(key_dtype, key_dtype)
    assert dtypes.issubdtype(dtypes.bfloat16, np.floating)       # plain dtypes as before


def test_jnp_issubdtype_is_jax_dtypes_one():
    # Flax's nnx.Rngs checks jnp.issubdtype(key.dtype, jax.dtypes.prng_key) (JAX: True).
    key_dtype = random.key(0).dtype
    assert jnp.issubdtype(key_dtype, dtypes.prng_key)
    assert [jnp.issubdtype(key_dtype, jnp.floating), jnp.issubdtype(jnp.float32, jnp.floating),
            jnp.issubdtype(dtypes.bfloat16, jnp.inexact)] == [False, True, True]


def test_canonicalize_dtype_takes_an_extended_dtype_only_when_allowed():
    key_dtype = random.key(0).dtype
    with pytest.raises(ValueError, match="allow_extended_dtype=True"):
        dtypes.canonicalize_dtype(key_dtype)
    assert dtypes.canonicalize_dtype(key_dtype, allow_extended_dtype=True) is key_dtype
    assert dtypes.canonicalize_dtype(np.int64) == np.int32


def test_a_library_defines_its_own_extended_dtype():
    # Flax's linen/fp8_ops.py at import
    class fp8_meta_dtype(dtypes.extended):      # noqa: N801
        pass

    @dataclasses.dataclass(frozen=True)
    class Wrapper(dtypes.ExtendedDType):
        float_dtype: np.dtype
        _rules: type = None
        type: type = fp8_meta_dtype

    meta = Wrapper(np.dtype(np.float32))
    assert dtypes.issubdtype(meta, fp8_meta_dtype) and dtypes.issubdtype(meta, dtypes.extended)
    assert not dtypes.issubdtype(meta, dtypes.prng_key)
    assert not dtypes.issubdtype(np.float32, fp8_meta_dtype)
    with pytest.raises(TypeError):               # abstract: ``type`` must be given
        dtypes.ExtendedDType()


def test_type_promotion_error_is_jaxs_value_error():
    assert dtypes.TypePromotionError is errors.TypePromotionError
    assert issubclass(dtypes.TypePromotionError, ValueError)


ALIAS_PROGRAM = alias_programs.register("private_dtypes", textwrap.dedent("""
    import sys, spmdc
    sys.modules['jax'] = spmdc
    from jax._src import dtypes
    from jax._src.dtypes import TypePromotionError
    import jax
    class fp8_meta_dtype(dtypes.extended): pass
    print(dtypes.DType is __import__('numpy').dtype,
          TypePromotionError is jax.dtypes.TypePromotionError,
          dtypes.ExtendedDType is jax.dtypes.ExtendedDType)
    """))


def test_private_dtypes_resolve_under_the_jax_alias():
    out = alias_programs.run(ALIAS_PROGRAM)      # one child for the alias programs
    assert out.stdout.split() == ["True", "True", "True"], out.stderr
