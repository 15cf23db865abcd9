"""Reverse-mode autodiff as a pass over the IR.

``vjp_func(func, wrt)`` returns a Func with inputs ``func.inputs + (one cotangent per
seeded output)`` and outputs ``func.outputs + (one gradient per input marked in wrt)``. A forward
sweep copies the equations (their values are the residuals); a backward sweep walks them
in reverse, applying each primitive's VJP rule and accumulating cotangents with ``add``.
``None`` stands for a symbolic zero. Rules may recompute forward values (``b.cos(x)``);
CSE afterwards merges them with the forward copy, and DCE drops what no output needs.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..builder import Builder, lit
from ..ir import Atom, Func, Lit, TensorType, Var
from .cleanup import without_debug_effects

__all__ = ["vjp_rules", "nondifferentiable", "activity_rules", "active_outputs", "vjp_func",
           "zeros", "is_float", "unbroadcast"]

VJPRule = Callable[..., Sequence[Atom | None]]
"""``rule(b, ct, *inputs, **params) -> [cotangent or None for each input]``

``ct`` is the output cotangent (a tuple with ``None`` for zeros when the primitive has
several results); rules emit ordinary primitives into ``b``. The rule of a primitive with
an ``activity_rules`` entry also gets ``active``: which inputs may depend on a
differentiated input (the others need no cotangent; see Note [activity])."""

vjp_rules: dict[Any, VJPRule] = {}

nondifferentiable: dict[Any, str] = {}
"""Primitives whose output carries no gradient, with the reason (for the coverage test)."""

ActivityRule = Callable[..., list[bool]]
"""``rule(active_inputs, **params) -> [whether each output may depend on them]``

For primitives with sub-Funcs (control flow), whose outputs need not all depend on every
input. Without a rule, an equation with an active input has every float output active.
See Note [activity]."""

activity_rules: dict[Any, ActivityRule] = {}


def is_float(t: TensorType) -> bool:
    return t.dtype.kind in "fc" or t.dtype.name == "bfloat16"


def zeros(b: Builder, t: TensorType) -> Atom:
    z = lit(0, t.dtype)
    return z if t.shape == () else b.broadcast_in_dim(z, shape=t.shape, broadcast_dimensions=())


def unbroadcast(b: Builder, ct: Atom, t: TensorType) -> Atom:
    """The cotangent of an elementwise operand of type ``t`` (rank 0 operands broadcast)."""
    if t.shape == ct.type.shape:
        return ct
    return b.reduce_sum(ct, axes=tuple(range(ct.type.ndim)))


# Note [activity]
# ~~~~~~~~~~~~~~~
# A value is *active* when it is a float that may depend on a differentiated input; only
# active values get cotangents, so the backward sweep reaches only equations on a path
# from a differentiated input to a seeded output. Precision matters, not just for speed:
# a while loop has no VJP (Note [while has no VJP]), so a loop that some carry of which
# depends on the input, but whose output that the result uses does not, must stay
# inactive, as in JAX. Ordinary primitives are treated as mixing all their inputs into
# every output; control flow registers an ``activity_rules`` entry that looks into its
# sub-Funcs per output (for loops, a fixed point over the carry).

def _active_values(func: Func, active_inputs: Sequence[bool]) -> set[Var]:
    active: set[Var] = {v for v, a in zip(func.inputs, active_inputs, strict=True) if a}
    for eqn in func.eqns:
        ins = [isinstance(a, Var) and a in active for a in eqn.inputs]
        if not any(ins):
            continue
        rule = activity_rules.get(eqn.prim)
        outs = rule(ins, **eqn.params) if rule is not None else [True] * len(eqn.outputs)
        active.update(v for v, o in zip(eqn.outputs, outs, strict=True)
                      if o and is_float(v.type))
    return active


def active_outputs(func: Func, active_inputs: Sequence[bool]) -> list[bool]:
    """Which outputs of ``func`` may depend on the inputs marked in ``active_inputs``."""
    active = _active_values(func, active_inputs)
    return [isinstance(a, Var) and a in active for a in func.outputs]


def vjp_func(func: Func, wrt: Sequence[bool], seeded: Sequence[bool] | None = None) -> Func:
    """``seeded[k]``: output k gets a cotangent input (default: every output)."""
    b = Builder(func.name)
    inputs = [b.input(v.type) for v in func.inputs]
    seeded = [True] * len(func.outputs) if seeded is None else list(seeded)
    out_cts = [b.input(a.type) if s else None
               for a, s in zip(func.outputs, seeded, strict=True)]

    # Forward sweep: a copy of the equations (their types are known: no shape rules run).
    env: dict[Var, Atom] = {}
    primal_outs = b.inline(func, inputs, env)
    n_forward = len(b.eqns)
    b.source = func.eqns[-1].source if func.eqns else None

    def read(a: Atom) -> Atom:
        return a if isinstance(a, Lit) else env[a]

    active = _active_values(func, wrt)            # See Note [activity]

    # Backward sweep.
    cts: dict[Var, Atom] = {}

    def accumulate(v: Var, ct: Atom) -> None:
        cts[v] = b.add(cts[v], ct) if v in cts else ct

    for a, ct in zip(func.outputs, out_cts, strict=True):
        if ct is not None and isinstance(a, Var) and a in active:
            accumulate(a, ct)
    for eqn in reversed(func.eqns):
        ct_outs = [cts.pop(v, None) for v in eqn.outputs]
        if all(c is None for c in ct_outs):
            continue
        rule = vjp_rules.get(eqn.prim)
        if rule is None:
            if eqn.prim in nondifferentiable:
                continue
            raise NotImplementedError(f"grad: no VJP rule for {eqn.prim.name!r}")
        b.source = eqn.source
        ct = tuple(ct_outs) if eqn.prim.multiple_results else ct_outs[0]
        extra = {"active": tuple(isinstance(a, Var) and a in active for a in eqn.inputs)} \
            if eqn.prim in activity_rules else {}
        in_cts = rule(b, ct, *map(read, eqn.inputs), **eqn.params, **extra)
        for a, c in zip(eqn.inputs, in_cts, strict=True):
            if c is not None and isinstance(a, Var) and a in active:
                accumulate(a, c)

    grads = [cts.get(v) if v in cts else zeros(b, v.type)
             for v, w in zip(func.inputs, wrt, strict=True) if w]
    b.eqns[n_forward:] = without_debug_effects(b.eqns[n_forward:])  # Note [effects]
    return b.build([*primal_outs, *grads])


