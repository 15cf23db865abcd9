"""The regularized incomplete gamma and beta functions: ``gammainc``, ``gammaincc``,
``betainc`` (``scipy.special``'s), on which the gamma, chi2, poisson and beta CDFs stand.

Note [incomplete gamma and beta]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
P(a, x) = gammainc and Q(a, x) = 1 - P = gammaincc are computed as JAX and Cephes do: by
the power series of P where x <= 1 or x <= a, else by the continued fraction of Q
(modified Lentz), each a ``while_loop`` that runs until every element has converged to
the dtype's epsilon (at most 2000 steps). I_x(a, b) = betainc uses the continued
fraction of Numerical Recipes' betacf, on x or on 1 - x (with I_x(a, b) = 1 -
I_{1-x}(b, a)) so that it converges fast.

Derivatives are custom JVPs. With respect to x they are the densities:
dP/dx = x^(a-1) e^(-x) / Gamma(a), dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b). With respect to
a, P's series and Q's continued fraction are differentiated along with their loops (each
step carries the value and its derivative in a), as JAX does; that loop runs only when a
tangent for ``a`` is present (symbolic zeros). betainc has no derivative with respect to
a and b: as in JAX, asking for one is an error.

Edge values follow JAX: P(0, x) = 1 for x > 0, P(a, 0) = 0, P(a, inf) = 1, and NaN for
a < 0 or x < 0; I_x(a, b) is NaN outside 0 <= x <= 1 or for negative a, b.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.scipy import _lax
from spmdc.scipy._lax import inexact
from spmdc.transforms.custom_derivatives import SymbolicZero, custom_jvp
from spmdc.transforms.jit import jit

__all__ = ["gammainc", "gammaincc", "betainc"]

_MAX_STEPS = 2000


def _broadcast(*xs: Any) -> list[Any]:
    shape = jnp.broadcast_shapes(*(x.shape for x in xs))
    return [jnp.broadcast_to(x, shape) for x in xs]


def _c(x: Any, v: float) -> Any:
    return np.asarray(v, x.dtype)


def _eps(x: Any) -> Any:
    return _c(x, float(np.finfo(x.dtype).eps))


def _tiny(x: Any) -> Any:
    return _c(x, float(np.finfo(x.dtype).tiny) * 1e3)


def _loop(step: Any, state: tuple[Any, ...]) -> tuple[Any, ...]:
    """Run ``step`` (state -> state, the last element the per-element "done" mask)
    until every element is done or _MAX_STEPS steps have run."""
    def cond(s):
        return jnp.logical_and(s[0] < _MAX_STEPS, jnp.logical_not(jnp.all(s[-1])))

    def body(s):
        return (s[0] + 1, *step(s[0] + 1, *s[1:]))
    return lax.while_loop(cond, body, (np.int32(0), *state))[1:]


def _lgamma(x: Any) -> Any:
    return _lax.lgamma(x)


def _series(a: Any, x: Any, with_da: bool) -> tuple[Any, Any]:
    """P(a, x) by its power series, and dP/da (zeros unless ``with_da``)."""
    log_x = jnp.log(x)
    ax = a * log_x - x - _lgamma(a)
    eps = _eps(x)

    def step(n, r, c, ans, dc, dans, done):
        r1 = r + _c(x, 1)
        c1 = c * x / r1
        dc1 = (dc - c / r1) * x / r1 if with_da else dc
        ans1, dans1 = ans + c1, dans + dc1
        new_done = done | ((jnp.abs(c1) <= eps * jnp.abs(ans1))
                           & (jnp.abs(dc1) <= eps * jnp.abs(dans1)))
        keep = lambda new, old: jnp.where(done, old, new)   # noqa: E731
        return (keep(r1, r), keep(c1, c), keep(ans1, ans), keep(dc1, dc), keep(dans1, dans),
                new_done)
    zero = jnp.zeros_like(x)
    one = jnp.ones_like(x)
    r, c, ans, dc, dans, _ = _loop(step, (a, one, one, zero, zero, zero != zero))
    front = jnp.exp(ax) / a
    value = ans * front
    if not with_da:
        return value, zero
    digamma_a = _lax.digamma(a)
    return value, front * (ans * (log_x - digamma_a - _c(x, 1) / a) + dans)


def _fraction(a: Any, x: Any, with_da: bool) -> tuple[Any, Any]:
    """Q(a, x) by its continued fraction (modified Lentz), and dQ/da if ``with_da``
    (the recurrence carried in dual numbers)."""
    log_x = jnp.log(x)
    ax = a * log_x - x - _lgamma(a)
    eps, tiny = _eps(x), _tiny(x)
    one = jnp.ones_like(x)
    zero = jnp.zeros_like(x)

    def guard(v):
        return jnp.where(jnp.abs(v) < tiny, tiny, v)

    def step(i, b, c, d, h, db, dc, dd, dh, done):
        fi = i.astype(x.dtype)
        an = -fi * (fi - a)
        dan = fi
        b1 = b + _c(x, 2)
        d_raw = an * d + b1
        dd_raw = dan * d + an * dd + db
        c_raw = b1 + an / c
        dc_raw = db + (dan * c - an * dc) / (c * c)
        d1 = _c(x, 1) / guard(d_raw)
        dd1 = -dd_raw * d1 * d1
        c1 = guard(c_raw)
        delta = d1 * c1
        ddelta = dd1 * c1 + d1 * dc_raw
        h1 = h * delta
        dh1 = dh * delta + h * ddelta
        # The derivative must have converged too: for an integer a the fraction ends
        # (an = 0 at i = a, delta = 1) while its derivative in a has further terms.
        converged = jnp.abs(delta - _c(x, 1)) <= eps
        if with_da:
            converged = converged & (jnp.abs(ddelta) <= eps * (_c(x, 1) + jnp.abs(dh1 / h1)))
        new_done = done | converged
        keep = lambda new, old: jnp.where(done, old, new)   # noqa: E731
        return (keep(b1, b), keep(c1, c), keep(d1, d), keep(h1, h), keep(db, db),
                keep(dc_raw, dc), keep(dd1, dd), keep(dh1, dh), new_done)

    b0 = x + one - a
    d0 = one / guard(b0)
    db0 = -one
    dd0 = d0 * d0                      # d/da (1 / b0) = -b0'/b0^2 = 1/b0^2
    c0 = one / tiny
    state = (b0, c0, d0, d0, db0, zero, dd0, dd0 if with_da else zero, zero != zero)
    _, _, _, h, _, _, _, dh, _ = _loop(step, state)
    value = jnp.exp(ax) * h
    if not with_da:
        return value, zero
    return value, jnp.exp(ax) * (h * (log_x - _lax.digamma(a)) + dh)


def _igamma(a: Any, x: Any, upper: bool, with_da: bool) -> tuple[Any, Any]:
    """(P or Q, its derivative in a) on well-defined inputs; edges patched after."""
    use_fraction = (x > _c(x, 1)) & (x > a)
    ok = (a > 0) & (x > 0) & jnp.isfinite(x)
    safe_a = jnp.where(ok, a, _c(a, 1))
    safe_x = jnp.where(ok, x, _c(x, 1))
    xs = jnp.where(use_fraction, _c(x, 0.5), safe_x)        # where the other branch runs
    xf = jnp.where(use_fraction, safe_x, _c(x, 2) + safe_a)
    p, dp = _series(safe_a, xs, with_da)
    q, dq = _fraction(safe_a, xf, with_da)
    lower = jnp.where(use_fraction, _c(x, 1) - q, p)
    dlower = jnp.where(use_fraction, -dq, dp)
    value, dvalue = (_c(x, 1) - lower, -dlower) if upper else (lower, dlower)
    nan = _c(x, np.nan)
    bad = (a < 0) | (x < 0) | jnp.isnan(a) | jnp.isnan(x)
    at_zero_x = (x == 0) & (a > 0)
    at_zero_a = (a == 0) & (x > 0)
    at_inf = jnp.isinf(x) & (x > 0) & (a >= 0)
    full = _c(x, 0.0 if upper else 1.0)
    empty = _c(x, 1.0 if upper else 0.0)
    value = jnp.where(at_zero_x, empty, jnp.where(at_zero_a | at_inf, full, value))
    value = jnp.where(bad, nan, value)
    dvalue = jnp.where(ok, dvalue, jnp.where(bad, nan, jnp.zeros_like(dvalue)))
    return value, dvalue


def _density(a: Any, x: Any) -> Any:
    """dP/dx = x^(a-1) e^(-x) / Gamma(a) (0 where x <= 0)."""
    ok = (x > 0) & (a > 0)
    safe_x = jnp.where(ok, x, _c(x, 1))
    value = jnp.exp((a - _c(a, 1)) * jnp.log(safe_x) - safe_x - _lgamma(jnp.where(ok, a, 1)))
    return jnp.where(ok, value, jnp.zeros_like(value))


def _make_igamma(upper: bool) -> Any:
    @custom_jvp
    def f(a, x):
        return _igamma(a, x, upper, False)[0]

    def jvp(primals, tangents):
        a, x = primals
        ta, tx = tangents
        with_da = not isinstance(ta, SymbolicZero)
        value, da = _igamma(a, x, upper, with_da)
        out = jnp.zeros_like(value)
        if with_da:
            out = out + da * ta
        if not isinstance(tx, SymbolicZero):
            dx = _density(a, x)
            out = out + (-dx if upper else dx) * tx
        return value, out
    f.defjvp(jvp, symbolic_zeros=True)
    return f


# Compiled once per shape and dtype (op by op, the loops would dispatch every step).
_gammainc = jit(_make_igamma(False))
_gammaincc = jit(_make_igamma(True))


def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x) (Note [incomplete gamma
    and beta])."""
    a, x = inexact(a, x)
    a, x = _broadcast(a, x)
    return _gammainc(a, x)


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = inexact(a, x)
    a, x = _broadcast(a, x)
    return _gammaincc(a, x)


