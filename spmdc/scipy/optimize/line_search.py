"""The inexact line search of spmdc.scipy.optimize: a step satisfying the strong Wolfe
conditions, as JAX's ``jax._src.scipy.optimize.line_search``.

Note [Wolfe line search]
~~~~~~~~~~~~~~~~~~~~~~~~
Wright & Nocedal, Numerical Optimization (1999), algorithms 3.5 (bracketing) and 3.6
(zoom), on ``phi(a) = f(x + a p)``. A step ``a`` is accepted when
``phi(a) <= phi(0) + c1 a phi'(0)`` (sufficient decrease) and
``|phi'(a)| <= -c2 phi'(0)`` (curvature). The bracketing phase tries ``a_1`` (1, or the
quadratic guess ``2.02 (phi(0) - f_prev) / phi'(0)`` capped at 1 when the previous
value is known), then doubles the step; once a bracket holding an acceptable step is
found, zoom narrows it by cubic interpolation through the bracket's ends and the last
discarded point, falling back to quadratic interpolation and then bisection when the
interpolant falls within 20% (10%) of an end. Both phases are ``lax.while_loop``s whose
branches are selects (both zooms are traced every bracketing step and run only when
needed), so the search runs under ``jit`` and ``vmap``. As in JAX, a zoom fails when
the bracket shrinks below 1e-5 (1e-10 in float64) or after 30 steps; the search fails
when a zoom does or after ``maxiter`` bracketing steps, and steps shorter than 1e-8 are
lengthened to 1e-8 outside float64 (a zero direction would stall the optimiser).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ... import lax
from ... import numpy as jnp
from ...core.operands import inexact
from ...transforms.grad import value_and_grad

__all__ = ["line_search", "LineSearchResults"]


def _dot(a: Any, b: Any) -> Any:
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _cubic_minimum(a: Any, fa: Any, fpa: Any, b: Any, fb: Any, c: Any, fc: Any) -> Any:
    """The minimiser of the cubic through ``(a, fa)`` with slope ``fpa``, ``(b, fb)`` and
    ``(c, fc)`` (NaN when it has none; the bounds check then rejects it)."""
    db, dc = b - a, c - a
    denominator = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    cubic = (dc ** 2 * rb - db ** 2 * rc) / denominator
    quadratic = (-dc ** 3 * rb + db ** 3 * rc) / denominator
    radical = quadratic * quadratic - 3.0 * cubic * fpa
    return a + (-quadratic + jnp.sqrt(radical)) / (3.0 * cubic)


def _quadratic_minimum(a: Any, fa: Any, fpa: Any, b: Any, fb: Any) -> Any:
    """The minimiser of the parabola through ``(a, fa)`` with slope ``fpa`` and ``(b, fb)``."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * curvature)


def _chosen(flag: Any, state: NamedTuple, **new: Any) -> NamedTuple:
    """``state`` with the fields in ``new`` replaced where ``flag`` holds."""
    return state._replace(**{name: jnp.where(flag, value, getattr(state, name))
                             for name, value in new.items()})


class _Zoom(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(phi_and_grad: Callable[[Any], Any], too_high: Callable[[Any, Any], Any],
          flat_enough: Callable[[Any], Any], a_lo: Any, phi_lo: Any, dphi_lo: Any,
          a_hi: Any, phi_hi: Any, dphi_hi: Any, g_0: Any, skip: Any) -> _Zoom:
    """Algorithm 3.6 on the bracket between ``a_lo`` and ``a_hi``; nothing when ``skip``.
    See Note [Wolfe line search]."""
    state = _Zoom(done=False, failed=False, j=0, a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo,
                  a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2.0,
                  phi_rec=(phi_lo + phi_hi) / 2.0, a_star=1.0, phi_star=phi_lo,
                  dphi_star=dphi_lo, g_star=g_0, nfev=0, ngev=0)

    def step(state: _Zoom) -> _Zoom:
        width = state.a_hi - state.a_lo
        low = jnp.minimum(state.a_hi, state.a_lo)
        high = jnp.maximum(state.a_hi, state.a_lo)
        smallest = 1e-5 if jnp.finfo(width.dtype).bits < 64 else 1e-10
        state = state._replace(failed=state.failed | (width <= smallest))
        cubic = _cubic_minimum(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
                               state.phi_hi, state.a_rec, state.phi_rec)
        use_cubic = (state.j > 0) & (cubic > low + 0.2 * width) & (cubic < high - 0.2 * width)
        quadratic = _quadratic_minimum(state.a_lo, state.phi_lo, state.dphi_lo, state.a_hi,
                                       state.phi_hi)
        use_quadratic = (~use_cubic) & (quadratic > low + 0.1 * width) & \
            (quadratic < high - 0.1 * width)
        a_j = jnp.where(use_cubic, cubic,
                        jnp.where(use_quadratic, quadratic, (state.a_lo + state.a_hi) / 2.0))
        phi_j, dphi_j, g_j = phi_and_grad(a_j)
        phi_j = phi_j.astype(state.phi_lo.dtype)
        dphi_j = dphi_j.astype(state.dphi_lo.dtype)
        g_j = g_j.astype(state.g_star.dtype)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)

        new_hi = too_high(a_j, phi_j) | (phi_j >= state.phi_lo)
        accept = flat_enough(dphi_j) & ~new_hi
        flip = (dphi_j * (state.a_hi - state.a_lo) >= 0.0) & ~new_hi & ~accept
        new_lo = ~new_hi & ~accept
        state = _chosen(new_hi, state, a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j,
                        a_rec=state.a_hi, phi_rec=state.phi_hi)
        state = _chosen(accept, state, a_star=a_j, phi_star=phi_j, dphi_star=dphi_j,
                        g_star=g_j)
        state = state._replace(done=state.done | accept)
        state = _chosen(flip, state, a_hi=state.a_lo, phi_hi=state.phi_lo,
                        dphi_hi=state.dphi_lo, a_rec=state.a_hi, phi_rec=state.phi_hi)
        state = _chosen(new_lo & ~flip, state, a_rec=state.a_lo, phi_rec=state.phi_lo)
        state = _chosen(new_lo, state, a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j)
        j = state.j + 1
        return state._replace(j=j, failed=state.failed | (j >= 30))

    return lax.while_loop(lambda s: ~s.done & ~skip & ~s.failed, step, state)


