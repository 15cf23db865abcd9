"""Functions with user-defined derivative rules: ``custom_jvp_call``, ``custom_vjp_call``
and ``custom_lin``, the forward tangent of a custom_vjp function.

    custom_jvp_call(*args, *consts)   {call, jvp, num_consts, symbolic_zeros}
    custom_vjp_call(*args, *consts)   {call, fwd, bwd, num_consts, symbolic_zeros}
    custom_lin(*residuals, *tangents) {bwd, num_res, out_types, in_zeros, perturbed,
    symbolic_zeros}

``call`` is the function itself, traced to a Func when it is called:
``call(*args, *consts) -> outs``, ``consts`` being the values it closes over. The rules are
the user's rule functions traced to Funcs *on demand*, when a transformation reaches the
equation (a rule may call the function it belongs to, as JAX's examples do: tracing it at
the call would recurse). ``jvp``, ``fwd`` and ``bwd`` are objects with ``get(key) ->
Func`` (the frontend's, transforms/custom_derivatives.py) and ``ir_text()`` for dumps:

- ``jvp.get(mask)``: ``(*args, *tangents) -> (*outs, *tangent outs)``, one tangent per
  argument of ``mask`` (a tuple of bools over the floating point arguments), one tangent
  output per floating point output; ``jvp.symbolic_zero_outputs(mask)``: which of those
  the rule gave as symbolic zeros (Note [symbolic zero tangents from a rule]). Without
  ``symbolic_zeros`` the mask is always full and absent tangents are zeros (Note
  [symbolic zeros in custom rules]).
- ``fwd.get(None)``: ``(*args) -> (*outs, *residuals)``; ``bwd.get(None)``:
  ``(*residuals, *cotangents of outs) -> (one cotangent per floating point argument)``
  (with ``symbolic_zeros``, keyed as Note [custom_vjp symbolic zeros] says).

Evaluating, lowering and the collectives pass see only ``call``: the rules matter to the
transformations. ``vmap`` batches ``call`` and wraps the rules so that they are batched
when traced (outputs batched at dimension 0); the forward pass inlines the JVP rule, and
for ``custom_vjp_call`` inlines ``fwd`` and emits ``custom_lin`` for the tangents, which
can be transposed but not evaluated (Note [forward mode of custom_vjp]); the autodiff pass
inlines ``fwd`` and ``bwd``, and for ``custom_jvp_call`` the transpose of the JVP rule's
tangent part (the VJP of a linear function is its transpose). Either way the derivative
program holds the rule's equations, which higher-order derivatives differentiate as
ordinary code.

Note [symbolic zeros in custom rules]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Which tangents are zero is known when the forward pass reaches the equation: with
``symbolic_zeros=True`` it asks for the rule traced for exactly the arguments whose
tangents are not symbolic zeros (the user's rule sees ``SymbolicZero`` for the others and
may skip their work); without, it asks for the full mask and passes zeros.

Note [differentiating closed-over values]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A custom rule says how the function depends on its explicit arguments only. Values it
closes over (the ``consts``) are therefore not differentiated: a tangent or cotangent that
reaches one is an error, as in JAX ("Detected differentiation of a custom_jvp function
with respect to a closed-over value"). Pass such values as arguments instead.
"""
from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from ...errors import ClosedOverDifferentiationError, CustomVJPForwardModeError, at_line
from ..builder import Builder
from ..interpreter import evaluate
from ..ir import Func, TensorType
from ..passes.autodiff import (
    active_outputs,
    activity_rules,
    is_float,
    rule_preparers,
    vjp_func,
    vjp_func_and_zeros,
    vjp_rules,
    wants_activity,
    zeros,
)
from ..passes.cleanup import runs_in_backward
from ..passes.collectives import control_varying_rules, varying_axes
from ..passes.forward import instantiate, jvp_rules, tangent_only
from ..passes.vmap import BatchAxis, always_rewrite, batch_rules, batch_to_front, vmap_func
from ..stablehlo import lower_body, lower_rules
from .core import ShapeError, declare

