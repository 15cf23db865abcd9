"""Traced values are weakly referable, as JAX's tracers and arrays are: TFP's bijectors
(and so distrax's Chain under jit) cache the results of forward and inverse in a table
keyed by weak references to their inputs and outputs (by identity: traced values are
not hashable, as in JAX)."""
import weakref

import numpy as np

import spmdc
import spmdc.numpy as jnp


def test_a_weak_reference_to_a_traced_value():
    cache = {}

    def forward(x):
        y = jnp.sin(x) + 1.0
        ref = weakref.ref(y)
        cache[id(y)] = (ref, x)            # y -> x by identity, as TFP's bijector cache
        assert cache[id(y)][0]() is y
        return y

    np.testing.assert_allclose(spmdc.jit(forward)(jnp.zeros(3)), np.ones(3))
    np.testing.assert_allclose(spmdc.vmap(forward)(jnp.zeros(3)), np.ones(3))
    assert spmdc.grad(lambda x: forward(x).sum())(jnp.zeros(3)).tolist() == [1.0] * 3
    assert weakref.ref(jnp.ones(2))() is not None          # Arrays too
