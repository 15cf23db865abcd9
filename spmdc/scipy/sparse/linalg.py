"""spmdc.scipy.sparse.linalg (JAX's ``jax.scipy.sparse.linalg``): the Krylov solvers
``cg``, ``bicgstab`` and ``gmres`` for ``A x = b``, with JAX 0.10.2's signatures.

Note [Krylov solves]
~~~~~~~~~~~~~~~~~~~~
``A`` (and the preconditioner ``M``) is a function, a square matrix, or an object with
``@``; ``b`` and ``x0`` are any pytree of arrays, read as one long vector (inner products
sum over the leaves). Each solver is one ``lax.while_loop`` stopping at
``|r| <= max(tol |b|, atol)`` (SciPy's non-legacy tolerance) or after ``maxiter``
iterations (default ``10 * size``, as SciPy), so it runs under ``jit`` and ``vmap``.

The loop is wrapped in ``lax.custom_linear_solve``: derivatives never go through the
iterations. ``dx = solve(A, db - dA x)`` is another Krylov solve, and reverse mode solves
with the transposed operator (``cg`` declares real operators symmetric, as JAX does, so
its transpose solve is itself). Gradients are accurate when both solves converge.

As in JAX, ``cg`` and ``bicgstab`` return ``(x, None)``: the second value is SciPy's
``info`` slot, which JAX leaves empty; ``gmres`` returns ``(x, info)`` with ``info`` -1
when the solution holds NaNs and 0 otherwise. ``gmres`` restarts every ``restart``
Krylov vectors (``maxiter`` counts restarts); ``solve_method='incremental'`` builds the
QR factorisation of the Hessenberg matrix with Givens rotations as it goes and stops a
cycle early, ``'batched'`` (the default) solves the small least-squares problem once per
cycle. Orthogonalisation is classical Gram-Schmidt, two passes ("twice is enough").
"""
from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...core.tracing import Tracer, where
from ...runtime.array import Array
from ...tree_util import tree_leaves, tree_map, tree_structure
from .. import linalg as scipy_linalg

__all__ = ["cg", "bicgstab", "gmres"]

_HIGHEST = lax.Precision.HIGHEST


# --- pytrees as vectors ----------------------------------------------------------------------

def _dot(a: Any, b: Any) -> Any:
    return jnp.dot(a, b, precision=_HIGHEST)


def _vdot_real(x: Any, y: Any) -> Any:
    """``Re <x, y>`` without the cross terms: for the Hermitian forms ``z^H M z`` the
    solvers take, the real part is the whole value, and it is real-typed."""
    out = jnp.vdot(jnp.real(x), jnp.real(y), precision=_HIGHEST)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        out = out + jnp.vdot(jnp.imag(x), jnp.imag(y), precision=_HIGHEST)
    return out


def _tree_vdot_real(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(_vdot_real, x, y)))


def _tree_vdot(x: Any, y: Any) -> Any:
    return sum(tree_leaves(tree_map(
        functools.partial(jnp.vdot, precision=_HIGHEST), x, y)))


def _norm(x: Any) -> Any:
    return jnp.sqrt(_tree_vdot_real(x, x))


def _scale(scalar: Any, tree: Any) -> Any:
    return tree_map(lambda leaf: scalar * leaf, tree)


def _add(x: Any, y: Any) -> Any:
    return tree_map(operator.add, x, y)


def _sub(x: Any, y: Any) -> Any:
    return tree_map(operator.sub, x, y)


def _leaves_dtype(tree: Any) -> np.dtype:
    return jnp.result_type(*tree_leaves(tree))


def _identity(x: Any) -> Any:
    return x


