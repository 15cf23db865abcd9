"""The hypergeometric functions of ``spmdc.scipy.special``: the confluent ``hyp1f1(a, b,
x)`` and Gauss's ``hyp2f1(a, b, c, x)`` of real arguments, computed as JAX 0.10.2 computes
them, with its derivative rules. See Notes [hyp1f1] and [hyp2f1].
"""
from __future__ import annotations

from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core import dtypes
from spmdc.core.operands import inexact
from spmdc.transforms.custom_derivatives import custom_jvp
from spmdc.transforms.eager import library_jit  # See Note [library functions run as one program]

__all__ = ["hyp1f1", "hyp2f1"]

# Note [hyp1f1]
# ~~~~~~~~~~~~~
# 1F1(a; b; x) = sum_k (a)_k / ((b)_k k!) x^k (Pearson, Olver and Porter 2014, "Numerical
# methods for the computation of the confluent and Gauss hypergeometric functions"):
# for |x| < 100 the Taylor series (their eq. 3.2, method (a)), else the asymptotic
# expansion for large real x (eq. 3.8), Gamma(b)/Gamma(a) e^x x^(a-b) sum_k (b-a)_k
# (1-a)_k / (k! x^k). Each sum runs until a term is below the dtype's epsilon relative to
# the sum, at most 250 terms, one element at a time (jnp.vectorize over broadcast
# arguments, as JAX). Special cases, as JAX's: a = 0 gives 1 (so a = b = 0 gives 1, where
# SciPy has NaN), a = b != 0 gives e^x, b = 0 != a gives inf. The derivatives are JAX's:
# d/dx = a/b 1F1(a+1; b+1; x), d/da and d/db the series with each term weighted by
# psi(a+k) - psi(a) and psi(b) - psi(b+k). Large a or b (beyond about 60-80) lose
# accuracy, as JAX's do; complex arguments raise ValueError, as JAX's.

_MAX_TERMS = 250


def _summed(first: Any, ratio: Any, weight: Any, x: Any, start: Any) -> Any:
    """``start + sum_{k>=1} weight(k) t_k`` where ``t_1 = first`` and ``t_{k+1} = t_k
    ratio(k)``, until a term is below epsilon relative to the sum (Note [hyp1f1])."""
    eps = np.asarray(dtypes.finfo(x.dtype).eps, x.dtype)

    def cond(state: Any) -> Any:
        total, k, term = state
        return (k < _MAX_TERMS) & (jnp.abs(term) / jnp.abs(total) > eps)

    def body(state: Any) -> Any:
        total, k, term = state
        return total + term * weight(k), k + 1, term * ratio(k)

    k0 = np.asarray(1, x.dtype)
    return lax.while_loop(cond, body, (start, k0, first))[0]


def _series(a: Any, b: Any, x: Any) -> Any:
    one = jnp.ones_like(x)
    return _summed(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1), lambda k: one, x,
                   one)


def _asymptotic(a: Any, b: Any, x: Any) -> Any:
    from .special import gamma
    one = jnp.ones_like(x)
    total = _summed((b - a) * (1 - a) / x, lambda k: (b - a + k) * (1 - a + k) / (k + 1) / x,
                    lambda k: one, x, one)
    return gamma(b) / gamma(a) * jnp.exp(x) * x ** (a - b) * total


def _hyp1f1_one(a: Any, b: Any, x: Any) -> Any:
    """1F1 of scalars (Note [hyp1f1])."""
    value = lax.cond(jnp.abs(x) < 100, _series, _asymptotic, a, b, x)
    case = ((a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3)
    return lax.select_n(case, value, jnp.ones_like(x), jnp.exp(x), jnp.full_like(x, np.inf))


def _a_derivative_one(a: Any, b: Any, x: Any) -> Any:
    from .special import digamma
    return _summed(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1),
                   lambda k: digamma(a + k) - digamma(a), x, jnp.zeros_like(x))


def _b_derivative_one(a: Any, b: Any, x: Any) -> Any:
    from .special import digamma
    return _summed(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1),
                   lambda k: digamma(b) - digamma(b + k), x, jnp.zeros_like(x))


_hyp1f1_elementwise = jnp.vectorize(_hyp1f1_one)
_a_derivative = jnp.vectorize(_a_derivative_one)
_b_derivative = jnp.vectorize(_b_derivative_one)


@custom_jvp
def _hyp1f1(a: Any, b: Any, x: Any) -> Any:
    return _hyp1f1_elementwise(a, b, x)


_hyp1f1.defjvps(
    lambda a_dot, ans, a, b, x: _a_derivative(a, b, x) * a_dot,
    lambda b_dot, ans, a, b, x: _b_derivative(a, b, x) * b_dot,
    lambda x_dot, ans, a, b, x: a / b * _hyp1f1(a + 1, b + 1, x) * x_dot)


