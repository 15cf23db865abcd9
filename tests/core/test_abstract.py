"""spmdc/core/abstract.py: typeof, the abstract value of a value, traced or not."""
from __future__ import annotations

import numpy as np

import spmdc
import spmdc.numpy as jnp


def test_typeof():
    assert str(spmdc.typeof(jnp.ones((2, 3)))) == "float32[2,3]"
    assert str(spmdc.typeof(1.0)) == "~float32[]"
    assert spmdc.typeof(np.int32(1)).dtype == np.int32
    seen = []
    spmdc.jit(lambda x: seen.append(spmdc.typeof(x)) or x)(jnp.ones(4))
    assert seen[0].shape == (4,) and seen[0].dtype == np.float32


def test_typeof_a_typed_key_array_is_its_key_dtype():
    # JAX 0.10.2: typeof(split(key(0))) is ShapedArray(key<fry>[2]), also under jit, and
    # its tangent type is float0 (Flax's nnx asks typeof of every Variable's value).
    keys = spmdc.random.split(spmdc.random.key(0))
    aval = spmdc.typeof(keys)
    assert repr(aval) == "ShapedArray(key<fry>[2])" and aval.shape == (2,)
    assert spmdc.dtypes.issubdtype(aval.dtype, spmdc.dtypes.prng_key)
    assert aval.to_tangent_aval().dtype == spmdc.dtypes.float0
    seen = []
    spmdc.jit(lambda k: seen.append(spmdc.typeof(k)) or k)(keys)
    assert seen == [aval]


def test_an_array_type_is_its_own_lo_type():
    # the hi-type protocol on arrays, as JAX's ShapedArray (Flax's hijax Variable lowers
    # and raises its array leaves through it)
    from spmdc.core.abstract import ShapedArray
    a = ShapedArray((2, 3), np.float32, weak_type=True)
    x = np.ones((2, 3), np.float32)
    assert a.lo_ty() == [a] and a.lower_val(x)[0] is x and a.raise_val(x) is x
    assert a.normalize() == ShapedArray((2, 3), np.float32)
