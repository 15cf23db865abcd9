"""Rematerialisation: ``checkpoint``, ``name`` and ``optimization_barrier``.

    checkpoint(*args)            {call, policy, prevent_cse, num_residuals}
        ``call(*args)``, a Func (the values it closes over are among its inputs). Under
        ``grad`` the forward pass keeps only the residuals ``policy`` saves and the
        backward pass recomputes the others (Note [checkpoint]). ``num_residuals``: how
        many of the trailing outputs are residuals a VJP saved (0 as the user wrote it).
    name(x)                      {name}
        ``x`` itself, labelled for the policies (``checkpoint_name``).
    optimization_barrier(*xs)    {prevent_cse}
        ``xs`` themselves; with ``prevent_cse`` XLA may not move or merge computations
        across it (``stablehlo.optimization_barrier``).

``policy`` is an object with ``saves(eqn) -> bool`` and ``ir_text()`` (the frontend's,
spmdc/ad_checkpoint.py).

Note [checkpoint]
~~~~~~~~~~~~~~~~~
Evaluating, lowering, batching and the collectives pass treat ``checkpoint`` as a call.
Autodiff gives it a forward rule (Note [residuals] in passes/autodiff.py): it splits the
VJP of ``call`` (passes/residuals.py) with the policy as the predicate, and emits a
``checkpoint`` whose Func also returns the saved residuals (``num_residuals`` of them:
``spmdc dump`` shows them as the call's trailing outputs). The VJP rule then inlines the
backward part, whose first equation is an ``optimization_barrier`` over everything it
reads from the forward pass and the cotangents. The barrier is what makes the
recomputation happen: without it XLA's CSE would merge the recomputed values with the
forward pass's and keep them alive (JAX does the same). Taking the cotangents in too keeps
XLA's scheduler from running the recomputation early, right after the forward pass
(where its results would be alive as long as without checkpoint): it cannot start before
the backward pass reaches it. It also marks the recomputation as backward work for an enclosing
split (Note [recomputation stays in the backward part]). ``prevent_cse=False`` keeps the
marker but lowers it to nothing, as JAX does when asked (inside ``scan``, the loop already
keeps XLA from merging across steps).

Note [the barrier on the CPU]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
XLA's CPU compiler expands ``optimization_barrier`` away before its CSE pass (measured
with jaxlib 0.10.2: the recomputed dots of a checkpointed MLP merge with the forward ones
and the peak memory is that of the plain gradient, under JAX too). So the barrier lowers
to the barrier followed by a ``case`` between two branches that both return its operands,
chosen at run time (branch 1 when the first element of a float operand is NaN). Either
branch gives the same values, so nothing changes numerically; but XLA cannot see through
a data-dependent choice, the recomputation reads the ``case``'s results, and as the
cotangents are among the operands, it cannot run before the backward pass reaches it.
"""
from __future__ import annotations

import numpy as np

from ..builder import Builder
from ..interpreter import evaluate
from ..ir import Func, TensorType, Var
from ..passes.autodiff import (
    active_outputs,
    activity_rules,
    forward_rules,
    is_float,
    vjp_func,
    vjp_rules,
    zeros,
)
from ..passes.collectives import control_varying_rules, varying_axes
from ..passes.forward import jvp_func, jvp_rules, tangent_types
from ..passes.residuals import recompute_markers, split_vjp, used_inputs
from ..passes.vmap import always_rewrite, batch_rules, vmap_func
from ..stablehlo import hlo, ir, lower_body, lower_rules, mlir_type
from .core import ShapeError, declare

__all__ = ["checkpoint_p", "name_p", "optimization_barrier_p"]


# --- optimization_barrier --------------------------------------------------------------------

def _identity_types(*types: TensorType, **params) -> tuple[TensorType, ...]:
    return types


