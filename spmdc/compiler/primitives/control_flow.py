"""Structured control flow: ``cond``, ``while`` and ``scan``, with closed sub-Funcs in params.

    cond(index, *operands)            {branches=(Func, ...)}
        runs ``branches[index]`` on the operands; an index outside [0, n) runs the last
        branch (StableHLO's ``case``). ``lax.cond`` passes its predicate as 0/1.
    while(*cond_consts, *body_consts, *carry)
                                      {cond_func, body_func, cond_nconsts, body_nconsts}
        ``while cond_func(*cond_consts, *carry): carry = body_func(*body_consts, *carry)``
    scan                              in primitives/scan.py, which shares the helpers here

Every sub-Func is closed (the frontend's closure conversion made captured values explicit
consts), so passes treat an equation as a unit and recurse into its params. The rules:
batching vmaps the sub-Funcs (Note [batched control flow]); the JVP of each is the same
construct over its sub-Funcs' JVPs, tangents carried beside the primals (so forward mode
works through while loops too); the VJP of cond is a cond over the branches' VJPs;
while has no VJP (Note [while has no VJP]); under pmap the replication rules reject
collectives that would deadlock (Note [collectives under divergent control flow]).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...errors import DivergentCollectiveError, WhileLoopVJPError, at_line
from ..builder import Builder, lit
from ..interpreter import evaluate
from ..ir import Func, TensorType, Var
from ..passes.autodiff import active_outputs, activity_rules, is_float, vjp_func, vjp_rules
from ..passes.cleanup import dce
from ..passes.collectives import collective_axes, control_varying_rules, varying_axes
from ..passes.forward import instantiate, jvp_func, jvp_rules, tangent_types
from ..passes.vmap import (
    BatchAxis,
    always_rewrite,
    batch_rules,
    batch_to_front,
    move_axis,
    vmap_func,
)
from ..stablehlo import hlo, ir, lower_body, lower_rules, mlir_type
from .core import ShapeError, declare, library_primitives

__all__ = ["cond_p", "while_p"]

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
            where = at_line(eqn.source)
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
        ins = [isinstance(a, Var) and a in batched for a in eqn.inputs]
        if any(ins) and _decides_out_dims(eqn):
            batched.update(v for v, d in zip(eqn.outputs, _probe_out_dims(eqn, ins, axis),
                                             strict=True) if d is not None)
        elif any(ins) or (axis.name is not None and eqn.prim in always_rewrite):
            batched.update(eqn.outputs)
    return [isinstance(a, Var) and a in batched for a in func.outputs]


# Note [batching analysis]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# Which values of a sub-Func are batched is decided before it is batched (the carries'
# fixed point), by propagation: a batched operand batches every result. That is exact
# for plain built-in primitives and safe for built-in control flow (it may batch a carry
# the rule would not), but not for primitives whose batching rule leaves a result
# unbatched though an operand is batched, which are a library's primitives (Equinox's
# ``unvmap_any`` reduces over the batch, so a loop predicate built with it stays
# unbatched, as JAX's ``not_mapped``) and control flow holding such a primitive. For
# those the rule itself is run on a scratch Builder and its output dims are the answer,
# as JAX batches a loop's cond jaxpr to learn whether the predicate is batched (only
# there: probing every nested loop would repeat the work at each depth). Counting
# them batched would batch the predicate, and with it every carry, which an Equinox loop
# marks ``nonbatchable`` (its step counter) and so refuses.

def _decides_out_dims(eqn) -> bool:
    return eqn.prim in library_primitives or any(
        _holds_library_primitive(f) for v in eqn.params.values() for f in _sub_funcs(v))


def _sub_funcs(v) -> tuple[Func, ...]:
    if isinstance(v, Func):
        return (v,)
    return tuple(x for x in v if isinstance(x, Func)) if isinstance(v, tuple) else ()


def _holds_library_primitive(func: Func) -> bool:
    return any(eqn.prim in library_primitives or any(
        _holds_library_primitive(f) for v in eqn.params.values() for f in _sub_funcs(v))
        for eqn in func.eqns)


def _probe_out_dims(eqn, in_batched: Sequence[bool], axis: BatchAxis) -> list[int | None]:
    rule = batch_rules.get(eqn.prim)
    if rule is None:
        return [0] * len(eqn.outputs)
    b = Builder("batching_probe")
    args, dims = [], []
    for a, x in zip(eqn.inputs, in_batched, strict=True):
        if x:
            args.append(b.input(TensorType((axis.size, *a.type.shape), a.type.dtype)))
        else:
            args.append(a if not isinstance(a, Var) else b.input(a.type))
        dims.append(0 if x else None)
    _, out_dims = rule(b, axis, args, dims, **eqn.params)
    return list(out_dims)


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


def _cond_vjp(b, ct, index, *operands, branches, active=None):
    cts = ct if isinstance(ct, tuple) else (ct,)
    active = active or (True,) * (1 + len(operands))
    wrt = [is_float(a.type) and act for a, act in zip(operands, active[1:], strict=True)]
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


def _cond_jvp(b, primals, tangents, *, branches):
    # A cond over the branches' JVPs; every float output gets a tangent (zeros where a
    # branch has none), so that the branches agree on their outputs.
    index, operands, tangents = primals[0], primals[1:], tangents[1:]
    tangent_in = [t is not None for t in tangents]
    tangent_out = tangent_types(branches[0].out_types)
    jvp_branches = tuple(jvp_func(br, tangent_in, tangent_out) for br in branches)
    outs = b.cond(index, *operands, *(t for t in tangents if t is not None),
                  branches=jvp_branches)
    n = len(branches[0].outputs)
    touts = iter(outs[n:])
    return list(outs[:n]), [next(touts) if f else None for f in tangent_out]


def regroup(func: Func, groups: Sequence[int], order: Sequence[int],
            what: str = "inputs") -> Func:
    """``func`` with its inputs (or outputs) cut into consecutive groups of the given
    sizes and the groups put in ``order``. JVP rules use it to interleave primals and
    tangents as a loop's operands need them."""
    atoms = func.inputs if what == "inputs" else func.outputs
    assert sum(groups) == len(atoms)
    starts = np.cumsum([0, *groups])
    cut = [atoms[starts[k]:starts[k + 1]] for k in range(len(groups))]
    moved = tuple(a for k in order for a in cut[k])
    if what == "inputs":
        return Func(func.name, moved, func.eqns, func.outputs)
    return Func(func.name, func.inputs, func.eqns, moved)