# --- betainc ---------------------------------------------------------------------------------

def _betacf(a: Any, b: Any, x: Any) -> Any:
    eps, tiny = _eps(x), _tiny(x)
    one = jnp.ones_like(x)

    def guard(v):
        return jnp.where(jnp.abs(v) < tiny, tiny, v)

    qab, qap, qam = a + b, a + _c(a, 1), a - _c(a, 1)

    def step(m, c, d, h, done):
        fm = m.astype(x.dtype)
        m2 = _c(x, 2) * fm
        aa = fm * (b - fm) * x / ((qam + m2) * (a + m2))
        d1 = one / guard(one + aa * d)
        c1 = guard(one + aa / c)
        h1 = h * d1 * c1
        aa = -(a + fm) * (qab + fm) * x / ((a + m2) * (qap + m2))
        d2 = one / guard(one + aa * d1)
        c2 = guard(one + aa / c1)
        delta = d2 * c2
        h2 = h1 * delta
        new_done = done | (jnp.abs(delta - one) <= eps)
        keep = lambda new, old: jnp.where(done, old, new)   # noqa: E731
        return keep(c2, c), keep(d2, d), keep(h2, h), new_done

    d0 = one / guard(one - qab * x / qap)
    _, _, h, _ = _loop(step, (one, d0, d0, x != x))
    return h


