"""L-BFGS for spmdc.scipy.optimize.minimize(method="l-bfgs-experimental-do-not-rely-on-this"),
as JAX's experimental ``_minimize_lbfgs``: Wright & Nocedal, Numerical Optimization (1999),
algorithm 7.5, generalised to complex variables as Sorber, Van Barel & De Lathauwer (2012).

The last ``maxcor`` steps ``s`` and gradient changes ``y`` (with ``rho = 1 / Re(y.s)``)
are kept in fixed-size buffers, newest last, so the loop carries arrays of one shape;
the search direction is the two-loop recursion over the ``min(k, maxcor)`` newest
pairs, scaled by ``gamma = Re(y.s) / |y|^2``. The iteration stops on ``|g|_norm < gtol``
(status 0) or when a status is raised: 1 ``maxiter``, 2 ``maxfun``, 3 ``maxgrad``, 4 the
value fell by less than ``ftol``, 5 the line search failed.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...transforms.grad import value_and_grad
from .line_search import line_search

__all__ = ["minimize_lbfgs", "LBFGSResults"]


class LBFGSResults(NamedTuple):
    """The state of L-BFGS: ``converged``, ``failed``, the counts ``k``, ``nfev``,
    ``ngev``, the iterate ``x_k`` with value ``f_k`` and gradient ``g_k``, the history
    buffers ``s_history``, ``y_history``, ``rho_history``, the scale ``gamma``,
    ``status`` and the last line search's ``ls_status``."""
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def _dot(a: Any, b: Any) -> Any:
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def minimize_lbfgs(fun: Callable[[Any], Any], x0: Any, maxiter: float | None = None,
                   norm: Any = np.inf, maxcor: int = 10, ftol: float = 2.220446049250313e-09,
                   gtol: float = 1e-05, maxfun: float | None = None,
                   maxgrad: float | None = None, maxls: int = 20) -> LBFGSResults:
    """Minimise ``fun`` (of a 1-d array, to a real scalar) from ``x0`` by L-BFGS."""
    n = len(x0)
    dtype = x0.dtype
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = n * 200                       # at least one limit
    maxiter, maxfun, maxgrad = (np.inf if limit is None else limit
                                for limit in (maxiter, maxfun, maxgrad))
    f_0, g_0 = value_and_grad(fun)(x0)
    state = LBFGSResults(converged=jnp.asarray(False), failed=jnp.asarray(False), k=0,
                         nfev=1, ngev=1, x_k=x0, f_k=f_0, g_k=g_0,
                         s_history=jnp.zeros((maxcor, n), dtype=dtype),
                         y_history=jnp.zeros((maxcor, n), dtype=dtype),
                         rho_history=jnp.zeros((maxcor,), dtype=dtype), gamma=1.0,
                         status=0, ls_status=0)

    def step(state: LBFGSResults) -> LBFGSResults:
        direction = _two_loop_direction(state)
        search = line_search(fun, state.x_k, direction, old_fval=state.f_k, gfk=state.g_k,
                             maxiter=maxls)
        s = jnp.asarray(search.a_k).astype(direction.dtype) * direction
        y = search.g_k - state.g_k
        curvature = jnp.real(_dot(y, s))
        rho = jnp.reciprocal(curvature).astype(y.dtype)
        gamma = curvature / jnp.real(_dot(jnp.conj(y), y))
        status = jnp.where(state.f_k - search.f_k < ftol, 4, 0)
        status = jnp.where(state.ngev >= maxgrad, 3, status)
        status = jnp.where(state.nfev >= maxfun, 2, status)
        status = jnp.where(state.k >= maxiter, 1, status)
        status = jnp.where(search.failed, 5, status)
        converged = jnp.linalg.norm(search.g_k, ord=norm) < gtol
        return state._replace(
            converged=converged, failed=(status > 0) & ~converged, k=state.k + 1,
            nfev=state.nfev + search.nfev, ngev=state.ngev + search.ngev,
            x_k=(state.x_k + s).astype(state.x_k.dtype),
            f_k=search.f_k.astype(state.f_k.dtype), g_k=search.g_k.astype(state.g_k.dtype),
            s_history=_pushed(state.s_history, s), y_history=_pushed(state.y_history, y),
            rho_history=_pushed(state.rho_history, rho),
            gamma=gamma.astype(state.g_k.dtype), status=jnp.where(converged, 0, status),
            ls_status=search.status)

    return lax.while_loop(lambda s: ~s.converged & ~s.failed, step, state)


def _pushed(history: Any, new: Any) -> Any:
    """The buffer with its oldest entry dropped and ``new`` appended."""
    return jnp.concatenate([history[1:], new[None].astype(history.dtype)])


def _two_loop_direction(state: LBFGSResults) -> Any:
    """``-H g`` by the two-loop recursion over the stored pairs (newest last)."""
    size = state.rho_history.shape[0]
    dtype = state.rho_history.dtype
    used = jnp.where(state.k < size, state.k, size)

    def newest_first(j: Any, carry: tuple[Any, Any]) -> tuple[Any, Any]:
        q, alphas = carry
        i = size - 1 - j
        alpha = state.rho_history[i] * jnp.real(
            _dot(jnp.conj(state.s_history[i]), q)).astype(dtype)
        return q - alpha * jnp.conj(state.y_history[i]), alphas.at[i].set(alpha)

    q, alphas = lax.fori_loop(0, used, newest_first,
                              (-jnp.conj(state.g_k), jnp.zeros_like(state.rho_history)))
    q = state.gamma * q

    def oldest_first(j: Any, q: Any) -> Any:
        i = size - used + j
        beta = state.rho_history[i] * jnp.real(_dot(state.y_history[i], q)).astype(dtype)
        return q + (alphas[i] - beta) * state.s_history[i]

    return lax.fori_loop(0, used, oldest_first, q)
