"""spmdc.experimental.checkify (Note [checkify's checks]): user checks recorded by
checkify eagerly and under jit, the first failure reported, eager checks raising, and
the errors JAX raises (messages and types as JAX 0.10.2 gives them), as chex's
``chexify`` and value assertions use them."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.experimental import checkify
from spmdc.tree_util import tree_leaves


def _positive_and_small(x):
    checkify.check(x > 0, "x must be positive, got {x}", x=x)
    checkify.check(x < 10, "second {}", x)
    return x * 2


def test_eager_checkify_reports_the_first_failure():
    err, out = checkify.checkify(_positive_and_small)(jnp.float32(-1.0))
    assert err.get() == "x must be positive, got -1.0 (`check` failed)"
    assert float(out) == -2.0
    with pytest.raises(checkify.JaxRuntimeError, match="x must be positive, got -1.0"):
        err.throw()


def test_jit_of_checkify_returns_the_error_as_outputs():
    err, out = spmdc.jit(checkify.checkify(_positive_and_small))(jnp.float32(11.0))
    assert err.get() == "second 11.0 (`check` failed)"
    assert repr(err) == "Error(second 11.0 (`check` failed))"
    assert float(out) == 22.0
    err, out = spmdc.jit(checkify.checkify(_positive_and_small))(jnp.float32(1.0))
    assert err.get() is None and repr(err) == "Error(None)"
    assert [bool(np.asarray(leaf)) for leaf in tree_leaves(err)[:2]] == [False, False]


def test_check_error_raises_concrete_errors_and_rechecks_traced_ones():
    err, _ = checkify.checkify(_positive_and_small)(jnp.float32(-3.0))
    with pytest.raises(checkify.JaxRuntimeError, match="got -3.0"):
        checkify.check_error(err)

    def outer(x):
        inner_err, y = checkify.checkify(_positive_and_small)(x)
        checkify.check_error(inner_err)
        return y

    err, out = spmdc.jit(checkify.checkify(outer))(jnp.float32(12.0))
    assert err.get() == "second 12.0 (`check` failed)" and float(out) == 24.0


def test_check_outside_checkify():
    checkify.check(jnp.float32(1.0) > 0, "fine")
    with pytest.raises(checkify.JaxRuntimeError, match=r"^bad 2.0 \(`check` failed\)$"):
        checkify.check(jnp.float32(2.0) < 0, "bad {}", jnp.float32(2.0))
    with pytest.raises(ValueError, match="Cannot abstractly evaluate a checkify.check "
                                         "which was not functionalized"):
        spmdc.jit(_positive_and_small)(1.0)


def test_check_inside_a_nested_jit_names_the_fix():
    with pytest.raises(ValueError, match=r"jax.jit\(checkify.checkify\(f\)\)"):
        checkify.checkify(spmdc.jit(_positive_and_small))(jnp.float32(1.0))


def test_bad_arguments():
    with pytest.raises(TypeError, match="Formatting arguments to checkify.check need to "
                                        "be PyTrees of arrays, but got 3"):
        checkify.check(jnp.float32(1.0) < 0, "eager {}", 3)
    with pytest.raises(TypeError, match="check takes a scalar pred as argument"):
        checkify.check(jnp.ones(2) < 0, "eager")
    with pytest.raises(ValueError, match="user checks only.*NaNError"):
        checkify.checkify(_positive_and_small, errors=checkify.nan_checks)


def test_error_categories_compose_as_jax():
    assert checkify.user_checks == frozenset({checkify.FailedCheckError})
    assert checkify.float_checks == checkify.nan_checks | checkify.div_checks
    assert checkify.all_checks == (checkify.automatic_checks | checkify.user_checks)
    assert len(checkify.all_checks) == 4