class _Search(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_i1: Any
    phi_i1: Any
    dphi_i1: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class LineSearchResults(NamedTuple):
    """What :func:`line_search` found: ``failed`` (no step met the strong Wolfe
    conditions), ``nit``, ``nfev``, ``ngev``, ``k`` (the bracketing counter), the step
    ``a_k``, and the value ``f_k`` and gradient ``g_k`` there; ``status`` 0 (found),
    1 (a zoom failed) or 3 (``maxiter`` bracketing steps)."""
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def line_search(f: Callable[[Any], Any], xk: Any, pk: Any, old_fval: Any = None,
                old_old_fval: Any = None, gfk: Any = None, c1: float = 1e-4,
                c2: float = 0.9, maxiter: int = 20) -> LineSearchResults:
    """A step along the descent direction ``pk`` from ``xk`` meeting the strong Wolfe
    conditions with constants ``c1``, ``c2`` (Note [Wolfe line search]). ``old_fval``
    and ``gfk``: ``f`` and its gradient at ``xk`` when known; ``old_old_fval``: the
    value before, which sets the first trial step."""
    xk, pk = inexact(xk, pk)

    def phi_and_grad(a: Any) -> tuple[Any, Any, Any]:
        value, grad = value_and_grad(f)(xk + jnp.asarray(a, dtype=pk.dtype) * pk)
        return value, jnp.real(_dot(grad, pk)), grad

    if old_fval is None or gfk is None:
        phi_0, dphi_0, gfk = phi_and_grad(0)
        evaluations = 1
    else:
        phi_0, dphi_0 = old_fval, jnp.real(_dot(gfk, pk))
        evaluations = 0
    if old_old_fval is not None:
        guess = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        first_step = jnp.where(guess > 1, 1.0, guess)
    else:
        first_step = 1

    def too_high(a: Any, phi: Any) -> Any:          # sufficient decrease fails
        return phi > phi_0 + c1 * a * dphi_0

    def flat_enough(dphi: Any) -> Any:              # the curvature condition holds
        return jnp.abs(dphi) <= -c2 * dphi_0

    state = _Search(done=jnp.asarray(False), failed=jnp.asarray(False), i=1, a_i1=0.0,
                    phi_i1=phi_0, dphi_i1=dphi_0, nfev=evaluations, ngev=evaluations,
                    a_star=0.0, phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)

    def step(state: _Search) -> _Search:
        a_i = jnp.where(state.i == 1, first_step, state.a_i1 * 2.0)
        phi_i, dphi_i, g_i = phi_and_grad(a_i)
        state = state._replace(nfev=state.nfev + 1, ngev=state.ngev + 1)
        zoom_below = too_high(a_i, phi_i) | ((phi_i >= state.phi_i1) & (state.i > 1))
        accept = flat_enough(dphi_i) & ~zoom_below
        zoom_above = (dphi_i >= 0.0) & ~zoom_below & ~accept
        below = _zoom(phi_and_grad, too_high, flat_enough, state.a_i1, state.phi_i1,
                      state.dphi_i1, a_i, phi_i, dphi_i, gfk, ~zoom_below)
        above = _zoom(phi_and_grad, too_high, flat_enough, a_i, phi_i, dphi_i, state.a_i1,
                      state.phi_i1, state.dphi_i1, gfk, ~zoom_above)
        state = state._replace(nfev=state.nfev + below.nfev + above.nfev,
                               ngev=state.ngev + below.ngev + above.ngev)
        state = _chosen(zoom_below, state, a_star=below.a_star, phi_star=below.phi_star,
                        dphi_star=below.dphi_star, g_star=below.g_star)
        state = _chosen(accept, state, a_star=a_i, phi_star=phi_i, dphi_star=dphi_i,
                        g_star=g_i)
        state = _chosen(zoom_above, state, a_star=above.a_star, phi_star=above.phi_star,
                        dphi_star=above.dphi_star, g_star=above.g_star)
        failed = (zoom_below & below.failed) | (zoom_above & above.failed)
        state = state._replace(done=state.done | zoom_below | accept | zoom_above,
                               failed=state.failed | failed)
        return state._replace(i=state.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    state = lax.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, step, state)
    status = jnp.where(state.failed, 1, jnp.where(state.i > maxiter, 3, 0))
    a_k = jnp.asarray(state.a_star)
    if jnp.finfo(a_k.dtype).bits != 64:
        a_k = jnp.where(jnp.abs(a_k) < 1e-8, jnp.sign(a_k) * 1e-8, a_k)
    return LineSearchResults(failed=state.failed | ~state.done, nit=state.i - 1,
                             nfev=state.nfev, ngev=state.ngev, k=state.i, a_k=a_k,
                             f_k=state.phi_star, g_k=state.g_star, status=status)
