"""eig on LAPACK's geev (spmdc/compiler/primitives/linalg_eig.py): jnp.linalg.eig and
eigvals, jnp.roots and poly of a matrix, against NumPy and by reconstruction."""
from __future__ import annotations

import numpy as np
import pytest
from primcheck import check_lowering, check_vmap

import spmdc
import spmdc.numpy as jnp
from spmdc.compiler.primitives.linalg_eig import eig_p

R = np.random.default_rng(3)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_eigenpairs_reconstruct(dtype):
    a = R.normal(size=(2, 5, 5)).astype(np.float32)
    if dtype == np.complex64:
        a = (a + 1j * R.normal(size=a.shape)).astype(np.complex64)
    w, v = jnp.linalg.eig(a)
    w, v = np.asarray(w), np.asarray(v)
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=2e-5)
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.linalg.eigvals(a))[0]),
                               np.sort_complex(np.linalg.eigvals(a[0])), rtol=1e-4, atol=1e-5)


def test_float64_with_x64_and_the_primitive_rules():
    with spmdc.enable_x64(True):
        a = R.normal(size=(4, 4))
        w = np.asarray(jnp.linalg.eigvals(a))
        assert w.dtype == np.complex128
        np.testing.assert_allclose(np.sort_complex(w), np.sort_complex(np.linalg.eigvals(a)),
                                   rtol=1e-10)
        params = {"compute_left": False, "compute_right": False}
        check_lowering(eig_p, [a], params, rtol=1e-9, atol=1e-9)
        # vmap: the batch becomes a leading batch dimension of the kernel's matrices
        check_vmap(eig_p, [R.normal(size=(4, 3, 4))], params, [1], 3, rtol=1e-9,
                   atol=1e-9)


def test_roots_and_poly():
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.roots(np.array(
        [1.0, -6, 11, -6], np.float32)))), [1, 2, 3], atol=1e-4)
    np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.roots(np.array(
        [0.0, 0, 1, 0, -4], np.float32)))), [-2, 2], atol=1e-5)
    under_jit = np.asarray(spmdc.jit(lambda p: jnp.roots(p, strip_zeros=False))(
        np.array([0.0, 1, -3, 2], np.float32)))
    np.testing.assert_allclose(np.sort_complex(under_jit[:2]), [1, 2], atol=1e-5)
    assert np.isnan(under_jit[2])
    a = R.normal(size=(3, 3)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.poly(a)).real, np.poly(a), rtol=1e-4,
                               atol=1e-5)
    with pytest.raises(TypeError, match="strip_zeros=False"):
        spmdc.jit(jnp.roots)(np.array([1.0, 2.0], np.float32))


def test_eigenvector_derivatives_need_the_opt_in():
    # As JAX's: eigenvalues alone are differentiable (d tr(A) = tr(dA): the real parts
    # sum to the trace), eigenvectors only with enable_eigvec_derivs=True.
    a = R.normal(size=(3, 3)).astype(np.float32)
    g = spmdc.grad(lambda m: jnp.real(jnp.linalg.eigvals(m)).sum())(a)
    np.testing.assert_allclose(np.asarray(g), np.eye(3), atol=1e-5)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs=True"):
        spmdc.grad(lambda m: jnp.real(jnp.linalg.eig(m)[1]).sum())(a)
    with pytest.raises(ValueError, match=r"\[..., n, n\]"):
        jnp.linalg.eig(np.ones((2, 3)))
