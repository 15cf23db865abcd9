"""``scan``: a loop over the leading axis of its xs with a carry, for lax.scan and for
lax.fori_loop with static bounds.

    scan(*consts, *init, *xs)         {body, length, reverse, num_consts, num_carry}
        ``carry, y = body(*consts, *carry, *x)`` over the slices ``x = xs[i]`` (i counting
        down if ``reverse``); returns the final carry and the ys stacked along axis 0.

It lowers to a ``stablehlo.while`` written as an IR while equation (``_scan_as_while``);
its VJP is a forward scan that also stacks each step's residuals and a reverse scan over
the backward part of the body's VJP (Note [scan residuals]). The helpers it shares with
cond and while live in control_flow.py (see Note [batched control flow] and Note
[collectives under divergent control flow] there).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..builder import Builder, lit
from ..interpreter import evaluate
from ..ir import Atom, Eqn, Func, TensorType, Var
from ..passes.autodiff import (
    active_outputs,
    activity_rules,
    forward_rules,
    is_float,
    vjp_func,
    vjp_rules,
    zeros,
)
from ..passes.cleanup import dce, dce_rules
from ..passes.collectives import control_varying_rules, varying_axes
from ..passes.forward import instantiate, jvp_func, jvp_rules, tangent_types
from ..passes.residuals import split_vjp, used_inputs
from ..passes.vmap import always_rewrite, batch_rules, batch_to_front, move_axis
from ..stablehlo import lower_rules
from .control_flow import (
    I32,
    _batch_func,
    _batched_outputs,
    _to_front,
    _types,
    _while_lowering,
    regroup,
    while_p,
)
from .core import ShapeError, declare

__all__ = ["scan_p"]


def _scan_rule(*operands: TensorType, body: Func, length: int, reverse: bool,
               num_consts: int, num_carry: int):
    consts = operands[:num_consts]
    carry = operands[num_consts:num_consts + num_carry]
    xs = operands[num_consts + num_carry:]
    if length < 0:
        raise ShapeError(f"scan: length must be >= 0, got {length}")
    for x in xs:
        if x.ndim == 0 or x.shape[0] != length:
            raise ShapeError(f"scan: every xs must have leading dimension length={length}, "
                             f"got {x}")
    slices = tuple(TensorType(x.shape[1:], x.dtype) for x in xs)
    if body.in_types != consts + carry + slices:
        raise ShapeError(f"scan: body takes {_types(body.in_types)}, expected "
                         f"{_types(consts + carry + slices)}")
    if body.out_types[:num_carry] != carry:
        raise ShapeError(f"scan: body returns the carry {_types(body.out_types[:num_carry])}"
                         f" but the carry is {_types(carry)}")
    return carry + tuple(TensorType((length, *t.shape), t.dtype)
                         for t in body.out_types[num_carry:])


def _scan_impl(*operands, body, length, reverse, num_consts, num_carry):
    consts = operands[:num_consts]
    carry = list(operands[num_consts:num_consts + num_carry])
    xs = operands[num_consts + num_carry:]
    ys: list[list[np.ndarray]] = [[] for _ in body.outputs[num_carry:]]
    for i in (reversed(range(length)) if reverse else range(length)):
        outs = evaluate(body, *consts, *carry, *(x[i] for x in xs))
        carry = outs[:num_carry]
        for stack, y in zip(ys, outs[num_carry:], strict=True):
            stack.append(y)
    stacked = [np.stack(s[::-1] if reverse else s) if s else np.zeros((0, *t.shape), t.dtype)
               for s, t in zip(ys, body.out_types[num_carry:], strict=True)]
    return (*carry, *stacked)


def _scan_as_while(eqn: Eqn) -> Eqn:
    """The scan ``eqn`` as a while equation over ``(i, *carry, *ys)`` whose body consts are
    the scan's consts and xs (its outputs: the counter, the carry, the ys)."""
    p = eqn.params
    body, length, nc = p["body"], p["length"], p["num_carry"]
    n_consts = p["num_consts"]
    consts = [a.type for a in eqn.inputs[:n_consts]]
    carry = [a.type for a in eqn.inputs[n_consts:n_consts + nc]]
    xs = [a.type for a in eqn.inputs[n_consts + nc:]]
    ys = [v.type for v in eqn.outputs[nc:]]
    counter = TensorType((), I32)

    cond = Builder("scan_cond")
    i = cond.input(counter)
    for t in (*carry, *ys):
        cond.input(t)
    cond_func = cond.build([cond.lt(i, lit(length, I32))])

    step = Builder("scan_step")
    c_consts = [step.input(t) for t in consts]
    c_xs = [step.input(t) for t in xs]
    i = step.input(counter)
    c_carry = [step.input(t) for t in carry]
    c_ys = [step.input(t) for t in ys]
    at = step.sub(lit(length - 1, I32), i) if p["reverse"] else i
    x_slices = []
    for x in c_xs:
        rest = (lit(0, I32),) * (x.type.ndim - 1)
        piece = step.dynamic_slice(x, at, *rest, slice_sizes=(1, *x.type.shape[1:]))
        x_slices.append(step.reshape(piece, new_sizes=x.type.shape[1:]))
    outs = step.inline(body, [*c_consts, *c_carry, *x_slices])
    new_ys = []
    for buf, y in zip(c_ys, outs[nc:], strict=True):
        rest = (lit(0, I32),) * (buf.type.ndim - 1)
        row = step.reshape(y, new_sizes=(1, *buf.type.shape[1:]))
        new_ys.append(step.dynamic_update_slice(buf, row, at, *rest))
    body_func = step.build([step.add(i, lit(1, I32)), *outs[:nc], *new_ys])
    inputs = tuple(Var(t) for t in (*consts, *xs, counter, *carry, *ys))   # placeholders
    return Eqn(while_p, inputs, {"cond_func": cond_func, "body_func": body_func,
                                 "cond_nconsts": 0, "body_nconsts": n_consts + len(xs)}, ())