__all__ = ["custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p", "BatchedRule", "OutTypes",
           "tangent_part"]


def _closed_over_error(kind: str, source: str | None) -> ClosedOverDifferentiationError:
    where = at_line(source)
    return ClosedOverDifferentiationError(
        f"Detected differentiation of a {kind} function with respect to a closed-over "
        f"value{where}. That isn't supported because the custom rule only specifies how to "
        f"differentiate the {kind} function with respect to its explicit arguments. Pass "
        "the value as an argument of the function instead.")


def _split(operands, num_consts):
    n = len(operands) - num_consts
    return list(operands[:n]), list(operands[n:])


def _float_positions(types: Sequence[TensorType]) -> list[int]:
    return [k for k, t in enumerate(types) if is_float(t)]


def _check_consts(active, n_args: int, kind: str, source: str | None) -> None:
    # See Note [differentiating closed-over values].
    if active is not None and any(active[n_args:]):
        raise _closed_over_error(kind, source)


def _call_rule(*operands: TensorType, call: Func, num_consts: int, **rules):
    if tuple(operands) != call.in_types:
        raise ShapeError(f"custom derivative call: operands {operands} do not match the "
                         f"function's inputs {call.in_types}")
    return call.out_types


def _call_impl(*operands, call, **params):
    return tuple(evaluate(call, *operands))


def _call_lowering(ctx, eqn, *operands):
    return lower_body(ctx, eqn.params["call"], operands)


def _call_varying(ins, *, call, **params):
    return varying_axes(call, ins)


def _call_activity(active, *, call, jvp, num_consts, symbolic_zeros):
    # Outputs depend on inputs as the function does; the VJP rules also get ``active``, to
    # refuse a closed-over value (Note [differentiating closed-over values]). A rule with
    # symbolic zeros may give an output no tangent: that output is not active (Note
    # [symbolic zero tangents from a rule]).
    try:
        outs = active_outputs(call, active)
    except ValueError:
        # The function holds an operation with no derivative (a pure_callback: jaxopt's
        # isotonic regression), whose activity rule refuses differentiation. The rule is
        # what gets differentiated, never the function: every output may depend on an
        # active input, as for custom_vjp_call.
        return [any(active)] * len(call.outputs)
    n_args = len(call.in_types) - num_consts
    diff = _float_positions(list(call.in_types[:n_args]))
    if not symbolic_zeros or _tangent_part.active or any(active[n_args:]) or not any(
            active[k] for k in diff):
        return outs
    mask = tuple(bool(active[k]) for k in diff)
    symbolic = jvp.symbolic_zero_outputs(mask)
    floats = [k for k, t in enumerate(call.out_types) if is_float(t)]
    return [o and not (k in floats and floats.index(k) in symbolic)
            for k, o in enumerate(outs)]


class BatchedRule:
    """A rule (``get(key) -> Func``) whose Funcs are batched when first asked for:
    inputs at ``in_dims(key)``, every output at dimension 0, then ``finish`` applied."""

    def __init__(self, inner, in_dims, axis: BatchAxis, finish=None):
        self.inner, self.in_dims, self.axis, self.finish = inner, in_dims, axis, finish
        self._cache: dict = {}

    def get(self, key) -> Func:
        if key not in self._cache:
            func = self.inner.get(key)
            func = vmap_func(func, list(self.in_dims(key)), self.axis, [0] * len(func.outputs))
            self._cache[key] = self.finish(func) if self.finish else func
        return self._cache[key]

    def symbolic_zero_outputs(self, key) -> frozenset[int]:
        """The inner custom_jvp rule's symbolic zero tangent outputs for ``key``."""
        return self.inner.symbolic_zero_outputs(key)

    @property
    def name(self) -> str:
        return getattr(self.inner, "name", "rule")

    def ir_text(self) -> str:
        return f"vmap({self.inner.ir_text()}, size={self.axis.size})"


