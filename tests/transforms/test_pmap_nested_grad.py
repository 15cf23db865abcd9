"""Reverse mode through nested pmaps (Note [nested pmap] in transforms/pmap_nested.py).

Every case is written once against a ``mapper`` and run twice: with pmap on a device mesh
and with vmap(axis_name=...), which gives the reference semantics of a nested map. The
two must agree, for every shape of nested pmap: mapped and broadcast inputs, mapped and
unmapped outputs, other in/out axes, collectives in the body over either axis, values
closed over, value_and_grad, several argnums, grad inside the inner body, three levels.
"""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

pytestmark = pytest.mark.devices(8)      # its nested pmaps map a 2 x 4 mesh


def P(f, name, in_axes=0, out_axes=0):
    return spmdc.pmap(f, name, in_axes=in_axes, out_axes=out_axes)


def V(f, name, in_axes=0, out_axes=0):
    return spmdc.vmap(f, in_axes=in_axes, out_axes=out_axes, axis_name=name)


RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 4, 3)).astype(np.float32)       # mapped over 'i' then 'j'
W = RNG.normal(size=(2, 3)).astype(np.float32)          # mapped over 'i' only


def _inner_double(m):
    return m(spmdc.grad(lambda x: m(lambda y: 2 * y, "j")(x).sum()), "i")


def _mapped_and_broadcast(m):
    def loss(x, w):
        return m(lambda y, v: jnp.sin(y) * v, "j", in_axes=(0, None))(x, w).sum()
    return m(spmdc.grad(loss, argnums=(0, 1)), "i")


def _unmapped_output(m):
    def loss(x, w):
        mean = m(lambda y: lax.pmean(jnp.tanh(y), "j"), "j", out_axes=None)(x)
        same = m(lambda y: w * 3.0, "j", out_axes=None)(x)     # from the broadcast input
        return (mean * w).sum() + (same ** 2).sum()
    return m(spmdc.grad(loss, argnums=(0, 1)), "i")


def _collectives_in_body(m):
    def body(y):
        return (lax.psum(y ** 2, "j") + lax.psum(y, "i") * 0.5 + lax.pmax(y, "j")
                + lax.psum(jnp.cos(y), ("i", "j")) + lax.all_gather(y, "j").sum(0) * y
                + lax.ppermute(y, "j", [(k, (k + 1) % 4) for k in range(4)])
                + y * lax.axis_index("j"))
    return m(spmdc.grad(lambda x: (m(body, "j")(x) * jnp.arange(3.0)).sum()), "i")


def _value_and_grad(m):
    def loss(x, w):
        return (m(lambda y: jnp.exp(y * 0.3), "j")(x) @ w).sum()
    return m(spmdc.value_and_grad(loss, argnums=(0, 1)), "i")


def _closed_over(m):
    def loss(x, w):
        scale = jnp.sum(w ** 2)                  # an outer value used inside the body
        return m(lambda y: jnp.sin(y * scale) * w, "j")(x).sum()
    return m(spmdc.grad(loss, argnums=(0, 1)), "i")


def _other_axes(m):
    def loss(x):                                # x: (4, 3); 'j' maps its axis 1, size 3
        z = m(lambda c: c * c.sum(), "j", in_axes=1, out_axes=1)(x)   # (4, 3) again
        return (z * jnp.arange(12.0).reshape(4, 3)).sum()
    return m(spmdc.grad(loss), "i")


def _grad_inside_inner(m):
    def outer(x):
        return m(spmdc.grad(lambda y: lax.psum(jnp.sin(y).sum(), "j")), "j")(x)
    return m(outer, "i")


def _grad_of_the_result_of_inner(m):
    def loss(x):
        z = m(lambda y: jnp.tanh(y) * lax.axis_index("j"), "j")(x)
        return jnp.sum(z[1] * z[3]) + jnp.sum(x[2] ** 3)    # outer code after and around it
    return m(spmdc.jit(spmdc.grad(loss)), "i")


CASES = [_inner_double, _mapped_and_broadcast, _unmapped_output, _collectives_in_body,
         _value_and_grad, _closed_over, _other_axes, _grad_inside_inner,
         _grad_of_the_result_of_inner]


def _args(case):
    if case in (_mapped_and_broadcast, _unmapped_output, _value_and_grad, _closed_over):
        return X, W
    return (X,)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.strip("_"))
def test_grad_of_nested_pmap_matches_nested_vmap(case):
    args = _args(case)
    got = spmdc.tree_util.tree_leaves(case(P)(*args))
    want = spmdc.tree_util.tree_leaves(case(V)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


def test_the_issue_example_gives_two_everywhere():
    got = _inner_double(P)(np.arange(8.0, dtype=np.float32).reshape(2, 4))
    np.testing.assert_array_equal(np.asarray(got), np.full((2, 4), 2.0))


def test_three_levels_of_pmap():
    def case(m):
        def loss(x):
            def middle(y):
                return m(lambda z: jnp.sin(z) * lax.axis_index("k"), "k")(y) * 2.0
            return (m(middle, "j")(x) ** 2).sum()
        return m(spmdc.grad(loss), "i")
    x = RNG.normal(size=(2, 2, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(case(P)(x)), np.asarray(case(V)(x)), rtol=2e-5,
                               atol=2e-5)