@library_jit
def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """The confluent hypergeometric function 1F1(a; b; x) of real arguments
    (Note [hyp1f1]: 1 where a = 0, as JAX)."""
    a, b, x = inexact(a, b, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("hyp1f1 does not support complex-valued inputs; pass real a, b, x")
    return _hyp1f1(a, b, x)


# Note [hyp2f1]
# ~~~~~~~~~~~~~
# 2F1(a, b; c; x) = sum_k (a)_k (b)_k / ((c)_k k!) x^k, by Pearson, Olver and Porter's
# methods as JAX 0.10.2 chooses them, one element at a time:
# - 1 where x = 0, or a or b is 0 and c is not; inf where c is 0 or a negative integer,
#   where x > 1, and where c - a - b <= 0 at x = 1; Gauss's Gamma(c) Gamma(c-a-b) /
#   (Gamma(c-a) Gamma(c-b)) at x = 1; (1-x)^(-a) where b = c and (1-x)^(-b) where a = c
#   (x < 1);
# - where d = c - a - b <= -1 (unless d is not an integer and x > 1) Euler's
#   transformation (1-x)^d 2F1(c-a, c-b; c; x);
# - otherwise: the terminating sum where a or b is a non-positive integer (up to the one
#   of larger magnitude, unless c is a non-positive integer beyond it); for x > 0.9 and d
#   an integer the digamma transformation (Abramowitz and Stegun 15.3.10-12, whose
#   series in 1 - x converges fast there); else the Taylor series, until a term is below
#   epsilon relative to the sum, at most 250 terms.
# "An integer" means within 50 epsilon of one. The derivatives are JAX's: d/dx = ab/c
# 2F1(a+1, b+1; c+1; x), d/da, d/db and d/dc the Taylor series with each term weighted by
# psi(a+k) - psi(a), psi(b+k) - psi(b) and psi(c) - psi(c+k).


def _near_integer(v: Any, eps: Any) -> Any:
    return jnp.abs(v - jnp.round(v)) < eps


def _terminal(a: Any, b: Any, c: Any, x: Any) -> Any:
    """The sum of a series that terminates: a or b a non-positive integer."""
    eps = np.asarray(dtypes.finfo(x.dtype).eps * 50, x.dtype)
    swap = (b < a) & _near_integer(b, eps) & ~((c % 1 == 0) & (c <= 0) & (c > b))
    a, b = jnp.where(swap, b, a), jnp.where(swap, a, b)
    n = jnp.abs(a)
    one = jnp.ones_like(x)

    def body(state: Any) -> Any:
        i, total, term = state
        term = term * (-(n - i + 1) / (c + i - 1) * (b + i - 1) / i * x)
        return i + 1, total + term, term

    return lax.while_loop(lambda state: state[0] < n + 1, body, (one, one, one))[1]


def _taylor(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = np.asarray(dtypes.finfo(x.dtype).eps, x.dtype)

    def cond(state: Any) -> Any:
        total, k, term = state
        return (k < _MAX_TERMS) & (jnp.abs(term) > eps * jnp.abs(total))

    def body(state: Any) -> Any:
        total, k, term = state
        return (total + term, k + 1,
                term * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x))

    start = (jnp.zeros_like(x), jnp.ones_like(x), jnp.ones_like(x))
    return lax.while_loop(cond, body, start)[0]


def _digamma_transform(a: Any, b: Any, c: Any, x: Any) -> Any:
    """2F1 near x = 1 for an integer c - a - b (Abramowitz and Stegun 15.3.10-12)."""
    from .special import digamma, gamma
    eps = np.asarray(dtypes.finfo(x.dtype).eps, x.dtype)
    d = c - a - b
    s = 1 - x
    rd = jnp.round(d)
    e = jnp.where(rd >= 0, d, -d)
    zero = jnp.zeros_like(d)
    d1, d2 = jnp.where(rd >= 0, d, zero), jnp.where(rd >= 0, zero, d)
    n = jnp.where(rd >= 0, rd, -rd).astype(np.int32)
    log_s = jnp.log(s)
    y = (digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - log_s) \
        / gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def cond(state: Any) -> Any:
        p, q, t, y = state
        return (t < _MAX_TERMS) & (jnp.abs(q) >= eps * jnp.abs(y))

    def body(state: Any) -> Any:
        p, q, t, y = state
        r = (digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1)
             - digamma(b + t + d1) - log_s)
        q = p * r
        p = p * (s * (a + t + d1) / (t + 1.0)) * ((b + t + d1) / (t + 1.0 + e))
        return p, q, t + 1.0, y + q

    y = lax.while_loop(cond, body, (p, y, jnp.ones_like(x), y))[3]

    def finite_sum(y: Any) -> Any:
        def step(i: Any, state: Any) -> Any:
            p, t, y1 = state
            p = p * (s * (a + t + d2) * (b + t + d2) / (1.0 - e + t))
            t = t + 1.0
            p = p / t
            return p, t, y1 + p
        one = jnp.ones_like(x)
        y1 = lax.fori_loop(1, n, step, (one, jnp.zeros_like(x), one))[2]
        gamma_c = gamma(c)
        y1 = y1 * (gamma(e) * gamma_c / (gamma(a + d1) * gamma(b + d1)))
        y = y * (gamma_c / (gamma(a + d2) * gamma(b + d2)))
        y = jnp.where((n & 1) != 0, -y, y)
        q = s ** rd
        return jnp.where(rd > 0, y * q + y1, y + y1 * q)

    return jnp.where(rd == 0, y * gamma(c) / (gamma(a) * gamma(b)), finite_sum(y))