# --- custom_jvp_call -------------------------------------------------------------------------

def _custom_jvp_jvp(b, primals, tangents, *, call, jvp, num_consts, symbolic_zeros):
    args, _ = _split(primals, num_consts)
    t_args, t_consts = _split(tangents, num_consts)
    if any(t is not None for t in t_consts):
        raise _closed_over_error("custom_jvp", b.source)
    diff = _float_positions([a.type for a in args])
    mask = tuple(t_args[k] is not None for k in diff)
    if not any(mask):
        outs = b.bind(custom_jvp_call_p, *primals, call=call, jvp=jvp,
                      num_consts=num_consts, symbolic_zeros=symbolic_zeros)
        return list(outs), [None] * len(outs)
    if symbolic_zeros:
        given = [t_args[k] for k, m in zip(diff, mask, strict=True) if m]
    else:
        mask = (True,) * len(diff)
        given = [instantiate(b, t_args[k], args[k]) for k in diff]
    outs = b.inline(jvp.get(mask), [*args, *given])
    n = len(call.outputs)
    symbolic = jvp.symbolic_zero_outputs(mask)   # See Note [symbolic zero tangents from a rule]
    tangent_outs = iter(None if k in symbolic else t for k, t in enumerate(outs[n:]))
    return outs[:n], [next(tangent_outs) if is_float(t) else None for t in call.out_types]


def _custom_jvp_vjp(b, ct, *operands, call, jvp, num_consts, symbolic_zeros, active=None):
    # The tangent part of the JVP rule is linear in the tangents; its transpose (the VJP
    # with respect to the tangents, at zero tangents) pulls the cotangents back.
    args, _ = _split(operands, num_consts)
    _check_consts(active, len(args), "custom_jvp", b.source)
    diff = _float_positions([a.type for a in args])
    cts = ct if isinstance(ct, tuple) else (ct,)
    seeded_cts = [c for c, t in zip(cts, call.out_types, strict=True) if is_float(t)]
    if not diff or all(c is None for c in seeded_cts):
        return [None] * len(operands)
    # With symbolic zeros the rule sees SymbolicZero for the inputs that are not
    # differentiated (as in JAX); otherwise it gets a tangent for every float input.
    mask = tuple(active is None or bool(active[k]) for k in diff) if symbolic_zeros \
        else (True,) * len(diff)
    given = [k for k, m in zip(diff, mask, strict=True) if m]
    if not given:
        return [None] * len(operands)
    if _tangent_part.active:          # See Note [custom_jvp applied to tangents]
        return _transpose_call(b, cts, operands, call, given)
    rule = jvp.get(mask)
    n_args, n_out = len(args), len(call.outputs)
    wrt = [False] * n_args + [True] * len(given)
    seeded = [False] * n_out + [c is not None for c in seeded_cts]
    with tangent_part(True):
        transposed, zero_grads = vjp_func_and_zeros(rule, wrt, seeded)
    tangents = [zeros(b, args[k].type) for k in given]
    outs = b.inline(transposed, [*args, *tangents, *(c for c in seeded_cts if c is not None)])
    # An input no cotangent reached keeps a symbolic zero, as JAX's transpose leaves it
    # (Note [symbolic zeros through a transposed custom_jvp rule]).
    by_position = {k: None if z else g for k, g, z in
                   zip(given, outs[len(rule.outputs):], zero_grads, strict=True)}
    return [by_position.get(k) for k in range(n_args)] + [None] * num_consts


# Note [symbolic zeros through a transposed custom_jvp rule]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Reverse mode of a ``custom_jvp_call`` transposes the tangent part of its rule; an
# input tangent that no seeded output's cotangent reaches (an identity rule whose
# caller uses one output of several) gets no cotangent: JAX's backward pass leaves it a
# symbolic ``Zero``, so a ``custom_vjp`` with ``symbolic_zeros=True`` before it sees
# ``SymbolicZero`` for that output (Equinox's checkpointed ``while_loop`` decides from
# those which carry entries to propagate cotangents for). The transposed rule's output
# there is a zero array, which DCE removes once nothing reads it.