def _barrier_lowering(ctx, eqn, *operands):
    if not eqn.params["prevent_cse"] or not operands:
        return list(operands)
    fenced = list(hlo.OptimizationBarrierOp(list(operands)).results)
    # See Note [the barrier on the CPU]: a runtime choice between two identity branches.
    probe = next((k for k, a in enumerate(eqn.inputs)
                  if is_float(a.type) and a.type.dtype.kind == "f" and a.type.size), None)
    if probe is None:
        return fenced
    t = eqn.inputs[probe].type
    ones = ir.DenseI64ArrayAttr.get([1] * t.ndim)
    first = hlo.SliceOp(fenced[probe], ir.DenseI64ArrayAttr.get([0] * t.ndim), ones,
                        ones).result
    first = hlo.ReshapeOp(mlir_type(TensorType((), t.dtype)), first).result
    is_nan = hlo.CompareOp(first, first, hlo.ComparisonDirectionAttr.get("NE"),
                           compare_type=hlo.ComparisonTypeAttr.get("FLOAT")).result
    index = hlo.ConvertOp(mlir_type(TensorType((), np.dtype(np.int32))), is_nan).result
    case = hlo.CaseOp([v.type for v in fenced], index, 2)
    for region in case.regions:
        with ir.InsertionPoint(region.blocks.append()):
            hlo.ReturnOp(fenced)
    return list(case.results)


optimization_barrier_p = declare("optimization_barrier", _identity_types,
                                 lambda *xs, **params: tuple(xs), multiple_results=True)
batch_rules[optimization_barrier_p] = lambda b, axis, args, dims, **params: (
    list(b.bind(optimization_barrier_p, *args, **params)), list(dims))
jvp_rules[optimization_barrier_p] = lambda b, primals, tangents, **params: (
    list(b.bind(optimization_barrier_p, *primals, **params)), list(tangents))
vjp_rules[optimization_barrier_p] = lambda b, ct, *xs, **params: list(ct)   # identity
lower_rules[optimization_barrier_p] = _barrier_lowering
activity_rules[optimization_barrier_p] = lambda active, **params: list(active)
control_varying_rules[optimization_barrier_p] = lambda ins, **params: list(ins)
recompute_markers.add(optimization_barrier_p)


# --- name ------------------------------------------------------------------------------------

def _name_rule(x: TensorType, *, name: str) -> TensorType:
    if not isinstance(name, str):
        raise ShapeError(f"checkpoint_name: the name must be a string, got {name!r}")
    return x


name_p = declare("name", _name_rule, lambda x, name: x)
batch_rules[name_p] = lambda b, axis, args, dims, name: ([b.bind(name_p, args[0], name=name)],
                                                         [dims[0]])
jvp_rules[name_p] = lambda b, primals, tangents, name: (
    [b.bind(name_p, primals[0], name=name)], [tangents[0]])
vjp_rules[name_p] = lambda b, ct, x, name: [ct]                   # identity
lower_rules[name_p] = lambda ctx, eqn, x: x


# --- checkpoint ------------------------------------------------------------------------------

def _checkpoint_rule(*operands: TensorType, call: Func, policy, prevent_cse: bool,
                     num_residuals: int):
    if tuple(operands) != call.in_types:
        raise ShapeError(f"checkpoint: operands {operands} do not match the function's "
                         f"inputs {call.in_types}")
    return call.out_types


def _checkpoint_impl(*operands, call, **params):
    return tuple(evaluate(call, *operands))


def _checkpoint_forward(b: Builder, active, needed, *operands, call, policy, prevent_cse,
                        num_residuals):
    """The forward rule (Note [checkpoint]): the call, also returning what the policy
    saves; the residuals object is (wrt, seeded outputs, backward Func, saved values)."""
    params = dict(policy=policy, prevent_cse=prevent_cse)
    active = active or (True,) * len(operands)
    wrt = [is_float(a.type) and act for a, act in zip(operands, active, strict=True)]
    needed = needed or (True,) * len(call.outputs)
    seeded = [is_float(t) and act and need for t, act, need in
              zip(call.out_types, active_outputs(call, active), needed, strict=True)]
    if not any(wrt) or not any(seeded):
        outs = b.bind(checkpoint_p, *operands, call=call, num_residuals=num_residuals,
                      **params)
        return list(outs), None
    split = split_vjp(vjp_func(call, wrt, seeded), len(call.inputs), len(call.outputs),
                      policy.saves)
    outs = b.bind(checkpoint_p, *operands, call=split.forward,
                  num_residuals=num_residuals + len(split.residuals), **params)
    n = len(call.outputs)
    return list(outs[:n]), (wrt, seeded, split.backward, tuple(outs[n:]))


