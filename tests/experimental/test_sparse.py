"""spmdc.experimental.sparse.BCOO against dense NumPy: fromdense/todense (padding,
truncation, duplicates, booleans, 3-d), products with dense operands on both sides,
transposes, sums, scalar arithmetic; JAX 0.10.2's layout (indices, padding at ``shape``),
BCOO as a pytree under jit and grad, and JAX's errors."""
from __future__ import annotations

import alias_programs
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.errors import ConcretizationTypeError
from spmdc.experimental.sparse import BCOO, bcoo_fromdense, bcoo_todense
from spmdc.tree_util import tree_leaves

RNG = np.random.default_rng(5)
DENSE = (RNG.normal(size=(5, 7)) * (RNG.uniform(size=(5, 7)) < 0.3)).astype(np.float32)
M = np.array([[0., 1., 0., 2.], [3., 0., 0., 0.], [0., 0., 4., 0.]], np.float32)


def close(got, want, tol=1e-6):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_layout_is_jax_s():
    s = BCOO.fromdense(M)
    assert repr(s) == "BCOO(float32[3, 4], nse=4)"
    assert (s.shape, s.nse, s.ndim, s.dtype, s.n_batch, s.n_sparse, s.n_dense) == \
        ((3, 4), 4, 2, np.float32, 0, 2, 0)
    close(s.data, [1., 2., 3., 4.])
    assert np.asarray(s.indices).tolist() == [[0, 1], [0, 3], [1, 0], [2, 2]]
    assert s.indices.dtype == np.int32
    padded = BCOO.fromdense(M, nse=6)
    # JAX pads with the out-of-range coordinate `shape` and the value 0
    assert np.asarray(padded.indices).tolist()[4:] == [[3, 4], [3, 4]]
    close(padded.data, [1., 2., 3., 4., 0., 0.])
    assert np.asarray(s.T.indices).tolist() == [[1, 0], [3, 0], [0, 1], [2, 2]]
    # the hints: fromdense's are sorted and unique; a transpose keeps only uniqueness, a
    # sum over an axis neither
    assert (s.indices_sorted, s.unique_indices) == (True, True)
    assert (s.T.indices_sorted, s.T.unique_indices) == (False, True)
    assert (s.sum(0).indices_sorted, s.sum(0).unique_indices) == (False, False)


@pytest.mark.parametrize("nse", [None, 3, 20])
def test_fromdense_todense(nse):
    s = bcoo_fromdense(DENSE, nse=nse)
    if nse is None or nse >= np.count_nonzero(DENSE):
        close(bcoo_todense(s), DENSE)
        close(s.todense(), DENSE)
    else:
        # the first nse non-zeros in row-major order are kept
        kept = np.zeros_like(DENSE)
        rows, cols = np.nonzero(DENSE)
        kept[rows[:nse], cols[:nse]] = DENSE[rows[:nse], cols[:nse]]
        close(s.todense(), kept)
    cube = (np.arange(24.0).reshape(2, 3, 4) % 5 == 0)
    assert np.array_equal(BCOO.fromdense(cube).todense(), cube)


def test_duplicates_add_up():
    s = BCOO((np.array([1., 2., 5.], np.float32), np.array([[0, 0], [0, 0], [2, 3]])),
             shape=(3, 4))
    want = np.zeros((3, 4), np.float32)
    want[0, 0], want[2, 3] = 3.0, 5.0
    close(s.todense(), want)
    close(s @ np.arange(4.0, dtype=np.float32), want @ np.arange(4.0))
    flags = BCOO((np.array([True, True]), np.array([[1, 1], [1, 1]])), shape=(2, 2))
    assert np.asarray(flags.todense()).tolist() == [[False, False], [False, True]]


@pytest.mark.parametrize("nse", [None, 15])
def test_products_with_dense_operands(nse):
    s = BCOO.fromdense(DENSE, nse=nse)
    v, u = RNG.normal(size=7).astype(np.float32), RNG.normal(size=5).astype(np.float32)
    a, b = RNG.normal(size=(7, 3)).astype(np.float32), RNG.normal(size=(2, 5)).astype(np.float32)
    close(s @ v, DENSE @ v, tol=1e-5)
    close(s @ a, DENSE @ a, tol=1e-5)
    close(u @ s, u @ DENSE, tol=1e-5)
    close(b @ s, b @ DENSE, tol=1e-5)
    close(s.T @ u, DENSE.T @ u, tol=1e-5)
    product = s @ BCOO.fromdense(a)          # sparse @ sparse is sparse, as in JAX
    assert isinstance(product, BCOO)
    close(product.todense(), DENSE @ a, tol=1e-5)
    vector = BCOO.fromdense(v * (v > 0))
    close(vector @ a, (v * (v > 0)) @ a, tol=1e-5)


