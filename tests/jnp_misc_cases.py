"""Index tricks, vectorize, ufuncs and the other late jax.numpy names, run on spmdc and
on JAX 0.10.2 (`tools/record.py jnp_misc` records JAX's results in
tests/data/jnp_misc_reference.json; tests/numpy/test_index_tricks.py compares)."""
from __future__ import annotations

import numpy as np

rng = np.random.default_rng(5)
A = rng.normal(size=(3, 4, 5)).astype(np.float32)
V = rng.normal(size=5).astype(np.float32)
X = rng.normal(size=60).astype(np.float32)
Y = rng.normal(size=60).astype(np.float32)
S = rng.normal(size=(40, 3)).astype(np.float32)
Z = (rng.normal(size=4) + 1j * rng.normal(size=4)).astype(np.complex64)


def cases(lib):
    jnp = lib.numpy
    add = jnp.frompyfunc(lambda x, y: x + y, 2, 1, identity=0)
    hyp = jnp.frompyfunc(lambda x, y: jnp.sqrt(x * x + y * y), 2, 1)
    dot = jnp.vectorize(jnp.dot, signature="(n),(n)->()")
    two = jnp.vectorize(lambda a, b: (a @ b, a.sum()), signature="(n,m),(m)->(n),()")
    return {
        "mgrid": lambda: jnp.mgrid[0:3, 1:7:2],
        "mgrid_complex": lambda: jnp.mgrid[-1:1:5j, 0:2],
        "ogrid": lambda: tuple(jnp.ogrid[0:3, 0:4:0.5]),
        "r_": lambda: jnp.r_[1:4, 0, np.array([7, 8]), 0.5:1.5:3j],
        "r_directive": lambda: jnp.r_["0,2,0", [1, 2], [3, 4]],
        "r_c": lambda: jnp.r_["c", 1, 2, 3],
        "c_": lambda: jnp.c_[np.array([1, 2, 3]), np.array([4, 5, 6]), np.ones((3, 2))],
        "vectorize_dot": lambda: dot(A, V),
        "vectorize_two": lambda: two(A, V),
        "vectorize_broadcast": lambda: jnp.vectorize(lambda x, y: x * y + 1)(A[:, :1], V),
        "vectorize_excluded": lambda: jnp.vectorize(lambda x, p: x ** p, excluded={1})(A, 2),
        "grad_vectorize": lambda: lib.grad(lambda a: jnp.sum(dot(a, V) ** 2))(A),
        "apply_along_axis": lambda: jnp.apply_along_axis(lambda x: x.cumsum()[::2], 1, A),
        "apply_over_axes": lambda: jnp.apply_over_axes(jnp.sum, A, [0, 2]),
        "ufunc_call": lambda: hyp(A, V),
        "ufunc_reduce": lambda: hyp.reduce(A, axis=1),
        "ufunc_reduce_where": lambda: add.reduce(A, axis=2, where=A > 0, initial=1.0),
        "ufunc_reduce_all": lambda: add.reduce(A, axis=None, keepdims=True),
        "ufunc_accumulate": lambda: hyp.accumulate(A, axis=2),
        "ufunc_at": lambda: add.at(np.zeros(5, np.float32), np.array([0, 1, 1, 4]),
                                   np.array([1.0, 2.0, 3.0, 4.0], np.float32), inplace=False),
        "ufunc_outer": lambda: hyp.outer(V[:3], V),
        "ufunc_reduceat": lambda: add.reduceat(X[:8], np.array([0, 4, 1, 5])),
        "array_equiv": lambda: (jnp.array_equiv(V, np.stack([V, V])),
                                jnp.array_equiv(V, V + 1)),
        "block": lambda: jnp.block([[np.ones((2, 2)), np.zeros((2, 1))], [np.arange(3.0)]]),
        "histogram2d": lambda: jnp.histogram2d(X, Y, bins=(5, 4), range=[(-2, 2), (-3, 3)],
                                               weights=np.abs(X), density=True),
        "histogramdd": lambda: (lambda h, e: (h, *e))(*jnp.histogramdd(S, bins=[3, 4, 2])),
        "vecdot": lambda: jnp.vecdot(Z, Z[::-1]),
        "matvec": lambda: jnp.matvec(A, V),
        "vecmat": lambda: jnp.vecmat(V[:4], A),
        "einsum_greedy": lambda: jnp.einsum("ij,jk,kl,lm->im", A[0], A[1].T, A[2], A[0].T,
                                            optimize="greedy"),
        "einsum_path_order": lambda: jnp.einsum("ij,jk,kl->il", A[0], A[1].T, A[2],
                                                optimize=[(1, 2), (0, 1)]),
        "einsum_path": lambda: np.asarray(jnp.einsum_path(
            "ij,jk,kl->il", np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5)))[0]),
    }