def _prepare_custom_jvp(active, *, call, jvp, num_consts, symbolic_zeros) -> None:
    """Trace the rule ``_custom_jvp_vjp`` will use (Note [user rules in program order])."""
    args = call.in_types[:len(call.in_types) - num_consts]
    diff = _float_positions(list(args))
    if _tangent_part.active or any(active[len(args):]) or not diff:
        return                          # transposed as its function, or an error later
    mask = tuple(bool(active[k]) for k in diff) if symbolic_zeros else (True,) * len(diff)
    if any(mask):
        jvp.get(mask)


# Note [custom_jvp applied to tangents]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Reverse mode of ``custom_jvp_call`` transposes the tangent part of its JVP rule. A rule
# may apply the function itself to the tangents (Lineax's ``_asarray``: ``return f(x),
# f(tx)``), a linear use whose transpose JAX takes from the function, not from the rule
# (its transpose of ``custom_jvp_call`` is the backward pass of ``call_jaxpr``): asking
# the rule again would recurse without end. So while a rule's tangent part is being
# transposed (``tangent_part``), a ``custom_jvp_call`` met in it is transposed as its
# function. Rules traced meanwhile (on demand) are traced with the flag cleared
# (transforms/custom_derivatives.py), so a rule that differentiates starts afresh.

class _TangentPart(threading.local):
    active = False


_tangent_part = _TangentPart()


@contextmanager
def tangent_part(on: bool) -> Iterator[None]:
    """Whether a custom_jvp rule's tangent part is being transposed (Note [custom_jvp
    applied to tangents]), for the ``with`` body."""
    outer, _tangent_part.active = _tangent_part.active, on
    try:
        yield
    finally:
        _tangent_part.active = outer


def _transpose_call(b, cts, operands, call, given):
    wrt = [k in given for k in range(len(operands))]
    transposed = vjp_func(call, wrt, [c is not None for c in cts])
    outs = b.inline(transposed, [*operands, *(c for c in cts if c is not None)])
    grads = iter(outs[len(call.outputs):])
    return [next(grads) if w else None for w in wrt]


def _custom_jvp_batch(b, axis, operands, dims, *, call, jvp, num_consts, symbolic_zeros):
    arg_dims, _ = _split(dims, num_consts)
    diff = _float_positions(call.in_types[:len(arg_dims)])

    def in_dims(mask):
        return [*arg_dims, *(arg_dims[k] for k, m in zip(diff, mask, strict=True) if m)]

    outs = b.bind(custom_jvp_call_p, *operands,
                  call=vmap_func(call, list(dims), axis, [0] * len(call.outputs)),
                  jvp=BatchedRule(jvp, in_dims, axis), num_consts=num_consts,
                  symbolic_zeros=symbolic_zeros)
    return list(outs), [0] * len(outs)


custom_jvp_call_p = declare("custom_jvp_call", _call_rule, _call_impl, multiple_results=True)
batch_rules[custom_jvp_call_p] = _custom_jvp_batch
jvp_rules[custom_jvp_call_p] = _custom_jvp_jvp
vjp_rules[custom_jvp_call_p] = _custom_jvp_vjp
rule_preparers[custom_jvp_call_p] = _prepare_custom_jvp
lower_rules[custom_jvp_call_p] = _call_lowering
control_varying_rules[custom_jvp_call_p] = _call_varying
activity_rules[custom_jvp_call_p] = _call_activity
always_rewrite.add(custom_jvp_call_p)     # the function may use the vmapped axis name


# --- custom_vjp_call -------------------------------------------------------------------------