def _scan_lowering(ctx, eqn, *operands):
    p = eqn.params
    n_consts, nc = p["num_consts"], p["num_carry"]
    consts, carry = operands[:n_consts], operands[n_consts:n_consts + nc]
    xs = operands[n_consts + nc:]
    ys_init = [ctx.constant(0, v.type) for v in eqn.outputs[nc:]]
    if p["length"] == 0:                      # no step runs (and no slice of xs exists)
        return [*carry, *ys_init]
    start = ctx.constant(0, TensorType((), I32))
    outs = _while_lowering(ctx, _scan_as_while(eqn), *consts, *xs, start, *carry, *ys_init)
    return outs[1:]                                      # without the counter


def _scan_batch(b, axis, args, dims, *, body, length, reverse, num_consts, num_carry):
    n_consts, nc = num_consts, num_carry
    batched = [d is not None for d in dims]
    consts_b, carry_b = batched[:n_consts], batched[n_consts:n_consts + nc]
    xs_b = batched[n_consts + nc:]
    while True:                                  # See Note [batched control flow]
        out_b = _batched_outputs(body, consts_b + carry_b + xs_b, axis)
        new = [x or y for x, y in zip(carry_b, out_b[:nc], strict=True)]
        if new == carry_b:
            break
        carry_b = new
    ys_b = out_b[nc:]
    consts = _to_front(b, args[:n_consts], dims[:n_consts])
    carry = [batch_to_front(b, a, d, axis.size) if want else a for a, d, want in
             zip(args[n_consts:n_consts + nc], dims[n_consts:n_consts + nc], carry_b,
                 strict=True)]
    xs = [a if d is None else move_axis(b, a, d, 1)     # the scanned axis stays first
          for a, d in zip(args[n_consts + nc:], dims[n_consts + nc:], strict=True)]
    new_body = _batch_func(body, consts_b + carry_b + xs_b, axis, carry_b + ys_b)
    outs = b.scan(*consts, *carry, *xs, body=new_body, length=length, reverse=reverse,
                  num_consts=n_consts, num_carry=nc)
    return list(outs), [0 if x else None for x in carry_b] + [1 if y else None for y in ys_b]


# Note [scan residuals]
# ~~~~~~~~~~~~~~~~~~~~~
# The VJP of a scan stores what each step's backward pass needs, as JAX does: the forward
# rule splits the VJP of the body (passes/residuals.py) and emits one forward scan whose
# body also returns the step's residuals, stacked along the loop like ys; the VJP rule
# runs the backward bodies in a reverse scan over them. Every value that varies from step
# to step is saved; values computed from the consts alone are recomputed in the backward
# body instead of being stacked ``length`` times. A ``checkpoint`` in the body decides for
# itself: ``scan(checkpoint(body))`` saves only what its policy allows (nothing, by
# default, but the step's inputs), and its backward body recomputes the rest.

