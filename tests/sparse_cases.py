"""jax.experimental.sparse programs run on spmdc and on JAX 0.10.2: each case gives the
printed form of its result and its buffers (`tools/record.py sparse` records JAX's in
tests/data/sparse_reference.json; tests/experimental/test_sparse_recorded.py compares, so
layouts, nse, padding and values are JAX's, not only the dense values)."""
from __future__ import annotations

import numpy as np

X = np.array([[[0., 1., 0.], [2., 0., 0.]], [[0., 0., 0.], [3., 0., 4.]]], np.float32)
DUPLICATES = (np.array([1., 2., 0., 5.], np.float32),
              np.array([[2, 3], [0, 0], [1, 1], [2, 3]], np.int32))


def _buffers(value):
    """A sparse array as (repr, buffers...); a dense one as (its values,)."""
    names = ("data", "indices", "indptr", "row", "col")
    if hasattr(value, "nse"):
        return (repr(value),) + tuple(np.asarray(getattr(value, n)) for n in names
                                      if hasattr(value, n))
    return (np.asarray(value),)


def cases(jax):
    sparse = jax.experimental.sparse
    jnp = jax.numpy

    def bcoo(**kw):
        return sparse.BCOO.fromdense(X, **kw)

    def duplicates():
        return sparse.BCOO(DUPLICATES, shape=(3, 4))

    out = {f"fromdense.b{b}d{d}": (lambda b=b, d=d: bcoo(n_batch=b, n_dense=d))
           for b, d in [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0)]}
    out.update({
        "sum_duplicates.remove_zeros": lambda: duplicates().sum_duplicates(),
        "sum_duplicates.keep_zeros": lambda: duplicates().sum_duplicates(nse=4,
                                                                          remove_zeros=False),
        "sort_indices.unsorted": lambda: duplicates().sort_indices(),
        "random_bcoo.batched": lambda: sparse.random_bcoo(
            jax.random.key(3), (2, 3, 4), nse=3, n_batch=1, dtype=jnp.float32),
        "random_bcoo.normal_sorted": lambda: sparse.random_bcoo(
            jax.random.key(3), (5, 4), nse=0.3, n_dense=1, dtype=jnp.float32,
            sorted_indices=True, generator=jax.random.normal),
        "bcsr.fromdense": lambda: sparse.BCSR.fromdense(X, n_batch=1),
        "bcsr.padded": lambda: sparse.BCSR.fromdense(X[1], nse=4),
        "eye.lower": lambda: sparse.eye(3, 4, k=-1),
        "eye.batched": lambda: sparse.eye(3, n_batch=1),
        "empty.dense": lambda: sparse.empty((2, 3), n_dense=1, nse=2),
        "coo.fromdense": lambda: sparse.COO.fromdense(X[1], nse=3),
        "csr.fromdense": lambda: sparse.CSR.fromdense(X[1], nse=3),
        "csc.fromdense": lambda: sparse.CSC.fromdense(X[1]),
        "spdot.matmul": lambda: bcoo()[1] @ sparse.BCOO.fromdense(X[0].T),
        "update_layout.to_batch": lambda: sparse.bcoo_update_layout(
            bcoo(), n_batch=1, on_inefficient=None),
        "update_layout.to_dense": lambda: sparse.bcoo_update_layout(
            bcoo(), n_dense=1, on_inefficient=None),
        "multiply_sparse.pairs": lambda: sparse.bcoo_multiply_sparse(bcoo(), bcoo()),
        "operators.getitem": lambda: bcoo()[1],
        "operators.slice": lambda: bcoo()[:, 1:],
        "operators.reshape": lambda: bcoo().reshape(4, 3),
        "operators.sum": lambda: bcoo().sum(1),
        "operators.transpose": lambda: bcoo().T,
        "operators.mul": lambda: bcoo() * bcoo(),
        "operators.add": lambda: bcoo() + bcoo(),
        "operators.scale": lambda: 2 * bcoo(),
        "sparsify.shared": lambda: sparse.sparsify(lambda x: x * jnp.sin(x) + x)(bcoo()),
        "grad.sparse_and_dense": lambda: sparse.grad(
            lambda a, y: (a @ y).sum(), argnums=(0, 1))(sparse.BCOO.fromdense(X[1]),
                                                        jnp.arange(3.0))[0],
        "jacfwd.pattern": lambda: sparse.jacfwd(lambda a: a @ jnp.arange(3.0))(
            sparse.BCOO.fromdense(X[1])),
        "gather.rows": lambda: bcoo(n_batch=1)[jnp.array([1, 0])],
        "gather.columns": lambda: bcoo()[:, jnp.array([1, 1, 0])],
        "gather.nested": lambda: bcoo()[jnp.array([[1], [0]])],
        "bcsr.concatenate": lambda: sparse.bcsr_concatenate(
            [sparse.BCSR.fromdense(X[1])] * 2, dimension=1),
        "bcsr.broadcast_in_dim": lambda: sparse.bcsr_broadcast_in_dim(
            sparse.BCSR.fromdense(X[1]), shape=(2, 2, 3), broadcast_dimensions=(1, 2)),
        "bcsr.sum_duplicates": lambda: sparse.BCSR(
            (np.array([1., 2., 3.], np.float32), np.array([0, 0, 2]), np.array([0, 2, 3])),
            shape=(2, 3)).sum_duplicates(),
        "eye.csc": lambda: sparse.eye(3, 4, k=1, sparse_format="csc"),
        "eye.dense_dimension": lambda: sparse.eye(3, 4, k=1, n_dense=1),
        "empty.bcsr": lambda: sparse.empty((2, 3, 4), sparse_format="bcsr", n_batch=1, nse=2),
        "spsolve.csr": lambda: sparse.linalg.spsolve(
            np.array([2., 1., 3.], np.float32), np.array([0, 1, 1], np.int32),
            np.array([0, 2, 3], np.int32), np.ones(2, np.float32)),
        "dot_general_sampled.pattern": lambda: sparse.bcoo_dot_general_sampled(
            np.ones((2, 3), np.float32), np.arange(12., dtype=np.float32).reshape(3, 4),
            sparse.BCOO.fromdense(np.eye(2, 4)).indices,
            dimension_numbers=(((1,), (0,)), ((), ()))),
        "dot_general.batched": lambda: sparse.bcoo_dot_general(
            bcoo(n_batch=1), X.transpose(0, 2, 1), dimension_numbers=(((2,), (1,)),
                                                                     ((0,), (0,)))),
    })
    return {name: (lambda thunk=thunk: _buffers(thunk())) for name, thunk in out.items()}
