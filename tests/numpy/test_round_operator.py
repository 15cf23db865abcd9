"""Python's ``round(x, ndigits)`` of an spmdc array or tracer, as JAX 0.10.2 gives it
(recorded): ``jnp.round``, and with no ``ndigits`` an array of the default int (Optax's
clipping tests round arrays with it)."""
from __future__ import annotations

import numpy as np

import spmdc
import spmdc.numpy as jnp


def test_round_with_and_without_ndigits():
    out = round(jnp.float32(2.567), 1)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, 2.6, rtol=1e-6)
    whole = round(jnp.asarray(2.5))
    assert whole.dtype == np.int32 and int(whole) == 2          # half to even, as JAX
    traced = spmdc.jit(lambda x: round(x, 2))(1.2345)
    np.testing.assert_allclose(traced, 1.23, rtol=1e-6)
    np.testing.assert_array_equal(round(jnp.asarray([1.4, 2.6, -0.5])), [1, 3, 0])
