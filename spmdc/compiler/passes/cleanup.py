"""Dead-code elimination and common-subexpression elimination.

Equations with effects (``effectful`` primitives, and control flow whose sub-Funcs hold
one) are neither dropped nor merged: see Note [effects]."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ir import Atom, Eqn, Func, Lit, Var

__all__ = ["dce", "cse", "cleanup", "effectful", "has_effects", "without_debug_effects",
           "runs_in_backward",
           "dce_rules"]

# Note [effects]
# ~~~~~~~~~~~~~~
# A few primitives do something besides computing their outputs: the host callbacks of
# debug.print, debug.callback and io_callback (primitives/callbacks.py). They are listed
# in ``effectful``; DCE keeps such an equation (and any control-flow equation whose
# sub-Funcs hold one) even when no output is used, and CSE never merges two of them,
# since each call is one observable event. pure_callback is not effectful: like JAX, we
# may drop or merge it. The lowering marks them ``has_side_effect`` so that XLA keeps
# them as well (Note [host callbacks] in stablehlo.py).
#
# Differentiation runs an effect once, where the primal program runs it: the forward
# sweep of the VJP pass copies the program with its effects, and the backward sweep's
# recomputations (a scan's or a cond's VJP re-running the body, a custom rule's forward
# function) must not run them again. So ``vjp_func`` removes the effects without outputs
# (debug.print, debug.callback) from what the backward sweep emitted, at every depth
# (``without_debug_effects``), as JAX prints only the primal. An io_callback whose
# results a recomputation uses stays (io_callback has no derivative of its own). The
# equations a custom_vjp's own ``bwd`` emits are not a recomputation: they are the
# user's backward code, which JAX runs, prints included (Equinox's checkpointed
# while_loop prints its steps there). The rule that inlines ``bwd`` marks them with
# ``runs_in_backward``, and the stripping keeps each marked equation whole.
#
# ``vjp``'s ``vjp_fn`` is a second program: ``vjp`` ran the primal (its prints with it),
# and the pullback replays the forward sweep only for its residuals. Like JAX, whose
# ``vjp_fn`` holds only the linear half, it must not print again: its forward sweep is
# stripped as well (``vjp_func(..., primal_effects=False)``), the custom ``bwd``
# equations of its backward sweep kept.

effectful: set[Any] = set()
"""Primitives whose equations have an effect beyond their outputs (Note [effects])."""


def has_effects(eqn: Eqn) -> bool:
    if eqn.prim in effectful:
        return True
    return any(_func_has_effects(f) for v in eqn.params.values() for f in _funcs_in(v))


def _funcs_in(v: Any) -> list[Func]:
    if isinstance(v, Func):
        return [v]
    if isinstance(v, tuple):
        return [f for x in v for f in _funcs_in(x)]
    return []


def _func_has_effects(func: Func) -> bool:
    return any(has_effects(e) for e in func.eqns)


_user_backward: dict[int, Eqn] = {}      # id -> equation, marked by runs_in_backward


def runs_in_backward(eqns: Sequence[Eqn]) -> None:
    """Mark equations a custom rule's backward function emitted: their effects run in
    the backward sweep (Note [effects])."""
    if len(_user_backward) > 100_000:   # marks no sweep consumed (a path that strips none)
        _user_backward.clear()
    for eqn in eqns:
        _user_backward[id(eqn)] = eqn


def without_debug_effects(eqns: Sequence[Eqn]) -> list[Eqn]:
    """``eqns`` without the effectful equations that have no outputs, in sub-Funcs too
    (sub-Func signatures stay). See Note [effects]."""
    out = _strip_eqns(eqns)
    return list(eqns) if out is None else out


def _strip_eqns(eqns: Sequence[Eqn]) -> list[Eqn] | None:
    """The stripped equations, or None when nothing changed."""
    if not effectful:
        return None
    kept: list[Eqn] = []
    changed = False
    for eqn in eqns:
        if _user_backward.get(id(eqn)) is eqn:        # a custom bwd's own equation: keep
            del _user_backward[id(eqn)]
            kept.append(eqn)
            continue
        if eqn.prim in effectful and not eqn.outputs:
            changed = True
            continue
        if any(_funcs_in(v) for v in eqn.params.values()):
            params = {k: _strip_param(v) for k, v in eqn.params.items()}
            if any(params[k] is not v for k, v in eqn.params.items()):
                eqn = Eqn(eqn.prim, eqn.inputs, params, eqn.outputs, eqn.source)
                changed = True
        kept.append(eqn)
    return kept if changed else None


def _strip_param(v: Any) -> Any:
    if isinstance(v, Func):
        eqns = _strip_eqns(v.eqns)
        return v if eqns is None else Func(v.name, v.inputs, tuple(eqns), v.outputs)
    if isinstance(v, tuple) and _holds_func(v):
        items = tuple(_strip_param(x) for x in v)
        return v if all(a is b for a, b in zip(items, v, strict=True)) else items
    return v


dce_rules: dict[Any, Any] = {}
"""``rule(eqn, live) -> Eqn | None``: for a primitive whose unused outputs can be dropped
from the equation itself (a scan's carries that no used result depends on), the
equation computing only the outputs marked in ``live`` (the same Vars), or None to keep
it as it is. Called only for equations without effects."""


def dce(func: Func) -> Func:
    """Drop equations none of whose outputs reach the function's outputs, and the unused
    outputs of those with a ``dce_rules`` entry."""
    live: set[Var] = {a for a in func.outputs if isinstance(a, Var)}
    kept: list[Eqn] = []
    changed = False
    for eqn in reversed(func.eqns):
        if not live.isdisjoint(eqn.outputs) or (effectful and has_effects(eqn)):
            rule = dce_rules.get(eqn.prim)
            if rule is not None and not live.issuperset(eqn.outputs) and \
                    not has_effects(eqn):
                smaller = rule(eqn, [v in live for v in eqn.outputs])
                if smaller is not None:
                    eqn, changed = smaller, True
            kept.append(eqn)
            live.update([a for a in eqn.inputs if isinstance(a, Var)])
    if len(kept) == len(func.eqns) and not changed:
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
            if effectful and has_effects(eqn):
                raise TypeError         # See Note [effects]
            key = (eqn.prim, tuple([("lit", repr(a.value), a.type) if isinstance(a, Lit)
                                    else a for a in inputs]),
                   tuple([(k, _param_key(v)) for k, v in eqn.params.items()]))
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
    if not rename:                      # nothing merged: the same Func (see _param_key)
        return func
    return Func(func.name, func.inputs, tuple(eqns), tuple(sub(a) for a in func.outputs))


def _param_key(v: Any) -> Any:
    """A param as CSE compares it: a sub-Func by identity (one object is one program;
    equal calls of a kept trace share it), anything else by value."""
    if isinstance(v, Func):
        return ("func", id(v))
    if isinstance(v, tuple) and any(isinstance(x, Func) for x in v):
        return tuple(_param_key(x) for x in v)
    return v


def cleanup(func: Func) -> Func:
    """CSE then DCE, inside the sub-Funcs of control flow too (their signatures stay)."""
    return dce(cse(_clean_sub_funcs(func)))


def _clean_sub_funcs(func: Func) -> Func:
    if not any(_holds_func(v) for eqn in func.eqns for v in eqn.params.values()):
        return func
    cleaned: dict[int, Func] = {}       # one sub-Func object stays one (see _param_key)
    eqns = []
    for eqn in func.eqns:
        params = {k: _clean_param(v, cleaned) for k, v in eqn.params.items()}
        same = all(params[k] is v for k, v in eqn.params.items())
        eqns.append(eqn if same else Eqn(eqn.prim, eqn.inputs, params, eqn.outputs,
                                          eqn.source))
    if all(a is b for a, b in zip(eqns, func.eqns, strict=True)):
        return func                     # a clean Func is its own cleanup
    return Func(func.name, func.inputs, tuple(eqns), func.outputs)


def _holds_func(v: Any) -> bool:
    return isinstance(v, Func) or (isinstance(v, tuple) and any(isinstance(x, Func) for x in v))


def _clean_param(v: Any, cleaned: dict[int, Func]) -> Any:
    if isinstance(v, Func):
        if id(v) not in cleaned:
            cleaned[id(v)] = cleanup(v)
        return cleaned[id(v)]
    if not _holds_func(v):
        return v
    items = tuple(_clean_param(x, cleaned) for x in v)
    return v if all(a is b for a, b in zip(items, v, strict=True)) else items