cond_p = declare("cond", _cond_rule, _cond_impl, multiple_results=True)
batch_rules[cond_p] = _cond_batch
jvp_rules[cond_p] = _cond_jvp
vjp_rules[cond_p] = _cond_vjp
lower_rules[cond_p] = _cond_lowering
always_rewrite.add(cond_p)      # a branch may use the vmapped axis name (axis_index ...)


def _cond_activity(active, *, branches):        # See Note [activity] (passes/autodiff.py)
    outs = [False] * len(branches[0].outputs)
    for br in branches:
        outs = [o or a for o, a in zip(outs, active_outputs(br, active[1:]), strict=True)]
    return outs


activity_rules[cond_p] = _cond_activity


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

def _while_vjp(b, ct, *operands, active=None, **params):
    where = at_line(b.source)
    raise WhileLoopVJPError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
        f"with traced (dynamic) start/stop values{where}: the number of iterations is not "
        "known ahead of time, so there is nowhere to keep what the backward pass needs. "
        "Use lax.scan, or lax.fori_loop with Python int (static) lower/upper bounds, "
        "which is lowered to a scan and is differentiable.")


def _while_jvp(b, primals, tangents, *, cond_func, body_func, cond_nconsts, body_nconsts):
    # Forward mode through a while loop is a while loop that carries tangents beside the
    # primals (every float carry gets one); the predicate ignores them. Tangents of the
    # predicate's consts do not matter: the predicate is piecewise constant.
    nc, nb = cond_nconsts, body_nconsts
    cond_consts, body_consts, carry = primals[:nc], primals[nc:nc + nb], primals[nc + nb:]
    t_consts, t_carry = tangents[nc:nc + nb], tangents[nc + nb:]
    params = dict(cond_func=cond_func, body_func=body_func, cond_nconsts=nc, body_nconsts=nb)
    if all(t is None for t in (*t_consts, *t_carry)):
        outs = b.bind(while_p, *primals, **params)
        return list(outs), [None] * len(outs)
    carry_t = tangent_types([c.type for c in carry])
    consts_t = [t is not None for t in t_consts]
    body = jvp_func(body_func, consts_t + carry_t, carry_t)
    body = regroup(body, [nb, len(carry), sum(consts_t), sum(carry_t)], [0, 2, 1, 3])
    t_carry = [instantiate(b, t, c) for t, c, f in zip(t_carry, carry, carry_t, strict=True)
               if f]
    cond = Func(cond_func.name, cond_func.inputs + tuple(Var(t.type) for t in t_carry),
                cond_func.eqns, cond_func.outputs)
    outs = b.bind(while_p, *cond_consts, *body_consts, *(t for t in t_consts if t is not None),
                  *carry, *t_carry, cond_func=cond, body_func=body, cond_nconsts=nc,
                  body_nconsts=nb + sum(consts_t))
    touts = iter(outs[len(carry):])
    return list(outs[:len(carry)]), [next(touts) if f else None for f in carry_t]


while_p = declare("while", _while_rule, _while_impl, multiple_results=True)
batch_rules[while_p] = _while_batch
jvp_rules[while_p] = _while_jvp
vjp_rules[while_p] = _while_vjp                     # raises: see Note [while has no VJP]
lower_rules[while_p] = _while_lowering
always_rewrite.add(while_p)


def active_carry(body: Func, consts: list[bool], carry: list[bool]) -> list[bool]:
    """The carries of a loop that may depend on the active inputs: a fixed point."""
    while True:
        outs = active_outputs(body, consts + carry)[:len(carry)]
        new = [c or o for c, o in zip(carry, outs, strict=True)]
        if new == carry:
            return carry
        carry = new


def _while_activity(active, *, cond_func, body_func, cond_nconsts, body_nconsts):
    cn, bn = cond_nconsts, body_nconsts       # the predicate is a bool: it carries nothing
    return active_carry(body_func, list(active[cn:cn + bn]), list(active[cn + bn:]))


activity_rules[while_p] = _while_activity          # See Note [activity]


def _while_varying(ins, *, cond_func, body_func, cond_nconsts, body_nconsts):
    cn, bn = cond_nconsts, body_nconsts
    carry = _carry_fixed_point(body_func, list(ins[cn:cn + bn]), list(ins[cn + bn:]),
                               len(body_func.outputs))
    pred = varying_axes(cond_func, list(ins[:cn]) + carry)[0]
    _check_uniform(pred, [cond_func, body_func], "a lax.while_loop whose predicate")
    return [c | pred for c in carry]          # the trip count itself may differ


control_varying_rules[while_p] = _while_varying
