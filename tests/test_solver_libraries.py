"""What Lineax, Optimistix and Diffrax do, reproduced without them: their test suites run
with ``jax_enable_x64``, ``jax_numpy_dtype_promotion='strict'`` and
``jax_numpy_rank_promotion='raise'`` (their conftest.py), so spmdc's own jnp, lax and scipy
code must promote neither dtypes nor ranks behind the user's back, and the factorisations
they solve with (LAPACK's packed QR among them) must be there. Expected values are NumPy's
or SciPy's."""
import numpy as np
import pytest
import scipy.linalg as sla

import spmdc
import spmdc.numpy as jnp
import spmdc.scipy as jsp

A = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]])
B = np.array([1.0, 2.0, 3.0])
TALL = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0], [1.0, 1.0, 1.0]])


@pytest.fixture
def strict_x64():
    """The configuration of the libraries' test suites."""
    with spmdc.enable_x64(True), spmdc.numpy_dtype_promotion("strict"), \
            spmdc.numpy_rank_promotion("raise"):
        yield


def test_lu_solve_under_strict_promotion(strict_x64):
    # Lineax's LU solver: lu_factor, then lu_solve; the pivots' permutation was built
    # from int32 and int64 values, which strict promotion refuses
    def solve(a, b, pivots):             # one program for every check
        return (jsp.linalg.lu_solve(jsp.linalg.lu_factor(a), b),
                spmdc.lax.linalg.lu_pivots_to_permutation(pivots, 3))
    x, perm = spmdc.jit(solve)(jnp.asarray(A), jnp.asarray(B), jnp.asarray([2, 2, 2], jnp.int32))
    np.testing.assert_allclose(np.asarray(x), sla.lu_solve(sla.lu_factor(A), B), rtol=1e-12)
    assert perm.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(perm), [2, 0, 1])


def test_gather_fill_mode_under_strict_and_rank_raise(strict_x64):
    # an out-of-bounds check of int32 indices against the bounds (lu_solve's row
    # permutation takes this path); mode='fill' compares them
    b = jnp.arange(6.0).reshape(3, 2)
    got = spmdc.jit(lambda b, p: jnp.take(b, p, axis=-2))(b, jnp.asarray([2, 0, 5], jnp.int32))
    np.testing.assert_array_equal(np.asarray(got), [[4.0, 5.0], [0.0, 1.0], [np.nan, np.nan]])


def test_qr_raw_is_lapacks_packing(strict_x64):
    # Lineax's QR solver: jnp.linalg.qr(mode='raw'), then lax.linalg.ormqr
    h, taus = jnp.linalg.qr(jnp.asarray(TALL), mode="raw")
    nh, ntaus = np.linalg.qr(TALL, mode="raw")
    assert h.shape == (3, 4) and taus.shape == (3,)
    np.testing.assert_allclose(np.asarray(h), nh, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(taus), ntaus, rtol=1e-12)
    # the least-squares solution from the reflectors, as Lineax computes it
    b = np.array([1.0, 2.0, 3.0, 4.0])

    def lstsq(h, taus, b):
        a = h.mT
        qhb = spmdc.lax.linalg.ormqr(a, taus, b[:, None], transpose=True)[:3, 0]
        return jsp.linalg.solve_triangular(a[:3], qhb, trans="N")
    got = spmdc.jit(lstsq)(h, taus, jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(got), np.linalg.lstsq(TALL, b, rcond=None)[0],
                               rtol=1e-10)
    # batched under vmap: one geqrf per matrix
    hs, ts = spmdc.vmap(lambda m: jnp.linalg.qr(m, mode="raw"))(jnp.stack([TALL, 2 * TALL]))
    np.testing.assert_allclose(np.asarray(hs[1]), np.linalg.qr(2 * TALL, mode="raw")[0],
                               rtol=1e-12)
    np.testing.assert_allclose(np.asarray(ts[0]), ntaus, rtol=1e-12)