@dataclass(frozen=True)
class _ScanResiduals:
    wrt: tuple[bool, ...]            # the operands that get a cotangent
    carry_float: tuple[bool, ...]    # the carries with a cotangent (active floats)
    ys_seeded: tuple[bool, ...]      # the ys that may get one
    backward: Func                   # (*consts, *carry, *x, *residuals, *cts) -> grads
    stacked: tuple[Atom, ...]        # the input carries the backward body reads, then the
                                     # residuals, each stacked over the steps


def _scan_plan(active, needed, operands, body, length, reverse, num_consts, num_carry):
    n_consts, nc = num_consts, num_carry
    # Only what may depend on a differentiated input (Note [activity]): a carry that does
    # through the loop counts, and a while loop on the others is never differentiated.
    active = active or (True,) * len(operands)
    outs_active = _scan_activity(active, body=body, length=length, reverse=reverse,
                                 num_consts=n_consts, num_carry=nc)
    active = [*active[:n_consts], *outs_active[:nc], *active[n_consts + nc:]]
    wrt = tuple(is_float(a.type) and act for a, act in zip(operands, active, strict=True))
    carry_float = wrt[n_consts:n_consts + nc]
    needed = needed or (True,) * len(body.outputs)
    ys_seeded = tuple(is_float(t) and act and need for t, act, need in
                      zip(body.out_types[nc:], outs_active[nc:], needed[nc:], strict=True))
    if not any(wrt) or not (any(carry_float) or any(ys_seeded)):
        return None
    vjp = vjp_func(body, wrt, carry_float + ys_seeded)
    # Values that vary from step to step are saved; the others are recomputed.
    varying = set(vjp.inputs[n_consts:len(body.inputs)])
    for eqn in vjp.eqns:
        if any(isinstance(a, Var) and a in varying for a in eqn.inputs):
            varying.update(eqn.outputs)
    split = split_vjp(vjp, len(body.inputs), len(body.outputs),
                      lambda eqn: any(v in varying for v in eqn.outputs))
    return wrt, carry_float, ys_seeded, split


def _scan_forward(b, active, needed, *operands, body, length, reverse, num_consts,
                  num_carry):
    """The forward rule (Note [scan residuals]): the scan, also stacking the residuals."""
    params = dict(length=length, reverse=reverse, num_consts=num_consts, num_carry=num_carry)
    plan = _scan_plan(active, needed, operands, body, **params)
    if plan is None:
        return list(b.scan(*operands, body=body, **params)), None
    wrt, carry_float, ys_seeded, split = plan
    n_consts, nc = num_consts, num_carry
    n_res = len(split.residuals)
    reads = used_inputs(split.backward)
    carry_read = reads[n_consts:n_consts + nc]
    f = split.forward
    carry_in = [v for v, r in zip(f.inputs[n_consts:n_consts + nc], carry_read, strict=True)
                if r]
    n_out = len(body.outputs)
    forward = Func(f.name, f.inputs, f.eqns, (*f.outputs[:n_out], *carry_in,
                                               *f.outputs[n_out:]))
    outs = b.scan(*operands, body=forward, **params)
    saved = _ScanResiduals(wrt, carry_float, ys_seeded, split.backward,
                           tuple(outs[n_out:]))
    assert len(saved.stacked) == len(carry_in) + n_res
    return list(outs[:n_out]), saved


