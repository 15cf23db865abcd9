"""Structured control flow: ``cond``, ``while`` and ``scan``, with closed sub-Funcs in params.

    cond(index, *operands)            {branches=(Func, ...)}
        runs ``branches[index]`` on the operands; an index outside [0, n) runs the last
        branch (StableHLO's ``case``). ``lax.cond`` passes its predicate as 0/1.
    while(*cond_consts, *body_consts, *carry)
                                      {cond_func, body_func, cond_nconsts, body_nconsts}
        ``while cond_func(*cond_consts, *carry): carry = body_func(*body_consts, *carry)``
    scan(*consts, *init, *xs)         {body, length, reverse, num_consts, num_carry}
        ``carry, y = body(*consts, *carry, *x)`` over the slices ``x = xs[i]`` (i counting
        down if ``reverse``); returns the final carry and the ys stacked along axis 0.

Every sub-Func is closed (the frontend's closure conversion made captured values explicit
consts), so passes treat an equation as a unit and recurse into its params. The rules:
batching vmaps the sub-Funcs (Note [batched control flow]); the VJP of cond is a cond
over the branches' VJPs, of scan a forward scan saving each step's carry and a reverse
scan over the body's VJP; while has no VJP (Note [while has no VJP]). scan lowers to a
``stablehlo.while`` built as an IR while (``_scan_as_while``).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from ..builder import Builder, lit
from ..interpreter import evaluate
from ..ir import Eqn, Func, TensorType, Var
from ..passes.autodiff import is_float, vjp_func, vjp_rules, zeros
from ..passes.cleanup import dce
from ..passes.collectives import collective_axes, control_varying_rules, varying_axes
from ..passes.vmap import (
    BatchAxis,
    always_rewrite,
    batch_rules,
    batch_to_front,
    move_axis,
    vmap_func,
)
from ..stablehlo import lower_body, lower_rules, mlir_type
from .core import ShapeError, declare

__all__ = ["cond_p", "while_p", "scan_p", "WhileLoopVJPError", "DivergentCollectiveError"]

I32 = np.dtype(np.int32)
BOOL = np.dtype(np.bool_)


def _types(ts: Sequence[TensorType]) -> str:
    return "(" + ", ".join(map(str, ts)) + ")"


# Note [collectives under divergent control flow]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Under pmap every device of a replica group must reach each collective, or the others
# wait for it forever (XLA on CPU aborts the process after 40 s). A collective over axis
# ``a`` inside a cond branch, or a while loop's cond or body, is therefore an error when
# the branch index or the loop predicate may differ along ``a`` (Note [replication]);
# compute it from a psum/pmax first, so every device takes the same path. The replication
# rules below also give the carries of loops a fixed point, so a carry that a psum keeps
# equal on every device stays replicated. scan always runs ``length`` steps: no check.

class DivergentCollectiveError(ValueError):
    """A collective that some devices of its group would skip (a deadlock)."""


def _collectives_in(funcs: Sequence[Func]):
    for func in funcs:
        for eqn in func.eqns:
            if collective_axes(eqn) and eqn.prim.name != "axis_index":   # communicates
                yield eqn
            yield from _collectives_in([v for value in eqn.params.values() for v in
                                        (value if isinstance(value, tuple) else (value,))
                                        if isinstance(v, Func)])


def _check_uniform(control: frozenset[str], funcs: Sequence[Func], what: str) -> None:
    for eqn in _collectives_in(funcs):
        clash = sorted(control & set(collective_axes(eqn)))
        if clash:
            where = f" (at {eqn.source})" if eqn.source else ""
            names = ", ".join(map(repr, clash))
            raise DivergentCollectiveError(
                f"{eqn.prim.name} over axis {names}{where} is inside {what} that may "
                f"differ between the devices along {names}: some devices would skip the "
                "collective and the others would wait for them forever. Make the "
                "predicate the same on every device (compute it from a lax.psum / lax.pmax "
                "over the axis), or move the collective out of the branch or loop. "
                "See Note [collectives under divergent control flow].")


def _carry_fixed_point(body: Func, consts: list, carry: list, n_out: int) -> list:
    """The carries' varying axes once the body has run any number of times."""
    while True:
        new = [c | v for c, v in zip(carry, varying_axes(body, consts + carry)[:n_out],
                                     strict=True)]
        if new == carry:
            return carry
        carry = new