def _checkpoint_vjp(b: Builder, ct, *operands, call, policy, prevent_cse, num_residuals,
                    active=None, residuals=None):
    if residuals is None:            # the equation was copied: run the forward rule here
        _, residuals = _checkpoint_forward(b, active, None, *operands, call=call, policy=policy,
                                           prevent_cse=prevent_cse,
                                           num_residuals=num_residuals)
        if residuals is None:
            return [None] * len(operands)
    wrt, seeded, backward, saved = residuals
    cts = ct if isinstance(ct, tuple) else (ct,)
    seeded_cts = [c if c is not None else zeros(b, t) for c, t, s in
                  zip(cts, call.out_types, seeded, strict=True) if s]
    reads = [*operands, *saved]
    used = used_inputs(backward)[:len(reads)]
    # The barrier in front of the recomputation (Note [checkpoint]), over the cotangents too.
    marked = [k for k, (a, u) in enumerate(zip(reads, used, strict=True))
              if u and isinstance(a, Var)]
    n_marked = len(marked)
    marked_cts = [k for k, c in enumerate(seeded_cts) if isinstance(c, Var)]
    if marked:
        fenced = b.bind(optimization_barrier_p, *(reads[k] for k in marked),
                        *(seeded_cts[k] for k in marked_cts), prevent_cse=prevent_cse)
        for k, a in zip(marked, fenced[:n_marked], strict=True):
            reads[k] = a
        for k, a in zip(marked_cts, fenced[n_marked:], strict=True):
            seeded_cts[k] = a
    grads = iter(b.inline(backward, [*reads, *seeded_cts]))
    return [next(grads) if w else None for w in wrt]


def _checkpoint_jvp(b: Builder, primals, tangents, *, call, policy, prevent_cse,
                    num_residuals):
    mask = [t is not None for t in tangents]
    out_t = tangent_types(call.out_types)
    func = jvp_func(call, mask, out_t)
    outs = b.bind(checkpoint_p, *primals, *(t for t in tangents if t is not None), call=func,
                  policy=policy, prevent_cse=prevent_cse, num_residuals=0)
    n = len(call.outputs)
    tangent_outs = iter(outs[n:])
    return list(outs[:n]), [next(tangent_outs) if f else None for f in out_t]


def _checkpoint_batch(b: Builder, axis, operands, dims, *, call, **params):
    func = vmap_func(call, list(dims), axis, [0] * len(call.outputs))
    outs = b.bind(checkpoint_p, *operands, call=func, **params)
    return list(outs), [0] * len(outs)


checkpoint_p = declare("checkpoint", _checkpoint_rule, _checkpoint_impl, multiple_results=True)
batch_rules[checkpoint_p] = _checkpoint_batch
jvp_rules[checkpoint_p] = _checkpoint_jvp
vjp_rules[checkpoint_p] = _checkpoint_vjp
forward_rules[checkpoint_p] = _checkpoint_forward
lower_rules[checkpoint_p] = lambda ctx, eqn, *operands: lower_body(ctx, eqn.params["call"],
                                                                   operands)
activity_rules[checkpoint_p] = lambda active, *, call, **params: active_outputs(call, active)
control_varying_rules[checkpoint_p] = lambda ins, *, call, **params: varying_axes(call, ins)
always_rewrite.add(checkpoint_p)          # the function may use the vmapped axis name
