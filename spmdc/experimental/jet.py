"""``jax.experimental.jet``: Taylor-mode higher-order differentiation, ``jet(fun, primals,
series)``, as JAX 0.10.2 defines it, with the table of Taylor rules it applies per primitive
(``taylor_rules``).

Note [jet interprets the traced program]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A truncated Taylor polynomial of each input, ``x(t) = x0 + x1 t + x2 t^2 + ...`` (the
coefficients ``xk``, not yet scaled by ``k!``), is pushed through ``fun`` to the polynomial
of each output. JAX does it with a tracer of its own; spmdc has no per-transformation
tracers, so ``jet`` traces ``fun`` once into spmdc's IR (``make_jaxpr``: the program under
JAX's primitive names and params) and interprets its equations, each on a pair (primal,
series), where a series is the list of coefficients or ``None`` for the zero series:

- an equation whose operands all have zero series (constants, integer indices, values that
  do not depend on the inputs) is bound as it is, and its results have zero series;
- ``custom_jvp_call`` and ``custom_vjp_call`` are interpreted through the function they
  call, as JAX's jet ignores custom rules;
- any other equation goes to its primitive's rule in ``taylor_rules``, with the zero
  series of its other operands made explicit zeros; a primitive without a rule raises
  JAX's ``KeyError`` (the key is the primitive, so ``str(e)`` is its name).

A rule binds primitives on values (through ``spmdc.lax`` and the equation's primitive), so
``jet`` runs eagerly, or inside an enclosing ``jit``, ``vmap`` or ``grad``, which traces
the rules' operations as it traces any other. The rules are JAX's: a linear primitive maps
each coefficient; comparisons and rounding give zero series; ``mul``, ``dot_general`` and
``conv_general_dilated`` take the Cauchy product of the two series; ``exp``, ``log``,
``div``, ``sin``/``cos``, ``logistic`` and ``erf_inv`` use the recurrences of their ODEs
(``v' = f'(u) u'`` written on coefficients); ``expm1``, ``log1p``, ``sqrt``, ``rsqrt``,
``asinh``, ``acosh``, ``atanh``, ``erfc``, ``clamp`` and ``integer_pow`` are expanded into
simpler operations, whose jet is taken (the composites' jets are themselves traced and
interpreted). The factorial scaling of ``factorial_scaled=True`` divides each input
coefficient by ``fact(k) = exp(lgamma(k + 1))`` and multiplies each output one back, as
JAX computes it (so its rounding is JAX's too).

Two places where spmdc differs from JAX's module: ``rem``'s series follows
``x - y * trunc(x / y)`` (JAX's composite rounds with ``floor``, which is not ``rem`` for
operands of different signs, and it returns that composite's primal); and a ``primals``
and ``series`` of different lengths is a ValueError (JAX pairs them with ``zip``, calling
``fun`` with fewer arguments than given).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import spmdc.numpy as jnp
import spmdc.tree_util as trees
from spmdc import lax
from spmdc.core.dtypes import dtype_and_weak
from spmdc.custom_derivatives import custom_jvp_call_p, custom_vjp_call_p
from spmdc.transforms.jaxpr_params import bind_jax
from spmdc.transforms.jaxpr_view import DropVar, Jaxpr, Literal, eval_eqn
from spmdc.transforms.make_jaxpr import make_jaxpr

__all__ = ["jet", "taylor_rules"]

Series = list[Any] | None           # the coefficients of t, t^2, ...; None: all zero
# rule(primals_in, series_in, **params) -> (primal_out, series_out); the series in are
# lists (zero series made zeros); a multiple-results primitive returns lists of both.
TaylorRule = Callable[..., tuple[Any, Any]]
taylor_rules: dict[Any, TaylorRule] = {}


def _fact(n: int) -> Any:
    """n!, computed as JAX's jet computes it (in the default float type)."""
    return lax.exp(lax.lgamma(n + 1.))


