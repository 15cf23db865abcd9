"""Shapes that do not broadcast: the broadcasting functions (lax/jnp.broadcast_shapes,
jnp.broadcast_to, jnp.broadcast_arrays) raise ValueError, an operation given such
operands raises TypeError, as in JAX 0.10.2 (Optax's tests expect the ValueError of
lax.broadcast_shapes)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc.numpy as jnp
from spmdc import lax


@pytest.mark.parametrize("call", [
    lambda: lax.broadcast_shapes((2,), (3,)),
    lambda: jnp.broadcast_shapes((2, 3), (3, 2)),
    lambda: jnp.broadcast_to(jnp.ones(2), (3,)),
    lambda: jnp.broadcast_arrays(jnp.ones((2, 4)), jnp.ones((3, 4))),
])
def test_broadcasting_functions_raise_value_error(call):
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        call()


def test_an_operation_on_shapes_that_do_not_broadcast_raises_type_error():
    with pytest.raises(TypeError, match=r"add: incompatible shapes .* \(2,\), \(3,\)"):
        jnp.ones(2) + jnp.ones(3)
    assert lax.broadcast_shapes((2, 1), (1, 3)) == (2, 3)
    np.testing.assert_array_equal(jnp.broadcast_to(jnp.arange(2), (3, 2)), [[0, 1]] * 3)
