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