def _as_operator(name: str, what: str, op: Any) -> Callable[[Any], Any]:
    """``A`` (or ``M``) as a function of a vector: a function as it is, a square matrix
    through ``dot``, another object through ``@``."""
    if callable(op):
        return op
    if isinstance(op, (np.ndarray, Array, Tracer)) or hasattr(op, "__matmul__"):
        shape = tuple(getattr(op, "shape", ()))
        if hasattr(op, "shape") and (len(shape) != 2 or shape[0] != shape[1]):
            raise ValueError(f"jax.scipy.sparse.linalg.{name}: the linear operator {what} "
                             f"must be a square matrix, but has shape {shape}{where()}")
        if isinstance(op, (np.ndarray, Array, Tracer)):
            return functools.partial(_dot, op)
        return functools.partial(operator.matmul, op)
    raise TypeError(f"jax.scipy.sparse.linalg.{name}: the linear operator {what} must be a "
                    f"function, a square matrix or an object with @, got "
                    f"{type(op).__name__}{where()}")


def _shapes(tree: Any) -> list[tuple[int, ...]]:
    return [tuple(np.shape(leaf)) for leaf in tree_leaves(tree)]


def _prepared(name: str, A: Any, b: Any, x0: Any, M: Any) -> tuple[Any, Any, Any, Any, int]:
    """The operator, the right-hand side and start as arrays, the preconditioner, and
    the size of the system; with JAX's checks of ``x0`` against ``b``."""
    b = tree_map(jnp.asarray, b)
    if not tree_leaves(b):
        raise ValueError(f"jax.scipy.sparse.linalg.{name}: b must hold at least one array"
                         f"{where()}")
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"jax.scipy.sparse.linalg.{name}: x0 and b must have matching tree "
                         f"structure: {tree_structure(x0)} vs {tree_structure(b)}{where()}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"jax.scipy.sparse.linalg.{name}: arrays in x0 and b must have "
                         f"matching shapes: {_shapes(x0)} vs {_shapes(b)}{where()}")
    A = _as_operator(name, "A", A)
    M = _identity if M is None else _as_operator(name, "M", M)
    size = sum(int(np.size(leaf)) for leaf in tree_leaves(b))
    return A, b, x0, M, size


# --- conjugate gradients ---------------------------------------------------------------------

def _cg_solve(A: Callable[[Any], Any], b: Any, x0: Any, *, maxiter: int, tol: float,
              atol: float, M: Callable[[Any], Any]) -> Any:
    # preconditioned CG; the residual test on gamma = <r, M r> when M is the identity
    threshold = jnp.maximum(jnp.square(tol) * _tree_vdot_real(b, b), jnp.square(atol))
    r0 = _sub(b, A(x0))
    z0 = M(r0)
    dtype = _leaves_dtype(z0)
    gamma0 = _tree_vdot_real(r0, z0).astype(dtype)

    def keep_going(state: tuple[Any, ...]) -> Any:
        _, r, gamma, _, k = state
        residual = gamma.real if M is _identity else _tree_vdot_real(r, r)
        return (residual > threshold) & (k < maxiter)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / _tree_vdot_real(p, Ap).astype(dtype)
        x = _add(x, _scale(alpha, p))
        r = _sub(r, _scale(alpha, Ap))
        z = M(r)
        gamma_next = _tree_vdot_real(r, z).astype(dtype)
        p = _add(z, _scale(gamma_next / gamma, p))
        return x, r, gamma_next, p, k + 1

    return lax.while_loop(keep_going, step, (x0, r0, gamma0, z0, 0))[0]


