"""Every Array method works the same on traced values (inside jit and vmap) as on
concrete ones: x.var() and x.trace() used to fail on Tracers, whose own attributes
shadowed them."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.numpy.array_methods import METHODS

# Arguments for each method (beyond self), on a (3, 4) float32 operand.
ARGS = {
    "sum": [(), (0,)], "mean": [(), (1,)], "max": [(), (0,)], "min": [(), (1,)],
    "prod": [()], "argmax": [(), (1,)], "argmin": [(0,)], "all": [()], "any": [()],
    "var": [(), (0,)], "std": [()], "ravel": [()], "squeeze": [()],
    "clip": [(0.5, 2.0)], "dot": [(np.ones((4, 2), np.float32),)], "cumsum": [(1,)],
    "cumprod": [(0,)], "round": [(), (1,)], "swapaxes": [(0, 1)], "repeat": [(2, 0)],
    "take": [(np.array([0, 2, 7]),)], "trace": [(), (1,)], "sort": [(), (0,)],
    "argsort": [()],
}


def test_every_method_has_a_case():
    assert set(METHODS) == set(ARGS)


@pytest.mark.parametrize("name", sorted(ARGS))
def test_method_on_tracers_matches_concrete(name):
    x = (np.arange(12, dtype=np.float32).reshape(3, 4) % 5) * 0.75 - 1.0
    for args in ARGS[name]:
        concrete = getattr(jnp.asarray(x), name)(*args)
        traced = spmdc.jit(lambda v, name=name, args=args: getattr(v, name)(*args))(x)
        np.testing.assert_allclose(np.asarray(traced), np.asarray(concrete), rtol=1e-6,
                                   err_msg=f"x.{name}{args}")
        assert traced.dtype == concrete.dtype and traced.shape == concrete.shape
        batched = spmdc.vmap(lambda v, name=name, args=args: getattr(v, name)(*args))(
            np.stack([x, x + 1]))
        np.testing.assert_allclose(np.asarray(batched[0]), np.asarray(concrete), rtol=1e-6,
                                   err_msg=f"vmap x.{name}{args}")


def test_properties_and_operators_on_tracers():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def f(v):
        return (v.T, v.mT, v.astype(np.int32), v.reshape(3, 2), v.reshape((6,), order="F"),
                v.transpose(), v.flatten(), -v, +v, abs(v), v @ v.T, v ** 2, 2 ** v, v % 4,
                v // 2, divmod(v, 4)[1], v.at[0].set(9.0), v.copy(), v.ndim, v.size)
    for traced, concrete in zip(spmdc.jit(f)(x), f(jnp.asarray(x)), strict=True):
        np.testing.assert_allclose(np.asarray(traced), np.asarray(concrete))


def test_divmod_with_the_array_on_either_side():
    # divmod(7, x) calls x.__rdivmod__ (Flax's Cursor forwards it); Python's answers.
    x = jnp.array([2, -3, 4])
    q, r = divmod(7, x)
    np.testing.assert_array_equal(q, [3, -3, 1])
    np.testing.assert_array_equal(r, [1, -2, 3])
    q, r = spmdc.jit(lambda v: divmod(7.5, v))(x)
    np.testing.assert_allclose(q, [3., -3., 1.])
    np.testing.assert_allclose(r, [1.5, -1.5, 3.5])
    q, r = divmod(x, 3)
    np.testing.assert_array_equal(q, [0, -1, 1])
    np.testing.assert_array_equal(r, [2, 0, 1])
    assert x.__rdivmod__("7") is NotImplemented