# --- cond ------------------------------------------------------------------------------------

def _cond_rule(index: TensorType, *operands: TensorType, branches: tuple[Func, ...]):
    if index != TensorType((), I32):
        raise ShapeError(f"cond: the branch index must be i32[], got {index}")
    if not branches:
        raise ShapeError("cond needs at least one branch")
    for k, br in enumerate(branches):
        if br.in_types != operands:
            raise ShapeError(f"cond: branch {k} takes {_types(br.in_types)} but the "
                             f"operands are {_types(operands)}")
        if br.out_types != branches[0].out_types:
            raise ShapeError(f"cond: branch {k} returns {_types(br.out_types)} but branch 0 "
                             f"returns {_types(branches[0].out_types)}")
    return branches[0].out_types


def _clamp_index(index: int, n: int) -> int:
    return index if 0 <= index < n else n - 1


def _cond_impl(index, *operands, branches):
    return evaluate(branches[_clamp_index(int(index), len(branches))], *operands)


def _cond_lowering(ctx, eqn, index, *operands):
    branches = eqn.params["branches"]
    op = hlo.CaseOp([mlir_type(v.type) for v in eqn.outputs], index, len(branches))
    for region, br in zip(op.regions, branches, strict=True):
        with ir.InsertionPoint(region.blocks.append()):   # branches read the operands
            hlo.ReturnOp(lower_body(ctx, br, operands))     # from the enclosing block
    return list(op.results)


# Note [batched control flow]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A sub-Func is batched with vmap_func, which needs to be told which of its outputs come
# out batched. ``_batched_outputs`` answers conservatively (an output is batched if any
# operand of the equation computing it is, or if the equation must see the vmapped axis
# name, as axis_index does); saying "batched" for a value that is not only costs a
# broadcast. Carries of while and scan are batched where the initial value is or where
# the body makes them so, iterated to a fixed point. With a batched predicate, cond
# evaluates every branch and selects (like JAX), and while runs until no element's
# predicate holds, keeping the carries of finished elements with a select.

def _batched_outputs(func: Func, in_batched: Sequence[bool], axis: BatchAxis) -> list[bool]:
    batched: set[Var] = {v for v, x in zip(func.inputs, in_batched, strict=True) if x}
    for eqn in func.eqns:
        if (axis.name is not None and eqn.prim in always_rewrite) or any(
                isinstance(a, Var) and a in batched for a in eqn.inputs):
            batched.update(eqn.outputs)
    return [isinstance(a, Var) and a in batched for a in func.outputs]


def _batch_func(func: Func, in_batched: Sequence[bool], axis: BatchAxis,
                out_batched: Sequence[bool]) -> Func:
    return vmap_func(func, [0 if x else None for x in in_batched], axis,
                     [0 if x else None for x in out_batched])


def _to_front(b, args, dims):
    return [a if d is None else move_axis(b, a, d, 0) for a, d in zip(args, dims, strict=True)]


def _select_batched(b, pred: Var, on_true, on_false):
    """``select`` with a (batch,) predicate over values batched at 0."""
    shape = on_true.type.shape
    if len(shape) > 1:
        pred = b.broadcast_in_dim(pred, shape=shape, broadcast_dimensions=(0,))
    return b.select(pred, on_true, on_false)


def _cond_batch(b, axis, args, dims, *, branches):
    index, ops = args[0], _to_front(b, args[1:], dims[1:])
    ops_batched = [d is not None for d in dims[1:]]
    if dims[0] is None:       # one branch for the whole batch: batch the branches
        out_batched = [any(col) for col in zip(
            *(_batched_outputs(br, ops_batched, axis) for br in branches), strict=True)]
        new = tuple(_batch_func(br, ops_batched, axis, out_batched) for br in branches)
        outs = b.cond(index, *ops, branches=new)
        return list(outs), [0 if x else None for x in out_batched]
    # See Note [batched control flow]: every branch, then a select per output.
    index = move_axis(b, index, dims[0], 0)
    every = [True] * len(branches[0].outputs)
    results = [b.inline(_batch_func(br, ops_batched, axis, every), ops) for br in branches]
    outs = results[-1]                        # out-of-range indices take the last branch
    for k in range(len(branches) - 1):
        taken = b.eq(index, lit(k, I32))
        outs = [_select_batched(b, taken, r, o) for r, o in zip(results[k], outs, strict=True)]
    return outs, [0] * len(outs)