def _betainc(a: Any, b: Any, x: Any) -> Any:
    ok = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    sa = jnp.where(ok, a, _c(a, 1))
    sb = jnp.where(ok, b, _c(b, 1))
    sx = jnp.where(ok, x, _c(x, 0.5))
    flip = sx > (sa + _c(sa, 1)) / (sa + sb + _c(sa, 2))
    pa, pb = jnp.where(flip, sb, sa), jnp.where(flip, sa, sb)
    px = jnp.where(flip, _c(x, 1) - sx, sx)
    log_front = (pa * jnp.log(px) + pb * jnp.log1p(-px)
                 - (_lgamma(pa) + _lgamma(pb) - _lgamma(pa + pb)))
    part = jnp.exp(log_front) * _betacf(pa, pb, px) / pa
    value = jnp.where(flip, _c(x, 1) - part, part)
    bad = (a < 0) | (b < 0) | (x < 0) | (x > 1) | jnp.isnan(a) | jnp.isnan(b) | jnp.isnan(x)
    value = jnp.where(x == 0, _c(x, 0), jnp.where(x == 1, _c(x, 1), value))
    value = jnp.where((a == 0) & (b > 0) & (x > 0), _c(x, 1), value)
    value = jnp.where((b == 0) & (a > 0) & (x < 1), _c(x, 0), value)
    return jnp.where(bad, _c(x, np.nan), value)


@custom_jvp
def _betainc_jvp_wrapped(a, b, x):
    return _betainc(a, b, x)


def _betainc_rule(primals, tangents):
    a, b, x = primals
    ta, tb, tx = tangents
    if not (isinstance(ta, SymbolicZero) and isinstance(tb, SymbolicZero)):
        raise ValueError("betainc: the derivative with respect to a and b is not supported "
                         "(as in JAX); differentiate with respect to x only")
    value = _betainc(a, b, x)
    if isinstance(tx, SymbolicZero):
        return value, jnp.zeros_like(value)
    ok = (x > 0) & (x < 1) & (a > 0) & (b > 0)
    sx = jnp.where(ok, x, _c(x, 0.5))
    sa, sb = jnp.where(ok, a, _c(a, 1)), jnp.where(ok, b, _c(b, 1))
    density = jnp.exp((sa - _c(a, 1)) * jnp.log(sx) + (sb - _c(b, 1)) * jnp.log1p(-sx)
                      - (_lgamma(sa) + _lgamma(sb) - _lgamma(sa + sb)))
    return value, jnp.where(ok, density, jnp.zeros_like(density)) * tx


_betainc_jvp_wrapped.defjvp(_betainc_rule, symbolic_zeros=True)
_betainc_jit = jit(_betainc_jvp_wrapped)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (Note [incomplete gamma and
    beta]); differentiable with respect to x."""
    a, b, x = inexact(a, b, x)
    a, b, x = _broadcast(a, b, x)
    return _betainc_jit(a, b, x)