def _custom_vjp_jvp(b, primals, tangents, *, call, fwd, bwd, num_consts,
                    symbolic_zeros=False):
    # See Note [forward mode of custom_vjp].
    args, _ = _split(primals, num_consts)
    t_args, t_consts = _split(tangents, num_consts)
    if any(t is not None for t in t_consts):
        raise _closed_over_error("custom_vjp", b.source)
    diff = _float_positions([a.type for a in args])
    if all(t_args[k] is None for k in diff):
        outs = b.bind(custom_vjp_call_p, *primals, call=call, fwd=fwd, bwd=bwd,
                      num_consts=num_consts, symbolic_zeros=symbolic_zeros)
        return list(outs), [None] * len(outs)
    perturbed = tuple(k in diff and t_args[k] is not None for k in range(len(args))) \
        if symbolic_zeros else None
    forward = b.inline(fwd.get(perturbed), args)
    n_out = len(call.outputs)
    outs, residuals = forward[:n_out], forward[n_out:]
    in_zeros = tuple(t_args[k] is None for k in diff)
    t_in = [t_args[k] for k in diff if t_args[k] is not None]
    t_outs = iter(b.bind(custom_lin_p, *residuals, *t_in, bwd=bwd, num_res=len(residuals),
                         out_types=OutTypes(call.out_types), in_zeros=in_zeros,
                         perturbed=perturbed, symbolic_zeros=symbolic_zeros))
    return outs, [next(t_outs) if is_float(t) else None for t in call.out_types]


def _custom_vjp_vjp(b, ct, *operands, call, fwd, bwd, num_consts, symbolic_zeros=False,
                    active=None):
    args, _ = _split(operands, num_consts)
    _check_consts(active, len(args), "custom_vjp", b.source)
    diff = _float_positions([a.type for a in args])
    cts = ct if isinstance(ct, tuple) else (ct,)
    if not diff or all(c is None for c in cts):
        return [None] * len(operands)
    n_out = len(call.outputs)
    if symbolic_zeros:      # the rules see what is perturbed and which cotangents are zero
        perturbed = tuple(k in diff and (active is None or bool(active[k]))
                          for k in range(len(args)))
        given = tuple(c is not None for c in cts)
        fwd_key, bwd_key = perturbed, (perturbed, given)
    else:
        fwd_key = bwd_key = None
    forward = b.inline(fwd.get(fwd_key), args)
    residuals = forward[n_out:]
    if symbolic_zeros:
        cts = [c for c in cts if c is not None]
    else:
        cts = [instantiate(b, c, o) for c, o in zip(cts, forward[:n_out], strict=True)]
    start = len(b.eqns)
    grads = b.inline(bwd.get(bwd_key), [*residuals, *cts])
    runs_in_backward(b.eqns[start:])              # See Note [effects] (cleanup.py)
    by_position = dict(zip(diff, grads, strict=True))
    return [by_position.get(k) for k in range(len(args))] + [None] * num_consts


def _prepare_custom_vjp(active, *, call, fwd, bwd, num_consts,
                        symbolic_zeros=False) -> None:
    """Trace the fwd ``_custom_vjp_vjp`` will use (Note [user rules in program order])."""
    n_args = len(call.in_types) - num_consts
    diff = _float_positions(list(call.in_types[:n_args]))
    if any(active[n_args:]) or not diff:
        return                          # an error later, or nothing to differentiate
    fwd.get(tuple(k in diff and bool(active[k]) for k in range(n_args))
            if symbolic_zeros else None)


def _custom_vjp_batch(b, axis, operands, dims, *, call, fwd, bwd, num_consts,
                      symbolic_zeros=False):
    arg_dims, _ = _split(dims, num_consts)
    diff = _float_positions(call.in_types[:len(arg_dims)])
    new_fwd = BatchedRule(fwd, lambda key: arg_dims, axis)
    new_bwd = BatchedRule(bwd, lambda key: [0] * len(bwd.get(key).inputs), axis,
                          lambda f: _cotangents_like(f, [arg_dims[k] for k in diff]))
    outs = b.bind(custom_vjp_call_p, *operands,
                  call=vmap_func(call, list(dims), axis, [0] * len(call.outputs)),
                  fwd=new_fwd, bwd=new_bwd, num_consts=num_consts,
                  symbolic_zeros=symbolic_zeros)
    return list(outs), [0] * len(outs)


