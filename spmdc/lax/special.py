"""Special functions (JAX's ``lax/special.py``): the wrappers of the special-function
primitives (``erf``, ``lgamma``, ``digamma``, ``polygamma``, ``zeta``, the Bessel
functions ...) and the regularized incomplete gamma and beta functions ``igamma``,
``igammac``, ``betainc`` with their derivatives ``igamma_grad_a`` and
``random_gamma_grad``, on which spmdc.scipy's ``gammainc``/``betainc``, its gamma, chi2,
poisson and beta CDFs and random.gamma's gradient stand.

Like the rest of lax these do not promote: operands are of one floating dtype (Python
scalars take it); spmdc.scipy.special promotes integers to the default float first.

Note [incomplete gamma and beta]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
P(a, x) = igamma and Q(a, x) = 1 - P = igammac are computed as JAX and Cephes do: by
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

from ..compiler.primitives.elementwise import (
    digamma_p,
    erf_inv_p,
    erf_p,
    lgamma_p,
    polygamma_p,
)
from ..compiler.primitives.misc import zeta_p
from ..compiler.primitives.special import bessel_i0e_p, bessel_i1e_p, erfc_p
from ..core import dtypes
from ..core.operands import asarray as _arr
from ..core.operands import full
from ..core.tracing import bind
from ..transforms.custom_derivatives import SymbolicZero, custom_jvp
from ..transforms.jit import jit
from .control_flow import while_loop
from .elementwise import _where, abs, exp, is_finite, log, log1p
from .reductions import reduce_and
from .shape import broadcast_in_dim

__all__ = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "bessel_i0e", "bessel_i1e",
           "polygamma", "zeta", "igamma", "igammac", "igamma_grad_a", "random_gamma_grad",
           "betainc"]


def _unary(name: str, prim: Any) -> Any:
    def fn(x: Any) -> Any:
        x = _arr(x)
        return bind(prim, x, weak=x.weak)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise ``{name}`` (the ``{prim.name}`` primitive)."
    return fn


erf, erfc, erf_inv = _unary("erf", erf_p), _unary("erfc", erfc_p), _unary("erf_inv", erf_inv_p)
lgamma, digamma = _unary("lgamma", lgamma_p), _unary("digamma", digamma_p)
bessel_i0e, bessel_i1e = _unary("bessel_i0e", bessel_i0e_p), _unary("bessel_i1e", bessel_i1e_p)


def polygamma(m: Any, x: Any) -> Any:
    """Elementwise ``polygamma`` of two arrays of one dtype."""
    m, x = _arr(m), _arr(x)
    if m.dtype != x.dtype:
        raise TypeError(f"lax.polygamma requires arguments to have the same dtypes, got "
                        f"{m.dtype}, {x.dtype}; convert one with lax.convert_element_type")
    return bind(polygamma_p, m, x, weak=m.weak and x.weak)


# --- helpers of the loops below ----------------------------------------------------------------

def _isnan(x: Any) -> Any:
    return x != x


def _isinf(x: Any) -> Any:
    return ~is_finite(x) & ~_isnan(x)


def _all(x: Any) -> Any:
    return reduce_and(x, tuple(range(x.ndim)))


def _zeros_like(x: Any) -> Any:
    return full(x.shape, 0, x.dtype)


def _ones_like(x: Any) -> Any:
    return full(x.shape, 1, x.dtype)


_MAX_STEPS = 2000


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
        return (s[0] < _MAX_STEPS) & ~_all(s[-1])

    def body(s):
        return (s[0] + 1, *step(s[0] + 1, *s[1:]))
    return while_loop(cond, body, (np.int32(0), *state))[1:]


def _series(a: Any, x: Any, with_da: bool) -> tuple[Any, Any]:
    """P(a, x) by its power series, and dP/da (zeros unless ``with_da``)."""
    log_x = log(x)
    ax = a * log_x - x - lgamma(a)
    eps = _eps(x)

    def step(n, r, c, ans, dc, dans, done):
        r1 = r + _c(x, 1)
        c1 = c * x / r1
        dc1 = (dc - c / r1) * x / r1 if with_da else dc
        ans1, dans1 = ans + c1, dans + dc1
        new_done = done | ((abs(c1) <= eps * abs(ans1))
                           & (abs(dc1) <= eps * abs(dans1)))
        keep = lambda new, old: _where(done, old, new)   # noqa: E731
        return (keep(r1, r), keep(c1, c), keep(ans1, ans), keep(dc1, dc), keep(dans1, dans),
                new_done)
    zero = _zeros_like(x)
    one = _ones_like(x)
    r, c, ans, dc, dans, _ = _loop(step, (a, one, one, zero, zero, zero != zero))
    front = exp(ax) / a
    value = ans * front
    if not with_da:
        return value, zero
    digamma_a = digamma(a)
    return value, front * (ans * (log_x - digamma_a - _c(x, 1) / a) + dans)


def _fraction(a: Any, x: Any, with_da: bool) -> tuple[Any, Any]:
    """Q(a, x) by its continued fraction (modified Lentz), and dQ/da if ``with_da``
    (the recurrence carried in dual numbers)."""
    log_x = log(x)
    ax = a * log_x - x - lgamma(a)
    eps, tiny = _eps(x), _tiny(x)
    one = _ones_like(x)
    zero = _zeros_like(x)

    def guard(v):
        return _where(abs(v) < tiny, tiny, v)

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
        converged = abs(delta - _c(x, 1)) <= eps
        if with_da:
            converged = converged & (abs(ddelta) <= eps * (_c(x, 1) + abs(dh1 / h1)))
        new_done = done | converged
        keep = lambda new, old: _where(done, old, new)   # noqa: E731
        return (keep(b1, b), keep(c1, c), keep(d1, d), keep(h1, h), keep(db, db),
                keep(dc_raw, dc), keep(dd1, dd), keep(dh1, dh), new_done)

    b0 = x + one - a
    d0 = one / guard(b0)
    db0 = -one
    dd0 = d0 * d0                      # d/da (1 / b0) = -b0'/b0^2 = 1/b0^2
    c0 = one / tiny
    state = (b0, c0, d0, d0, db0, zero, dd0, dd0 if with_da else zero, zero != zero)
    _, _, _, h, _, _, _, dh, _ = _loop(step, state)
    value = exp(ax) * h
    if not with_da:
        return value, zero
    return value, exp(ax) * (h * (log_x - digamma(a)) + dh)


def _igamma(a: Any, x: Any, upper: bool, with_da: bool) -> tuple[Any, Any]:
    """(P or Q, its derivative in a) on well-defined inputs; edges patched after."""
    use_fraction = (x > _c(x, 1)) & (x > a)
    ok = (a > 0) & (x > 0) & is_finite(x)
    safe_a = _where(ok, a, _c(a, 1))
    safe_x = _where(ok, x, _c(x, 1))
    xs = _where(use_fraction, _c(x, 0.5), safe_x)        # where the other branch runs
    xf = _where(use_fraction, safe_x, _c(x, 2) + safe_a)
    p, dp = _series(safe_a, xs, with_da)
    q, dq = _fraction(safe_a, xf, with_da)
    lower = _where(use_fraction, _c(x, 1) - q, p)
    dlower = _where(use_fraction, -dq, dp)
    value, dvalue = (_c(x, 1) - lower, -dlower) if upper else (lower, dlower)
    nan = _c(x, np.nan)
    bad = (a < 0) | (x < 0) | _isnan(a) | _isnan(x)
    at_zero_x = (x == 0) & (a > 0)
    at_zero_a = (a == 0) & (x > 0)
    at_inf = _isinf(x) & (x > 0) & (a >= 0)
    full = _c(x, 0.0 if upper else 1.0)
    empty = _c(x, 1.0 if upper else 0.0)
    value = _where(at_zero_x, empty, _where(at_zero_a | at_inf, full, value))
    value = _where(bad, nan, value)
    dvalue = _where(ok, dvalue, _where(bad, nan, _zeros_like(dvalue)))
    return value, dvalue


def _density(a: Any, x: Any) -> Any:
    """dP/dx = x^(a-1) e^(-x) / Gamma(a) (0 where x <= 0)."""
    ok = (x > 0) & (a > 0)
    safe_x = _where(ok, x, _c(x, 1))
    value = exp((a - _c(a, 1)) * log(safe_x) - safe_x - lgamma(_where(ok, a, 1)))
    return _where(ok, value, _zeros_like(value))


def _make_igamma(upper: bool) -> Any:
    @custom_jvp
    def f(a, x):
        return _igamma(a, x, upper, False)[0]

    def jvp(primals, tangents):
        a, x = primals
        ta, tx = tangents
        with_da = not isinstance(ta, SymbolicZero)
        value, da = _igamma(a, x, upper, with_da)
        out = _zeros_like(value)
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


# --- betainc ---------------------------------------------------------------------------------

def _betacf(a: Any, b: Any, x: Any) -> Any:
    eps, tiny = _eps(x), _tiny(x)
    one = _ones_like(x)

    def guard(v):
        return _where(abs(v) < tiny, tiny, v)

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
        new_done = done | (abs(delta - one) <= eps)
        keep = lambda new, old: _where(done, old, new)   # noqa: E731
        return keep(c2, c), keep(d2, d), keep(h2, h), new_done

    d0 = one / guard(one - qab * x / qap)
    _, _, h, _ = _loop(step, (one, d0, d0, x != x))
    return h


def _betainc(a: Any, b: Any, x: Any) -> Any:
    ok = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    sa = _where(ok, a, _c(a, 1))
    sb = _where(ok, b, _c(b, 1))
    sx = _where(ok, x, _c(x, 0.5))
    flip = sx > (sa + _c(sa, 1)) / (sa + sb + _c(sa, 2))
    pa, pb = _where(flip, sb, sa), _where(flip, sa, sb)
    px = _where(flip, _c(x, 1) - sx, sx)
    log_front = (pa * log(px) + pb * log1p(-px)
                 - (lgamma(pa) + lgamma(pb) - lgamma(pa + pb)))
    part = exp(log_front) * _betacf(pa, pb, px) / pa
    value = _where(flip, _c(x, 1) - part, part)
    bad = (a < 0) | (b < 0) | (x < 0) | (x > 1) | _isnan(a) | _isnan(b) | _isnan(x)
    value = _where(x == 0, _c(x, 0), _where(x == 1, _c(x, 1), value))
    value = _where((a == 0) & (b > 0) & (x > 0), _c(x, 1), value)
    value = _where((b == 0) & (a > 0) & (x < 1), _c(x, 0), value)
    return _where(bad, _c(x, np.nan), value)


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
        return value, _zeros_like(value)
    ok = (x > 0) & (x < 1) & (a > 0) & (b > 0)
    sx = _where(ok, x, _c(x, 0.5))
    sa, sb = _where(ok, a, _c(a, 1)), _where(ok, b, _c(b, 1))
    density = exp((sa - _c(a, 1)) * log(sx) + (sb - _c(b, 1)) * log1p(-sx)
                      - (lgamma(sa) + lgamma(sb) - lgamma(sa + sb)))
    return value, _where(ok, density, _zeros_like(density)) * tx


_betainc_jvp_wrapped.defjvp(_betainc_rule, symbolic_zeros=True)
_betainc_jit = jit(_betainc_jvp_wrapped)


# --- the lax operations -------------------------------------------------------------------------

def _floats(op: str, *args: Any) -> list[Any]:
    """lax's rule: operands of one floating dtype (Python scalars take it), shapes equal or
    rank 0, broadcast here."""
    arrays = [_arr(a) for a in args]
    strong = [a for a in arrays if not a.weak] or arrays
    want = strong[0].dtype
    if want.kind != "f" and want != dtypes.canonicalize("bfloat16"):
        want = dtypes.default_float() if all(a.weak for a in arrays) else want
    if any(not a.weak and a.dtype != want for a in arrays) or \
            (want.kind != "f" and want != dtypes.canonicalize("bfloat16")):
        raise TypeError(f"lax.{op} requires arguments of one floating dtype, got "
                        f"{', '.join(str(a.dtype) for a in arrays)}")
    arrays = [a.astype(want) if a.dtype != want else a for a in arrays]
    shapes = {a.shape for a in arrays if a.ndim}
    if len(shapes) > 1:
        raise TypeError(f"lax.{op} requires arguments of one shape (or rank 0), got "
                        f"{', '.join(str(a.shape) for a in arrays)}")
    shape = shapes.pop() if shapes else ()
    return [a if a.shape == shape else broadcast_in_dim(a, shape, ()) for a in arrays]


def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x) (scipy's gammainc; Note
    [incomplete gamma and beta])."""
    return _gammainc(*_floats("igamma", a, x))


