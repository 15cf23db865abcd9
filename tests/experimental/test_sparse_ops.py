"""spmdc.experimental.sparse against dense NumPy: every layout (n_batch, n_dense) through
fromdense/todense, sum_duplicates, sort_indices, reduce_sum, extract, update_layout and the
structural operations; dot_general with batch, free and contracted batch dimensions,
dense-sparse and sparse-sparse; sparsify; the legacy formats, spsolve; the sparse
gradients; JAX's exception types. The quick tests trace one jitted program each; the
exhaustive layout sweep is slow."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.experimental import sparse

RNG = np.random.default_rng(7)


def sprinkled(shape, p=0.4):
    return (RNG.normal(size=shape) * (RNG.uniform(size=shape) < p)).astype(np.float32)


X = sprinkled((2, 3, 4))
M = sprinkled((3, 4))


def close(got, want, tol=1e-5):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def nse_of(x, n_batch, n_dense):
    mask = x != 0
    if n_dense:
        mask = mask.any(axis=tuple(range(x.ndim - n_dense, x.ndim)))
    return int(mask.reshape(mask.shape[:n_batch] + (-1,)).sum(-1).max())


LAYOUTS = [(b, d) for b in range(3) for d in range(3 - b)]


def test_layouts_under_jit():
    @spmdc.jit
    def run(x):
        out = {}
        # (2, 0): summing the only sparse axis leaves indices with no column
        for b, d in [(0, 0), (1, 1), (2, 0)]:
            s = sparse.BCOO.fromdense(x, nse=nse_of(X, b, d) + 1, n_batch=b, n_dense=d)
            out[b, d] = (s.todense(), s.sum_duplicates(nse=s.nse).todense(),
                         sparse.bcoo_reduce_sum(s, axes=(0, 2)).todense(),
                         sparse.bcoo_extract(s, 2 * x).todense(),
                         sparse.bcoo_rev(s, (1, 2)).todense())
        return out
    for dense, merged, summed, extracted, reversed_ in run(X).values():
        close(dense, X)
        close(merged, X)
        close(summed, X.sum((0, 2)))
        close(extracted, 2 * X)
        close(reversed_, X[:, ::-1, ::-1])


def test_dot_general_under_jit():
    y = RNG.normal(size=(2, 4, 5)).astype(np.float32)
    v = RNG.normal(size=4).astype(np.float32)
    u = RNG.normal(size=(5, 3)).astype(np.float32)
    w = RNG.normal(size=(2, 3)).astype(np.float32)
    m2 = sprinkled((4, 6))
    batch_dims = (((2,), (1,)), ((0,), (0,)))

    @spmdc.jit
    def run(x, m):
        batched = sparse.BCOO.fromdense(x, nse=nse_of(X, 1, 0), n_batch=1)
        flat = sparse.BCOO.fromdense(m, nse=nse_of(M, 0, 0))
        other = sparse.BCOO.fromdense(m2, nse=nse_of(m2, 0, 0))
        return (sparse.bcoo_dot_general(batched, y, dimension_numbers=batch_dims),
                sparse.bcoo_dot_general(batched, v, dimension_numbers=(((2,), (0,)), ((), ()))),
                sparse.bcoo_dot_general(batched, w, dimension_numbers=(((0, 1), (0, 1)),
                                                                       ((), ()))),
                sparse.bcoo_dot_general(u, flat, dimension_numbers=(((1,), (0,)), ((), ()))),
                (flat @ other).todense(), flat.T @ np.ones(3, np.float32))
    by_batch, free, contracted, dense_sparse, sparse_sparse, transposed = run(X, M)
    close(by_batch, np.einsum("bij,bjk->bik", X, y))
    close(free, X @ v)
    close(contracted, np.einsum("bij,bi->j", X, w))
    close(dense_sparse, u @ M)
    close(sparse_sparse, M @ m2)
    close(transposed, M.T @ np.ones(3))


def test_structure_under_jit():
    @spmdc.jit
    def run(x):
        s = sparse.BCOO.fromdense(x, nse=nse_of(X, 1, 0), n_batch=1)
        t = sparse.BCOO.fromdense(x, nse=nse_of(X, 0, 1), n_dense=1)
        return (sparse.bcoo_slice(s, start_indices=(0, 1, 0), limit_indices=(2, 3, 4),
                                  strides=(1, 1, 2)).todense(),
                sparse.bcoo_dynamic_slice(t, (1, 1, 2), (1, 2, 2)).todense(),
                sparse.bcoo_concatenate([s, s], dimension=2).todense(),
                sparse.bcoo_concatenate([s, s], dimension=0).todense(),
                sparse.bcoo_reshape(s, new_sizes=(2, 12)).todense(),
                sparse.bcoo_squeeze(sparse.bcoo_reshape(t, new_sizes=(2, 3, 1, 4)),
                                    dimensions=(2,)).todense(),
                sparse.bcoo_broadcast_in_dim(t, shape=(5, 2, 3, 4),
                                             broadcast_dimensions=(1, 2, 3)).todense(),
                sparse.bcoo_update_layout(s, n_batch=0).todense(),
                sparse.bcoo_update_layout(t, n_dense=0).todense())
    (sliced, dynamic, wide, stacked, reshaped, squeezed, broadcast, unbatched,
     undensed) = run(X)
    close(sliced, X[:, 1:3, ::2])
    close(dynamic, X[1:2, 1:3, 2:4])
    close(wide, np.concatenate([X, X], 2))
    close(stacked, np.concatenate([X, X], 0))
    close(reshaped, X.reshape(2, 12))
    close(squeezed, X)
    close(broadcast, np.broadcast_to(X, (5, 2, 3, 4)))
    close(unbatched, X)
    close(undensed, X)


@pytest.mark.slow
@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_change_eagerly(layout):
    x = sprinkled((2, 3, 4, 2))
    s = sparse.BCOO.fromdense(x, n_batch=layout[0], n_dense=layout[1])
    for b, d in itertools.product(range(5), range(5)):
        if b + d <= 4:
            t = s.update_layout(n_batch=b, n_dense=d, on_inefficient=None)
            assert (t.n_batch, t.n_dense) == (b, d)
            close(t.todense(), x)
    close(s.sum_duplicates().todense(), x)
    close(s.sort_indices().todense(), x)
    close(sparse.bcoo_rev(s, (0, 2, 3)).todense(), x[::-1, :, ::-1, ::-1])


def test_sparsify_matches_dense():
    s = sparse.BCOO.fromdense(M)
    v = np.arange(3.0, dtype=np.float32)

    @spmdc.jit
    def run(s, v):
        def f(m, v):
            return 2 * jnp.dot(jnp.log1p(m.T), v) + 1
        g = sparse.sparsify(lambda m: (jnp.sin(m) * m + m).sum(0))
        h = sparse.sparsify(lambda m: (m[1:] ** 2).reshape(8) / 2)
        return sparse.sparsify(f)(s, v), g(s).todense(), h(s).todense()
    got_f, got_g, got_h = run(s, v)
    close(got_f, 2 * np.log1p(M.T) @ v + 1)
    close(got_g, (np.sin(M) * M + M).sum(0))
    close(got_h, (M[1:] ** 2).reshape(8) / 2)


def test_formats_and_spsolve():
    a = (np.eye(4) * 3 + sprinkled((4, 4))).astype(np.float32)
    b = RNG.normal(size=4).astype(np.float32)
    coo, csr, csc = (cls.fromdense(a) for cls in (sparse.COO, sparse.CSR, sparse.CSC))
    bcsr = sparse.BCSR.fromdense(a)

    @spmdc.jit
    def run(coo, csr, csc, bcsr, b):
        return (coo @ b, sparse.coo_matvec(coo, b, transpose=True),
                sparse.coo_matmat(coo, b[:, None]), csr @ b,
                sparse.csr_matvec(csr, b, transpose=True), csc @ b, csc.todense(),
                bcsr @ b, sparse.bcsr_todense(bcsr),
                sparse.linalg.spsolve(csr.data, csr.indices, csr.indptr, b))
    out = run(coo, csr, csc, bcsr, b)
    for got in (out[0], out[3], out[5], out[7]):
        close(got, a @ b)
    close(out[1], a.T @ b)
    close(out[2], (a @ b)[:, None])
    close(out[4], a.T @ b)
    close(out[6], a)
    close(out[8], a)
    close(out[9], np.linalg.solve(a, b), tol=1e-4)
    # d x / d b of a solve is the solve of the cotangent with the transpose
    grad_b = spmdc.grad(lambda b: sparse.linalg.spsolve(csr.data, csr.indices, csr.indptr,
                                                        b).sum())(b)
    close(grad_b, np.linalg.solve(a.T, np.ones(4)), tol=1e-4)


def test_sparse_gradients_live_on_the_pattern():
    s = sparse.BCOO.fromdense(X, n_batch=1)
    v = np.arange(4.0, dtype=np.float32)
    value, grads = sparse.value_and_grad(lambda s, v: (s @ v).sum(), argnums=(0, 1))(s, v)
    close(value, (X @ v).sum())
    assert isinstance(grads[0], sparse.BCOO) and grads[0].n_batch == 1
    # the gradient at each stored element is v at its column; zero elsewhere
    close(grads[0].todense(), np.where(X != 0, np.broadcast_to(v, X.shape), 0))
    close(grads[1], X.sum((0, 1)))
    jac = sparse.jacrev(lambda s: s @ v)(sparse.BCOO.fromdense(M))
    assert jac.shape == (3, 3, 4)
    close(jac.todense(), np.einsum("ij,k->kij", np.where(M != 0, v, 0), np.ones(3))
          * np.eye(3)[:, :, None])


def test_errors_are_jax_s():
    s = sparse.BCOO.fromdense(M)
    with pytest.raises(TypeError, match="sparse array"):
        jnp.exp(s)
    with pytest.raises(NotImplementedError, match="sparse rule for exp"):
        sparse.sparsify(jnp.exp)(s)
    with pytest.raises(NotImplementedError, match="Division by a sparse array"):
        1 / s
    with pytest.raises(NotImplementedError, match="non-positive exponent"):
        s ** -1
    with pytest.raises(NotImplementedError, match="contracting over dense dimensions"):
        sparse.bcoo_dot_general(sparse.BCOO.fromdense(M, n_dense=1), np.ones(4),
                                dimension_numbers=(((1,), (0,)), ((), ())))
    with pytest.raises(NotImplementedError, match="cannot|mixes batch"):
        sparse.BCOO.fromdense(X, n_batch=1).transpose((1, 0, 2))
    with pytest.raises(sparse.SparseEfficiencyError, match="on_inefficient"):
        sparse.BCOO.fromdense(M).update_layout(n_batch=1)
    with pytest.raises(ValueError, match="on_inefficient='foo'"):
        sparse.BCOO.fromdense(M).update_layout(n_batch=1, on_inefficient="foo")
    with pytest.raises(ValueError, match="invalid indices"):
        sparse.bcoo_slice(s, start_indices=(0, 0), limit_indices=(5, 4))
    with pytest.raises(ValueError, match="cannot mix batch and sparse"):
        sparse.bcoo_reshape(sparse.BCOO.fromdense(M, n_batch=1), new_sizes=(4, 3))
    with pytest.raises(ValueError, match="not recognized"):
        sparse.empty((3,), sparse_format="foo")
    with pytest.raises(ValueError, match="expected to be between 0 and 3"):
        sparse.random_bcoo(spmdc.random.key(0), (3,), nse=3)
    with pytest.raises(ValueError, match="data types do not match"):
        sparse.linalg.spsolve(np.ones(2, np.float32), np.zeros(2, np.int32),
                              np.array([0, 1, 2], np.int32), np.ones(2, np.int32))
    assert issubclass(sparse.SparseEfficiencyError, ValueError)
    assert issubclass(sparse.CuSparseEfficiencyWarning, sparse.SparseEfficiencyWarning)


def test_grad_through_sparsify_as_jax_docs_train():
    # JAX's sparse docs: logistic regression on a BCOO design matrix, differentiated
    # outside and inside sparsify
    x = sprinkled((20, 5), 0.3)
    y = (RNG.uniform(size=20) < 0.5).astype(np.float32)

    def loss(params, x, y):
        y_hat = 0.5 * (jnp.tanh((jnp.dot(x, params[0]) + params[1]) / 2) + 1)
        return -jnp.mean(y * jnp.log(y_hat) + (1 - y) * jnp.log(1 - y_hat))
    params = (jnp.zeros(5), 0.0)
    want = spmdc.grad(loss)(params, x, y)
    x_sp = sparse.BCOO.fromdense(x)
    outside = spmdc.jit(spmdc.grad(sparse.sparsify(loss)))(params, x_sp, y)
    inside = spmdc.jit(sparse.sparsify(spmdc.grad(loss)))(params, x_sp, y)
    for got in (outside, inside):
        close(got[0], want[0])
        close(got[1], want[1])


def test_vmap_maps_batch_dimensions():
    # in_axes=0 takes a BCOO's leading batch dimension off; a BCOO result gains one (JAX's
    # vmappable BCOO). See Note [BCOO under vmap].
    s = sparse.BCOO.fromdense(X, n_batch=1)
    ones = np.ones((2, 4), np.float32)
    close(spmdc.jit(spmdc.vmap(lambda m, v: m @ v))(s, ones), X @ np.ones(4))
    built = spmdc.vmap(lambda v: sparse.BCOO.fromdense(v, nse=nse_of(X, 1, 0)))(X)
    assert repr(built) == f"BCOO(float32[2, 3, 4], nse={nse_of(X, 1, 0)}, n_batch=1)"
    close(built.todense(), X)
