"""``weak_type`` on spmdc.Array and on tracers, JAX's name for the weak flag (Optax's
inject_hyperparams keeps a hyperparameter's dtype where ``x.weak_type`` is False and casts
it to the parameters' dtype where it is True): values as JAX 0.10.2 gives them."""

import numpy as np

import spmdc
import spmdc.numpy as jnp


def test_weak_type_on_arrays_and_tracers():
    assert jnp.asarray(0.9).weak_type is True
    assert jnp.asarray(0.9, dtype=jnp.float32).weak_type is False
    assert jnp.ones(2).weak_type is False
    seen = []

    def f(x, y):
        seen.extend([x.weak_type, y.weak_type, (x * 2).weak_type, (y * 2).weak_type])
        return x + y
    spmdc.jit(f)(jnp.asarray(0.9), np.float32(1))
    assert seen == [True, False, True, False]
