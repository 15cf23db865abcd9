"""``minimize`` and ``OptimizeResults`` of spmdc.scipy.optimize, as JAX's: the SciPy
interface over BFGS (bfgs.py) and the experimental L-BFGS (lbfgs.py), gradients from
spmdc's autodiff, every loop a ``lax.while_loop``, so ``minimize`` runs under ``jit`` and
``vmap``."""
from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from ... import numpy as jnp
from ...core.tracing import where
from .bfgs import minimize_bfgs
from .lbfgs import minimize_lbfgs

__all__ = ["minimize", "OptimizeResults"]


class OptimizeResults(NamedTuple):
    """The result of :func:`minimize`: the solution ``x``; ``success``; ``status`` (0
    converged, 1 ``maxiter`` reached, BFGS: 2 + the line search's status (3 zoom failed,
    5 its ``maxiter``) and -1 undefined; L-BFGS: lbfgs.py's codes); the value ``fun``,
    gradient ``jac`` and inverse Hessian estimate ``hess_inv`` (None for L-BFGS) at
    ``x``; the counts ``nfev``, ``njev`` and ``nit``."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun: Callable[..., Any], x0: Any, args: tuple[Any, ...] = (), *, method: str,
             tol: float | None = None,
             options: Mapping[str, Any] | None = None) -> OptimizeResults:
    """Minimise ``fun(x, *args)`` (a real scalar) over the 1-d array ``x`` from ``x0``.

    ``method``: ``"BFGS"`` or ``"l-bfgs-experimental-do-not-rely-on-this"`` (any case).
    ``options``: the method's keywords (BFGS: ``maxiter``, ``norm``, ``gtol``,
    ``line_search_maxiter``; L-BFGS: ``maxiter``, ``norm``, ``maxcor``, ``ftol``,
    ``gtol``, ``maxfun``, ``maxgrad``, ``maxls``). ``tol``, when given, is the gradient
    tolerance ``gtol`` unless ``options`` sets one (SciPy's meaning for these methods)."""
    options = dict(options or {})
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got "
                        f"{args!r}{where()}")
    if tol is not None:
        options.setdefault("gtol", tol)
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"jax.scipy.optimize.minimize: x0 must be a 1-d array, got shape "
                         f"{x0.shape}; ravel it (and reshape inside fun){where()}")

    def objective(x: Any) -> Any:
        return fun(x, *args)

    kind = method.lower()
    if kind == "bfgs":
        found = _with_options(minimize_bfgs, objective, x0, options)
        hess_inv = found.H_k
    elif kind == "l-bfgs-experimental-do-not-rely-on-this":
        found = _with_options(minimize_lbfgs, objective, x0, options)
        hess_inv = None
    else:
        raise ValueError(f"Method {method} not recognized; jax.scipy.optimize.minimize "
                         f"supports 'BFGS' and 'l-bfgs-experimental-do-not-rely-on-this'"
                         f"{where()}")
    return OptimizeResults(x=found.x_k, success=found.converged & ~jnp.asarray(found.failed),
                           status=found.status, fun=found.f_k, jac=found.g_k,
                           hess_inv=hess_inv, nfev=found.nfev, njev=found.ngev, nit=found.k)


def _with_options(solver: Callable[..., Any], objective: Callable[[Any], Any], x0: Any,
                  options: dict[str, Any]) -> Any:
    known = list(inspect.signature(solver).parameters)[2:]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise TypeError(f"jax.scipy.optimize.minimize: unknown options {unknown} for this "
                        f"method; it takes {known}{where()}")
    return solver(objective, x0, **options)
