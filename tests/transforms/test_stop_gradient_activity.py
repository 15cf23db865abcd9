"""What ``stop_gradient`` feeds is not differentiated (Note [activity]): a custom_jvp rule
applied to a stopped value is never called under a compiled grad, and one that refuses
to run does not break an eager grad (Optax's perturbations test asserts this); the
gradient is JAX 0.10.2's (x * f(stop_gradient(x)) with f the identity: 2 at 2)."""

import numpy as np

import spmdc
from spmdc import lax

calls = []


@spmdc.custom_jvp
def identity(x):
    return x


@identity.defjvp
def _identity_jvp(primals, tangents):
    calls.append(1)
    raise AssertionError("the rule of a function of a stopped value must not run")


def _loss(x):
    return identity(lax.stop_gradient(x)) * x


def test_rule_of_a_stopped_value_is_not_called():
    calls.clear()
    np.testing.assert_allclose(spmdc.jit(spmdc.grad(_loss))(2.0), 2.0)
    per_row = spmdc.jit(spmdc.grad(lambda x: spmdc.vmap(_loss)(x).sum()))
    np.testing.assert_allclose(per_row(np.arange(3.0, dtype=np.float32)), [0, 1, 2])
    assert calls == []
    np.testing.assert_allclose(spmdc.grad(_loss)(2.0), 2.0)     # eager
