"""``ensure_compile_time_eval`` (Note [compile-time evaluation] in spmdc/core/tracing.py):
inside jit, grad and vmap, operations on concrete values give Arrays the trace can read,
and operations on traced values stay traced, with JAX 0.10.2's results (recorded)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.core.tracing import Tracer

SEEN = []


def _f(x):
    with spmdc.ensure_compile_time_eval():
        y = jnp.sin(1.0)
        z = jnp.arange(3) * 2
        w = x + 1
        SEEN.append((type(y), type(z), type(w), float(y), z.tolist()))
        k = int(jnp.argmax(z))           # readable: the index is known while tracing
    return x[k] + y


@pytest.mark.parametrize("transform, expected", [
    # JAX: jit -> 2.841471; grad of sum -> [0, 0, 1]; vmap over rows of ones -> 1.841471
    (lambda: spmdc.jit(_f)(jnp.arange(3.0)), 2.841471),
    (lambda: spmdc.grad(lambda x: _f(x).sum())(jnp.arange(3.0)), [0.0, 0.0, 1.0]),
    (lambda: spmdc.vmap(_f)(jnp.ones((2, 3))), [1.841471, 1.841471]),
])
def test_concrete_operations_run_at_once(transform, expected):
    SEEN.clear()
    np.testing.assert_allclose(transform(), expected, rtol=1e-6)
    (y_type, z_type, w_type, y, z), = SEEN
    assert y_type is spmdc.Array and z_type is spmdc.Array and w_type is Tracer
    np.testing.assert_allclose(y, 0.8414709568023682)
    assert z == [0, 2, 4]


def test_outside_the_block_operations_are_traced():
    seen = []

    def g(x):
        seen.append(type(jnp.sin(1.0)))
        return x
    spmdc.jit(g)(1.0)
    assert seen == [Tracer]


def test_the_setting_is_restored_after_an_error():
    with pytest.raises(ValueError), spmdc.ensure_compile_time_eval():
        raise ValueError("boom")
    test_outside_the_block_operations_are_traced()