def test_like_of_a_weak_value_is_weak(strict_x64):
    # Optimistix's tests clip with max=jnp.ones_like(1): a weak int, as in JAX, so
    # clipping float64 weights by it is allowed under strict promotion
    ub = jnp.ones_like(1)
    assert (ub.dtype, ub.weak_type) == (np.dtype(np.int64), True)
    assert jnp.zeros_like(2.0).weak_type and jnp.full_like(2.0, 3, shape=(2,)).weak_type
    assert not jnp.ones_like(True).weak_type and not jnp.ones_like(jnp.ones(2)).weak_type
    assert not jnp.ones_like(2.0, dtype=jnp.float64).weak_type
    assert spmdc.jit(jnp.zeros_like)(2.0).weak_type
    assert spmdc.lax.full_like(2.0, 1).weak_type
    w = jnp.asarray([[0.5, 2.0], [-1.0, 0.25]])
    got = jnp.clip(w, min=jnp.zeros_like(w), max=ub)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(got), [[0.5, 1.0], [0.0, 0.25]])


def test_eager_transformations_give_a_passed_through_argument_back():
    # Lineax's and Optimistix's inexact_asarray: vmap of a function returning its
    # argument returns that very Array, as JAX's eager vmap (jit returns a new one)
    y = jnp.asarray([1.0, 2.0])
    assert spmdc.vmap(lambda x: x)(y) is y
    assert spmdc.vmap(lambda x: (x, 2 * x))(y)[0] is y
    assert spmdc.jvp(lambda x: x, (y,), (y,))[0] is y
    assert spmdc.vmap(lambda x: x * 1)(y) is not y
    assert spmdc.jit(lambda x: x)(y) is not y
    moved = spmdc.vmap(lambda x: x, in_axes=1, out_axes=0)(jnp.asarray([[1.0, 2.0]]))
    np.testing.assert_array_equal(np.asarray(moved), [[1.0], [2.0]])


def test_polyval_with_trailing_coefficient_dimensions():
    # Diffrax's local interpolation: polyval of coefficients [order, state] at a time
    c = np.arange(8.0).reshape(4, 2)
    horner = lambda x: ((c[0] * x + c[1]) * x + c[2]) * x + c[3]  # noqa: E731
    def run(c, xs):                      # one program for every check
        return (jnp.polyval(c, 0.5), jnp.polyval(c, xs),
                spmdc.vmap(lambda cc: jnp.polyval(cc, 0.25))(jnp.stack([c, 2 * c])))
    at_half, at_xs, batched = spmdc.jit(run)(jnp.asarray(c), jnp.asarray([0.5, 2.0]))
    np.testing.assert_allclose(np.asarray(at_half), horner(0.5))
    np.testing.assert_allclose(np.asarray(at_xs), [horner(0.5)[0], horner(2.0)[1]])
    np.testing.assert_allclose(np.asarray(batched), [horner(0.25), 2 * horner(0.25)])
    with pytest.raises(ValueError, match="at least 1-d"):
        jnp.polyval(jnp.asarray(1.0), 2.0)


def test_cond_and_barrier_keep_weak_types_as_jax(strict_x64):
    # Diffrax's direction = jnp.where(t0 < t1, 1, -1) is a weak int; Equinox's error_if
    # passes the solution through a cond (branch 0 the value, branch 1 a callback) and an
    # optimization barrier; t * direction must still be allowed under strict promotion.
    # JAX's cond takes its outputs' weak types from branch 0 (cond's false_fun).
    def f(p):
        d = jnp.where(p < 1.0, 1, -1)
        s = jnp.asarray(2, jnp.int64)
        return (spmdc.lax.cond(p > 5.0, lambda: s, lambda: d),
                spmdc.lax.cond(p > 5.0, lambda: d, lambda: s),
                spmdc.lax.switch(1, [lambda: s, lambda: d]),
                spmdc.lax.optimization_barrier(d))
    outs = spmdc.jit(f)(jnp.asarray(0.0))
    assert [o.weak_type for o in outs] == [True, False, False, True]
    assert [int(o) for o in outs] == [1, 2, 1, 1]
    assert (0.5 * outs[0]).dtype == np.float64