def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _gammaincc(*_floats("igammac", a, x))


def _igamma_grad_a(a: Any, x: Any) -> Any:
    _, da = _igamma(a, x, False, True)
    bad = (a <= 0) | (x < 0) | _isnan(a) | _isnan(x)              # NaN there, as in JAX
    return _where(bad, np.asarray(np.nan, a.dtype), da)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """dP(a, x)/da, by differentiating P's series or Q's continued fraction along with it
    (Note [incomplete gamma and beta])."""
    return jit(_igamma_grad_a)(*_floats("igamma_grad_a", a, x))


def _random_gamma_grad(a: Any, x: Any) -> Any:
    # x(a) is the sample with P(a, x) = u fixed: dx/da = -(dP/da) / (dP/dx).
    density = _density(a, x)
    zero = np.zeros((), a.dtype)
    grad = -_igamma_grad_a(a, x) / _where(density > zero, density, np.ones((), a.dtype))
    return _where((x == zero) & (a > zero), zero, grad)


def random_gamma_grad(a: Any, x: Any) -> Any:
    """The derivative in ``a`` of a Gamma(a, 1) sample ``x`` (implicit reparameterization:
    -(dP/da) / (dP/dx) at ``x``), as jax.random.gamma's gradient uses."""
    a, x = _floats("random_gamma_grad", a, x)
    if a.dtype.itemsize < 4:                                  # computed in float32, as JAX
        return jit(_random_gamma_grad)(a.astype(np.float32), x.astype(np.float32)) \
            .astype(a.dtype)
    return jit(_random_gamma_grad)(a, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b) (Note [incomplete gamma and
    beta]); differentiable in ``x`` only, as in JAX."""
    return _betainc_jit(*_floats("betainc", a, b, x))


def zeta(x: Any, q: Any) -> Any:
    """The Hurwitz zeta function sum_k (k + q)^-x (chlo.zeta); no derivative, as in JAX."""
    x, q = _floats("zeta", x, q)
    return bind(zeta_p, x, q)
