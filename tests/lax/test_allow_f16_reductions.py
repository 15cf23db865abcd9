"""jax.allow_f16_reductions (JAX's jax_allow_f16_reductions): when False, lax.reduce_sum
of float16/bfloat16 over a dimension longer than 1 is JAX's ValueError (jnp.sum, which
sums in float32, is not affected); the option is part of jit's key."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def test_off_refuses_half_precision_sums_as_jax():
    f = spmdc.jit(lambda x: lax.reduce_sum(x, (0,)))
    with spmdc.allow_f16_reductions(False):
        assert float(spmdc.jit(jnp.sum)(np.ones(3, np.float16))) == 3.0
        with pytest.raises(ValueError, match=r"reduce_sum on operand f16\[3\] is not allowed "
                                             "when jax_allow_f16_reductions=False."):
            lax.reduce_sum(np.ones(3, np.float16), (0,))
        assert lax.reduce_sum(np.ones((3, 1), np.float16), (1,)).tolist() == [1, 1, 1]
        with pytest.raises(ValueError, match=r"operand bf16\[2,3\]"):
            f(np.ones((2, 3), jnp.bfloat16))
    assert f(np.ones((2, 3), jnp.bfloat16)).tolist() == [2, 2, 2]      # traced again
    assert spmdc.allow_f16_reductions.value is True
