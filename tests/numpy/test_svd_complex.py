"""Complex SVD (LAPACK's cgesdd/zgesdd through jaxlib's kernels, as JAX's CPU lowering):
singular values, the SVD-based norms (2, -2, 'nuc'), the pseudo-inverse, and the
derivatives of Note [complex svd derivatives] (compiler/primitives/linalg_svd_complex.py).
``JAX`` holds JAX 0.10.2's values for the same program (complex arrays as [real, imag])."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

_rng = np.random.default_rng(7)


def _c(*shape):
    return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(np.complex64)


TALL, WIDE = _c(3, 2), _c(2, 3)
T_TALL, T_WIDE = _c(3, 2), _c(2, 3)

JAX = {
    'tall': {'grad_f': [[[-0.1403645, 0.5971004], [-0.8345133, -1.704408], [-1.030699, -2.028708]],
                     [[0.3209227, -2.651742], [0.8145652, 1.397937], [-0.7158529, -0.9110323]]],
          'grad_nuc': [[[-0.1205805, 0.1751073], [-0.1005651, -0.4281246],
                        [-0.3570209, -0.4113322]],
                       [[0.3852614, -0.7628677], [0.5552253, 0.1829468],
                        [-0.6254449, -0.03762567]]],
          'jvp_f': 3.880627,
          'jvp_s': [0.2227082, 1.729554],
          'norms': [2.141913, 0.5951598, 2.737073],
          's': [2.141913, 0.5951598]},
 'wide': {'grad_f': [[[0.2103427, -1.774853, -0.08276482], [1.329207, -2.743368, -0.9702506]],
                     [[4.040937, 2.54163, 3.498143], [0.411938, 2.530032, -0.4656548]]],
          'grad_nuc': [[[-0.03582386, -0.1912131, 0.03804231],
                        [0.3699017, -0.6212175, -0.2358163]],
                       [[0.6427085, 0.3146583, 0.6697937],
                        [-0.07032757, 0.5513681, -0.3357078]]],
          'jvp_f': -3.519471,
          'jvp_s': [-0.1942408, -0.8101951],
          'norms': [3.29232, 1.715504, 5.007824],
          's': [3.29232, 1.715504]}}


def _f(x):
    u, s, vh = jnp.linalg.svd(x, full_matrices=False)
    return jnp.sum(s**2) + jnp.abs(jnp.sum(u[0] * vh[:, 0]))**2


@spmdc.jit
def _program(tall, wide, t_tall, t_wide):
    out = {}
    for name, a, t in (("tall", tall, t_tall), ("wide", wide, t_wide)):
        out[name] = dict(
            s=jnp.linalg.svd(a, compute_uv=False),
            norms=jnp.stack([jnp.linalg.norm(a, o) for o in (2, -2, "nuc")]),
            grad_nuc=spmdc.grad(lambda x: jnp.linalg.norm(x, "nuc"))(a),
            grad_f=spmdc.grad(_f)(a),
            jvp_f=spmdc.jvp(_f, (a,), (t,))[1],
            jvp_s=spmdc.jvp(lambda x: jnp.linalg.svd(x, compute_uv=False), (a,), (t,))[1])
    return out


def _value(recorded, like):
    x = np.asarray(recorded)
    return x[0] + 1j * x[1] if np.iscomplexobj(like) else x


@pytest.mark.slow            # one program of 2 x 6 svd derivatives: ~3 s to compile
def test_values_and_derivatives_as_jax():
    got = _program(TALL, WIDE, T_TALL, T_WIDE)
    for shape_name, a in (("tall", TALL), ("wide", WIDE)):
        np.testing.assert_allclose(got[shape_name]["s"],
                                   np.linalg.svd(a, compute_uv=False), rtol=1e-5)
        for name, want in JAX[shape_name].items():
            value = np.asarray(got[shape_name][name])
            assert value.dtype == (np.complex64 if name.startswith("grad") else np.float32)
            np.testing.assert_allclose(value, _value(want, value), rtol=2e-4, atol=2e-5,
                                       err_msg=f"{shape_name} {name}")


@pytest.mark.parametrize("full_matrices", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_factors_and_pinv_against_numpy(full_matrices):
    for a in (TALL, WIDE):
        u, s, vh = jnp.linalg.svd(a, full_matrices=full_matrices)
        k = min(a.shape)
        assert u.dtype == vh.dtype == np.complex64 and s.dtype == np.float32
        rebuilt = (np.asarray(u)[:, :k] * np.asarray(s)) @ np.asarray(vh)[:k]
        np.testing.assert_allclose(rebuilt, a, atol=1e-5)
        np.testing.assert_allclose(np.asarray(u).conj().T @ np.asarray(u),
                                   np.eye(u.shape[-1]), atol=1e-5)
    np.testing.assert_allclose(jnp.linalg.pinv(TALL), np.linalg.pinv(TALL), atol=1e-5)
    np.testing.assert_allclose(spmdc.vmap(jnp.linalg.svdvals)(np.stack([TALL, TALL * 2])),
                               np.linalg.svd(np.stack([TALL, TALL * 2]), compute_uv=False),
                               rtol=1e-5)


def test_nuclear_norm_and_its_gradient_as_jax():
    norm, grad = spmdc.jit(spmdc.value_and_grad(lambda x: jnp.linalg.norm(x, "nuc")))(TALL)
    np.testing.assert_allclose(norm, JAX["tall"]["norms"][2], rtol=1e-5)
    np.testing.assert_allclose(grad, _value(JAX["tall"]["grad_nuc"], grad), atol=2e-5)


def test_matrix_rank_and_cond_as_jax():
    rank_one = np.outer(TALL[:, 0], TALL[:, 1].conj())
    assert int(jnp.linalg.matrix_rank(TALL)) == 2 and int(jnp.linalg.matrix_rank(rank_one)) == 1
    np.testing.assert_allclose(jnp.linalg.cond(TALL), 3.5988877, rtol=1e-5)
    np.testing.assert_allclose(jnp.linalg.cond(TALL, -2), 0.27786362, rtol=1e-5)
