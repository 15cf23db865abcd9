"""Dead-code elimination on jaxprs, as JAX's ``jax.interpreters.partial_eval`` offers it
to libraries that rewrite jaxprs: ``dce_jaxpr`` (the equations and inputs the used
outputs need), ``dce_jaxpr_consts`` (constvars too), and ``dce_rules``, the table of
per-primitive rules a library extends for a primitive whose equation can drop some of
its operands or results (``rule(used_outputs, eqn) -> (used_inputs, new_eqn or None)``),
with JAX's rules for its call primitives (``dce_jaxpr_call_rule``,
``dce_jaxpr_closed_call_rule``; installed for spmdc's call primitives by
spmdc/extend/core/primitives.py).

These act on the jaxpr views of spmdc's programs (transforms/jaxpr_view.py) and on
jaxprs a library builds from them: the result is a new Jaxpr of the kept equations,
which ``eval_jaxpr`` runs. spmdc's own programs are cleaned by its cleanup pass
(compiler/passes/cleanup.py), which keeps the same equations: those with effects and
those a used value depends on.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..transforms.jaxpr_view import ClosedJaxpr, DebugInfo, DropVar, Jaxpr, JaxprEqn, Var

__all__ = ["dce_jaxpr", "dce_jaxpr_consts", "dce_rules", "dce_jaxpr_call_rule",
           "dce_jaxpr_closed_call_rule", "has_effects", "DCERule"]

DCERule = Callable[[list[bool], JaxprEqn], tuple[list[bool], "JaxprEqn | None"]]
"""``rule(used_outputs, eqn) -> (used_inputs, the equation to keep, or None)``"""

dce_rules: dict[Any, DCERule] = {}
"""A primitive's DCE rule; a primitive without one keeps its equation whole while any
result is used or it has effects (``has_effects``), and drops it otherwise."""


def has_effects(eqn: JaxprEqn) -> bool:
    """Whether DCE must keep ``eqn`` although its results are unused: it has effects
    (every effect of spmdc's jaxprs is one: callbacks, prints, a library's)."""
    return bool(eqn.effects)


def _default_rule(used_outputs: list[bool], eqn: JaxprEqn
                  ) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs) and not has_effects(eqn):
        return [False] * len(eqn.invars), None
    return [True] * len(eqn.invars), eqn


def _flags(value: bool | Sequence[bool], n: int, what: str) -> tuple[bool, ...]:
    if isinstance(value, bool):
        return (value,) * n
    flags = tuple(bool(v) for v in value)
    if len(flags) != n:
        raise ValueError(f"dce_jaxpr: {what} has {len(flags)} entries for {n}")
    return flags


def dce_jaxpr(jaxpr: Jaxpr, used_outputs: bool | Sequence[bool],
              instantiate: bool | Sequence[bool] = False) -> tuple[Jaxpr, list[bool]]:
    """``jaxpr`` with only the outputs ``used_outputs`` flags, the equations they (or
    effects) need and the inputs those read (or ``instantiate`` keeps); returns the new
    jaxpr and which inputs it kept."""
    if not isinstance(jaxpr, Jaxpr):
        raise TypeError(f"dce_jaxpr: expected a Jaxpr, got {type(jaxpr).__name__} (a "
                        "ClosedJaxpr's is its .jaxpr)")
    used_out = _flags(used_outputs, len(jaxpr.outvars), "used_outputs")
    keep_in = _flags(instantiate, len(jaxpr.invars), "instantiate")
    used: set[int] = set()

    def mark(atoms: Sequence[Any], flags: Sequence[bool]) -> None:
        for a, f in zip(atoms, flags, strict=True):
            if f and isinstance(a, Var):
                used.add(id(a))

    mark(jaxpr.outvars, used_out)
    kept = []
    for eqn in reversed(jaxpr.eqns):
        outs = [not isinstance(v, DropVar) and id(v) in used for v in eqn.outvars]
        rule = dce_rules.get(eqn.primitive, _default_rule)
        used_in, new_eqn = rule(outs, eqn)
        if len(used_in) != len(eqn.invars):
            raise ValueError(f"the DCE rule of primitive '{eqn.primitive}' returned "
                             f"{len(used_in)} flags for {len(eqn.invars)} operands")
        if new_eqn is not None:
            kept.append(new_eqn)
        mark(eqn.invars, used_in)
    used_inputs = [id(v) in used or k for v, k in zip(jaxpr.invars, keep_in, strict=True)]
    invars = [v for v, u in zip(jaxpr.invars, used_inputs, strict=True) if u]
    outvars = [v for v, u in zip(jaxpr.outvars, used_out, strict=True) if u]
    info = jaxpr.debug_info
    if isinstance(info, DebugInfo):
        info = info._replace(
            arg_names=None if info.arg_names is None else tuple(
                n for n, u in zip(info.arg_names, used_inputs, strict=True) if u),
            result_paths=None if info.result_paths is None else tuple(
                p for p, u in zip(info.result_paths, used_out, strict=True) if u))
    eqns = kept[::-1]
    new = jaxpr.replace(invars=invars, outvars=outvars, eqns=eqns,
                        effects=set().union(*(e.effects for e in eqns)), debug_info=info)
    return new, used_inputs


def dce_jaxpr_consts(jaxpr: Jaxpr, used_outputs: Sequence[bool],
                     instantiate: bool | Sequence[bool] = False
                     ) -> tuple[Jaxpr, list[bool], list[bool]]:
    """``dce_jaxpr`` that drops unused constvars too (``instantiate`` flags the
    constvars, then the invars): returns the new jaxpr, which constvars and which
    invars it kept."""
    n = len(jaxpr.constvars)
    as_inputs = Jaxpr([], [*jaxpr.constvars, *jaxpr.invars], jaxpr.outvars, jaxpr.eqns,
                      jaxpr.effects)
    new, used = dce_jaxpr(as_inputs, used_outputs, instantiate)
    used_consts, used_inputs = used[:n], used[n:]
    k = sum(used_consts)
    new = Jaxpr(new.invars[:k], new.invars[k:], new.outvars, new.eqns, new.effects,
                jaxpr.debug_info if not isinstance(jaxpr.debug_info, DebugInfo) else
                jaxpr.debug_info._replace(arg_names=None, result_paths=None))
    return new, used_consts, used_inputs


def _dce_call(used_outputs: list[bool], eqn: JaxprEqn, closed: bool
              ) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outputs) and not has_effects(eqn):
        return [False] * len(eqn.invars), None
    sub = eqn.params.get("call_jaxpr")
    if not isinstance(sub, ClosedJaxpr if closed else Jaxpr):
        raise TypeError(f"the DCE rule of '{eqn.primitive}' expects a "
                        f"{'ClosedJaxpr' if closed else 'Jaxpr'} call_jaxpr param, got "
                        f"{type(sub).__name__}")
    new_sub, used_inputs = dce_jaxpr(sub.jaxpr if closed else sub, used_outputs)
    if not closed and not any(used_inputs) and not any(used_outputs) and not new_sub.effects:
        return used_inputs, None
    call_jaxpr = ClosedJaxpr(new_sub, sub.consts) if closed else new_sub
    invars = [v for v, u in zip(eqn.invars, used_inputs, strict=True) if u]
    outvars = [v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u]
    return used_inputs, eqn.replace(invars=invars, outvars=outvars,
                                    params=dict(eqn.params, call_jaxpr=call_jaxpr),
                                    effects=new_sub.effects)


def dce_jaxpr_call_rule(used_outputs: list[bool], eqn: JaxprEqn
                        ) -> tuple[list[bool], JaxprEqn | None]:
    """The DCE rule of a call equation whose ``call_jaxpr`` param is a Jaxpr: the
    sub-jaxpr keeps what the used outputs need, the equation the operands it reads."""
    return _dce_call(used_outputs, eqn, closed=False)


def dce_jaxpr_closed_call_rule(used_outputs: list[bool], eqn: JaxprEqn
                               ) -> tuple[list[bool], JaxprEqn | None]:
    """``dce_jaxpr_call_rule`` for a ClosedJaxpr ``call_jaxpr`` (``closed_call``)."""
    return _dce_call(used_outputs, eqn, closed=True)
