"""``qdwh`` of ``spmdc.lax.linalg`` (JAX's ``jax.lax.linalg.qdwh``): the polar
decomposition ``x = u h`` of a tall matrix by the QR-based dynamically weighted Halley
iteration, written with lax on spmdc's QR, Cholesky and triangular solve (real or complex
matrices: ``X^H`` where this says ``X^T``). See Note [QDWH's schedule].
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..compiler.primitives.linalg import cholesky_p, triangular_solve_p
from ..compiler.primitives.linalg_decomp import qr_p
from ..core import dtypes
from ..core.operands import asarray
from ..core.tracing import Tracer, bind
from .complex_parts import conj
from .control_flow import fori_loop, while_loop
from .dot import dot_general
from .elementwise import _where, abs, rsqrt, sqrt
from .reductions import reduce_max, reduce_sum
from .shape import broadcasted_iota, concatenate, pad, transpose
from .slicing import dynamic_slice, dynamic_update_slice, slice

__all__ = ["qdwh"]

# Note [QDWH's schedule]
# ~~~~~~~~~~~~~~~~~~~~~~
# As JAX 0.10.2's (Nakatsukasa, Bai and Gygi 2010): X0 = x / sqrt(|x|_1 |x|_inf), and
# the weights (a, b, c) of the steps X <- X (a I + b X^T X)(I + c X^T X)^-1 follow from a
# lower bound l of X's smallest singular value, starting at eps. They depend on l alone,
# so the whole schedule is computed in Python before tracing, until l reaches 1 (within
# 5 eps) or ``max_iterations``: steps with c > 100 are taken by a QR factorisation of
# [sqrt(c) X; I] (stable while X is ill-conditioned), the others by a Cholesky
# factorisation of I + c X^T X, and the Cholesky ones stop early once a step changes X by
# less than cbrt(5 eps) (Frobenius). Then Halley steps (3, 1, 3) continue while X still
# moves, up to ``max_iterations`` steps in all, and one Newton-Schulz step polishes u;
# h = (u^T x + (u^T x)^T) / 2. With ``dynamic_shape=(m, n)`` only the leading m x n block
# of x is the matrix (the rest padding, zeroed), as JAX's.


def _matmul(a: Any, b: Any) -> Any:
    return dot_general(a, b, (((1,), (0,)), ((), ())))


def _t(x: Any) -> Any:
    """The conjugate transpose (the transpose of a real matrix)."""
    return conj(transpose(x, (1, 0))) if dtypes.is_complex(x.dtype) else transpose(x, (1, 0))


def _mask(x: Any, dims: tuple[Any, Any], alternative: Any = 0) -> Any:
    """x with the entries outside the leading dims[0] x dims[1] block replaced."""
    keep = None
    for axis, size in enumerate(dims):
        if size is None:
            continue
        inside = broadcasted_iota(np.int32, x.shape, axis) < size
        keep = inside if keep is None else keep & inside
    return x if keep is None else _where(keep, x, alternative)


def _eye(n: int, dtype: np.dtype) -> Any:
    return asarray(np.eye(n, dtype=dtype))


def _schedule(eps: float, max_iterations: int) -> tuple[list[tuple[float, ...]],
                                                        list[tuple[float, ...]]]:
    """The (QR, Cholesky) steps' parameters. See Note [QDWH's schedule]."""
    qr_steps, cholesky_steps = [], []
    lower, tol_l, k = eps, 10.0 * eps / 2.0, 0
    while lower + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = lower * lower
        d = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        root = (1.0 + d) ** (1 / 2)
        a = root + (2 - d + 2 * (2 - l2) / (l2 * root)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        lower = lower * (a + b * l2) / (1 + c * l2)
        e = b / c
        if c > 100:
            qr_steps.append(((a - e) / c ** (1 / 2), c ** (1 / 2), e))
        else:
            cholesky_steps.append((a - e, c, e))
    return qr_steps, cholesky_steps


def _qr_step(u: Any, m: Any, n: Any, params: Any) -> Any:
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    rows, cols = u.shape
    eye = _eye(cols, u.dtype)
    if isinstance(m, int) and m == rows:
        stacked = concatenate([sqrt_c * u, eye], 0)
    else:                           # the identity goes right below the m true rows
        padded = pad(sqrt_c * u, np.zeros((), u.dtype), ((0, cols, 0), (0, 0, 0)))
        stacked = dynamic_update_slice(padded, eye, (m, 0))
    q, _ = bind(qr_p, stacked, full_matrices=False)
    q1 = _mask(slice(q, (0, 0), (rows, cols)), (m, n))
    q2 = _t(_mask(dynamic_slice(q, (m, 0), (cols, cols)), (n, n)))
    return e * u + a_minus_e_by_sqrt_c * _matmul(q1, q2)


def _cholesky_step(u: Any, m: Any, n: Any, params: Any) -> Any:
    a_minus_e, c, e = params
    cols = u.shape[1]
    eye = _eye(cols, u.dtype)
    x = _mask(c * _matmul(_t(u), u) + eye, (n, n), eye)
    factor = bind(cholesky_p, x)
    # (L L^H)^-1 u^H, then its conjugate transpose: u (I + c u^H u)^-1
    conjugate = {"conjugate_a": True} if dtypes.is_complex(u.dtype) else {}
    z = bind(triangular_solve_p, factor, _t(u), left_side=True, lower=True,
             transpose_a=False, unit_diagonal=False)
    z = bind(triangular_solve_p, factor, z, left_side=True, lower=True,
             transpose_a=True, unit_diagonal=False, **conjugate)
    return e * u + a_minus_e * _t(z)


def _frobenius(x: Any) -> Any:
    magnitude = abs(x)
    return sqrt(reduce_sum(magnitude * magnitude, (0, 1)))


def _run(x: Any, m: Any, n: Any, max_iterations: int, eps: float | None) -> tuple[Any, ...]:
    eps = float(np.finfo(x.dtype).eps) if eps is None else float(eps)
    one_norm = reduce_max(reduce_sum(abs(x), (0,)), (0,))
    inf_norm = reduce_max(reduce_sum(abs(x), (1,)), (0,))
    scale = _where(one_norm == 0, np.ones((), one_norm.dtype),
                   rsqrt(one_norm) * rsqrt(inf_norm))
    u = x * scale.astype(x.dtype)
    tol_norm = float(np.cbrt(10.0 * eps / 2.0))
    qr_steps, cholesky_steps = _schedule(eps, max_iterations)

    def run_steps(u: Any, steps: list[tuple[float, ...]], update: Any, test: bool) -> Any:
        if not steps:
            return u, asarray(np.bool_(True))
        table = asarray(np.asarray(steps, x.dtype))

        def body(k, state):
            u, _ = state
            row = dynamic_slice(table, (k, 0), (1, 3))
            params = tuple(row[0, i] for i in range(3))
            new = update(u, m, n, params)
            moving = _frobenius(new - u) > tol_norm if test else asarray(np.bool_(True))
            return new, moving
        return fori_loop(0, len(steps), body, (u, asarray(np.bool_(True))))

    u, _ = run_steps(u, qr_steps, _qr_step, False)
    u, moving = run_steps(u, cholesky_steps, _cholesky_step, True)
    halley = tuple(np.asarray(v, x.dtype) for v in (3 - 1 / 3, 3, 1 / 3))

    def going(state):
        k, _, moving = state
        return moving & (k < max_iterations)

    def step(state):
        k, u, _ = state
        new = _cholesky_step(u, m, n, halley)
        return k + 1, new, _frobenius(new - u) > tol_norm
    start = len(qr_steps) + len(cholesky_steps)
    iterations, u, moving = while_loop(going, step, (asarray(np.int32(start)), u, moving))
    u = 1.5 * u - 0.5 * _matmul(u, _matmul(_t(u), u))
    h = _matmul(_t(u), x)
    return u, (h + _t(h)) / 2, iterations, ~moving


def qdwh(x: Any, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[Any, Any] | None = None
         ) -> tuple[Any, Any, Any, Any]:
    """``(u, h, num_iters, is_converged)``: the polar decomposition ``x = u h`` of an
    M x N (M >= N) real or complex matrix, u with orthonormal columns and h Hermitian
    positive semidefinite, by at most ``max_iterations`` (10) steps until X moves less than
    cbrt(5 eps). ``dynamic_shape=(m, n)``: only the leading m x n block is the matrix.
    ``is_hermitian`` must be a static bool and, as in JAX, does not change the method.
    See Note [QDWH's schedule]."""
    if isinstance(is_hermitian, Tracer) or not isinstance(is_hermitian, (bool, np.bool_)):
        raise TypeError("The `is_hermitian` argument must be statically specified (a bool) "
                        f"to use `qdwh` within transformations; got {is_hermitian!r}")
    if max_iterations is None:
        max_iterations = 10
    elif isinstance(max_iterations, Tracer):
        max_iterations = int(max_iterations)       # ConcretizationTypeError when traced
    max_iterations = operator.index(max_iterations)
    x = asarray(x)
    if x.ndim != 2:
        raise ValueError(f"qdwh needs a matrix (M x N); got shape {x.shape}")
    if x.dtype not in (np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
                       np.dtype(np.complex128)):
        raise TypeError(f"qdwh: spmdc's QR and Cholesky take float32, float64, complex64 or "
                        f"complex128 matrices; got {x.dtype}")
    rows, cols = x.shape
    if rows < cols:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _mask(x, (m, n))
    else:
        m, n = rows, cols
    return _run(x, m, n, max_iterations, eps)