def _cotangents_like(bwd: Func, arg_dims: Sequence[int | None]) -> Func:
    """``bwd`` (outputs batched at 0) with each argument's cotangent batched like the
    argument: moved to its dimension, or summed over the batch for an unbatched one (its
    value is shared by every batch element, so its cotangent is their sum)."""
    b = Builder(bwd.name)
    outs = b.inline(bwd, [b.input(v.type) for v in bwd.inputs])
    fixed = []
    for o, d in zip(outs, arg_dims, strict=True):
        if d is None:
            fixed.append(b.reduce_sum(o, axes=(0,)))
        elif d != 0:
            perm = list(range(1, o.type.ndim))
            perm.insert(d, 0)
            fixed.append(b.transpose(o, permutation=tuple(perm)))
        else:
            fixed.append(o)
    return b.build(fixed)


def _vjp_call_activity(active, *, call, **params):
    # The function is opaque to its rules: as in JAX, where the JVP of custom_vjp_call
    # gives every output a tangent (custom_lin's), each output of a call with an active
    # input is active, so bwd gets a cotangent for each output the result uses.
    return [any(active)] * len(call.outputs)


custom_vjp_call_p = declare("custom_vjp_call", _call_rule, _call_impl, multiple_results=True)
batch_rules[custom_vjp_call_p] = _custom_vjp_batch
jvp_rules[custom_vjp_call_p] = _custom_vjp_jvp
vjp_rules[custom_vjp_call_p] = _custom_vjp_vjp
rule_preparers[custom_vjp_call_p] = _prepare_custom_vjp
lower_rules[custom_vjp_call_p] = _call_lowering
control_varying_rules[custom_vjp_call_p] = _call_varying
activity_rules[custom_vjp_call_p] = _vjp_call_activity
always_rewrite.add(custom_vjp_call_p)


# --- custom_lin ------------------------------------------------------------------------------

# Note [forward mode of custom_vjp]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A custom_vjp rule gives reverse mode only, yet ``linearize`` of such a function must
# work, as in JAX, whose ``vjp`` is ``linearize`` followed by transposition: libraries
# linearize on purpose (Equinox finds which outputs are perturbed that way, where ``jvp``
# would fail). So the forward pass does what JAX's does: the JVP of ``custom_vjp_call``
# runs ``fwd`` (keyed by which arguments carry tangents, Note [custom_vjp symbolic
# zeros]), whose outputs are the primal results, and gives the output tangents as one
# ``custom_lin(*residuals, *tangents)`` equation that holds ``bwd``: a linear function
# of the argument tangents that are not symbolic zeros (``in_zeros`` marks the others,
# as in JAX) whose only known form is its transpose.
# Transposing it (the reverse pass, in ``linear_transpose`` or ``vjp`` of the linear
# half) inlines ``bwd`` on the residuals and the output cotangents. Evaluating it is
# computing the forward tangent, which no rule gives: its implementation and lowering
# raise CustomVJPForwardModeError, so ``jvp`` of a custom_vjp function still fails, when
# the program that needs the tangent runs (an unused tangent is removed by DCE and
# costs nothing). ``linearize``'s partial evaluation puts ``fwd`` in the primal half and
# ``custom_lin`` in the linear half, which is never run, only transposed. The residuals
# are constants of the linear function: differentiating through them (reverse mode of a
# JVP, or forward mode of ``custom_lin``'s residual operands) would need the derivative
# of ``bwd``, and raises as JAX does. Forward mode in the tangents alone is linear
# (``custom_lin`` of the tangents' tangents); vmap batches ``bwd`` (BatchedRule) with
# the tangents moved to dimension 0.

