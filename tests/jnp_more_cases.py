"""jax.numpy functions whose results JAX 0.10.2 computes in its own way (set operations
with size=, partial sorts, insert/delete, polynomials, float bits), run on spmdc and on
JAX; `tools/record.py jnp_more` records JAX's results in
tests/data/jnp_more_reference.json and tests/numpy/test_setops.py compares."""
from __future__ import annotations

import numpy as np

rng = np.random.default_rng(11)
A = rng.integers(0, 8, size=15).astype(np.int32)
B = rng.integers(4, 12, size=9).astype(np.int32)
F = np.array([1.5, np.nan, 2.0, np.nan, 1.5, -0.0, 0.0, 3.0], np.float32)
M = rng.integers(0, 3, size=(6, 3)).astype(np.int32)
X = rng.normal(size=(4, 7)).astype(np.float32)
T = np.linspace(-1, 1, 12).astype(np.float32)
Y = (2 * T ** 3 - T + 0.25 + 0.05 * rng.normal(size=12)).astype(np.float32)
R = np.array([1.0, -2.5, 0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -3e-35, 3.4e38, 0.75],
             np.float32)


def cases(lib):
    jnp = lib.numpy
    jit = lib.jit
    out = {
        "unique": lambda: jnp.unique(A),
        "unique_flags": lambda: jnp.unique(A, True, True, True),
        "unique_nan": lambda: jnp.unique(F),
        "unique_nan_distinct": lambda: jnp.unique(F, equal_nan=False),
        "unique_axis0": lambda: jnp.unique(M, axis=0, return_index=True, return_inverse=True,
                                           return_counts=True),
        "unique_size": lambda: jit(lambda a: jnp.unique(
            a, size=10, return_index=True, return_inverse=True, return_counts=True))(A),
        "unique_size_fill": lambda: jit(lambda a: jnp.unique(a, size=10, fill_value=-1))(A),
        "unique_all": lambda: tuple(jnp.unique_all(A)),
        "unique_counts_size": lambda: tuple(jnp.unique_counts(F, size=9, fill_value=0.5)),
        "unique_inverse": lambda: tuple(jnp.unique_inverse(M)),
        "unique_values": lambda: jnp.unique_values(F),
        "intersect1d": lambda: jnp.intersect1d(A, B, return_indices=True),
        "intersect1d_size": lambda: jit(lambda a, b: jnp.intersect1d(
            a, b, size=8, return_indices=True))(A, B),
        "intersect1d_size_fill": lambda: jit(lambda a, b: jnp.intersect1d(
            a, b, size=8, fill_value=-3))(A, B),
        "union1d": lambda: jnp.union1d(A, B),
        "union1d_size": lambda: jit(lambda a, b: jnp.union1d(a, b, size=14))(A, B),
        "setdiff1d": lambda: jnp.setdiff1d(A, B),
        "setdiff1d_size": lambda: jit(lambda a, b: jnp.setdiff1d(a, b, size=6))(A, B),
        "setxor1d": lambda: jnp.setxor1d(A, B),
        "setxor1d_size": lambda: jit(lambda a, b: jnp.setxor1d(a, b, size=12))(A, B),
        "setxor1d_size_unique": lambda: jit(lambda a, b: jnp.setxor1d(
            a, b, assume_unique=True, size=12, fill_value=0))(np.unique(A), np.unique(B)),
        "partition": lambda: jnp.partition(X, 3, axis=1),
        "partition_unsigned": lambda: jnp.partition(A.astype(np.uint8), 5),
        "argpartition": lambda: jnp.argpartition(X, 2, axis=0),
        "sort_complex": lambda: jnp.sort_complex(B),
        "insert": lambda: jnp.insert(A, np.array([1, 5, 5, -1]), np.array([70, 80, 90, 99])),
        "insert_axis": lambda: jnp.insert(X, 2, 0.5, axis=1),
        "delete": lambda: jnp.delete(X, np.array([0, 2]), axis=1),
        "delete_jit": lambda: jit(lambda a, i: jnp.delete(a, i, assume_unique_indices=True))(
            A, np.array([9, 2, 4])),
        "compress_size": lambda: jit(lambda c, x: jnp.compress(c, x, axis=0, size=3,
                                                               fill_value=7))(
            np.array([False, True, True, False]), X),
        "extract_size": lambda: jit(lambda x: jnp.extract(x > 0, x, size=12))(X),
        "place": lambda: jnp.place(A, A % 2 == 1, np.array([100, 200]), inplace=False),
        "put": lambda: jnp.put(A, np.array([0, 3, 40]), np.array([5, 6, 7]), inplace=False),
        "put_wrap": lambda: jnp.put(A, np.array([40]), np.array([7]), mode="wrap",
                                    inplace=False),
        "choose_wrap": lambda: jnp.choose(np.array([0, 4, -1, 2]),
                                          [np.arange(4), 10 * np.arange(4)], mode="wrap"),
        "mask_indices": lambda: jnp.mask_indices(4, jnp.triu, 1),
        "unwrap": lambda: jnp.unwrap(np.cumsum(X[0] * 3) % 6.2831855),
        "packbits": lambda: jnp.packbits(A > 3, bitorder="little"),
        "unpackbits": lambda: jnp.unpackbits(A.astype(np.uint8)[:5], count=12),
        "gcd": lambda: jnp.gcd(A * 6 - 20, B[:1] * 4),
        "lcm": lambda: jnp.lcm(A - 3, B[:1]),
        "poly": lambda: jnp.poly(np.array([1.0, 2.0, -3.0], np.float32)),
        "polydiv": lambda: jnp.polydiv(np.array([1.0, 2, 3, 4], np.float32),
                                       np.array([2.0, 1], np.float32)),
        "polyfit": lambda: jnp.polyfit(T, Y, 3),
        "polyfit_w_cov": lambda: jnp.polyfit(T, Y, 2, w=np.abs(T) + 1, cov=True),
        "polyfit_full": lambda: jnp.polyfit(T, np.stack([Y, 2 * Y], 1), 2, full=True)[:4],
        "frexp": lambda: jnp.frexp(R),
        "nextafter": lambda: jnp.nextafter(R, np.float32(1.0)),
        "spacing": lambda: jnp.spacing(R),
        "grad_frexp": lambda: lib.grad(lambda v: jnp.sum(jnp.frexp(v)[0] * v))(X[0]),
        "grad_polyfit": lambda: lib.grad(lambda y: jnp.sum(jnp.polyfit(T, y, 2) ** 2))(Y),
        "grad_unwrap": lambda: lib.grad(lambda v: jnp.sum(jnp.unwrap(v) ** 2))(X[1] * 3),
    }
    return out
