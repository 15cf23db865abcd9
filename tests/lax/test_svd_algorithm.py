"""lax.linalg.svd's algorithm= (JAX's SvdAlgorithm; Note [svd algorithms] in
compiler/primitives/linalg_decomp.py): QR runs LAPACK's gesvd, DEFAULT and
DIVIDE_AND_CONQUER its gesdd, bit for bit JAX 0.10.2's results (recorded) through eager
calls, jit, grad and vmap; JACOBI and POLAR raise NotImplementedError on the CPU as JAX's."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
from spmdc.lax.linalg import SvdAlgorithm, svd

A = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
# JAX 0.10.2 on the CPU: s and u's first row of svd(A, algorithm=...).
S_GESVD = [2.23349666595459, 0.9249715209007263, 0.3348255455493927]
U0_GESVD = [0.07405214756727219, 0.6696086525917053, 0.5378212928771973, 0.5068421363830566]
S_GESDD = [2.23349666595459, 0.9249715805053711, 0.3348255753517151]
U0_GESDD = [0.07405209541320801, -0.6696087121963501, 0.5378212332725525, 0.5068421363830566]
GRAD_GESVD = [[-1.0603300333023071, 1.5959105491638184, 1.5949580669403076],
              [0.20387932658195496, -0.3618435263633728, 1.480932354927063],
              [-0.8076996207237244, 1.908323049545288, 2.809297561645508],
              [-0.8449832201004028, 2.259000778198242, 3.232961893081665]]


@pytest.mark.parametrize("algorithm, s_want, u0_want", [
    (SvdAlgorithm.QR, S_GESVD, U0_GESVD),
    (SvdAlgorithm.DIVIDE_AND_CONQUER, S_GESDD, U0_GESDD),
    (SvdAlgorithm.DEFAULT, S_GESDD, U0_GESDD),
    (None, S_GESDD, U0_GESDD),
])
def test_the_algorithm_picks_the_kernel(algorithm, s_want, u0_want):
    u, s, vt = svd(A, algorithm=algorithm)
    assert np.asarray(s).tolist() == s_want and np.asarray(u)[0].tolist() == u0_want
    np.testing.assert_allclose(np.asarray(u)[:, :3] * np.asarray(s) @ np.asarray(vt), A,
                               atol=1e-5)
    jitted = spmdc.jit(lambda a: svd(a, algorithm=algorithm, full_matrices=False)[1])(A)
    assert np.asarray(jitted).tolist() == s_want
    batched = spmdc.vmap(lambda a: svd(a, algorithm=algorithm, compute_uv=False))(
        np.stack([A, 2 * A]))
    np.testing.assert_allclose(np.asarray(batched), [s_want, 2 * np.array(s_want)],
                               rtol=1e-6)


def test_the_derivative_keeps_the_algorithm():
    def f(a):
        return svd(a, algorithm=SvdAlgorithm.QR, full_matrices=False)[0].sum()
    text = str(spmdc.make_jaxpr(spmdc.grad(f))(A))
    assert "algorithm" in text and "QR" in text
    np.testing.assert_allclose(np.asarray(spmdc.grad(f)(A)), GRAD_GESVD, rtol=2e-6,
                               atol=2e-7)


@pytest.mark.parametrize("algorithm", [SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR, "QR"])
def test_what_the_cpu_cannot_run_is_jaxs_error(algorithm):
    with pytest.raises(NotImplementedError, match="Jacobi and Polar|SvdAlgorithm or None"):
        svd(A, algorithm=algorithm)
