"""The Taylor rules of jet's nonlinear primitives (``exp``, ``log``, ``pow``, ``div``, the
sinusoids, ``logistic``, ``tanh``, ``erf_inv``, the products, ``max``/``min`` and the
reductions that choose), registered in ``spmdc.experimental.jet.taylor_rules``. See Note
[jet interprets the traced program] in spmdc/experimental/jet.py.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.experimental.jet import (
    TaylorRule,
    bind_in_jax_form,
    chain,
    jet_unscaled,
    taylor_rules,
)

__all__: list[str] = []


# --- rules through the recurrences of their ODEs ----------------------------------------------

def _exp_rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
    x, = primals
    u = [x, *series[0]]
    v = [bind_in_jax_form(lax.exp_p, primals, params)] + [None] * len(series[0])
    for k in range(1, len(v)):
        v[k] = chain(v, u, k)                                  # v' = v u'
    return v[0], v[1:]


def _log_rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
    x, = primals
    u = [x, *series[0]]
    v = [bind_in_jax_form(lax.log_p, primals, params)] + [None] * len(series[0])
    for k in range(1, len(v)):                                  # u v' = u'
        convolution = sum(j * v[j] * u[k - j] for j in range(1, k))
        v[k] = (u[k] - convolution / k) / u[0]
    return v[0], v[1:]


def _pow_rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
    base, exponent = primals
    x, terms = jet_unscaled(lambda x, y: lax.mul(y, lax.log(x)), primals, series)
    u = [x, *terms]
    v = [bind_in_jax_form(lax.pow_p, primals, params)] + [None] * len(terms)
    for k in range(1, len(v)):
        v[k] = chain(v, u, k)                                  # v = exp(y log x)
    return v[0], v[1:]


def _power_by_squaring(x: Any, n: int) -> Any:
    if n < 0:
        return _power_by_squaring(1 / x, -n)
    if n == 0:
        return 1
    if n % 2 == 0:
        return _power_by_squaring(x * x, n // 2)
    return x * _power_by_squaring(x * x, (n - 1) // 2)


def _integer_pow_rule(primals: list[Any], series: list[list[Any]], *, y: int
                      ) -> tuple[Any, Any]:
    if y == 0:
        return jet_unscaled(jnp.ones_like, primals, series)
    return jet_unscaled(lambda x: _power_by_squaring(x, y), primals, series)


def _logistic_series(x: Any, terms: list[Any]) -> tuple[Any, list[Any]]:
    u = [x, *terms]
    v = [lax.logistic(x)] + [None] * len(terms)
    e = [v[0] * (1 - v[0])] + [None] * len(terms)               # logistic' = v (1 - v)
    for k in range(1, len(v)):
        v[k] = chain(e, u, k)
        e[k] = (1 - v[0]) * v[k] - sum(v[j] * v[k - j] for j in range(1, k + 1))
    return v[0], v[1:]


def _logistic_rule(primals: list[Any], series: list[list[Any]], **params: Any
                   ) -> tuple[Any, Any]:
    return _logistic_series(primals[0], series[0])


def _tanh_rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
    # tanh(x) = 2 logistic(2x) - 1
    out, terms = _logistic_series(2 * primals[0], [2 * t for t in series[0]])
    return 2 * out - 1, [2 * t for t in terms]


def _div_rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
    u, w = [primals[0], *series[0]], [primals[1], *series[1]]
    v: list[Any] = [None] * len(u)
    for k in range(len(v)):                                     # u = v w
        convolution = sum(v[j] * w[k - j] for j in range(k))
        v[k] = (u[k] - convolution) / w[0]
    return v[0], v[1:]


def _atan2_rule(primals: list[Any], series: list[list[Any]], **params: Any
                ) -> tuple[Any, Any]:
    out = bind_in_jax_form(lax.atan2_p, primals, params)
    x, terms = jet_unscaled(lax.div, primals, series)
    one = lax.full_like(x, 1)
    c0, cs = jet_unscaled(lambda q: lax.div(one, 1 + lax.square(q)), [x], [terms])
    c, u = [c0, *cs], [x, *terms]
    v = [out] + [None] * len(terms)
    for k in range(1, len(v)):                                  # atan2 = atan(x / y)
        v[k] = chain(c, u, k)
    return v[0], v[1:]


def _sinusoid_rule(sign: int, pair: tuple[Callable[[Any], Any], Callable[[Any], Any]],
                   which: int) -> TaylorRule:
    """sin and cos (sign -1), sinh and cosh (sign +1): s' = c u', c' = sign s u'."""
    def rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
        x, = primals
        u = [x, *series[0]]
        s = [pair[0](x)] + [None] * len(series[0])
        c = [pair[1](x)] + [None] * len(series[0])
        for k in range(1, len(s)):
            s[k] = chain(c, u, k)
            c[k] = chain(s, u, k) * sign
        v = (s, c)[which]
        return v[0], v[1:]
    return rule


taylor_rules.update({
    lax.exp_p: _exp_rule, lax.log_p: _log_rule, lax.pow_p: _pow_rule,
    lax.integer_pow_p: _integer_pow_rule, lax.logistic_p: _logistic_rule,
    lax.tanh_p: _tanh_rule, lax.div_p: _div_rule, lax.atan2_p: _atan2_rule,
    lax.sin_p: _sinusoid_rule(-1, (lax.sin, lax.cos), 0),
    lax.cos_p: _sinusoid_rule(-1, (lax.sin, lax.cos), 1),
    lax.sinh_p: _sinusoid_rule(1, (lax.sinh, lax.cosh), 0),
    lax.cosh_p: _sinusoid_rule(1, (lax.sinh, lax.cosh), 1),
})


def _erf_inv_rule(primals: list[Any], series: list[list[Any]], **params: Any
                  ) -> tuple[Any, Any]:
    """v = erf_inv(u): v' = c u' with c = sqrt(pi)/2 exp(v^2), whose coefficients come
    from v's (through the square and the exponential) one order behind."""
    x, = primals
    terms = series[0]
    u = [x, *terms]
    v = [bind_in_jax_form(lax.erf_inv_p, primals, params)] + [None] * len(terms)
    scale = np.sqrt(np.pi) / 2.
    square = [lax.square(v[0])] + [None] * (len(terms) - 1)
    exp = [lax.exp(square[0])] + [None] * (len(terms) - 1)
    c = [lax.mul(scale, exp[0])] + [None] * (len(terms) - 1)
    for k in range(1, len(terms)):
        v[k] = chain(c, u, k)
        square[k] = sum(v[k - j] * v[j] for j in range(k + 1))
        exp[k] = chain(exp, square, k)
        c[k] = scale * exp[k]
    k = len(terms)
    v[k] = chain(c, u, k)
    return v[0], v[1:]