def _cond_vjp(b, ct, index, *operands, branches):
    cts = ct if isinstance(ct, tuple) else (ct,)
    wrt = [is_float(a.type) for a in operands]
    seeded = [c is not None and is_float(t) for c, t in
              zip(cts, branches[0].out_types, strict=True)]
    if not any(wrt) or not any(seeded):
        return [None] * (1 + len(operands))
    n_out = len(branches[0].outputs)
    grads_of = tuple(_drop_outputs(vjp_func(br, wrt, seeded), n_out) for br in branches)
    grads = iter(b.cond(index, *operands, *(c for c, s in zip(cts, seeded, strict=True) if s),
                        branches=grads_of))
    return [None, *(next(grads) if w else None for w in wrt)]


def _drop_outputs(func: Func, n: int) -> Func:
    """``func`` without its first ``n`` outputs, dead code removed."""
    return dce(Func(func.name, func.inputs, func.eqns, func.outputs[n:]))


cond_p = declare("cond", _cond_rule, _cond_impl, multiple_results=True)
batch_rules[cond_p] = _cond_batch
vjp_rules[cond_p] = _cond_vjp
lower_rules[cond_p] = _cond_lowering
always_rewrite.add(cond_p)      # a branch may use the vmapped axis name (axis_index ...)


def _cond_varying(ins, *, branches):
    index, operands = ins[0], list(ins[1:])
    _check_uniform(index, branches, "a lax.cond / lax.switch whose predicate")
    outs = [index] * len(branches[0].outputs)
    for br in branches:
        outs = [o | v for o, v in zip(outs, varying_axes(br, operands), strict=True)]
    return outs


control_varying_rules[cond_p] = _cond_varying

# --- while -------------------------------------------------------------------------------------

def _while_rule(*operands: TensorType, cond_func: Func, body_func: Func, cond_nconsts: int,
                body_nconsts: int):
    cond_consts = operands[:cond_nconsts]
    body_consts = operands[cond_nconsts:cond_nconsts + body_nconsts]
    carry = operands[cond_nconsts + body_nconsts:]
    if cond_func.in_types != cond_consts + carry:
        raise ShapeError(f"while: cond_func takes {_types(cond_func.in_types)}, expected "
                         f"{_types(cond_consts + carry)}")
    if cond_func.out_types != (TensorType((), BOOL),):
        raise ShapeError(f"while: cond_func must return one bool[], got "
                         f"{_types(cond_func.out_types)}")
    if body_func.in_types != body_consts + carry:
        raise ShapeError(f"while: body_func takes {_types(body_func.in_types)}, expected "
                         f"{_types(body_consts + carry)}")
    if body_func.out_types != carry:
        raise ShapeError(f"while: body_func returns {_types(body_func.out_types)} but the "
                         f"carry is {_types(carry)}")
    return carry


