"""spmdc.test_util.check_grads (spmdc/test_util.py): passes a correct rule, catches a wrong
one."""
from __future__ import annotations

import pytest

import spmdc
import spmdc.numpy as jnp


def test_check_grads_passes_and_catches_a_wrong_rule():
    from spmdc.test_util import check_grads
    check_grads(lambda x: jnp.sin(x) * x, (jnp.arange(3.0),), order=2)
    check_grads(lambda x, y: (x * y).sum(), (jnp.ones(3), jnp.arange(3.0)), order=1,
                modes=["rev"])

    @spmdc.custom_jvp
    def wrong(x):
        return jnp.sin(x)
    wrong.defjvp(lambda primals, tangents: (jnp.sin(primals[0]), 2.0 * tangents[0]))
    with pytest.raises(AssertionError, match="jvp"):
        check_grads(wrong, (jnp.arange(3.0),), order=1, modes=["fwd"])
    with pytest.raises(ValueError, match="modes"):
        check_grads(jnp.sin, (1.0,), order=1, modes=["sideways"])


def test_check_grads_takes_nan_where_finite_differences_are_nan():
    # As JAX's check (NumPy's assert_allclose, equal_nan=True): NumPyro's log1mexp, whose
    # higher derivatives at -80.5632 are NaN in float32 both ways, passes under JAX.
    from spmdc.test_util import check_grads

    @spmdc.custom_jvp
    def log1mexp(x):
        x = jnp.asarray(x)
        return jnp.where(x > -0.6931472, jnp.log(-jnp.expm1(x)), jnp.log1p(-jnp.exp(x)))
    log1mexp.defjvps(lambda t, ans, x: -t / jnp.expm1(-x))
    check_grads(log1mexp, (-80.5632,), order=3)
    check_grads(jnp.sqrt, (-1.0,), order=1)
