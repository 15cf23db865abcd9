"""jnp.linalg.norm and vector_norm of complex operands (Optax's Muon normalises complex
matrices by their Frobenius norm): real results, values recorded with JAX 0.10.2. The
SVD-based orders (2, -2, 'nuc') are tested with the complex SVD, test_svd_complex.py."""

import numpy as np

import spmdc
import spmdc.numpy as jnp

X = np.array([[1 + 2j, 3 - 1j], [0.5j, -2 + 0j]], np.complex64)
MATRIX = {"fro": 4.387482, -1: 2.736068, np.inf: 5.398346}
VECTOR = {None: 3.8729835, 1: 5.398346, -np.inf: 2.236068, 0: 2.0, 3: 3.498043}
GRAD = [[0.22792116 - 0.45584232j, 0.6837635 + 0.22792116j],
        [-0.11396058j, -0.45584232 + 0j]]


def test_norms_of_complex_operands():
    def norms(x):
        return ([jnp.linalg.norm(x, ord=o) for o in MATRIX],
                [jnp.linalg.norm(x[0], ord=o) for o in VECTOR],
                spmdc.grad(jnp.linalg.norm)(x))
    matrix, vector, grad = spmdc.jit(norms)(X)
    for got, (o, want) in zip(matrix + vector, [*MATRIX.items(), *VECTOR.items()],
                              strict=True):
        assert got.dtype == np.float32, o
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=str(o))
    np.testing.assert_allclose(grad, GRAD, rtol=1e-5)
    assert jnp.linalg.vector_norm(X.astype(np.complex128)).dtype == np.float32  # x32 mode
