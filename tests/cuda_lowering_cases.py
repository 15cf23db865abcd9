"""The programs whose CUDA lowering tests/compiler/test_stablehlo.py compares with JAX's
(recorded by `tools/record.py cuda_lowerings` into tests/data/cuda_lowerings.json), and
that tools/gpu_linalg_check.py runs on a GPU. Each case is ``name -> (fn(lib), args)``:
``lib`` has ``lax`` and ``jnp`` of the library under test, ``fn(lib)`` the function to
jit, ``args`` NumPy arrays."""
from __future__ import annotations

import numpy as np


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def _general(*shape: int, dtype=np.float32, seed: int = 0) -> np.ndarray:
    return _rng(seed).normal(size=shape).astype(dtype)


def _spd(*shape: int, dtype=np.float32, seed: int = 0) -> np.ndarray:
    *batch, n, _ = shape
    x = _rng(seed).normal(size=(*batch, n, n))
    return (x @ np.swapaxes(x, -1, -2) + n * np.eye(n)).astype(dtype)


def _lower_triangular(*shape: int, dtype=np.float32, seed: int = 0) -> np.ndarray:
    n = shape[-1]
    return (np.tril(_general(*shape, dtype=np.float64, seed=seed)) + n * np.eye(n)).astype(dtype)


CASES = {
    "cholesky_f32": (lambda lib: lib.lax.linalg.cholesky, [_spd(4, 4)]),
    "cholesky_f64_batched": (lambda lib: lib.lax.linalg.cholesky,
                             [_spd(2, 3, 5, 5, dtype=np.float64)]),
    "lu_f32": (lambda lib: lib.lax.linalg.lu, [_general(4, 4)]),
    "lu_f64_wide_batched": (lambda lib: lib.lax.linalg.lu,
                            [_general(2, 3, 5, dtype=np.float64)]),
    "lu_f32_tall": (lambda lib: lib.lax.linalg.lu, [_general(6, 3)]),
    "qr_f32_full": (lambda lib: lib.lax.linalg.qr, [_general(5, 3)]),
    "qr_f32_reduced": (lambda lib: lambda a: lib.lax.linalg.qr(a, full_matrices=False),
                       [_general(5, 3)]),
    "qr_f64_wide_batched": (lambda lib: lib.lax.linalg.qr,
                            [_general(2, 3, 5, dtype=np.float64)]),
    "eigh_f32": (lambda lib: lib.lax.linalg.eigh, [_spd(4, 4)]),
    "eigh_f64_batched_upper": (lambda lib: lambda a: lib.lax.linalg.eigh(a, lower=False),
                               [_spd(3, 6, 6, dtype=np.float64)]),
    "svd_f32_full": (lambda lib: lib.lax.linalg.svd, [_general(4, 6)]),
    "svd_f32_reduced": (lambda lib: lambda a: lib.lax.linalg.svd(a, full_matrices=False),
                        [_general(7, 3)]),
    "svd_f32_economic": (lambda lib: lambda a: lib.lax.linalg.svd(a, full_matrices=False),
                         [_general(40, 36)]),
    "svd_f64_values_batched": (lambda lib: lambda a: lib.lax.linalg.svd(a, compute_uv=False),
                               [_general(2, 5, 4, dtype=np.float64)]),
    "svd_f32_tall_qr": (lambda lib: lambda a: lib.lax.linalg.svd(a, full_matrices=False),
                        [_general(1030, 6)]),
    "svd_f32_wide_qr": (lambda lib: lambda a: lib.lax.linalg.svd(a, full_matrices=False),
                        [_general(6, 1030)]),
    "svd_f32_wide_qr_values": (lambda lib: lambda a: lib.lax.linalg.svd(a, compute_uv=False),
                               [_general(6, 1030)]),
    "triangular_solve_left_lower": (
        lambda lib: lambda a, b: lib.lax.linalg.triangular_solve(a, b, left_side=True,
                                                                 lower=True),
        [_lower_triangular(4, 4), _general(4, 3)]),
    "triangular_solve_right_upper_transposed": (
        lambda lib: lambda a, b: lib.lax.linalg.triangular_solve(
            a, b, left_side=False, lower=False, transpose_a=True, unit_diagonal=True),
        [np.swapaxes(_lower_triangular(2, 4, 4, dtype=np.float64), -1, -2).copy(),
         _general(2, 3, 4, dtype=np.float64)]),
    "cholesky_c64": (lambda lib: lib.lax.linalg.cholesky, [_spd(4, 4, dtype=np.complex64)]),
    "lu_c128_batched": (lambda lib: lib.lax.linalg.lu,
                        [_general(2, 4, 4, dtype=np.float64).astype(np.complex128)]),
    "qr_c64_reduced": (lambda lib: lambda a: lib.lax.linalg.qr(a, full_matrices=False),
                       [(_general(5, 3) + 1j * _general(5, 3, seed=1)).astype(np.complex64)]),
    "eigh_c64": (lambda lib: lib.lax.linalg.eigh, [_spd(4, 4, dtype=np.complex64)]),
    "svd_c64_reduced": (lambda lib: lambda a: lib.lax.linalg.svd(a, full_matrices=False),
                        [(_general(5, 3) + 1j * _general(5, 3, seed=1)).astype(np.complex64)]),
    "triangular_solve_c128_adjoint": (
        lambda lib: lambda a, b: lib.lax.linalg.triangular_solve(
            a, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True),
        [_lower_triangular(4, 4, dtype=np.complex128), _general(4, 3).astype(np.complex128)]),
    "eig_f32": (lambda lib: lib.jnp.linalg.eig, [_general(5, 5)]),
    "eig_f64_batched_values": (lambda lib: lib.jnp.linalg.eigvals,
                               [_general(2, 4, 4, dtype=np.float64)]),
}
