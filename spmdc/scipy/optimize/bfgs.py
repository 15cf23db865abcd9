"""BFGS for spmdc.scipy.optimize.minimize(method="BFGS"), as JAX's ``minimize_bfgs``:
Wright & Nocedal, Numerical Optimization (1999), algorithm 6.1, with the line search of
line_search.py (Note [Wolfe line search]).

The inverse Hessian estimate starts at the identity and takes the update
``H <- (I - rho s y^T) H (I - rho y s^T) + rho s s^T`` (``s`` the step, ``y`` the change
of gradient, ``rho = 1 / y.s``), skipped when ``rho`` is not finite. The iteration stops
when ``|g|_norm < gtol``, when a line search fails, or after ``maxiter`` (default
``200 n``) iterations; ``status`` is 0 (converged), 1 (``maxiter``), ``2 +`` the line
search's status (it failed) or -1.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from ... import lax
from ... import numpy as jnp
from ...transforms.grad import value_and_grad
from .line_search import line_search

__all__ = ["minimize_bfgs", "BFGSResults"]


class BFGSResults(NamedTuple):
    """The state of BFGS: ``converged``, ``failed`` (a line search failed), the counts
    ``k`` (iterations), ``nfev``, ``ngev``, ``nhev``, the iterate ``x_k`` with its value
    ``f_k``, gradient ``g_k`` and inverse Hessian estimate ``H_k``, the value before
    (``old_old_fval``), ``status`` and the last ``line_search_status``."""
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def _dot(a: Any, b: Any) -> Any:
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def minimize_bfgs(fun: Callable[[Any], Any], x0: Any, maxiter: int | None = None,
                  norm: Any = np.inf, gtol: float = 1e-5,
                  line_search_maxiter: int = 10) -> BFGSResults:
    """Minimise ``fun`` (of a 1-d array, to a real scalar) from ``x0`` by BFGS."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    n = x0.shape[0]
    f_0, g_0 = value_and_grad(fun)(x0)
    state = BFGSResults(converged=jnp.linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0,
                        nfev=1, ngev=1, nhev=0, x_k=x0, f_k=f_0, g_k=g_0,
                        H_k=jnp.eye(n, dtype=x0.dtype),
                        old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2, status=0,
                        line_search_status=0)

    def keep_going(state: BFGSResults) -> Any:
        return ~state.converged & ~jnp.asarray(state.failed) & (state.k < maxiter)

    def step(state: BFGSResults) -> BFGSResults:
        direction = -_dot(state.H_k, state.g_k)
        search = line_search(fun, state.x_k, direction, old_fval=state.f_k,
                             old_old_fval=state.old_old_fval, gfk=state.g_k,
                             maxiter=line_search_maxiter)
        s = search.a_k * direction
        y = search.g_k - state.g_k
        rho = jnp.reciprocal(_dot(y, s))
        left = jnp.eye(n, dtype=rho.dtype) - rho * jnp.outer(s, y)
        updated = jnp.einsum("ij,jk,lk", left, state.H_k, left,
                             precision=lax.Precision.HIGHEST) + rho * jnp.outer(s, s)
        return state._replace(
            converged=jnp.linalg.norm(search.g_k, ord=norm) < gtol,
            failed=search.failed, k=state.k + 1, nfev=state.nfev + search.nfev,
            ngev=state.ngev + search.ngev, x_k=state.x_k + s, f_k=search.f_k,
            g_k=search.g_k, H_k=jnp.where(jnp.isfinite(rho), updated, state.H_k),
            old_old_fval=state.f_k, line_search_status=search.status)

    state = lax.while_loop(keep_going, step, state)
    status = jnp.where(state.converged, 0,
                       jnp.where(state.k == maxiter, 1,
                                 jnp.where(state.failed, 2 + state.line_search_status, -1)))
    return state._replace(status=status)
