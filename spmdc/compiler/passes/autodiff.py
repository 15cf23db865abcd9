"""Reverse-mode autodiff as a pass over the IR.

``vjp_func(func, wrt)`` returns a Func with inputs ``func.inputs + (one cotangent per
seeded output)`` and outputs ``func.outputs + (one gradient per input marked in wrt)``. A forward
sweep copies the equations (their values are the residuals); a backward sweep walks them
in reverse, applying each primitive's VJP rule and accumulating cotangents with ``add``.
``None`` stands for a symbolic zero. Rules may recompute forward values (``b.cos(x)``);
CSE afterwards merges them with the forward copy, and DCE drops what no output needs.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..builder import Builder, lit
from ..ir import Atom, Eqn, Func, Lit, TensorType, Var, dtype_kind
from .cleanup import without_debug_effects

__all__ = ["vjp_rules", "nondifferentiable", "activity_rules", "active_outputs", "vjp_func",
           "vjp_func_and_zeros", "zeros", "is_float", "unbroadcast", "expand_rules",
           "forward_rules", "wants_activity", "rule_preparers", "transpose_state", "transposing"]

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

class _TransposeState(threading.local):
    transposing = False


transpose_state = _TransposeState()
"""Whether the reverse pass now running transposes a linear program (a library
primitive's VJP is then its transpose rule): see Note [linearize and transpose] in
spmdc/interpreters/ad.py, which reads it, and ``linear_transpose``, which sets it."""


@contextmanager
def transposing(on: bool) -> Iterator[None]:
    """``transpose_state.transposing`` set to ``on`` within the block."""
    outer, transpose_state.transposing = transpose_state.transposing, on
    try:
        yield
    finally:
        transpose_state.transposing = outer


wants_activity: set[Any] = set()
"""Primitives without an activity rule whose VJP rule also gets ``active`` (the rules
that JAX's tables give, spmdc/interpreters/ad.py: a transpose rule must know which
operands are the undefined, linear ones)."""

ForwardRule = Callable[..., tuple[Sequence[Atom], Any]]
"""``rule(b, active, needed, *inputs, **params) -> (outputs, residuals)``

The forward sweep's rule for a primitive that decides what its backward pass keeps (scan,
checkpoint): ``active`` says which inputs may depend on a differentiated input, ``needed``
which outputs may get a cotangent. It emits the forward computation, which may also
produce residuals, and returns the equation's outputs and an object that the primitive's
VJP rule then gets as ``residuals=`` (the VJP rule gets ``residuals=None`` when the rule
did not run: the equation was copied as it is). See Note [residuals]."""

forward_rules: dict[Any, ForwardRule] = {}


rule_preparers: dict[Any, Callable[..., None]] = {}
"""``prepare(active, **params)``: for the primitives whose rules are user code traced on
demand (custom_jvp's rule, custom_vjp's fwd), trace the rule this differentiation will
use, before the sweeps: see Note [user rules in program order]."""

# Note [user rules in program order]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX differentiates while it traces, so the user's rules run in program order: a
# custom_jvp's rule, or a custom_vjp's fwd, when its equation is reached with a
# perturbed input. Our backward sweep meets the equations in reverse, and would trace
# a later custom_vjp's fwd before an earlier custom_jvp's rule. When a rule raises (a
# library's guard against differentiating a value, such as Equinox's nondifferentiable
# before a filter_custom_vjp), which error the user sees depends on that order; so
# vjp_func first traces the rules of the active equations in program order
# (``rule_preparers``), and the sweeps find them traced (each rule is traced once per
# key). custom_vjp's bwd runs in the backward pass in JAX too, and stays on demand.


expand_rules: dict[Any, Callable[..., Func]] = {}
"""``rule(**params) -> Func``: primitives that reverse mode differentiates as the program
the rule gives (taking the equation's operands, giving its results). An active equation
of such a primitive is replaced by that program before the forward sweep, so its
residuals are the program's own values and nothing is computed twice (shard_map: its
global program; primitives/shard_map.py)."""


def is_float(t: TensorType) -> bool:
    return dtype_kind(t.dtype) in "fc"


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


def _expanded(func: Func, wrt: Sequence[bool]) -> Func:
    """``func`` with its active equations of ``expand_rules`` primitives replaced."""
    if not any(eqn.prim in expand_rules for eqn in func.eqns):
        return func
    active = _active_values(func, wrt)
    b = Builder(func.name)
    env: dict[Var, Atom] = {}
    inputs = [b.input(v.type) for v in func.inputs]
    env.update(zip(func.inputs, inputs, strict=True))
    for eqn in func.eqns:
        if eqn.prim in expand_rules and any(isinstance(a, Var) and a in active
                                            for a in eqn.inputs):
            ins = [a if isinstance(a, Lit) else env[a] for a in eqn.inputs]
            outs = b.inline(expand_rules[eqn.prim](**eqn.params), ins)
            env.update(zip(eqn.outputs, outs, strict=True))
        else:
            b.inline(Func(func.name, (), (eqn,), ()), [], env)
    return b.build([a if isinstance(a, Lit) else env[a] for a in func.outputs])


# Note [residuals]
# ~~~~~~~~~~~~~~~~
# The forward sweep copies each equation, so every forward value is available to the
# backward sweep, and XLA keeps what the backward sweep uses alive. Two primitives decide
# otherwise through a ``forward_rules`` entry: ``scan``, whose step values exist only
# inside the loop (its forward rule emits a scan that also stacks each step's residuals,
# for the reverse scan to read), and ``checkpoint``, whose forward rule emits a call that
# returns only the residuals its policy saves (the backward pass recomputes the others).
# Both split the VJP of their sub-Func into a forward and a backward Func with
# ``passes/residuals.py``. The rule runs only for equations that will get a cotangent.

def _relevant(func: Func, active: set[Var], seeded: Sequence[bool]
              ) -> dict[int, tuple[bool, ...]]:
    """For each equation with an active input through which a seeded output's cotangent
    can flow back (those a forward rule runs for): which of its outputs can get one."""
    needed = {a for a, s in zip(func.outputs, seeded, strict=True)
              if s and isinstance(a, Var) and a in active}
    relevant: dict[int, tuple[bool, ...]] = {}
    for i in range(len(func.eqns) - 1, -1, -1):
        eqn = func.eqns[i]
        if needed.isdisjoint(eqn.outputs):
            continue
        relevant[i] = tuple(v in needed for v in eqn.outputs)
        needed.update(a for a in eqn.inputs if isinstance(a, Var) and a in active)
    return relevant


def vjp_func(func: Func, wrt: Sequence[bool], seeded: Sequence[bool] | None = None, *,
             primal_effects: bool = True) -> Func:
    """``seeded[k]``: output k gets a cotangent input (default: every output).
    ``primal_effects=False``: the forward sweep drops its prints too, for a pullback
    whose primal already ran them (``vjp``'s ``vjp_fn``: Note [effects])."""
    return vjp_func_and_zeros(func, wrt, seeded, primal_effects=primal_effects)[0]


def vjp_func_and_zeros(func: Func, wrt: Sequence[bool], seeded: Sequence[bool] | None = None,
                       *, primal_effects: bool = True) -> tuple[Func, tuple[bool, ...]]:
    """``vjp_func``'s Func, and for each input marked in ``wrt`` whether its gradient is a
    symbolic zero: no cotangent reached it, so the Func's output there is a zero array
    (a caller that keeps symbolic zeros, as a transposed custom_jvp rule does, passes
    ``None`` on instead)."""
    func = _expanded(func, wrt)
    b = Builder(func.name)
    inputs = [b.input(v.type) for v in func.inputs]
    seeded = [True] * len(func.outputs) if seeded is None else list(seeded)
    out_cts = [b.input(a.type) if s else None
               for a, s in zip(func.outputs, seeded, strict=True)]
    active = _active_values(func, wrt)            # See Note [activity]
    for eqn in func.eqns:                         # See Note [user rules in program order]
        prepare = rule_preparers.get(eqn.prim)
        flags = tuple(isinstance(a, Var) and a in active for a in eqn.inputs)
        if prepare is not None and any(flags):
            prepare(flags, **eqn.params)

    # Forward sweep: a copy of the equations (their types are known: no shape rules run),
    # except where a forward rule decides what the backward sweep keeps (Note [residuals]).
    env: dict[Var, Atom] = {}
    residuals: dict[int, Any] = {}
    if any(eqn.prim in forward_rules for eqn in func.eqns):
        primal_outs = _forward_sweep(b, func, inputs, env, active,
                                     _relevant(func, active, seeded), residuals)
    else:
        primal_outs = b.inline(func, inputs, env)
    n_forward = len(b.eqns)
    b.source = func.eqns[-1].source if func.eqns else None

    def read(a: Atom) -> Atom:
        return a if isinstance(a, Lit) else env[a]

    # Backward sweep.
    cts: dict[Var, Atom] = {}

    def accumulate(v: Var, ct: Atom) -> None:
        cts[v] = b.add(cts[v], ct) if v in cts else ct

    for a, ct in zip(func.outputs, out_cts, strict=True):
        if ct is not None and isinstance(a, Var) and a in active:
            accumulate(a, ct)
    for index in range(len(func.eqns) - 1, -1, -1):
        eqn = func.eqns[index]
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
            if eqn.prim in activity_rules or eqn.prim in wants_activity else {}
        if eqn.prim in forward_rules:
            extra["residuals"] = residuals.get(index)
        in_cts = rule(b, ct, *map(read, eqn.inputs), **eqn.params, **extra)
        for a, c in zip(eqn.inputs, in_cts, strict=True):
            if c is not None and isinstance(a, Var) and a in active:
                accumulate(a, c)

    reached = [v in cts for v, w in zip(func.inputs, wrt, strict=True) if w]
    grads = [cts.get(v) if v in cts else zeros(b, v.type)
             for v, w in zip(func.inputs, wrt, strict=True) if w]
    b.eqns[n_forward:] = without_debug_effects(b.eqns[n_forward:])  # Note [effects]
    if not primal_effects:
        b.eqns[:n_forward] = without_debug_effects(b.eqns[:n_forward])
    return b.build([*primal_outs, *grads]), tuple(not r for r in reached)




def _forward_sweep(b: Builder, func: Func, inputs: Sequence[Atom], env: dict[Var, Atom],
                   active: set[Var], relevant: dict[int, tuple[bool, ...]],
                   residuals: dict[int, Any]) -> list[Atom]:
    env.update(zip(func.inputs, inputs, strict=True))

    def read(a: Atom) -> Atom:
        return a if isinstance(a, Lit) else env[a]

    for index, eqn in enumerate(func.eqns):
        ins = [read(a) for a in eqn.inputs]
        rule = forward_rules.get(eqn.prim)
        if rule is not None and index in relevant:
            b.source = eqn.source
            act = tuple(isinstance(a, Var) and a in active for a in eqn.inputs)
            outs, residuals[index] = rule(b, act, relevant[index], *ins, **eqn.params)
        else:
            outs = [Var(v.type) for v in eqn.outputs]
            b.eqns.append(Eqn(eqn.prim, tuple(ins), eqn.params, tuple(outs), eqn.source))
        env.update(zip(eqn.outputs, outs, strict=True))
    return [read(a) for a in func.outputs]