def test_transpose_and_sums():
    cube = (RNG.normal(size=(2, 3, 4)) * (RNG.uniform(size=(2, 3, 4)) < 0.4)).astype(np.float32)
    s = BCOO.fromdense(cube, nse=int(np.count_nonzero(cube)) + 2)
    close(s.transpose((1, 0, 2)).todense(), cube.transpose(1, 0, 2))
    close(s.T.todense(), cube.T)
    close(s.sum(), cube.sum(), tol=1e-5)
    for axis in (0, 1, (0, 2), -1):
        got = s.sum(axis)
        assert isinstance(got, BCOO)
        close(got.todense(), cube.sum(axis), tol=1e-5)
    counts = BCOO.fromdense(np.arange(24.0).reshape(2, 3, 4) % 5 == 0).sum((0, 2))
    assert counts.dtype == np.int32
    assert np.asarray(counts.todense()).tolist() == [2, 1, 2]


def test_scalar_arithmetic():
    s = BCOO.fromdense(M)
    close((s * np.arange(4.0)).todense(), M * np.arange(4.0))     # broadcast dense factor
    close((2 * s).todense(), 2 * M)
    close((s * 2).todense(), 2 * M)
    close((-s).todense(), -M)
    close((s / 4).todense(), M / 4)
    close(s.astype(np.float16).todense(), M.astype(np.float16))


def test_jit_takes_and_returns_bcoo():
    s = BCOO.fromdense(DENSE)
    assert len(tree_leaves(s)) == 2
    v = np.arange(7.0, dtype=np.float32)
    close(spmdc.jit(lambda s, x: s @ x)(s, v), DENSE @ v, tol=1e-5)
    built = spmdc.jit(lambda m: BCOO.fromdense(m, nse=12))(DENSE)
    assert isinstance(built, BCOO) and built.nse == 12
    close(built.todense(), DENSE)
    close(spmdc.jit(lambda s: s.T.sum(0).todense())(s), DENSE.sum(1), tol=1e-5)


def test_fromdense_under_jit_needs_nse():
    with pytest.raises(ConcretizationTypeError, match="pass nse="):
        spmdc.jit(lambda m: BCOO.fromdense(m).todense())(DENSE)


def test_gradients():
    s = BCOO.fromdense(M)
    v = np.arange(4.0, dtype=np.float32)
    d_data = spmdc.grad(lambda d: (BCOO((d, s.indices), shape=s.shape) @ v).sum())(s.data)
    close(d_data, [1., 3., 0., 2.])                      # v at each stored column
    pattern = spmdc.grad(lambda m: BCOO.fromdense(m, nse=4).sum())(M)
    close(pattern, (M != 0).astype(np.float32))         # the sparsity pattern, as in JAX
    close(spmdc.grad(lambda x: (s @ x).sum())(v), M.sum(0))
    close(spmdc.grad(lambda x: (x @ s).sum())(np.ones(3, np.float32)), M.sum(1))


def test_errors():
    with pytest.raises(ValueError, match="do not describe an array of shape"):
        BCOO((np.ones((2, 3)), np.zeros((2, 2), np.int32)), shape=(4, 4, 4, 4))
    with pytest.raises(ValueError, match="do not describe an array of shape"):
        BCOO((np.ones(2), np.zeros((2, 3), np.int32)), shape=(4, 4))
    with pytest.raises(TypeError, match="indices must be integers"):
        BCOO((np.ones(2), np.zeros((2, 2))), shape=(4, 4))
    with pytest.raises(TypeError, match="contracting dimension"):
        BCOO.fromdense(M) @ np.ones(3, np.float32)
    with pytest.raises(NotImplementedError, match="Subtraction between sparse and dense"):
        BCOO.fromdense(M) - np.ones((3, 4), np.float32)
    with pytest.raises(TypeError, match="isn.t a permutation"):
        BCOO.fromdense(M).transpose((0, 0))
    assert jnp.asarray(BCOO.fromdense(M).sum()).shape == ()


ALIAS_PROGRAM = alias_programs.register("experimental_sparse", (
    "import sys, spmdc; sys.modules['jax'] = spmdc\n"
    "from jax.experimental import sparse\n"
    "assert sparse.BCOO is spmdc.experimental.sparse.BCOO\n"
    "print('ok')\n"))


def test_jax_s_import_path_resolves():
    out = alias_programs.run(ALIAS_PROGRAM)      # one child for the alias programs
    assert out.stdout.strip() == "ok", out.stderr
