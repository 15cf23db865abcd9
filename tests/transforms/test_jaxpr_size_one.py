"""Binary lax operations stretch size-1 dimensions as JAX 0.10.2's do (``add a:f32[2,3]
b:f32[1,3]``), and the jaxpr view shows jnp's broadcasts of size-1 dimensions folded into
the operation that uses them, as JAX prints it (Note [size-1 dimensions of lax
operations] in core/operands.py). The printouts are JAX 0.10.2's for the same programs."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.transforms.jaxpr_view import jaxpr_as_fun

A = np.arange(6.0, dtype=np.float32).reshape(2, 3)
ROW = np.array([[1.0, -2.0, 0.5]], np.float32)       # [1, 3]
COL = np.array([[3.0], [-1.0]], np.float32)           # [2, 1]


def test_lax_binary_operations_stretch_size_one_dimensions():
    np.testing.assert_array_equal(lax.add(A, ROW), A + ROW)
    np.testing.assert_array_equal(lax.mul(np.ones(2, np.float32), np.float32([4.0]).reshape(1)),
                                  [4.0, 4.0])
    np.testing.assert_array_equal(lax.max(COL, A), np.maximum(COL, A))
    np.testing.assert_array_equal(lax.lt(ROW, COL), ROW < COL)
    np.testing.assert_array_equal(lax.add_p.bind(A, ROW), A + ROW)
    np.testing.assert_array_equal(spmdc.jit(lax.sub)(A, COL), A - COL)
    with pytest.raises(TypeError, match="incompatible shapes"):
        lax.add(A, np.ones((3, 2), np.float32))
    with pytest.raises(TypeError, match="incompatible shapes"):
        lax.select_n(A > 0, A, np.broadcast_to(ROW, (1, 3)))    # select does not stretch


def test_jnp_broadcasts_of_size_one_dimensions_print_as_jax_prints_them():
    x = np.zeros(2, np.float32)
    assert str(spmdc.make_jaxpr(lambda x: x[None] * x[:, None])(x)) == (
        "{ lambda ; a:f32[2]. let\n"
        "    b:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] a\n"
        "    c:f32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a\n"
        "    d:f32[2,2] = mul b c\n"
        "  in (d,) }")
    assert str(spmdc.make_jaxpr(lambda x, y: x + y)(x, np.zeros(1, np.float32))) == (
        "{ lambda ; a:f32[2] b:f32[1]. let c:f32[2] = add a b in (c,) }")
    assert str(spmdc.make_jaxpr(jnp.maximum)(A, COL)) == (
        "{ lambda ; a:f32[2,3] b:f32[2,1]. let c:f32[2,3] = max a b in (c,) }")
    # a broadcast whose result is also returned (or used by anything else) stays
    jaxpr = spmdc.make_jaxpr(lambda x, y: (x + y, jnp.broadcast_to(y, (2, 3))))(A, ROW)
    assert sorted(e.primitive.name for e in jaxpr.eqns) == ["add", "broadcast_in_dim"]


def test_a_folded_jaxpr_runs_under_jit_vmap_and_grad():
    closed = spmdc.make_jaxpr(lambda x, y: x * y + x)(A, ROW)
    assert [e.primitive.name for e in closed.eqns] == ["mul", "add"]
    run = jaxpr_as_fun(closed)
    np.testing.assert_allclose(run(A, ROW)[0], A * ROW + A)
    np.testing.assert_allclose(spmdc.jit(run)(A, ROW)[0], A * ROW + A)
    np.testing.assert_allclose(spmdc.vmap(run, in_axes=(0, None))(np.stack([A, A]), ROW)[0],
                               np.stack([A * ROW + A] * 2))
    g = spmdc.grad(lambda y: run(A, y)[0].sum())(ROW)
    np.testing.assert_allclose(g, A.sum(axis=0, keepdims=True))
