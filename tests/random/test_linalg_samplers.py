"""spmdc against values recorded from JAX 0.10.2 (`tools/record.py linalg`, cases in
tests/linalg_cases.py): random.orthogonal, random.multivariate_normal and
nn.initializers.orthogonal bit for bit for the same key (eagerly and under vmap over
keys), and linear-algebra values and gradients to a tolerance; plus the samplers'
statistics and scipy.stats.multivariate_normal against SciPy."""
from __future__ import annotations

import types

import linalg_cases as lc
import numpy as np
import oracle
import pytest
from scipy import stats as scipy_stats

import spmdc as jax
import spmdc.numpy as jnp
import spmdc.scipy.linalg as jsl
import spmdc.scipy.stats as stats
from spmdc import random
from spmdc.core import dtypes
from spmdc.nn import initializers

DATA = {x64: oracle.recorded(f"linalg_{'x64' if x64 else 'x32'}.npz") for x64 in (False, True)}
LIB = types.SimpleNamespace(random=random, jnp=jnp, jsl=jsl, stats=stats,
                            initializers=initializers, grad=jax.grad)


@pytest.fixture(params=[False, pytest.param(True, marks=pytest.mark.slow)],
                ids=["x32", "x64"])
def x64(request):        # make test runs x32 (the default); make test-slow x64 too
    previous = dtypes.enable_x64(request.param)
    yield request.param
    dtypes.enable_x64(previous)


def _same_bits(got, x64: bool, name: str, exact: bool = True) -> None:
    got = np.asarray(got)
    data = DATA[x64]
    assert got.dtype.name == str(data[name + "#dtype"]), name
    bits = np.ascontiguousarray(got).view(f"u{got.dtype.itemsize}")
    if exact:
        np.testing.assert_array_equal(bits, data[name], err_msg=name)
    else:
        eps = np.finfo(got.dtype).eps
        np.testing.assert_allclose(got, data[name].view(got.dtype), rtol=16 * eps,
                                   atol=16 * eps, err_msg=name)


def _lapack_rounded(case: str) -> bool:
    """Whether a sampler's draws pass through a LAPACK decomposition (QR, SVD, eigh).
    jaxlib's LAPACK kernels come from SciPy's OpenBLAS, which picks its code by the
    host's instruction set: JAX 0.10.2's own draws of these differ by a few units in the
    last place between two machines (recorded on one, re-run on an AVX-512 Xeon), so
    they are compared within 16 eps; the rest bit for bit."""
    return case.startswith(("orthogonal", "mvn_svd", "mvn_eigh", "init_orthogonal"))


@pytest.mark.parametrize("case", [c for c, _ in lc.sampler_cases(False)])
def test_samplers_are_bit_exact(case, x64):
    fn = dict(lc.sampler_cases(x64))[case]
    for s in lc.SEEDS:
        _same_bits(fn(LIB, random.PRNGKey(s)), x64, f"{case}|seed{s}",
                   exact=not _lapack_rounded(case))
    keys = random.split(random.PRNGKey(lc.SEEDS[0]), lc.VMAP_SIZE)
    # Under vmap, multivariate_normal's final matrix product is a differently shaped
    # dot in XLA than in JAX's batched einsum, which rounds differently (a few units in
    # the last place of the smallest results).
    _same_bits(jax.vmap(lambda k: fn(LIB, k))(keys), x64, f"{case}|vmap{lc.SEEDS[0]}",
               exact=not case.startswith("mvn") and not _lapack_rounded(case))


@pytest.mark.parametrize("case", [c for c, _ in lc.value_cases(False)])
def test_values_match_jax(case, x64):
    got = np.asarray(dict(lc.value_cases(x64))[case](LIB))
    want = DATA[x64][case]
    assert got.dtype == want.dtype and got.shape == want.shape, case
    tol = 1e-10 if x64 else 2e-4
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=case)


def test_typed_keys_and_jit_give_the_same_draws():
    key = random.key(0)
    raw = random.PRNGKey(0)
    np.testing.assert_array_equal(np.asarray(random.orthogonal(key, 3)),
                                  np.asarray(random.orthogonal(raw, 3)))
    cov = np.eye(2) + 0.5
    eager = random.multivariate_normal(raw, np.zeros(2), cov, (3,))
    jitted = jax.jit(lambda k: random.multivariate_normal(k, np.zeros(2), cov, (3,)))(raw)
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))


def test_sampler_statistics():
    q = np.asarray(random.orthogonal(random.PRNGKey(1), 4, (500,)))
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(4), q.shape),
                               atol=1e-5)
    assert abs(q[:, 0, 0].mean()) < 0.1            # Haar: entries centred, variance 1/n
    assert abs(q[:, 0, 0].var() - 0.25) < 0.05
    cov = np.array([[2.0, 0.6], [0.6, 1.0]], np.float32)
    draws = np.asarray(random.multivariate_normal(random.PRNGKey(2), np.array([1.0, -1.0]),
                                                  cov, (4000,)))
    np.testing.assert_allclose(draws.mean(0), [1.0, -1.0], atol=0.08)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.12)


def test_gradient_of_a_draw_wrt_its_parameters():
    key = random.PRNGKey(3)

    def first(mean):
        return random.multivariate_normal(key, mean, np.eye(2, dtype=np.float32))[0]
    np.testing.assert_allclose(np.asarray(jax.grad(first)(np.zeros(2, np.float32))), [1, 0])


def test_sampler_errors():
    with pytest.raises(ValueError, match="method must be one of"):
        random.multivariate_normal(random.PRNGKey(0), np.zeros(2), np.eye(2), method="qr")
    with pytest.raises(ValueError, match=r"cov.shape == \(\.\.\., n, n\)"):
        random.multivariate_normal(random.PRNGKey(0), np.zeros(2), np.eye(3))
    with pytest.raises(ValueError, match="broadcast"):
        random.multivariate_normal(random.PRNGKey(0), np.zeros((2, 2)), np.eye(2), (3,))
    with pytest.raises(TypeError, match="bfloat16"):
        random.orthogonal(random.PRNGKey(0), 3, dtype="bfloat16")   # as JAX: no LAPACK kernel
    with pytest.raises(ValueError, match="at least a 2D shape"):
        initializers.orthogonal()(random.PRNGKey(0), (3,))


def test_multivariate_normal_density_against_scipy():
    rng = np.random.default_rng(4)
    a = rng.normal(size=(3, 3))
    cov = (a @ a.T + np.eye(3)).astype(np.float32)
    x = rng.normal(size=(5, 3)).astype(np.float32)
    mu = np.ones(3, np.float32)
    want = scipy_stats.multivariate_normal(mu, cov)
    np.testing.assert_allclose(np.asarray(stats.multivariate_normal.logpdf(x, mu, cov)),
                               want.logpdf(x), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(stats.multivariate_normal.pdf(x, mu, cov)),
                               want.pdf(x), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(stats.multivariate_normal.logpdf(x, mu, 2.0)),
                               scipy_stats.multivariate_normal(mu, 2.0).logpdf(x), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(stats.multivariate_normal.logpdf(x[:, 0], 1.0, 2.0)),
                               scipy_stats.norm(1, np.sqrt(2)).logpdf(x[:, 0]), rtol=1e-5)
    with pytest.raises(NotImplementedError, match="allow_singular"):
        stats.multivariate_normal.logpdf(x, mu, cov, allow_singular=True)
