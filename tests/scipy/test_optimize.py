"""spmdc.scipy.optimize.minimize: BFGS and the experimental L-BFGS take JAX 0.10.2's path
(iteration and evaluation counts, status and solution recorded from JAX on the same
problems), reach SciPy's minimum, run under jit and vmap, and reject bad input as JAX
does; and JAX's import paths of the scipy namespaces added with them resolve."""
from __future__ import annotations

import functools

import alias_programs
import numpy as np
import pytest
import scipy.optimize

import spmdc
import spmdc.numpy as jnp
from spmdc.core import dtypes
from spmdc.scipy.optimize import OptimizeResults, minimize

LBFGS = "l-bfgs-experimental-do-not-rely-on-this"
RNG = np.random.default_rng(1)
Z = RNG.normal(size=(5, 5))
A = Z @ Z.T + np.eye(5)
B = RNG.normal(size=5)
X0 = np.array([-1.2, 1.0, -0.5, 0.8, 0.3])


@pytest.fixture
def x64():
    previous = dtypes.enable_x64(True)
    yield
    dtypes.enable_x64(previous)


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def convex(x, a, b):
    return 0.5 * x @ a @ x - b @ x + jnp.sum(jnp.cosh(0.3 * x))


# JAX 0.10.2 (x64) on these problems from X0: nit, nfev, njev, status, success, fun, x.
JAX_X64 = {
    ("BFGS", "rosen"): (32, 46, 46, 3, False, 0.011743935297169146,
                        [0.9902362628782932, 0.9791903769593974, 0.9571455783813225,
                         0.9141380840636435, 0.8322677351088791]),
    ("BFGS", "convex"): (10, 13, 13, 0, True, 4.268853062195375,
                         [-0.6386018795362733, -0.2512107649905781, -0.3859816877030168,
                          0.3871162647478065, -0.15528300404953152]),
    (LBFGS, "rosen"): (29, 41, 41, 5, False, 0.12334415755356393,
                       [0.9626734655177701, 0.928257590947051, 0.8594596351609705,
                        0.7312805356996238, 0.521109188021446]),
    (LBFGS, "convex"): (8, 11, 11, 0, True, 4.268853062203836,
                        [-0.6386017257666818, -0.25121154969528875, -0.38598488916187795,
                         0.38711600692821907, -0.15528314665439]),
}
PROBLEMS = {"rosen": (rosen, ()), "convex": (convex, (A, B))}


@pytest.mark.parametrize("method, problem", sorted(JAX_X64))
def test_the_path_is_jax_s(method, problem, x64):
    fun, args = PROBLEMS[problem]
    nit, nfev, njev, status, success, value, x = JAX_X64[method, problem]
    got = minimize(fun, X0, args, method=method)
    assert isinstance(got, OptimizeResults)
    assert (int(got.nit), int(got.nfev), int(got.njev), int(got.status), bool(got.success)) \
        == (nit, nfev, njev, status, success)
    np.testing.assert_allclose(float(got.fun), value, rtol=1e-5)
    np.testing.assert_allclose(got.x, x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.jac, spmdc.grad(fun)(got.x, *args), rtol=1e-9)
    assert (got.hess_inv is None) == (method == LBFGS)


@functools.cache
def tight_convex_minimum(method):
    """``convex``'s minimum to ``gtol=1e-10`` in x64, solved once per module and method:
    each solve compiles its optimisation loop (seconds of XLA), and two tests read it."""
    previous = dtypes.enable_x64(True)
    try:
        return minimize(convex, X0, (A, B), method=method, options={"gtol": 1e-10})
    finally:
        dtypes.enable_x64(previous)


def test_the_minimum_is_scipy_s(x64):
    want = scipy.optimize.minimize(lambda x: 0.5 * x @ A @ x - B @ x + np.cosh(0.3 * x).sum(),
                                   X0, method="BFGS", options={"gtol": 1e-10}).x
    for method in ("BFGS", LBFGS):
        got = tight_convex_minimum(method)
        np.testing.assert_allclose(got.x, want, atol=1e-7)


