"""Shapes that do not broadcast: the broadcasting functions (lax/jnp.broadcast_shapes,
jnp.broadcast_to, jnp.broadcast_arrays, jnp.where, matmul's batch dimensions) raise
ValueError; an elementwise operation raises ValueError when its operands' non-scalar ranks
differ and TypeError when they are of one rank, as in JAX 0.10.2 (Optax's tests expect the
ValueError of lax.broadcast_shapes; Note [broadcast error classes] in core/operands.py)."""
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


# (call, JAX 0.10.2's class), recorded from JAX
@pytest.mark.parametrize("call, cls", [
    (lambda: jnp.ones((8, 3)) + np.ones(4), ValueError),          # ranks differ
    (lambda: jnp.power(jnp.ones((2, 3)), jnp.ones(4)), ValueError),
    (lambda: jnp.logaddexp(jnp.ones((2, 3)), jnp.ones(4)), ValueError),
    (lambda: jnp.ones((2, 3)) + jnp.ones((1, 4)), TypeError),    # one rank
    (lambda: jnp.arctan2(jnp.ones(2), jnp.ones(3)), TypeError),
    (lambda: jnp.where(jnp.ones(2) > 0, jnp.ones(3), 0), ValueError),
    (lambda: jnp.where(True, jnp.ones(2), jnp.ones(3)), ValueError),
    (lambda: jnp.matmul(jnp.ones((2, 3, 4)), jnp.ones((3, 4, 5))), ValueError),
])
def test_the_class_depends_on_how_jax_gets_there(call, cls):
    with pytest.raises(cls, match="ncompatible shapes") as info:
        call()
    assert type(info.value) is cls