def _bicgstab_solve(A: Callable[[Any], Any], b: Any, x0: Any, *, maxiter: int, tol: float,
                    atol: float, M: Callable[[Any], Any]) -> Any:
    # preconditioned BiCGSTAB; k < 0 marks a breakdown (rho, alpha or omega zero)
    threshold = jnp.maximum(jnp.square(tol) * _tree_vdot_real(b, b), jnp.square(atol))
    r0 = _sub(b, A(x0))
    one = jnp.ones((), _leaves_dtype(b))

    def keep_going(state: tuple[Any, ...]) -> Any:
        r, k = state[1], state[-1]
        return (_tree_vdot_real(r, r) > threshold) & (k < maxiter) & (k >= 0)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        x, r, r_hat, alpha, omega, rho, p, q, k = state
        rho_next = _tree_vdot(r_hat, r)
        beta = rho_next / rho * alpha / omega
        p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
        p_hat = M(p)
        q = A(p_hat)
        alpha = rho_next / _tree_vdot(r_hat, q)
        s = _sub(r, _scale(alpha, q))
        converged_half_way = _tree_vdot_real(s, s) < threshold
        s_hat = M(s)
        t = A(s_hat)
        omega = _tree_vdot(t, s) / _tree_vdot(t, t)
        x_half = _add(x, _scale(alpha, p_hat))
        x = tree_map(functools.partial(jnp.where, converged_half_way), x_half,
                     _add(x_half, _scale(omega, s_hat)))
        r = tree_map(functools.partial(jnp.where, converged_half_way), s,
                     _sub(s, _scale(omega, t)))
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_next == 0, -10, k)
        return x, r, r_hat, alpha, omega, rho_next, p, q, k

    state = (x0, r0, r0, one, one, one, r0, r0, 0)
    return lax.while_loop(keep_going, step, state)[0]


def _isolve(name: str, solve: Callable[..., Any], A: Any, b: Any, x0: Any, tol: float,
            atol: float, maxiter: int | None, M: Any, check_symmetric: bool) -> Any:
    A, b, x0, M, size = _prepared(name, A, b, x0, M)
    maxiter = 10 * size if maxiter is None else maxiter
    solve_from_x0 = functools.partial(solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter,
                                      M=M)
    # real positive-definite operators (cg's) are symmetric
    symmetric = check_symmetric and not any(jnp.iscomplexobj(leaf)
                                            for leaf in tree_leaves(b))
    return lax.custom_linear_solve(A, b, solve=solve_from_x0, transpose_solve=solve_from_x0,
                                   symmetric=symmetric)


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
       maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """Solve ``A x = b`` for a Hermitian positive-definite ``A`` by (preconditioned)
    conjugate gradients; ``(x, None)``. See Note [Krylov solves]."""
    return _isolve("cg", _cg_solve, A, b, x0, tol, atol, maxiter, M,
                   check_symmetric=True), None


def bicgstab(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
             maxiter: int | None = None, M: Any = None) -> tuple[Any, None]:
    """Solve ``A x = b`` for a general ``A`` by the stabilised bi-conjugate gradient
    method; ``(x, None)``. See Note [Krylov solves]."""
    return _isolve("bicgstab", _bicgstab_solve, A, b, x0, tol, atol, maxiter, M,
                   check_symmetric=False), None


# --- GMRES -----------------------------------------------------------------------------------

def _normalized(x: Any, threshold: Any = None) -> tuple[Any, Any]:
    """``(x / |x|, |x|)``, or zeros and 0 when ``|x|`` is at most ``threshold`` (default:
    the machine epsilon of ``x``'s dtype)."""
    norm = _norm(x)
    dtype = _leaves_dtype(x)
    if threshold is None:
        threshold = jnp.finfo(norm.dtype).eps
    nonzero = norm > jnp.real(jnp.asarray(threshold).astype(dtype))
    divisor = norm.astype(dtype)
    unit = tree_map(lambda leaf: jnp.where(nonzero, leaf / divisor, 0), x)
    return unit, jnp.where(nonzero, norm, 0)


def _project(Q: Any, v: Any) -> Any:
    """``Q^H v`` for the basis ``Q`` (each leaf with the basis vectors on its last axis)."""
    return sum(tree_leaves(tree_map(
        lambda basis, leaf: jnp.einsum("...n,...->n", jnp.conj(basis), leaf,
                                       precision=_HIGHEST), Q, v)))