def _terminal_or_series(a: Any, b: Any, c: Any, x: Any) -> Any:
    eps = np.asarray(dtypes.finfo(x.dtype).eps * 50, x.dtype)
    d = c - a - b
    terminates = ((a <= 0) & _near_integer(a, eps)) | ((b <= 0) & _near_integer(b, eps))
    case = jnp.where((x > 0.9) & ~terminates, jnp.where(_near_integer(d, eps), 1, 0),
                     jnp.where(terminates, 2, 0))
    return lax.select_n(case, _taylor(a, b, c, x), _digamma_transform(a, b, c, x),
                        _terminal(a, b, c, x))


def _hyp2f1_one(a: Any, b: Any, c: Any, x: Any) -> Any:
    """2F1 of scalars (Note [hyp2f1])."""
    from .special import gamma
    eps = np.asarray(dtypes.finfo(x.dtype).eps * 50, x.dtype)
    d = c - a - b
    s = 1 - x
    ca, cb = c - a, c - b
    case = jnp.where(
        (x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 0,
        jnp.where((c == 0) | ((c < 0) & (c % 1 == 0)), 1,
                  jnp.where((d <= -1) & ~(~_near_integer(d, eps) & (s < 0)), 2,
                            jnp.where((d <= 0) & (x == 1), 1,
                                      jnp.where((x < 1) & (b == c), 3,
                                                jnp.where((x < 1) & (a == c), 4,
                                                          jnp.where(x > 1, 1,
                                                                    jnp.where(x == 1, 5,
                                                                              6))))))))
    return lax.select_n(case, jnp.ones_like(x), jnp.full_like(x, np.inf),
                        s ** d * _terminal_or_series(ca, cb, c, x), s ** (-a), s ** (-b),
                        gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),
                        _terminal_or_series(a, b, c, x))


def _weighted_series_2f1(weight: Any) -> Any:
    """The elementwise function ``(a, b, c, x) -> sum_{k>=1} weight(a, b, c, k) t_k`` of
    2F1's Taylor terms t_k (its parameter derivatives, Note [hyp2f1])."""
    def one(a: Any, b: Any, c: Any, x: Any) -> Any:
        return _summed(a * b / c * x, lambda k: (a + k) * (b + k) / (c + k) / (k + 1) * x,
                       lambda k: weight(a, b, c, k), x, jnp.zeros_like(x))
    return jnp.vectorize(one)


def _psi_difference(which: str) -> Any:
    from .special import digamma

    def weight(a: Any, b: Any, c: Any, k: Any) -> Any:
        if which == "a":
            return digamma(a + k) - digamma(a)
        if which == "b":
            return digamma(b + k) - digamma(b)
        return digamma(c) - digamma(c + k)
    return weight


_hyp2f1_elementwise = jnp.vectorize(_hyp2f1_one)
_by_a, _by_b, _by_c = (_weighted_series_2f1(_psi_difference(w)) for w in "abc")


@custom_jvp
def _hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    return _hyp2f1_elementwise(a, b, c, x)


_hyp2f1.defjvps(
    lambda a_dot, ans, a, b, c, x: _by_a(a, b, c, x) * a_dot,
    lambda b_dot, ans, a, b, c, x: _by_b(a, b, c, x) * b_dot,
    lambda c_dot, ans, a, b, c, x: _by_c(a, b, c, x) * c_dot,
    lambda x_dot, ans, a, b, c, x: a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x) * x_dot)


@library_jit
def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """Gauss's hypergeometric function 2F1(a, b; c; x) of real arguments (Note
    [hyp2f1])."""
    a, b, c, x = inexact(a, b, c, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("hyp2f1 does not support complex-valued inputs; pass real a, b, c, x")
    return _hyp2f1(a, b, c, x)
