"""The linear-algebra primitives (compiler/primitives/linalg.py, linalg_decomp.py) on their
own: the LAPACK lowering against the NumPy reference and by reconstruction, vmap against
a loop over matrices, and the VJP and JVP rules against finite differences (float64,
interpreted). cholesky and eigh are differentiated as functions of a symmetric matrix
(Note [symmetric inputs]): the checked function is ``x -> prim(x + x^T)``."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from primcheck import _types, check_grad, check_jvp_of, check_lowering, check_vmap, eqn_func

from spmdc.compiler.builder import Builder
from spmdc.compiler.interpreter import evaluate
from spmdc.compiler.ir import TensorType, check
from spmdc.compiler.passes.autodiff import vjp_func
from spmdc.compiler.passes.cleanup import cleanup
from spmdc.compiler.primitives.core import ShapeError
from spmdc.compiler.primitives.linalg import cholesky_p, lu_p, triangular_solve_p
from spmdc.compiler.primitives.linalg_decomp import eigh_p, qr_p, svd_p
from spmdc.runtime.executable import run_func

TOL = dict(rtol=1e-4, atol=1e-4)


def run(prim, args, params):
    return run_func(eqn_func(prim, _types(args), params), *args)


def spd(rng, shape, dtype=np.float32):
    x = rng.normal(size=shape)
    return (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def sym_from(x, lower=True):
    t = np.tril(x) if lower else np.triu(x)
    return t + np.swapaxes(np.tril(x, -1) if lower else np.triu(x, 1), -1, -2)


batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)


# --- lowering: values and reconstruction --------------------------------------------------------

@settings(max_examples=8)
@given(batch_shapes, st.integers(1, 6), st.sampled_from([np.float32, np.float64]))
def test_cholesky_reconstructs(batch, n, dtype):
    from spmdc.core import dtypes
    previous = dtypes.enable_x64(dtype == np.float64)
    try:
        a = spd(np.random.default_rng(n), (*batch, n, n), dtype)
        (low,) = run(cholesky_p, [a], {})
        assert low.dtype == dtype
        np.testing.assert_allclose(low @ np.swapaxes(low, -1, -2), a, **TOL)
        assert np.all(np.triu(low, 1) == 0)
        check_lowering(cholesky_p, [a], {}, **TOL)
    finally:
        dtypes.enable_x64(previous)


def test_cholesky_of_an_indefinite_matrix_is_nan():
    a = np.stack([np.eye(3, dtype=np.float32), -np.eye(3, dtype=np.float32)])
    (low,) = run(cholesky_p, [a], {})
    assert np.all(np.isfinite(low[0])) and np.all(np.isnan(low[1]))


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve(left_side, lower, transpose_a, unit_diagonal):
    rng = np.random.default_rng(1)
    a = (rng.normal(size=(2, 4, 4)) + 4 * np.eye(4)).astype(np.float32)
    b = rng.normal(size=(2, 4, 3) if left_side else (2, 3, 4)).astype(np.float32)
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                  unit_diagonal=unit_diagonal)
    check_lowering(triangular_solve_p, [a, b], params, **TOL)
    check_grad(triangular_solve_p, [a.astype(np.float64)[:1], b.astype(np.float64)[:1]],
               params)


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 3, 5), (1, 1)])
def test_lu_reconstructs(shape):
    a = np.random.default_rng(2).normal(size=shape).astype(np.float32)
    lu, pivots, perm = run(lu_p, [a], {})
    check_lowering(lu_p, [a], {}, **TOL)
    m, n = shape[-2:]
    k = min(m, n)
    low = np.tril(lu[..., :, :k], -1) + np.eye(m, k, dtype=np.float32)
    up = np.triu(lu[..., :k, :])
    np.testing.assert_allclose(low @ up, np.take_along_axis(a, perm[..., None], -2), **TOL)
    assert pivots.dtype == perm.dtype == np.int32


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 3, 5), (0, 3)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_qr_reconstructs(shape, full_matrices):
    a = np.random.default_rng(3).normal(size=shape).astype(np.float32)
    q, r = run(qr_p, [a], dict(full_matrices=full_matrices))
    np.testing.assert_allclose(q @ r, a, **TOL)
    eye = np.eye(q.shape[-1], dtype=np.float32)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(eye, q.shape[:-2]
                               + eye.shape), **TOL)
    assert np.all(np.tril(r, -1) == 0)


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_reconstructs(lower):
    x = np.random.default_rng(4).normal(size=(3, 5, 5)).astype(np.float32)
    v, w = run(eigh_p, [x], dict(lower=lower))
    a = sym_from(x, lower)
    np.testing.assert_allclose(a @ v, v * w[..., None, :], **TOL)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), **TOL)
    assert np.all(np.diff(w, axis=-1) >= 0)


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 3, 5), (0, 2)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_reconstructs(shape, full_matrices):
    a = np.random.default_rng(5).normal(size=shape).astype(np.float32)
    s, u, vt = run(svd_p, [a], dict(full_matrices=full_matrices, compute_uv=True))
    k = s.shape[-1]
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, **TOL)
    (s_only,) = run(svd_p, [a], dict(full_matrices=full_matrices, compute_uv=False))
    np.testing.assert_allclose(s_only, np.linalg.svd(a, compute_uv=False), **TOL)


def test_shape_errors_say_what_is_wrong():
    b = Builder()
    with pytest.raises(ShapeError, match="square"):
        b.cholesky(b.input(TensorType((3, 4), np.dtype(np.float32))))
    with pytest.raises(ShapeError, match="float32, float64, complex64 or complex128"):
        b.eigh(b.input(TensorType((3, 3), np.dtype(np.int32))), lower=True)
    with pytest.raises(ShapeError, match="matrix"):
        b.svd(b.input(TensorType((3,), np.dtype(np.float32))), full_matrices=False,
              compute_uv=False)


# --- vmap ----------------------------------------------------------------------------------------

def test_vmap_of_each_primitive():
    rng = np.random.default_rng(6)
    check_vmap(cholesky_p, [spd(rng, (3, 4, 4))], {}, [0], 3, **TOL)
    check_vmap(lu_p, [rng.normal(size=(3, 2, 4)).astype(np.float32)], {}, [1], 2, **TOL)
    for left_side in (True, False):
        check_vmap(triangular_solve_p, [spd(rng, (2, 4, 4)), rng.normal(size=(
            2, 4, 3, 3) if left_side else (2, 3, 3, 4)).astype(np.float32)],
            dict(left_side=left_side, lower=True, transpose_a=True, unit_diagonal=False),
            [None, 2], 3, **TOL)
        check_vmap(triangular_solve_p, [spd(rng, (4, 4, 4)), rng.normal(size=(
            4, 2)).astype(np.float32)], dict(left_side=True, lower=False, transpose_a=False,
                                                unit_diagonal=True), [0, None], 4, **TOL)
    check_vmap(svd_p, [rng.normal(size=(3, 4, 2)).astype(np.float32)],
               dict(full_matrices=False, compute_uv=False), [0], 3, **TOL)
    check_vmap(eigh_p, [spd(rng, (2, 3, 3))], dict(lower=True), [0], 2, compile=False, **TOL)
    check_vmap(qr_p, [rng.normal(size=(2, 4, 3)).astype(np.float32)],
               dict(full_matrices=False), [0], 2, **TOL)


# --- derivatives -------------------------------------------------------------------------------

def _symmetrized(prim, n, params, batch=()):
    """x -> prim(x + x^T): a function of every element whose derivative checks are exact."""
    b = Builder(prim.name + "_sym")
    x = b.input(TensorType((*batch, n, n), np.dtype(np.float64)))
    nd = len(batch) + 2
    xs = b.add(x, b.transpose(x, permutation=(*range(nd - 2), nd - 1, nd - 2)))
    out = b.bind(prim, xs, **params)
    return check(b.build(list(out) if prim.multiple_results else [out]))


def _check_vjp_matches_jvp(func, args, seed=0):
    """<J v, w> == <v, J^T w> for random v, w, and J v == finite differences."""
    rng = np.random.default_rng(seed)
    tangents = check_jvp_of(func, args, [0], 1e-6, 1e-4, 1e-6, func.name, seed)
    weights = [rng.normal(size=t.shape) for t in func.out_types]
    b = Builder("scalar")
    ins = [b.input(t) for t in func.in_types]
    outs = b.inline(func, ins)
    total = None
    for o in outs:
        term = b.reduce_sum(b.mul(o, b.input(o.type)), axes=tuple(range(o.type.ndim)))
        total = term if total is None else b.add(total, term)
    scalar = check(b.build([total]))
    grad = check(cleanup(vjp_func(scalar, [True] + [False] * len(weights))))
    (g,) = evaluate(grad, *args, *weights, np.ones(()))[1:]
    v = np.random.default_rng(seed + 1).normal(size=args[0].shape)
    lhs = sum(float(np.sum(t * w)) for t, w in zip(tangents, weights, strict=True))
    np.testing.assert_allclose(lhs, float(np.sum(v * g)), rtol=1e-6, atol=1e-8)


def test_cholesky_derivatives():
    x = spd(np.random.default_rng(7), (2, 3, 3), np.float64) / 2
    _check_vjp_matches_jvp(_symmetrized(cholesky_p, 3, {}, (2,)), [x])


def test_eigh_derivatives():
    x = np.random.default_rng(8).normal(size=(4, 4))
    _check_vjp_matches_jvp(_symmetrized(eigh_p, 4, dict(lower=True)), [x])


@pytest.mark.parametrize("shape", [(4, 3), (3, 3), (2, 4)])
def test_svd_derivatives(shape):
    a = np.random.default_rng(9).normal(size=shape)
    for compute_uv in (True, False):
        check_grad(svd_p, [a], dict(full_matrices=False, compute_uv=compute_uv))


@pytest.mark.parametrize("shape,full", [((4, 3), False), ((3, 3), True), ((2, 4), False),
                                        ((2, 4), True), ((4, 2), True)])
def test_qr_derivatives(shape, full):
    check_grad(qr_p, [np.random.default_rng(10).normal(size=shape)], dict(full_matrices=full))


@pytest.mark.parametrize("shape", [(2, 3, 3), (4, 3), (3, 5)])
def test_lu_derivatives(shape):
    # rectangular matrices too: JAX's rule with its square completions of L and U
    a = np.random.default_rng(11).normal(size=shape)
    b = Builder("lu_only")
    x = b.input(TensorType(a.shape, np.dtype(np.float64)))
    func = check(b.build([b.lu(x)[0]]))
    _check_vjp_matches_jvp(func, [a])