def _while_impl(*operands, cond_func, body_func, cond_nconsts, body_nconsts):
    cond_consts = operands[:cond_nconsts]
    body_consts = operands[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(operands[cond_nconsts + body_nconsts:])
    while bool(evaluate(cond_func, *cond_consts, *carry)[0]):
        carry = evaluate(body_func, *body_consts, *carry)
    return tuple(carry)


def _while_lowering(ctx, eqn, *operands):
    # The consts ride along in the loop state unchanged, so the regions need no values
    # from outside (as JAX lowers while_loop).
    p = eqn.params
    n_consts = p["cond_nconsts"] + p["body_nconsts"]
    types = [mlir_type(a.type) for a in eqn.inputs]
    op = hlo.WhileOp(types, list(operands))
    cond_block = op.regions[0].blocks.append(*types)
    with ir.InsertionPoint(cond_block):
        args = list(cond_block.arguments)
        hlo.ReturnOp(lower_body(ctx, p["cond_func"],
                                args[:p["cond_nconsts"]] + args[n_consts:]))
    body_block = op.regions[1].blocks.append(*types)
    with ir.InsertionPoint(body_block):
        args = list(body_block.arguments)
        new = lower_body(ctx, p["body_func"], args[p["cond_nconsts"]:])
        hlo.ReturnOp(args[:n_consts] + new)
    return list(op.results)[n_consts:]


def _while_batch(b, axis, args, dims, *, cond_func, body_func, cond_nconsts, body_nconsts):
    cn, bn = cond_nconsts, body_nconsts
    batched = [d is not None for d in dims]
    cond_b, body_b, carry_b = batched[:cn], batched[cn:cn + bn], batched[cn + bn:]
    while True:                                  # See Note [batched control flow]
        pred_b = _batched_outputs(cond_func, cond_b + carry_b, axis)[0]
        out_b = _batched_outputs(body_func, body_b + carry_b, axis)
        new = [True] * len(carry_b) if pred_b else \
            [x or y for x, y in zip(carry_b, out_b, strict=True)]
        if new == carry_b:
            break
        carry_b = new
    consts = _to_front(b, args[:cn + bn], dims[:cn + bn])
    carry = [batch_to_front(b, a, d, axis.size) if want else a
             for a, d, want in zip(args[cn + bn:], dims[cn + bn:], carry_b, strict=True)]
    out_dims = [0 if x else None for x in carry_b]
    body = _batch_func(body_func, body_b + carry_b, axis, carry_b)
    if not pred_b:
        cond = _batch_func(cond_func, cond_b + carry_b, axis, [False])
        outs = b.bind(while_p, *consts, *carry, cond_func=cond, body_func=body,
                      cond_nconsts=cn, body_nconsts=bn)
        return list(outs), out_dims
    # A batched predicate: loop while any element's holds; finished elements keep theirs.
    pred = _batch_func(cond_func, cond_b + carry_b, axis, [True])
    any_cond = Builder("while_any")
    c_in = [any_cond.input(a.type) for a in (*consts[:cn], *carry)]
    any_cond_out = any_cond.reduce_or(any_cond.inline(pred, c_in)[0], axes=(0,))
    masked = Builder("while_masked_body")
    m_consts = [masked.input(a.type) for a in consts]
    m_carry = [masked.input(a.type) for a in carry]
    alive = masked.inline(pred, m_consts[:cn] + m_carry)[0]
    stepped = masked.inline(body, m_consts[cn:] + m_carry)
    masked_out = [_select_batched(masked, alive, new, old)
                  for new, old in zip(stepped, m_carry, strict=True)]
    outs = b.bind(while_p, *consts[:cn], *consts, *carry,
                  cond_func=any_cond.build([any_cond_out]),
                  body_func=masked.build(masked_out), cond_nconsts=cn, body_nconsts=cn + bn)
    return list(outs), out_dims


# Note [while has no VJP]
# ~~~~~~~~~~~~~~~~~~~~~~~
# Reverse mode needs the values of every iteration, and a while loop's trip count is not
# known until it runs, so there is nowhere to keep them (JAX refuses too). Listing
# ``while`` as non-differentiable would make grad return zeros for float carries: a silent
# wrong answer. So its VJP rule raises, and only when a cotangent actually reaches a
# while loop (integer-only loops, such as index bookkeeping, differentiate fine).

class WhileLoopVJPError(TypeError):
    """Reverse-mode differentiation reached a while loop."""


def _while_vjp(b, ct, *operands, **params):
    where = f" (at {b.source})" if b.source else ""
    raise WhileLoopVJPError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
        f"with traced (dynamic) start/stop values{where}: the number of iterations is not "
        "known ahead of time, so there is nowhere to keep what the backward pass needs. "
        "Use lax.scan, or lax.fori_loop with Python int (static) lower/upper bounds, "
        "which is lowered to a scan and is differentiable.")


while_p = declare("while", _while_rule, _while_impl, multiple_results=True)
batch_rules[while_p] = _while_batch
vjp_rules[while_p] = _while_vjp                     # raises: see Note [while has no VJP]
lower_rules[while_p] = _while_lowering
always_rewrite.add(while_p)


def _while_varying(ins, *, cond_func, body_func, cond_nconsts, body_nconsts):
    cn, bn = cond_nconsts, body_nconsts
    carry = _carry_fixed_point(body_func, list(ins[cn:cn + bn]), list(ins[cn + bn:]),
                               len(body_func.outputs))
    pred = varying_axes(cond_func, list(ins[:cn]) + carry)[0]
    _check_uniform(pred, [cond_func, body_func], "a lax.while_loop whose predicate")
    return [c | pred for c in carry]          # the trip count itself may differ