def _scan_vjp(b, ct, *operands, body, length, reverse, num_consts, num_carry,
              active=None, residuals=None):
    """A reverse scan over the backward part of the body's VJP, reading the residuals the
    forward rule stacked (Note [scan residuals]) and accumulating the consts' cotangents
    in its carry."""
    params = dict(length=length, reverse=reverse, num_consts=num_consts, num_carry=num_carry)
    if residuals is None:            # the equation was copied: run the forward rule here
        _, residuals = _scan_forward(b, active, None, *operands, body=body, **params)
        if residuals is None:
            return [None] * len(operands)
    wrt, carry_float, ys_seeded = residuals.wrt, residuals.carry_float, residuals.ys_seeded
    n_consts, nc = num_consts, num_carry
    consts = list(operands[:n_consts])
    init = list(operands[n_consts:n_consts + nc])
    xs = list(operands[n_consts + nc:])
    cts = ct if isinstance(ct, tuple) else (ct,)
    ct_carry, ct_ys = cts[:nc], cts[nc:]
    bwd = residuals.backward
    n_in = len(body.inputs)
    reads = used_inputs(bwd)[n_consts:n_consts + nc]

    wrt_consts = wrt[:n_consts]
    n_acc = sum(wrt_consts)
    n_ct_carry = sum(carry_float)
    back = Builder(f"{body.name}_vjp")
    bk_consts = [back.input(a.type) for a in consts]
    bk_acc = [back.input(a.type) for a, w in zip(consts, wrt_consts, strict=True) if w]
    bk_ct_carry = [back.input(a.type) for a, f in zip(init, carry_float, strict=True) if f]
    bk_xs = [back.input(v.type) for v in body.inputs[n_consts + nc:]]
    bk_stacked = [back.input(TensorType(a.type.shape[1:], a.type.dtype))
                  for a in residuals.stacked]
    stacked = iter(bk_stacked)
    bk_carry = [next(stacked) if r else zeros(back, v.type)     # unread: any value will do
                for v, r in zip(body.inputs[n_consts:n_consts + nc], reads, strict=True)]
    bk_res = list(stacked)
    bk_ct_ys = [back.input(t) for t, s in zip(body.out_types[nc:], ys_seeded, strict=True)
                if s]
    grads = back.inline(bwd, [*bk_consts, *bk_carry, *bk_xs, *bk_res, *bk_ct_carry,
                              *bk_ct_ys])
    assert len(bwd.inputs) == n_in + len(bk_res) + len(bk_ct_carry) + len(bk_ct_ys)
    g_consts, g_carry = grads[:n_acc], grads[n_acc:n_acc + n_ct_carry]
    g_xs = grads[n_acc + n_ct_carry:]
    new_acc = [back.add(a, g) for a, g in zip(bk_acc, g_consts, strict=True)]
    back_func = dce(back.build([*new_acc, *g_carry, *g_xs]))

    acc0 = [zeros(b, a.type) for a, w in zip(consts, wrt_consts, strict=True) if w]
    ct0 = [c if c is not None else zeros(b, a.type)
           for a, c, f in zip(init, ct_carry, carry_float, strict=True) if f]
    seeded_ys = [c if c is not None else zeros(b, TensorType((length, *t.shape), t.dtype))
                 for c, t, s in zip(ct_ys, body.out_types[nc:], ys_seeded, strict=True) if s]
    res = b.scan(*consts, *acc0, *ct0, *xs, *residuals.stacked, *seeded_ys, body=back_func,
                 length=length, reverse=not reverse, num_consts=n_consts,
                 num_carry=n_acc + n_ct_carry)
    ct_consts = iter(res[:n_acc])
    ct_init = iter(res[n_acc:n_acc + n_ct_carry])
    ct_xs = iter(res[n_acc + n_ct_carry:])
    return [*(next(ct_consts) if w else None for w in wrt_consts),
            *(next(ct_init) if f else None for f in carry_float),
            *(next(ct_xs) if w else None for w in wrt[n_consts + nc:])]


def _scan_jvp(b, primals, tangents, *, body, length, reverse, num_consts, num_carry):
    # A scan over the body's JVP, the tangents of consts, carry and xs beside the primals
    # (every float carry gets one, so the carry keeps one type from step to step).
    nk, nc = num_consts, num_carry
    consts, carry, xs = primals[:nk], primals[nk:nk + nc], primals[nk + nc:]
    t_consts, t_carry, t_xs = tangents[:nk], tangents[nk:nk + nc], tangents[nk + nc:]
    carry_t = tangent_types([c.type for c in carry])
    ys_t = tangent_types(body.out_types[nc:])
    consts_t = [t is not None for t in t_consts]
    xs_t = [t is not None for t in t_xs]
    step = jvp_func(body, consts_t + carry_t + xs_t, carry_t + ys_t)
    step = regroup(step, [nk, nc, len(xs), sum(consts_t), sum(carry_t), sum(xs_t)],
                   [0, 3, 1, 4, 2, 5])
    ny = len(body.outputs) - nc
    step = regroup(step, [nc, ny, sum(carry_t), sum(ys_t)], [0, 2, 1, 3], what="outputs")
    t_carry = [instantiate(b, t, c) for t, c, f in zip(t_carry, carry, carry_t, strict=True)
               if f]
    outs = b.scan(*consts, *(t for t in t_consts if t is not None), *carry, *t_carry, *xs,
                  *(t for t in t_xs if t is not None), body=step, length=length,
                  reverse=reverse, num_consts=nk + sum(consts_t),
                  num_carry=nc + len(t_carry))
    n_tc = len(t_carry)
    out_carry, out_tcarry = outs[:nc], iter(outs[nc:nc + n_tc])
    ys, out_tys = outs[nc + n_tc:nc + n_tc + ny], iter(outs[nc + n_tc + ny:])
    return ([*out_carry, *ys], [*(next(out_tcarry) if f else None for f in carry_t),
                                *(next(out_tys) if f else None for f in ys_t)])