def _gram_schmidt_twice(Q: Any, v: Any) -> tuple[Any, Any]:
    """``v`` orthogonalised against the columns of ``Q``, and its overlaps with them: two
    passes of classical Gram-Schmidt ("twice is enough" to reach working precision)."""
    overlaps = 0
    for _ in range(2):
        h = _project(Q, v)
        v = _sub(v, tree_map(lambda basis: _dot(basis, h), Q))
        overlaps = overlaps + h
    return v, overlaps


def _arnoldi_step(k: Any, A: Callable[[Any], Any], M: Callable[[Any], Any], V: Any,
                  H: Any) -> tuple[Any, Any, Any]:
    """Add the ``k+1``-th Krylov vector ``M A V[:, k]``, orthonormalised, to ``V`` and its
    overlaps to row ``k`` of ``H``; breakdown when it lies in the span already."""
    dtype = _leaves_dtype(V)
    v = M(A(tree_map(lambda basis: basis[..., k], V)))
    _, v_norm = _normalized(v)
    v, overlaps = _gram_schmidt_twice(V, v)
    unit, new_norm = _normalized(v, threshold=jnp.finfo(dtype).eps * v_norm)
    V = tree_map(lambda basis, leaf: basis.at[..., k + 1].set(leaf), V, unit)
    H = H.at[k, :].set(overlaps.at[k + 1].set(new_norm.astype(dtype)))
    return V, H, new_norm == 0


def _givens(a: Any, b: Any) -> tuple[Any, Any]:
    """The rotation ``(c, s)`` that zeroes ``b`` in ``(a, b)``."""
    b_is_zero = jnp.abs(b) == 0
    swap = jnp.abs(a) < jnp.abs(b)
    t = -jnp.where(swap, a, b) / jnp.where(swap, b, a)
    r = lax.rsqrt(1 + jnp.abs(t) ** 2).astype(t.dtype)
    c = jnp.where(b_is_zero, 1, jnp.where(swap, r * t, r))
    s = jnp.where(b_is_zero, 0, jnp.where(swap, r, r * t))
    return c, s


def _rotate(v: Any, i: Any, c: Any, s: Any) -> Any:
    x, y = v[i], v[i + 1]
    return v.at[i].set(jnp.conj(c) * x - jnp.conj(s) * y).at[i + 1].set(s * x + c * y)


def _new_basis(unit_residual: Any, restart: int) -> Any:
    return tree_map(lambda leaf: jnp.pad(leaf[..., None],
                                         ((0, 0),) * leaf.ndim + ((0, restart),)),
                    unit_residual)


def _gmres_cycle_incremental(A: Callable[[Any], Any], b: Any, x0: Any, unit_residual: Any,
                             residual_norm: Any, ptol: Any, restart: int,
                             M: Callable[[Any], Any]) -> tuple[Any, Any, Any]:
    V = _new_basis(unit_residual, restart)
    dtype = _leaves_dtype(b)
    R = jnp.eye(restart, restart + 1, dtype=dtype)   # the identity keeps R invertible
    rotations = jnp.zeros((restart, 2), dtype=dtype)
    rhs = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

    def keep_going(state: tuple[Any, ...]) -> Any:
        k, err = state[0], state[1]
        return (k < restart) & (err > ptol)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        k, _, V, R, rhs, rotations = state
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, *rotations[i, :]), H[k, :])
        c, s = _givens(row[k], row[k + 1])
        rotations = rotations.at[k, :].set(jnp.stack([c, s]))
        R = R.at[k, :].set(_rotate(row, k, c, s))
        rhs = _rotate(rhs, k, c, s)
        return k + 1, jnp.abs(rhs[k + 1]), V, R, rhs, rotations

    state = (0, residual_norm, V, R, rhs, rotations)
    _, _, V, R, rhs, _ = lax.while_loop(keep_going, step, state)
    y = _small_solve(R[:, :-1].T, rhs[:-1], lower=True)
    return _restarted(A, b, x0, V, y, M)


