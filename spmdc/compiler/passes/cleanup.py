"""Dead-code elimination and common-subexpression elimination."""
from __future__ import annotations

from typing import Any

from ..ir import Atom, Eqn, Func, Lit, Var

__all__ = ["dce", "cse", "cleanup"]


def dce(func: Func) -> Func:
    """Drop equations none of whose outputs reach the function's outputs."""
    live: set[Var] = {a for a in func.outputs if isinstance(a, Var)}
    kept: list[Eqn] = []
    for eqn in reversed(func.eqns):
        if not live.isdisjoint(eqn.outputs):
            kept.append(eqn)
            live.update([a for a in eqn.inputs if isinstance(a, Var)])
    if len(kept) == len(func.eqns):
        return func
    return Func(func.name, func.inputs, tuple(reversed(kept)), func.outputs)


def cse(func: Func) -> Func:
    """Reuse the result of an earlier equation with the same primitive, operands, params."""
    seen: dict[Any, tuple[Var, ...]] = {}
    rename: dict[Var, Var] = {}
    eqns: list[Eqn] = []

    def sub(a: Atom) -> Atom:
        return rename.get(a, a) if isinstance(a, Var) else a

    for eqn in func.eqns:
        inputs = eqn.inputs
        if rename:
            inputs = tuple([rename.get(a, a) if isinstance(a, Var) else a for a in inputs])
        try:                            # one hash of the key (unhashable params: no CSE)
            key = (eqn.prim, tuple([("lit", repr(a.value), a.type) if isinstance(a, Lit)
                                    else a for a in inputs]), tuple(eqn.params.items()))
            prev = seen.get(key)
        except TypeError:
            key = prev = None
        if prev is not None:
            rename.update(zip(eqn.outputs, prev, strict=True))
            continue
        if key is not None:
            seen[key] = eqn.outputs
        eqns.append(eqn if inputs == eqn.inputs else
                    Eqn(eqn.prim, inputs, eqn.params, eqn.outputs, eqn.source))
    return Func(func.name, func.inputs, tuple(eqns), tuple(sub(a) for a in func.outputs))


def cleanup(func: Func) -> Func:
    """CSE then DCE, inside the sub-Funcs of control flow too (their signatures stay)."""
    return dce(cse(_clean_sub_funcs(func)))


def _clean_sub_funcs(func: Func) -> Func:
    if not any(_holds_func(v) for eqn in func.eqns for v in eqn.params.values()):
        return func
    eqns = tuple(Eqn(eqn.prim, eqn.inputs, {k: _clean_param(v) for k, v in eqn.params.items()},
                     eqn.outputs, eqn.source) for eqn in func.eqns)
    return Func(func.name, func.inputs, eqns, func.outputs)


def _holds_func(v: Any) -> bool:
    return isinstance(v, Func) or (isinstance(v, tuple) and any(isinstance(x, Func) for x in v))


def _clean_param(v: Any) -> Any:
    if isinstance(v, Func):
        return cleanup(v)
    return tuple(_clean_param(x) for x in v) if _holds_func(v) else v