scan_p = declare("scan", _scan_rule, _scan_impl, multiple_results=True)
batch_rules[scan_p] = _scan_batch
jvp_rules[scan_p] = _scan_jvp
vjp_rules[scan_p] = _scan_vjp
forward_rules[scan_p] = _scan_forward
lower_rules[scan_p] = _scan_lowering
always_rewrite.add(scan_p)


def _scan_activity(active, *, body, length, reverse, num_consts, num_carry):
    consts = list(active[:num_consts])          # See Note [activity] (passes/autodiff.py)
    xs = list(active[num_consts + num_carry:])
    carry = list(active[num_consts:num_consts + num_carry])
    while True:
        outs = active_outputs(body, consts + carry + xs)
        new = [c or o for c, o in zip(carry, outs[:num_carry], strict=True)]
        if new == carry:
            return carry + outs[num_carry:]
        carry = new


activity_rules[scan_p] = _scan_activity


def _scan_varying(ins, *, body, length, reverse, num_consts, num_carry):
    consts, xs = list(ins[:num_consts]), list(ins[num_consts + num_carry:])
    carry = list(ins[num_consts:num_consts + num_carry])
    while True:
        outs = varying_axes(body, consts + carry + xs)
        new = [c | v for c, v in zip(carry, outs[:num_carry], strict=True)]
        if new == carry:
            return carry + outs[num_carry:]      # length 0 returns the initial carry
        carry = new


control_varying_rules[scan_p] = _scan_varying


# Note [dead scan carries]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# A scan's carry that no used result depends on can go: DCE (``dce_rules``) keeps the
# carries whose final value is used or that a kept body output reads, to a fixed point,
# and the stacked outputs that are used, and drops the other carries, outputs and the
# consts and xs that only they read. Reverse mode over a linear scan needs this: the
# linear half of ``linearize`` holds the scan of the whole JVP body (Note [linearize]),
# and the transpose's forward copy of it would otherwise still compute the tangent
# carries, reading the linear inputs (so ``linear_transpose`` would call it nonlinear)
# and evaluating what has no value (``custom_lin``, Note [forward mode of custom_vjp]).

def _scan_dce(eqn: Eqn, live: list[bool]) -> Eqn | None:
    p = eqn.params
    body, nk, nc = p["body"], p["num_consts"], p["num_carry"]
    carry = list(live[:nc])
    ys = list(live[nc:])
    while True:
        pruned = dce(Func(body.name, body.inputs, body.eqns,
                          tuple(a for a, k in zip(body.outputs, carry + ys, strict=True)
                                if k)))
        reads = used_inputs(pruned)
        grown = [c or r for c, r in zip(carry, reads[nk:nk + nc], strict=True)]
        if grown == carry:
            break
        carry = grown
    if all(carry) and all(ys):
        return None
    keep_in = [*reads[:nk], *carry, *reads[nk + nc:]]
    inputs = tuple(v for v, k in zip(pruned.inputs, keep_in, strict=True) if k)
    new_body = Func(body.name, inputs, pruned.eqns, pruned.outputs)
    operands = tuple(a for a, k in zip(eqn.inputs, keep_in, strict=True) if k)
    outputs = tuple(v for v, k in zip(eqn.outputs, carry + ys, strict=True) if k)
    params = {**p, "body": new_body, "num_consts": sum(reads[:nk]), "num_carry": sum(carry)}
    return Eqn(eqn.prim, operands, params, outputs, eqn.source)


dce_rules[scan_p] = _scan_dce