def _gmres_cycle_batched(A: Callable[[Any], Any], b: Any, x0: Any, unit_residual: Any,
                         residual_norm: Any, ptol: Any, restart: int,
                         M: Callable[[Any], Any]) -> tuple[Any, Any, Any]:
    V = _new_basis(unit_residual, restart)
    dtype = _leaves_dtype(b)
    H = jnp.eye(restart, restart + 1, dtype=dtype)

    def keep_going(state: tuple[Any, ...]) -> Any:
        _, _, breakdown, k = state
        return (k < restart) & jnp.logical_not(breakdown)

    def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
        V, H, _, k = state
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = lax.while_loop(keep_going, step, (V, H, jnp.asarray(False), 0))
    rhs = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))
    # least squares min |H^T y - rhs| through the normal equations
    gram = _dot(jnp.conj(H), H.T)
    y = _small_solve(gram, _dot(jnp.conj(H), rhs), lower=False)
    return _restarted(A, b, x0, V, y, M)


def _small_solve(a: Any, b: Any, lower: bool) -> Any:
    """``a^-1 b`` for GMRES's small matrices: a lower-triangular one (``lower``) or a
    Hermitian positive-definite one. spmdc's dense solvers are real, so a complex system
    is solved as the real one twice its size, ``[[Re a, -Im a], [Im a, Re a]]``, which is
    symmetric positive definite when ``a`` is Hermitian positive definite."""
    if not jnp.iscomplexobj(a):
        if lower:
            return scipy_linalg.solve_triangular(a, b, lower=True)
        return scipy_linalg.solve(a, b, assume_a="pos")
    re, im = jnp.real(a), jnp.imag(a)
    real_a = jnp.block([[re, -im], [im, re]])
    real_b = jnp.concatenate([jnp.real(b), jnp.imag(b)])
    y = scipy_linalg.solve(real_a, real_b, assume_a="gen" if lower else "pos")
    size = b.shape[0]
    return lax.complex(y[:size], y[size:])


def _restarted(A: Callable[[Any], Any], b: Any, x0: Any, V: Any, y: Any,
               M: Callable[[Any], Any]) -> tuple[Any, Any, Any]:
    x = _add(x0, tree_map(lambda basis: _dot(basis[..., :-1], y), V))
    unit_residual, residual_norm = _normalized(M(_sub(b, A(x))))
    return x, unit_residual, residual_norm


def gmres(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0,
          restart: int = 20, maxiter: int | None = None, M: Any = None,
          solve_method: str = "batched") -> tuple[Any, Any]:
    """Solve ``A x = b`` for a general ``A`` by restarted GMRES; ``(x, info)``. See Note
    [Krylov solves]."""
    if solve_method == "incremental":
        cycle = _gmres_cycle_incremental
    elif solve_method == "batched":
        cycle = _gmres_cycle_batched
    else:
        raise ValueError(f"jax.scipy.sparse.linalg.gmres: invalid solve_method "
                         f"{solve_method!r}, must be either 'incremental' or 'batched'"
                         f"{where()}")
    A, b, x0, M, size = _prepared("gmres", A, b, x0, M)
    maxiter = 10 * size if maxiter is None else maxiter
    restart = min(operator.index(restart), size)
    b_norm = _norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * jnp.minimum(1.0, atol / b_norm)

    def solve(A: Callable[[Any], Any], b: Any) -> Any:
        unit_residual, residual_norm = _normalized(M(_sub(b, A(x0))))

        def keep_going(state: tuple[Any, ...]) -> Any:
            return (state[1] < maxiter) & (state[3] > atol)

        def step(state: tuple[Any, ...]) -> tuple[Any, ...]:
            x, k, unit_residual, residual_norm = state
            x, unit_residual, residual_norm = cycle(A, b, x, unit_residual, residual_norm,
                                                    ptol, restart, M)
            return x, k + 1, unit_residual, residual_norm

        return lax.while_loop(keep_going, step, (x0, 0, unit_residual, residual_norm))[0]

    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
    return x, info