def test_bfgs_inverse_hessian_estimate(x64):
    got = tight_convex_minimum("BFGS")
    assert int(got.status) == 0
    hessian = np.asarray(spmdc.hessian(convex)(got.x, A, B))
    np.testing.assert_allclose(got.hess_inv, np.linalg.inv(hessian), atol=1e-2)


def test_float32_rosenbrock_is_jax_s():
    got = minimize(rosen, np.zeros(4, np.float32), method="BFGS")
    assert got.x.dtype == np.float32
    assert (int(got.nit), int(got.nfev), int(got.status)) == (26, 42, 3)      # JAX 0.10.2
    np.testing.assert_allclose(got.x, [0.99479693, 0.98973805, 0.9784595, 0.95562196],
                               atol=2e-4)
    got = minimize(rosen, np.zeros(4, np.float32), method=LBFGS)
    assert (int(got.nit), int(got.nfev), int(got.status)) == (7, 16, 5)       # JAX 0.10.2
    np.testing.assert_allclose(got.fun, 2.1803877, rtol=1e-5)


def test_tol_is_the_gradient_tolerance(x64):
    loose = minimize(convex, X0, (A, B), method="BFGS", tol=1e-1)
    assert np.abs(np.asarray(loose.jac)).max() < 1e-1
    assert int(loose.nit) < JAX_X64["BFGS", "convex"][0]


def test_jit_and_vmap(x64):
    solve = spmdc.jit(lambda x0, b: minimize(convex, x0, (A, b), method="BFGS").x)
    np.testing.assert_allclose(solve(X0, B), JAX_X64["BFGS", "convex"][6], atol=1e-6)
    starts = np.stack([X0, -X0, np.zeros(5)])
    xs = spmdc.vmap(lambda x0: minimize(convex, x0, (A, B), method=LBFGS).x)(starts)
    for x in np.asarray(xs):
        np.testing.assert_allclose(x, JAX_X64[LBFGS, "convex"][6], atol=1e-5)


def test_errors():
    with pytest.raises(ValueError, match="Method Nelder-Mead not recognized"):
        minimize(rosen, np.zeros(3), method="Nelder-Mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(convex, np.zeros(5), [A, B], method="BFGS")
    with pytest.raises(TypeError, match=r"unknown options \['maxcor'\]"):
        minimize(rosen, np.zeros(3), method="BFGS", options={"maxcor": 3})
    with pytest.raises(ValueError, match="x0 must be a 1-d array"):
        minimize(rosen, np.zeros((2, 2)), method="BFGS")


ALIAS_PROGRAM = alias_programs.register("scipy_optimize_and_friends", (
    "import sys, spmdc; sys.modules['jax'] = spmdc\n"
    "from jax.scipy.optimize import minimize, OptimizeResults\n"
    "from jax.scipy.sparse.linalg import cg, bicgstab, gmres\n"
    "from jax.scipy.fft import dct, dctn, idct, idctn\n"
    "from jax.scipy.stats import gaussian_kde\n"
    "import jax.scipy.sparse, jax.scipy.optimize\n"
    "assert minimize is spmdc.scipy.optimize.minimize\n"
    "assert cg is spmdc.scipy.sparse.linalg.cg\n"
    "assert jax.scipy.fft.dct is spmdc.scipy.fft.dct\n"
    "assert gaussian_kde is spmdc.scipy.stats.gaussian_kde\n"
    "print('ok')\n"))


def test_jax_s_import_paths_resolve():
    # programs import these namespaces by JAX's names once spmdc is aliased as jax
    out = alias_programs.run(ALIAS_PROGRAM)      # one child for the alias programs
    assert out.stdout.strip() == "ok", out.stderr
