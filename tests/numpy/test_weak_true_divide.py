"""Weak types through true division and the float functions of integers, as JAX 0.10.2
gives them (recorded with it): a weak float divided by a Python float stays weak (Optax's
schedules divide a traced weak step count), a weak int made float (``x / 2``,
``jnp.sin``, ``jnp.sqrt(2)``) is a weak float; a strong operand makes the result
strong."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

# (function, argument, JAX's result dtype and weak flag)
CASES = [
    (lambda a: a / 2.0, 2.0, ("float32", True)),
    (lambda a: 2.0 / a, 2.0, ("float32", True)),
    (lambda a: a / 2, 2.0, ("float32", True)),
    (lambda a: jnp.divide(a, 3.0), 2.0, ("float32", True)),
    (lambda a: a / jnp.float32(2), 2.0, ("float32", False)),
    (lambda a: a / 2.0, np.int32(2), ("float32", True)),
    (lambda a: a / 2, np.int32(2), ("float32", False)),
    (lambda a: a / 2, 3, ("float32", True)),
    (lambda a: a / 2.0, 3, ("float32", True)),
    (lambda a: jnp.sin(a), 3, ("float32", True)),
    (lambda a: a / 2.0, np.float16(3), ("float16", False)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_division_keeps_jax_weak_types_eagerly_and_under_jit(case):
    fn, arg, (dtype, weak) = CASES[case]
    seen = []

    def traced(a):
        out = fn(a)
        seen.append((out.dtype.name, bool(out.weak)))
        return out
    result = spmdc.jit(traced)(arg)
    assert seen == [(dtype, weak)]
    eager = fn(jnp.asarray(arg) if not isinstance(arg, (int, float)) else jnp.asarray(arg))
    assert (eager.dtype.name, bool(eager.weak)) == (dtype, weak)
    np.testing.assert_allclose(np.asarray(result), np.asarray(eager), rtol=1e-6)


def test_sqrt_of_a_python_int_is_a_weak_float():
    out = jnp.sqrt(2)
    assert out.dtype == np.float32 and out.weak
    np.testing.assert_allclose(out, np.sqrt(2.0), rtol=1e-7)
