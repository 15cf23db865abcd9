"""eval_shape (spmdc/transforms/eval_shape.py): shapes and dtypes without running, from
ShapeDtypeStructs."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp


def test_eval_shape_runs_nothing_and_takes_structs():
    calls = []

    def f(x, y):
        calls.append(1)
        return {"s": x.sum(0), "p": x @ y}
    out = spmdc.eval_shape(f, spmdc.ShapeDtypeStruct((3, 4), np.float32), jnp.ones((4, 2)))
    assert out["s"] == spmdc.ShapeDtypeStruct((4,), np.float32)
    assert out["p"].shape == (3, 2) and out["p"].dtype == np.float32
    huge = spmdc.eval_shape(lambda x: x * 2, spmdc.ShapeDtypeStruct((1 << 20, 1 << 12), "f4"))
    assert huge.shape == (1 << 20, 1 << 12)      # 16 GiB: never allocated
    with pytest.raises(ValueError, match="negative"):
        spmdc.ShapeDtypeStruct((-1,), np.float32)


def test_a_shape_dtype_struct_output_is_returned_as_it_is():
    # Lineax's structure_equal: eval_shape(lambda: struct); JAX returns the struct
    s = spmdc.ShapeDtypeStruct((2,), np.float32)
    out = spmdc.eval_shape(lambda: (s, jnp.zeros((3,), np.int32)))
    assert out[0] == s
    assert out[1].shape == (3,) and out[1].dtype == np.int32


def test_a_typed_key_output_is_the_keys_struct():
    # As JAX: eval_shape of a function returning typed keys gives ShapeDtypeStruct(shape,
    # key<fry>) (Flax nnx's eval_shape of a module holding Rngs); spmdc gave a key array
    # around the struct of its data, and ShapeDtypeStruct refused the key dtype.
    key = spmdc.random.key(0)
    out = spmdc.eval_shape(lambda: {"k": spmdc.random.split(key, 3), "x": 1.0})
    assert out["k"] == spmdc.ShapeDtypeStruct((3,), key.dtype)
    assert repr(out["k"]) == "ShapeDtypeStruct(shape=(3,), dtype=key<fry>)"
    assert out["x"] == spmdc.ShapeDtypeStruct((), np.float32, weak_type=True)
    # a struct of key dtype as an argument stands for keys, as in JAX
    struct = spmdc.ShapeDtypeStruct((), key.dtype)
    assert spmdc.eval_shape(lambda k: k, struct) == struct
