"""``eigh_tridiagonal`` of spmdc.scipy.linalg (JAX's ``jax.scipy.linalg``): the
eigenvalues of a symmetric (Hermitian) tridiagonal matrix by bisection on Sturm
sequences, and its eigenvectors by inverse iteration. See Note [tridiagonal
eigenproblem].
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax, random
from .. import numpy as jnp
from ..lax import linalg as lax_linalg

__all__ = ["eigh_tridiagonal"]

# Note [tridiagonal eigenproblem]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# As JAX's (after TensorFlow's): the number of eigenvalues below x is the number of
# negative terms of the Sturm sequence q_0 = d_0 - x, q_i = d_i - e_{i-1}^2 / q_{i-1} - x
# (pivots kept away from 0 by ``pivmin``); all wanted eigenvalues are found at once by
# bisection from Gershgorin's interval, widened a little, until the intervals are
# narrower than the tolerance (eps * |T|, or ``tol`` if larger) or the mantissa's bits
# run out. Eigenvectors come from inverse iteration on the shifted matrices T - lambda I
# (tridiagonal_solve with perturb_singular), from random starting vectors drawn with
# ``key`` (JAX's default: key(42)), at most 5 steps as LAPACK's stein, the vectors of
# eigenvalues closer than sqrt(eps) |T| re-orthogonalised (by QR) after each step. For a
# complex (Hermitian) matrix the diagonal is real and the solves complex: the starting
# vectors are the real draws, made complex, as JAX's.


def _sturm_counts(alpha: Any, beta_sq: Any, pivmin: Any, alpha0_perturbation: Any,
                  x: Any) -> Any:
    """How many eigenvalues lie below each x (Note [tridiagonal eigenproblem])."""
    n = alpha.shape[0]
    q = alpha[0] - x
    count = jnp.where(q < 0, 1, 0).astype(np.int32)
    q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

    def step(i, carry):
        q, count = carry
        q = alpha[i] - beta_sq[i - 1] / q - x
        count = jnp.where(q <= pivmin, count + 1, count)
        return jnp.where(q <= pivmin, jnp.minimum(q, -pivmin), q), count
    _, count = lax.fori_loop(1, n, step, (q, count))
    return count


def _eigenvectors(alpha: Any, beta: Any, eigvals: Any, key: Any) -> Any:
    """Inverse iteration, the rows of the result the eigenvectors (Note [tridiagonal
    eigenproblem])."""
    n, k = alpha.shape[0], eigvals.shape[0]
    dl, du = jnp.pad(jnp.conj(beta), (1, 0)), jnp.pad(beta, (0, 1))
    gap = eigvals[1:] - eigvals[:-1]
    eps = np.finfo(eigvals.dtype).eps
    t_norm = jnp.maximum(jnp.abs(eigvals[0]), jnp.abs(eigvals[-1]))
    close = gap < jnp.sqrt(eps) * t_norm
    left_close = jnp.pad(close, (1, 0), constant_values=False)
    right_close = jnp.pad(close, (0, 1), constant_values=False)
    max_clusters = k // 2 + 1
    starts = jnp.nonzero(~left_close & right_close, size=max_clusters)[0]
    ends = jnp.nonzero(left_close & ~right_close, size=max_clusters)[0] + 1
    num_clusters = jnp.sum(~left_close & right_close)
    rows = jnp.arange(k)
    solve_dtype = jnp.result_type(alpha.dtype, beta.dtype)
    v = random.normal(key, (k, n), dtype=alpha.dtype)
    v = (v / jnp.linalg.norm(v, axis=-1, keepdims=True)).astype(solve_dtype)

    def orthogonalize(ev):
        def cluster(i, ev):
            start, end = starts[i], ends[i]
            block = lax.dynamic_slice(jnp.pad(ev, ((0, k), (0, 0))), (start, 0), (k, n))
            mask = (rows < end - start).astype(ev.dtype)
            q, _ = jnp.linalg.qr((block * mask[:, None]).T)
            update = lax.dynamic_update_slice(jnp.zeros((2 * k, n), ev.dtype),
                                              q.T * mask[:, None], (start, 0))[:k]
            inside = (rows >= start) & (rows < end)
            return jnp.where(inside[:, None], update, ev)
        return lax.fori_loop(0, num_clusters, cluster, ev)

    shifted = (alpha[None, :] - eigvals[:, None]).astype(solve_dtype)
    dl_k, du_k = (jnp.broadcast_to(x[None, :], (k, n)).astype(solve_dtype) for x in (dl, du))

    def step(state):
        i, v, norm, _ = state
        new = lax_linalg.tridiagonal_solve(dl_k, shifted, du_k, v[:, :, None],
                                           perturb_singular=True)[..., 0]
        new_norm = jnp.linalg.norm(new, axis=-1, keepdims=True)
        return i + 1, orthogonalize(new / new_norm.astype(new.dtype)), new_norm[:, 0], norm

    def going(state):               # LAPACK stein's limits: 5 steps, 10% norm growth
        i, _, norm, old_norm = state
        return (i < 5) & jnp.any(norm >= 1.1 * old_norm)
    _, v, _, _ = lax.while_loop(going, step, (0, v, jnp.ones(k, eigvals.dtype),
                                              jnp.zeros(k, eigvals.dtype)))
    return v


def eigh_tridiagonal(d: Any, e: Any, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None,
                     tol: float | None = None, key: Any = None) -> Any:
    """The eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal
    ``d`` (n,) and off-diagonal ``e`` (n - 1,), and with ``eigvals_only=False`` its
    eigenvectors (the columns of the second result, from random starts drawn with
    ``key``, key(42) by default). ``select='i'`` keeps the eigenvalues of indices
    ``select_range[0]`` to ``select_range[1]``; ``tol`` is the bisection's absolute
    tolerance. See Note [tridiagonal eigenproblem]."""
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    supported = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError("diagonal and off-diagonal values must have same dtype, got "
                        f"{alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in supported:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        f"eigh_tridiagonal, got {alpha.dtype} and {beta.dtype}")
    if alpha.ndim != 1 or beta.shape != (max(alpha.shape[0] - 1, 0),):
        raise ValueError(f"eigh_tridiagonal: d must be (n,) and e (n - 1,); got shapes "
                         f"{alpha.shape} and {beta.shape}")
    complex_input = alpha.dtype.kind == "c"
    if not eigvals_only and key is None:
        key = random.key(42)
    n = alpha.shape[0]
    if n <= 1:
        values = jnp.real(alpha)
        return values if eigvals_only else (values, jnp.eye(n, dtype=alpha.dtype))
    if complex_input:
        alpha = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        beta_abs, beta_sq = jnp.abs(beta), jnp.square(beta)
    # Gershgorin's bounds on the eigenvalues, and |T| <= t_norm.
    row_sums = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    est_max, est_min = jnp.max(alpha + row_sums), jnp.min(alpha - row_sums)
    t_norm = jnp.maximum(jnp.abs(est_min), jnp.abs(est_max))
    finfo = np.finfo(alpha.dtype)
    one = np.ones([], dtype=alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.max(beta_sq))
    alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    max_it = finfo.nmant + 1
    if select == "a":
        targets = np.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        targets = np.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented "
                                  "(the number of eigenvalues in a range is not static), "
                                  "as in JAX; use select='i'")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    fudge = 2.1
    slack = np.asarray(n, alpha.dtype) * fudge * finfo.eps * t_norm
    lower = jnp.broadcast_to(est_min - slack - 2 * fudge * pivmin, targets.shape)
    upper = jnp.broadcast_to(est_max + slack + fudge * pivmin, targets.shape)
    pivmin = jnp.broadcast_to(pivmin, targets.shape)
    alpha0_perturbation = jnp.broadcast_to(alpha0_perturbation, targets.shape)

    def narrowing(state):
        i, lower, _, upper = state
        return (i < max_it) & (abs_tol < jnp.max(upper - lower))

    def bisect(state):
        i, lower, mid, upper = state
        counts = _sturm_counts(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = jnp.where(counts <= targets, mid, lower)
        upper = jnp.where(counts > targets, mid, upper)
        return i + 1, lower, 0.5 * (lower + upper), upper
    _, _, mid, _ = lax.while_loop(narrowing, bisect,
                                  (0, lower, 0.5 * (upper + lower), upper))
    if eigvals_only:
        return mid
    return mid, _eigenvectors(alpha, beta, mid, key).T
