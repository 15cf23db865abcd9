"""Gradients at zeros, ties and kinks against JAX 0.10.2's (recorded, see grad_cases.py).

These are the places where a formula that is right almost everywhere gives a silently
wrong number: grad(jnp.prod) as prod / x is NaN at a zero (Note [products without
division]), |x| has slope 1 at 0 in JAX, and x.at[i].min/max share the cotangent among
the contributors equal to the result. jacrev, jacobian and hessian take and give pytrees
with JAX's structure (output, then argument; has_aux; argnums tuples).
"""
from __future__ import annotations

import numpy as np
import oracle
import pytest
from grad_cases import cases

import spmdc
import spmdc.numpy as jnp
from spmdc.compiler.primitives.core import registry
from spmdc.core.tracing import bind

REFERENCE = oracle.recorded_cases("grad_reference.json")


def _cumprod(x, axis, reverse):
    x = jnp.asarray(x)
    return bind(registry["cumprod"], x, axis=axis, reverse=reverse, weak=x.weak)


CASES = cases(spmdc, jnp, _cumprod)


def test_every_case_has_a_reference():
    assert sorted(CASES) == sorted(REFERENCE)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_jax(name):
    fun, args = CASES[name]
    oracle.assert_matches_recorded_real(spmdc.tree_util.tree_leaves(fun(*args)),
                                        REFERENCE[name], name, rtol=1e-5, atol=1e-6)


def _shapes(tree):
    return spmdc.tree_util.tree_map(lambda leaf: tuple(np.shape(leaf)), tree)


def test_jacobian_pytree_structure_is_jax_s():
    x, y = np.ones(2, np.float32), np.ones(3, np.float32)
    jac = spmdc.jacrev(lambda a, b: {"p": a * b[0], "q": (a.sum(), b)}, argnums=(0, 1))(x, y)
    assert _shapes(jac) == {"p": ((2, 2), (2, 3)), "q": (((2,), (3,)), ((3, 2), (3, 3)))}
    tree = {"a": np.ones(2, np.float32), "b": np.ones((2, 2), np.float32)}
    jac = spmdc.jacobian(lambda d: [d["a"] ** 2, d["b"].sum()])(tree)
    assert _shapes(jac) == [{"a": (2, 2), "b": (2, 2, 2)}, {"a": (2,), "b": (2, 2)}]
    hess = spmdc.hessian(lambda d: (d["a"] ** 2).sum() * d["b"].sum())(tree)
    assert _shapes(hess) == {"a": {"a": (2, 2), "b": (2, 2, 2)},
                             "b": {"a": (2, 2, 2), "b": (2, 2, 2, 2)}}
    jac, aux = spmdc.jacrev(lambda a: (a ** 2, {"s": a.sum()}), has_aux=True)(x)
    assert _shapes(jac) == (2, 2) and float(aux["s"]) == 2.0
    hess, aux = spmdc.hessian(lambda a: ((a ** 3).sum(), a * 2.0), has_aux=True)(x)
    assert _shapes(hess) == (2, 2)
    np.testing.assert_array_equal(np.asarray(aux), [2.0, 2.0])
    # under jit and vmap too
    jitted = spmdc.jit(spmdc.jacrev(lambda a, b: (a * b, b.sum()), argnums=(0, 1)))(x, x)
    assert _shapes(jitted) == (((2, 2), (2, 2)), ((2,), (2,)))
    batched = spmdc.vmap(spmdc.jacrev(lambda d: d["a"] * d["b"][0]))(
        {"a": np.ones((4, 2), np.float32), "b": np.ones((4, 2, 2), np.float32)})
    assert _shapes(batched) == {"a": (4, 2, 2), "b": (4, 2, 2, 2)}


@pytest.mark.parametrize("make", [spmdc.jacrev, spmdc.jacobian, spmdc.hessian])
def test_jacobian_of_an_integer_input_raises_like_jax(make):
    # hessian is jacfwd(jacrev(f)) and says jacfwd, as in JAX
    message = "jacfwd requires real-valued" if make is spmdc.hessian else \
        "jacrev requires real- or complex-valued inputs"
    with pytest.raises(TypeError, match=f"{message}.*got int32"):
        make(lambda v: v * 2)(np.ones(2, np.int32))
    with pytest.raises(TypeError, match=r"got int32.*test_grad_reference.py"):
        make(lambda a, b: a * b, argnums=(0, 1))(np.ones(2, np.float32),
                                                   np.ones(2, np.int32))
    np.testing.assert_array_equal(np.asarray(spmdc.jacrev(lambda v: v * 2)(np.ones(2))),
                                  2 * np.eye(2))


def test_jacrev_of_an_integer_output_raises_like_jax():
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs.*got int32"):
        spmdc.jacrev(lambda v: (v * 2).astype(jnp.int32))(np.ones(2, np.float32))