def jet(fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Sequence[Any]],
        factorial_scaled: bool = True) -> tuple[Any, Any]:
    """Taylor-mode higher-order differentiation: ``(fun(*primals), series_out)``, where
    ``series_out`` holds the Taylor coefficients of ``fun``'s outputs (each output a list of
    ``len(series[0])`` terms, in ``fun``'s output tree) given those of its inputs. With
    ``factorial_scaled`` (the default) the k-th term in and out is the k-th derivative along
    the path, else the plain coefficient of ``t^k``. See Note [jet interprets the traced
    program]."""
    try:
        order, = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different arguments"
                         ) from None
    if len(primals) != len(series):
        raise ValueError(f"jet: primals and series must have one entry per argument of fun, "
                         f"got {len(primals)} primals and {len(series)} series; give each "
                         f"argument its tuple of terms")
    for i, (x, terms) in enumerate(zip(primals, series, strict=True)):
        if not trees.treedef_is_leaf(trees.tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not trees.treedef_is_leaf(trees.tree_structure(t)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    if factorial_scaled:
        series = [[term / _fact(k + 1) for k, term in enumerate(terms)] for terms in series]
    out_primals, out_series, out_tree = _jet_flat(fun, list(primals),
                                                  [list(s) for s in series], order)
    if factorial_scaled:
        out_series = [[term * _fact(k + 1) for k, term in enumerate(terms)]
                      for terms in out_series]
    return (trees.tree_unflatten(out_tree, out_primals),
            trees.tree_unflatten(out_tree, out_series))


def jet_unscaled(fun: Callable[..., Any], primals: Sequence[Any],
                  series: Sequence[Sequence[Any]]) -> tuple[Any, Any]:
    """``jet(..., factorial_scaled=False)`` of a function of arrays returning one array or
    a list of them, as the rules use it."""
    order, = set(map(len, series))
    outs, out_series, out_tree = _jet_flat(fun, list(primals), [list(s) for s in series],
                                           order)
    return (trees.tree_unflatten(out_tree, outs), trees.tree_unflatten(out_tree, out_series))


def _jet_flat(fun: Callable[..., Any], primals: list[Any], series: list[list[Any]],
              order: int) -> tuple[list[Any], list[list[Any]], Any]:
    closed, out_shape = make_jaxpr(fun, return_shape=True)(*primals)
    primals = [jnp.asarray(x) for x in primals]
    outs, out_series = _interpret(closed.jaxpr, closed.consts, primals, series)
    out_series = [[jnp.zeros_like(p)] * order if s is None else list(s)
                  for p, s in zip(outs, out_series, strict=True)]
    return outs, out_series, trees.tree_structure(out_shape)


def _literal(a: Literal) -> Any:
    """A literal's value; a weakly typed one (a Python scalar of ``fun``) stays weak."""
    value = a.val if isinstance(a.val, (np.ndarray, np.generic)) \
        else np.asarray(a.val, a.aval.dtype)[()]
    return _weakened(value) if a.aval.weak_type else value


def _interpret(jaxpr: Jaxpr, consts: Sequence[Any], primals: Sequence[Any],
               series: Sequence[Series]) -> tuple[list[Any], list[Series]]:
    """Run ``jaxpr`` on (primal, series) pairs. See Note [jet interprets the traced
    program]."""
    env: dict[int, tuple[Any, Series]] = {}

    def read(a: Any) -> tuple[Any, Series]:
        return (_literal(a), None) if isinstance(a, Literal) else env[id(a)]

    for v, x in zip(jaxpr.constvars, consts, strict=True):
        env[id(v)] = (x, None)
    for v, x, s in zip(jaxpr.invars, primals, series, strict=True):
        env[id(v)] = (x, s)
    for eqn in jaxpr.eqns:
        primals_in, series_in = zip(*map(read, eqn.invars), strict=True) \
            if eqn.invars else ((), ())
        multiple = eqn.primitive.multiple_results
        if all(s is None for s in series_in):
            outs = _bind_plain(eqn, list(primals_in))
            outs_series: list[Series] = [None] * len(outs)
        elif eqn.primitive in (custom_jvp_call_p, custom_vjp_call_p):
            call = eqn.params["call_jaxpr"]
            outs, outs_series = _interpret(call.jaxpr, call.consts, primals_in, series_in)
        else:
            rule = taylor_rules.get(eqn.primitive)
            if rule is None:
                error = KeyError(eqn.primitive)     # JAX's: a lookup in its jet_rules
                error.add_note(f"jet: no Taylor rule for the primitive "
                               f"'{eqn.primitive.name}'; write the function with operations "
                               f"that have one (jax.experimental.jet's list)")
                raise error
            order = len(next(s for s in series_in if s is not None))
            filled = [[jnp.zeros(np.shape(x), jnp.result_type(x))] * order if s is None
                      else s for x, s in zip(primals_in, series_in, strict=True)]
            out, out_series = rule(list(primals_in), filled, **eqn.params)
            outs = list(out) if multiple else [out]
            if out_series is None:
                outs_series = [None] * len(outs)
            else:
                outs_series = list(out_series) if multiple else [out_series]
        for v, x, s in zip(eqn.outvars, outs, outs_series, strict=True):
            if not isinstance(v, DropVar):
                env[id(v)] = (x, s)
    results = [read(a) for a in jaxpr.outvars]
    return [x for x, _ in results], [s for _, s in results]


def _bind_plain(eqn: Any, invals: list[Any]) -> list[Any]:
    """One equation on plain values (``eval_eqn``), its weakly typed outputs weak."""
    return [x if x is None or not v.aval.weak_type else _weakened(x)
            for v, x in zip(eqn.outvars, eval_eqn(eqn, invals), strict=True)]


# Note [weak types of jet's values]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX's jet returns weakly typed values where lax would (``jet(jnp.sin, (0.5,), ...)`` is
# weak f32): a primitive's result is weak iff its operands all are. Binding in JAX's form
# (bind_jax) gives strong results, so the interpreter restores the weak type: an equation
# bound as it is takes its traced result type, and a rule's bind takes the rule of its
# operands; a Literal of the program that was a Python scalar stays weak. Making a value
# weak is a convert_element_type to its own dtype with weak_type=True, as in JAX.

def _weakened(x: Any) -> Any:
    dtype, weak = dtype_and_weak(x)
    if weak:
        return x
    return bind_jax(lax.convert_element_type_p, [x],
                    {"new_dtype": dtype, "weak_type": True, "sharding": None})


def bind_in_jax_form(prim: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """``prim`` applied to ``args`` with the params of its jaxpr equation, its result weak
    iff its operands all are (See Note [weak types of jet's values])."""
    out = bind_jax(prim, list(args), params)
    if prim is lax.convert_element_type_p or not all(dtype_and_weak(a)[1] for a in args):
        return out
    return [_weakened(o) for o in out] if prim.multiple_results else _weakened(out)


# --- zero and linear rules --------------------------------------------------------------------

def _zero_rule(prim: Any) -> TaylorRule:
    """A piecewise-constant primitive (comparisons, rounding, bits): zero series out."""
    return lambda primals, series, **params: (bind_in_jax_form(prim, primals, params), None)


def _linear_rule(prim: Any) -> TaylorRule:
    """A linear primitive applies to each coefficient as to the primal."""
    def rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
        out = bind_in_jax_form(prim, primals, params)
        terms = [bind_in_jax_form(prim, ts, params) for ts in zip(*series, strict=True)]
        if prim.multiple_results:
            terms = [list(t) for t in zip(*terms, strict=True)]
        return out, terms
    return rule


for _prim in (lax.le_p, lax.lt_p, lax.gt_p, lax.ge_p, lax.eq_p, lax.ne_p, lax.not_p, lax.and_p,
              lax.or_p, lax.xor_p, lax.floor_p, lax.ceil_p, lax.round_p, lax.sign_p,
              lax.stop_gradient_p, lax.is_finite_p, lax.shift_left_p,
              lax.shift_right_arithmetic_p, lax.shift_right_logical_p,
              lax.bitcast_convert_type_p):
    taylor_rules[_prim] = _zero_rule(_prim)

for _prim in (lax.neg_p, lax.real_p, lax.complex_p, lax.conj_p, lax.imag_p, lax.add_p,
              lax.sub_p, lax.convert_element_type_p, lax.broadcast_in_dim_p,
              lax.concatenate_p, lax.pad_p, lax.reshape_p, lax.squeeze_p, lax.rev_p,
              lax.transpose_p, lax.slice_p, lax.reduce_sum_p, lax.reduce_window_sum_p,
              lax.fft_p, lax.cumsum_p):
    taylor_rules[_prim] = _linear_rule(_prim)


def _dynamic_slice_rule(primals: list[Any], series: list[list[Any]], **params: Any
                        ) -> tuple[Any, Any]:
    operand, *starts = primals
    out = bind_in_jax_form(lax.dynamic_slice_p, primals, params)
    return out, [bind_in_jax_form(lax.dynamic_slice_p, [t, *starts], params) for t in series[0]]


def _dynamic_update_slice_rule(primals: list[Any], series: list[list[Any]], **params: Any
                               ) -> tuple[Any, Any]:
    operand, update, *starts = primals
    out = bind_in_jax_form(lax.dynamic_update_slice_p, primals, params)
    return out, [bind_in_jax_form(lax.dynamic_update_slice_p, [t, u, *starts], params)
                 for t, u in zip(series[0], series[1], strict=True)]


def _gather_rule(primals: list[Any], series: list[list[Any]], **params: Any
                 ) -> tuple[Any, Any]:
    operand, indices = primals
    return (bind_in_jax_form(lax.gather_p, primals, params),
            [bind_in_jax_form(lax.gather_p, [t, indices], params) for t in series[0]])


def _scatter_rule(primals: list[Any], series: list[list[Any]], **params: Any
                  ) -> tuple[Any, Any]:
    """JAX's scatter-add rule; spmdc's scatter with another ``combine`` is JAX's scatter,
    scatter-mul ..., which have none."""
    if params.get("combine") != "add":
        raise KeyError(lax.scatter_p)
    operand, indices, updates = primals
    return (bind_in_jax_form(lax.scatter_p, primals, params),
            [bind_in_jax_form(lax.scatter_p, [t, indices, u], params)
             for t, u in zip(series[0], series[2], strict=True)])


taylor_rules.update({lax.dynamic_slice_p: _dynamic_slice_rule,
                     lax.dynamic_update_slice_p: _dynamic_update_slice_rule,
                     lax.gather_p: _gather_rule, lax.scatter_p: _scatter_rule})


def _cumulative_rule(combine: Callable[[Any, Any], Any]) -> TaylorRule:
    """cumprod, cummax, cummin: the jet of the parallel prefix scan, as JAX's (a
    reduce_window is not differentiable to every order)."""
    def rule(primals: list[Any], series: list[list[Any]], *, axis: int, reverse: bool
             ) -> tuple[Any, Any]:
        scan = functools.partial(lax.associative_scan, combine, axis=axis, reverse=reverse)
        return jet_unscaled(scan, primals, series)
    return rule


taylor_rules[lax.cumprod_p] = _cumulative_rule(lax.mul)
taylor_rules[lax.cummax_p] = _cumulative_rule(lax.max)
taylor_rules[lax.cummin_p] = _cumulative_rule(lax.min)


# --- rules through derivatives and composites -------------------------------------------------

def chain(c: list[Any], u: list[Any], k: int) -> Any:
    """The k-th coefficient of v where v' = c u' (c, u: coefficient lists)."""
    return sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k


def _derivative_rule(prim: Any, derivative: Callable[[Any], Any]) -> TaylorRule:
    """A unary primitive given by its first derivative: v' = f'(u) u'."""
    def rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
        x, = primals
        c0, cs = jet_unscaled(derivative, primals, series)
        c, u = [c0, *cs], [x, *series[0]]
        v = [bind_in_jax_form(prim, primals, params)] + [None] * len(series[0])
        for k in range(1, len(v)):
            v[k] = chain(c, u, k)
        return v[0], v[1:]
    return rule


taylor_rules[lax.erf_p] = _derivative_rule(
    lax.erf_p, lambda x: (2. / np.sqrt(np.pi)) * lax.exp(lax.neg(lax.square(x))))


def _composite_rule(composite: Callable[..., Any]) -> TaylorRule:
    """A primitive written with simpler ones: the jet of that composite."""
    return lambda primals, series, **params: jet_unscaled(composite, primals, series)


def _trunc(q: Any) -> Any:
    return lax.select(lax.lt(q, lax.full_like(q, 0)), lax.ceil(q), lax.floor(q))


def _rem_rule(primals: list[Any], series: list[list[Any]], **params: Any) -> tuple[Any, Any]:
    # d rem(x, y) = dx - trunc(x / y) dy (See Note [jet interprets the traced program])
    _, terms = jet_unscaled(lambda x, y: x - y * _trunc(x / y), primals, series)
    return bind_in_jax_form(lax.rem_p, primals, params), terms


taylor_rules.update({
    lax.expm1_p: _composite_rule(lambda x: lax.exp(x) - 1),
    lax.log1p_p: _composite_rule(lambda x: lax.log(1 + x)),
    lax.sqrt_p: _composite_rule(lambda x: lax.pow(x, 0.5)),
    lax.rsqrt_p: _composite_rule(lambda x: lax.pow(x, -0.5)),
    lax.asinh_p: _composite_rule(lambda x: lax.log(x + lax.sqrt(lax.square(x) + 1))),
    lax.acosh_p: _composite_rule(lambda x: lax.log(x + lax.sqrt(lax.square(x) - 1))),
    lax.atanh_p: _composite_rule(lambda x: 0.5 * lax.log(lax.div(1 + x, 1 - x))),
    lax.erfc_p: _composite_rule(lambda x: 1 - lax.erf(x)),
    lax.clamp_p: _composite_rule(lambda a, x, b: lax.min(lax.max(a, x), b)),
    lax.rem_p: _rem_rule,
})



# the rules of the nonlinear primitives register themselves in taylor_rules
from spmdc.experimental import taylor  # noqa: E402, F401