taylor_rules[lax.erf_inv_p] = _erf_inv_rule


# --- products, choices and reductions ---------------------------------------------------------

def _bilinear_rule(prim: Any) -> TaylorRule:
    """mul, dot_general, conv_general_dilated: the Cauchy product of the two series."""
    def rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
        u, w = [primals[0], *series[0]], [primals[1], *series[1]]
        v = [sum(bind_in_jax_form(prim, [u[j], w[k - j]], params) for j in range(k + 1))
             for k in range(len(u))]
        return v[0], v[1:]
    return rule


for _prim in (lax.mul_p, lax.dot_general_p, lax.conv_general_dilated_p):
    taylor_rules[_prim] = _bilinear_rule(_prim)


def _reduce_choice_rule(prim: Any) -> TaylorRule:
    """reduce_max and reduce_min: the mean of the chosen elements' terms (ties share)."""
    def rule(primals: list[Any], series: list[list[Any]], *, axes: Sequence[int],
             **params: Any) -> tuple[Any, Any]:
        operand, = primals
        out = bind_in_jax_form(prim, primals, {"axes": axes, **params})
        kept = [i for i in range(np.ndim(operand)) if i not in axes]
        dtype = series[0][0].dtype
        spread = lax.broadcast_in_dim(out, np.shape(operand), kept)
        chosen = lax.convert_element_type(lax.eq(operand, spread), dtype)
        counts = lax.reduce_sum(chosen, axes)
        return out, [lax.div(lax.reduce_sum(lax.mul(t, chosen), axes), counts)
                     for t in series[0]]
    return rule


taylor_rules[lax.reduce_max_p] = _reduce_choice_rule(lax.reduce_max_p)
taylor_rules[lax.reduce_min_p] = _reduce_choice_rule(lax.reduce_min_p)


def _abs_rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
    x, = primals
    out = bind_in_jax_form(lax.abs_p, primals, params)
    signs = lax.select(lax.lt(x, lax.full_like(x, 0, shape=())), lax.full_like(x, -1),
                       lax.full_like(x, 1.0))
    return out, [signs * t for t in series[0]]


def _select_n_rule(primals: list[Any], series: list[list[Any]], **params: Any
                   ) -> tuple[Any, Any]:
    which, *cases = primals
    return (lax.select_n(which, *cases),
            [lax.select_n(which, *terms) for _, *terms in zip(*series, strict=True)])


def _choice_rule(greater: bool) -> TaylorRule:
    """max (min): the chosen operand's terms, their mean where the two are equal."""
    def rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
        x, y = jnp.broadcast_arrays(*primals)
        first = x > y if greater else x < y
        equal = x == y
        out = lax.select(first, x, y)

        def term(xt: Any, yt: Any) -> Any:
            xt, yt = jnp.broadcast_arrays(xt, yt)
            return lax.select(equal, (xt + yt) / 2, lax.select(first, xt, yt))
        return out, [term(*ts) for ts in zip(*series, strict=True)]
    return rule


taylor_rules.update({lax.abs_p: _abs_rule, lax.select_n_p: _select_n_rule,
                     lax.max_p: _choice_rule(True), lax.min_p: _choice_rule(False)})