@dataclasses.dataclass(frozen=True)
class OutTypes:
    """The types of a custom_vjp function's outputs, as a parameter of ``custom_lin``
    (JAX's ``out_avals``); its tangent outputs are those of the floating point ones."""
    types: tuple[TensorType, ...]

    def ir_text(self) -> str:
        return "(" + ", ".join(str(t) for t in self.types) + ")"


def _forward_mode_error(source) -> CustomVJPForwardModeError:
    return CustomVJPForwardModeError(
        f"can't apply forward-mode autodiff (jvp) to a custom_vjp function"
        f"{at_line(source)}: its rule gives reverse mode only. Use grad/vjp/jacrev or "
        "linearize followed by a transpose, or define the function with custom_jvp instead.")


def _lin_rule(*operands: TensorType, bwd, num_res, out_types, in_zeros, perturbed,
    symbolic_zeros):
    if not all(is_float(t) for t in operands[num_res:]):
        raise ShapeError(f"custom_lin: the tangent operands {operands[num_res:]} must be "
                         "floating point")
    return tuple(t for t in out_types.types if is_float(t))


def _lin_impl(*operands, **params):
    raise _forward_mode_error(None)


def _lin_lowering(ctx, eqn, *operands):
    raise _forward_mode_error(eqn.source)


def _lin_jvp(b, primals, tangents, **params):
    num_res = params["num_res"]
    if any(t is not None for t in tangents[:num_res]):
        raise _forward_mode_error(b.source)
    outs = b.bind(custom_lin_p, *primals, **params)
    t_in = [instantiate(b, t, p) for t, p in zip(tangents[num_res:], primals[num_res:],
                                                 strict=True)]
    return list(outs), list(b.bind(custom_lin_p, *primals[:num_res], *t_in, **params))


def _lin_transpose(b, ct, *operands, bwd, num_res, out_types, in_zeros, perturbed,
    symbolic_zeros,
                   active):
    if any(active[:num_res]):
        raise _forward_mode_error(b.source)
    float_cts = iter(ct)
    cts = [next(float_cts) if is_float(t) else None for t in out_types.types]
    if all(c is None for c in cts):
        return [None] * len(operands)
    if symbolic_zeros:
        key = (perturbed, tuple(c is not None for c in cts))
        given = [c for c in cts if c is not None]
    else:
        key, given = None, [zeros(b, t) if c is None else c
                            for c, t in zip(cts, out_types.types, strict=True)]
    start = len(b.eqns)
    grads = b.inline(bwd.get(key), [*operands[:num_res], *given])
    runs_in_backward(b.eqns[start:])              # See Note [effects] (cleanup.py)
    return [None] * num_res + [g for g, z in zip(grads, in_zeros, strict=True) if not z]


def _lin_batch(b, axis, operands, dims, *, bwd, num_res, out_types, in_zeros,
               perturbed, symbolic_zeros):
    res_dims = dims[:num_res]
    t_in = [batch_to_front(b, x, d, axis.size)
            for x, d in zip(operands[num_res:], dims[num_res:], strict=True)]

    def in_dims(key):
        return [*res_dims, *[0] * (len(bwd.get(key).inputs) - num_res)]

    batched = OutTypes(tuple(TensorType((axis.size, *t.shape), t.dtype)
                             for t in out_types.types))
    outs = b.bind(custom_lin_p, *operands[:num_res], *t_in, bwd=BatchedRule(bwd, in_dims, axis),
                  num_res=num_res, out_types=batched, in_zeros=in_zeros, perturbed=perturbed,
                  symbolic_zeros=symbolic_zeros)
    return list(outs), [0] * len(outs)


custom_lin_p = declare("custom_lin", _lin_rule, _lin_impl, multiple_results=True)
batch_rules[custom_lin_p] = _lin_batch
jvp_rules[custom_lin_p] = _lin_jvp
vjp_rules[custom_lin_p] = _lin_transpose
wants_activity.add(custom_lin_p)
tangent_only.add(custom_lin_p)
lower_rules[custom_lin_p] = _lin_lowering