control_varying_rules[while_p] = _while_varying

# --- scan --------------------------------------------------------------------------------------

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


def _scan_vjp(b, ct, *operands, body, length, reverse, num_consts, num_carry):
    """A forward scan that also stacks each step's input carry, then a reverse scan over
    the body's VJP (which recomputes the step from that carry), accumulating the consts'
    cotangents in its carry."""
    n_consts, nc = num_consts, num_carry
    consts = list(operands[:n_consts])
    init = list(operands[n_consts:n_consts + nc])
    xs = list(operands[n_consts + nc:])
    cts = ct if isinstance(ct, tuple) else (ct,)
    ct_carry, ct_ys = cts[:nc], cts[nc:]
    wrt = [is_float(a.type) for a in operands]
    carry_float = [is_float(a.type) for a in init]
    ys_seeded = [c is not None and is_float(t) for c, t in
                 zip(ct_ys, body.out_types[nc:], strict=True)]
    if not any(wrt) or not (any(c is not None for c, f in zip(ct_carry, carry_float,
                                                                 strict=True) if f)
                            or any(ys_seeded)):
        return [None] * len(operands)

    # Forward, keeping the carry each step started from.
    forward = Func(body.name, body.inputs, body.eqns,
                   body.outputs + body.inputs[n_consts:n_consts + nc])
    saved = b.scan(*consts, *init, *xs, body=forward, length=length, reverse=reverse,
                   num_consts=n_consts, num_carry=nc)
    saved_carries = list(saved[len(body.outputs):])

    # Backward: one step of the body's VJP per iteration, in the opposite order.
    step_vjp = vjp_func(body, wrt, carry_float + ys_seeded)
    wrt_consts = [w for w in wrt[:n_consts]]
    n_acc = sum(wrt_consts)
    n_ct_carry = sum(carry_float)
    back = Builder(f"{body.name}_vjp")
    bk_consts = [back.input(a.type) for a in consts]
    bk_acc = [back.input(a.type) for a, w in zip(consts, wrt_consts, strict=True) if w]
    bk_ct_carry = [back.input(a.type) for a, f in zip(init, carry_float, strict=True) if f]
    bk_xs = [back.input(v.type) for v in body.inputs[n_consts + nc:]]
    bk_carry = [back.input(v.type) for v in body.inputs[n_consts:n_consts + nc]]
    bk_ct_ys = [back.input(t) for t, s in zip(body.out_types[nc:], ys_seeded, strict=True)
                if s]
    outs = back.inline(step_vjp, [*bk_consts, *bk_carry, *bk_xs, *bk_ct_carry, *bk_ct_ys])
    grads = outs[len(body.outputs):]
    g_consts, g_carry = grads[:n_acc], grads[n_acc:n_acc + sum(wrt[n_consts:n_consts + nc])]
    g_xs = grads[n_acc + len(g_carry):]
    new_acc = [back.add(a, g) for a, g in zip(bk_acc, g_consts, strict=True)]
    back_func = dce(back.build([*new_acc, *g_carry, *g_xs]))

    acc0 = [zeros(b, a.type) for a, w in zip(consts, wrt_consts, strict=True) if w]
    ct0 = [c if c is not None else zeros(b, a.type)
           for a, c, f in zip(init, ct_carry, carry_float, strict=True) if f]
    seeded_ys = [c for c, s in zip(ct_ys, ys_seeded, strict=True) if s]
    res = b.scan(*consts, *acc0, *ct0, *xs, *saved_carries, *seeded_ys, body=back_func,
                 length=length, reverse=not reverse, num_consts=n_consts,
                 num_carry=n_acc + n_ct_carry)
    ct_consts = iter(res[:n_acc])
    ct_init = iter(res[n_acc:n_acc + n_ct_carry])
    ct_xs = iter(res[n_acc + n_ct_carry:])
    return [*(next(ct_consts) if w else None for w in wrt_consts),
            *(next(ct_init) if f else None for f in carry_float),
            *(next(ct_xs) if w else None for w in wrt[n_consts + nc:])]


scan_p = declare("scan", _scan_rule, _scan_impl, multiple_results=True)
batch_rules[scan_p] = _scan_batch
vjp_rules[scan_p] = _scan_vjp
lower_rules[scan_p] = _scan_lowering
always_rewrite.add(scan_p)


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
