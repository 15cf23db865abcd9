"""JAX's ``get_bind_params`` for the primitives whose equations hold a function to call:
the sub-functions (``subfuns``) an interpreter written for JAX hands back to ``bind``.

Note [bind params and subfuns]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
An interpreter written for JAX 0.10.2 (Equinox's ``finalise_jaxpr``, the loop of
``jax.core.eval_jaxpr``) rebinds each equation as
``eqn.primitive.bind(*args, **eqn.primitive.get_bind_params(eqn.params))``.
``get_bind_params`` returns a dict: the params as they are for most primitives; for
``call``/``closed_call`` and ``custom_jvp_call`` the functions the equation holds, as
WrappedFuns under ``subfuns``, in place of the params they come from; ``bind`` takes
them back. spmdc's primitives hold their sub-programs as params, so only these
translations are needed (the tables are ``bind_params_rules`` in
compiler/primitives/core.py and ``subfun_binders`` in transforms/jaxpr_params.py):

- ``custom_jvp_call``: ``subfuns=(fun, jvp)``, ``fun`` the function (its
  ``call_jaxpr``) and ``jvp(*primals, *tangents) -> (*outs, *tangent_outs)`` its rule,
  ``symbolic_zeros`` the param that stays. Binding them makes a ``custom_jvp`` of
  ``fun`` with ``jvp`` as its rule and calls it.
- ``call``/``closed_call`` (extend/core/primitives.py): ``subfuns=(fun,)``.

``custom_vjp_call`` keeps its params: JAX hands ``(fun, fwd, bwd)`` over instead, but
spmdc's ``bind`` of the equation's own params runs the same function with the same rules.
"""
from __future__ import annotations

from typing import Any

from ...custom_derivatives import custom_jvp_call_p
from ...numpy import zeros_like
from ...transforms.custom_derivatives import SymbolicZero, custom_jvp
from ...transforms.jaxpr_params import bind_params_rules, subfun_binders
from ...transforms.jaxpr_view import ClosedJaxpr, closed_jaxpr, jaxpr_as_fun
from ..linear_util import WrappedFun, wrap_init

__all__ = ["custom_jvp_bind_params"]


def custom_jvp_bind_params(params: dict[str, Any]) -> dict[str, Any]:
    """``custom_jvp_call``'s params (in JAX's form) as ``bind`` takes them: the
    function and its rule as ``subfuns`` (Note [bind params and subfuns])."""
    rest = dict(params)
    call: ClosedJaxpr = rest.pop("call_jaxpr")
    rule = rest.pop("jvp_jaxpr_fun")
    num_consts = rest.pop("num_consts")
    n_args = len(call.in_avals) - num_consts     # spmdc's operands: args, then consts
    float_args = tuple(a.dtype.kind in "fc" for a in call.in_avals[:n_args])
    out_floats = [a.dtype.kind in "fc" for a in call.out_avals]

    def jvp(*xs: Any) -> list[Any]:
        half = len(xs) // 2
        if len(xs) != 2 * half or half != len(call.in_avals):
            raise TypeError(f"custom_jvp_call's jvp takes the {len(call.in_avals)} primals "
                            f"and as many tangents, got {len(xs)} values")
        primals, tangents = xs[:n_args], xs[half:half + n_args]
        mask = (True,) * sum(float_args)
        rule_func = rule.get(mask)
        given = [_instantiated(t, p) for t, p, f in zip(tangents, primals, float_args,
                                                       strict=True) if f]
        outs = jaxpr_as_fun(closed_jaxpr(rule_func, [], len(rule_func.inputs)))(
            *primals, *given)
        out_primals, float_tangents = outs[:len(out_floats)], iter(outs[len(out_floats):])
        out_tangents = [next(float_tangents) if f else SymbolicZero.from_primal_value(p)
                        for p, f in zip(out_primals, out_floats, strict=True)]
        return [*out_primals, *out_tangents]
    rest["subfuns"] = (wrap_init(jaxpr_as_fun(call)), wrap_init(jvp))
    return rest


def _instantiated(t: Any, primal: Any) -> Any:
    """A tangent as spmdc's rule takes it: zeros for a symbolic zero."""
    if isinstance(t, SymbolicZero):
        return zeros_like(primal)
    return t


def _bind_custom_jvp(subfuns: tuple[Any, ...], args: Any, params: dict[str, Any]) -> Any:
    """``custom_jvp_call.bind(*args, subfuns=(fun, jvp), symbolic_zeros=...)``."""
    if len(subfuns) != 2 or not all(isinstance(f, WrappedFun) for f in subfuns):
        raise TypeError("custom_jvp_call.bind: subfuns must be (fun, jvp), two WrappedFuns "
                        f"(jax.extend.linear_util.wrap_init), got {subfuns!r}")
    unknown = set(params) - {"symbolic_zeros"}
    if unknown:
        raise TypeError(f"custom_jvp_call.bind with subfuns got unexpected params "
                        f"{sorted(unknown)}; it takes symbolic_zeros only")
    fun, jvp = subfuns

    def call(*xs: Any) -> list[Any]:
        return list(fun.call_wrapped(*xs))
    function = custom_jvp(call)

    @function.defjvp
    def rule(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
        outs = jvp.call_wrapped(*primals, *tangents)
        half = len(outs) // 2
        return list(outs[:half]), [_instantiated(t, p) for t, p in
                                   zip(outs[half:], outs[:half], strict=True)]
    return function(*args)


bind_params_rules[custom_jvp_call_p] = custom_jvp_bind_params
subfun_binders[custom_jvp_call_p] = _bind_custom_jvp
