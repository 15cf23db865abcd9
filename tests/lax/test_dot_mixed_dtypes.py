"""lax.dot_general of operands of two dtypes (Flax's mixed-precision attention passes
bfloat16 weights and float32 values to jnp.einsum with ``_dot_general=lax.dot_general``):
the product is in the operand type of higher precision, as in JAX 0.10.2 (float32 for
bfloat16 x float32 and for int8 x float32), and differentiates to each operand's type."""
from __future__ import annotations

import ml_dtypes
import numpy as np

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

DIMS = (((1,), (0,)), ((), ()))
A = np.array([[1.5, -2.0, 0.25], [3.0, 0.5, -1.0]], ml_dtypes.bfloat16)
B = np.array([[0.5, 1.0], [-1.5, 2.0], [4.0, -0.25]], np.float32)


def test_mixed_operands_contract_in_the_higher_precision_type():
    out, ints, einsum = spmdc.jit(lambda a, b, c: (
        lax.dot_general(a, b, DIMS), lax.dot_general(c, b, DIMS),
        jnp.einsum("ij,jk->ik", a, b, _dot_general=lax.dot_general)))(
        A, B, np.array([[1, 2, 3], [-4, 5, 6]], np.int8))
    want = A.astype(np.float32) @ B
    assert out.dtype == ints.dtype == einsum.dtype == np.float32
    np.testing.assert_allclose(out, want, rtol=1e-6)
    np.testing.assert_allclose(einsum, want, rtol=1e-6)
    np.testing.assert_allclose(ints, np.array([[1, 2, 3], [-4, 5, 6]], np.float32) @ B,
                               rtol=1e-6)


def test_gradients_come_back_in_each_operands_type():
    ga, gb = spmdc.grad(lambda a, b: lax.dot_general(a, b, DIMS).sum(), (0, 1))(A, B)
    assert ga.dtype == ml_dtypes.bfloat16 and gb.dtype == np.float32
    np.testing.assert_allclose(ga.astype(np.float32),
                               np.broadcast_to(B.sum(1), A.shape), rtol=1e-2)
    np.testing.assert_allclose(gb, np.broadcast_to(A.astype(np.float32).sum(0)[:, None],
                                                   B.shape), rtol=1e-6)
