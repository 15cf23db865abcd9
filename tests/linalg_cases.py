"""The cases that `tools/record.py linalg` runs on JAX 0.10.2 and
tests/random/test_linalg_samplers.py runs on spmdc: the random samplers built on linear
algebra (compared bit for bit), and linear-algebra values (compared to a tolerance).
Each case is ``fn(lib, key)`` where ``lib`` has ``random``, ``jnp``, ``initializers``,
``stats`` and ``jsl`` (scipy.linalg) attributes of the library under test."""
from __future__ import annotations

import numpy as np

SEEDS = (0, 7)
VMAP_SIZE = 3


def _spd(n: int, batch: tuple[int, ...] = (), seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(*batch, n, n))
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def sampler_cases(x64: bool):
    """Draws that must equal JAX's bit for bit."""
    f = "float64" if x64 else "float32"
    cov3 = _spd(3).astype(f)
    covs = _spd(2, (2,), seed=1).astype(f)
    cases = [
        ("orthogonal_3", lambda lib, k: lib.random.orthogonal(k, 3)),
        ("orthogonal_batch", lambda lib, k: lib.random.orthogonal(k, 4, (2,))),
        ("orthogonal_wide", lambda lib, k: lib.random.orthogonal(k, 2, (), None, 5)),
        ("orthogonal_tall", lambda lib, k: lib.random.orthogonal(k, 5, (), None, 2)),
        ("mvn_cholesky", lambda lib, k: lib.random.multivariate_normal(
            k, np.arange(3.0).astype(f), cov3, (4,))),
        ("mvn_eigh", lambda lib, k: lib.random.multivariate_normal(
            k, np.zeros(3, f), cov3, method="eigh")),
        ("mvn_svd", lambda lib, k: lib.random.multivariate_normal(
            k, np.zeros(3, f), cov3, (2,), method="svd")),
        ("mvn_batched_cov", lambda lib, k: lib.random.multivariate_normal(
            k, np.ones(2, f), covs)),
        ("init_orthogonal", lambda lib, k: lib.initializers.orthogonal()(k, (3, 4, 5))),
        ("init_orthogonal_axis0", lambda lib, k: lib.initializers.orthogonal(
            2.0, column_axis=0)(k, (2, 3))),
    ]
    return cases


def value_cases(x64: bool):
    """Linear-algebra values (a tolerance: same kernels, but fusion may differ)."""
    f = "float64" if x64 else "float32"
    a = np.random.default_rng(2).normal(size=(4, 4)).astype(f)
    b = np.random.default_rng(3).normal(size=(4, 2)).astype(f)
    spd = _spd(4, seed=4).astype(f)
    x = np.random.default_rng(5).normal(size=(3, 4)).astype(f)
    return [
        ("det", lambda lib: lib.jnp.linalg.det(a)),
        ("slogdet", lambda lib: lib.jnp.stack(lib.jnp.linalg.slogdet(a))),
        ("inv", lambda lib: lib.jnp.linalg.inv(a)),
        ("solve", lambda lib: lib.jnp.linalg.solve(a, b)),
        ("pinv", lambda lib: lib.jnp.linalg.pinv(b)),
        ("lstsq", lambda lib: lib.jnp.linalg.lstsq(b, a[:, 0])[0]),
        ("norm_nuc", lambda lib: lib.jnp.linalg.norm(a, "nuc")),
        ("norm_2", lambda lib: lib.jnp.linalg.norm(a, 2)),
        ("cond", lambda lib: lib.jnp.linalg.cond(a)),
        ("cholesky", lambda lib: lib.jnp.linalg.cholesky(spd)),
        ("eigvalsh", lambda lib: lib.jnp.linalg.eigvalsh(spd)),
        ("svdvals", lambda lib: lib.jnp.linalg.svd(a, compute_uv=False)),
        ("expm", lambda lib: lib.jsl.expm(a)),
        ("cho_solve", lambda lib: lib.jsl.cho_solve(lib.jsl.cho_factor(spd), b)),
        ("lu_solve", lambda lib: lib.jsl.lu_solve(lib.jsl.lu_factor(a), b)),
        ("mvn_logpdf", lambda lib: lib.stats.multivariate_normal.logpdf(x, a[0], spd)),
        ("mvn_pdf_scalar_cov", lambda lib: lib.stats.multivariate_normal.pdf(x, a[0], 2.0)),
        ("grad_logdet", lambda lib: lib.grad(lambda m: lib.jnp.linalg.slogdet(m)[1])(a)),
        ("grad_eigh", lambda lib: lib.grad(
            lambda m: lib.jnp.sum(lib.jnp.linalg.eigh(m)[0] ** 3))(spd)),
        ("grad_svd", lambda lib: lib.grad(
            lambda m: lib.jnp.sum(lib.jnp.linalg.svd(m, compute_uv=False) ** 2))(b)),
        ("grad_cho", lambda lib: lib.grad(
            lambda m: lib.jnp.sum(lib.jsl.cho_solve(lib.jsl.cho_factor(m), b)))(spd)),
    ]
