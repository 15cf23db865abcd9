"""``shard_map``: a per-device program over a mesh, inside a global one.

    shard_map(*args, *consts)   {body, emulated, mesh, device_ids, in_specs, out_specs, manual}

``body`` is the per-device program (it sees each operand's block: dimension d split over
the mesh axes ``in_specs[k][d]``; collectives over the mesh axes); ``emulated`` is the same
computation as a global program on one device (the body vmapped over the mesh axes, the
operands cut into blocks and the results put back by ``out_specs``; see Note [shard_map] in
transforms/shard_map.py). Both take every operand and give the global results.

The two serve different rules. Lowered in the partition form (Note [partition form] in
stablehlo.py) over its own mesh, the equation becomes ``sdy.manual_computation`` around
``body``, whose collectives are then cross-partition ones (a channel handle each, groups of
partition ids, ``use_global_device_ids``) and whose ``axis_index`` reads the partition id:
the program runs distributed. Everywhere else (one device, inside another per-device
program) it lowers to ``emulated``. Batching, JVP, VJP, activity and the reference
interpreter all use ``emulated``: so the gradient of a shard_map is the gradient of the
global function (JAX's shard_map semantics). Reverse mode replaces an active equation by
``emulated`` before its forward sweep (``expand_rules``), so a gradient computation is a
global program that XLA's partitioner splits, with no part computed twice; an equation
that is not differentiated stays a manual computation. (The VJP rule below serves
callers that differentiate one equation directly.)
"""
from __future__ import annotations

from ..interpreter import evaluate
from ..ir import Func, TensorType
from ..passes.autodiff import (
    active_outputs,
    activity_rules,
    expand_rules,
    is_float,
    vjp_func,
    vjp_rules,
)
from ..passes.cleanup import dce
from ..passes.forward import jvp_func, jvp_rules, tangent_types
from ..passes.vmap import batch_rules, move_axis, vmap_func
from ..stablehlo import ir, lower_body, lower_rules, mlir_type, sdy, sharding_attr
from .core import ShapeError, declare

__all__ = ["shard_map_p"]


def _rule(*operands: TensorType, body: Func, emulated: Func, mesh, device_ids, in_specs,
          out_specs, manual):
    if emulated.in_types != operands or len(body.inputs) != len(operands):
        raise ShapeError(f"shard_map: the programs take {len(body.inputs)} operands of "
                         f"types {emulated.in_types}, got {operands}")
    if len(body.outputs) != len(emulated.outputs):
        raise ShapeError("shard_map: the per-device and global programs differ in outputs")
    return emulated.out_types


def _impl(*operands, emulated, **_):
    return evaluate(emulated, *operands)


def _batch(b, axis, args, dims, *, emulated, **_):
    ops = [a if d is None else move_axis(b, a, d, 0) for a, d in zip(args, dims, strict=True)]
    batched = vmap_func(emulated, [None if d is None else 0 for d in dims], axis,
                        [0] * len(emulated.outputs))
    outs = b.inline(batched, ops)
    return outs, [0] * len(outs)


def _vjp(b, ct, *operands, emulated, active=None, **_):
    cts = ct if isinstance(ct, tuple) else (ct,)
    active = active or (True,) * len(operands)
    wrt = [is_float(a.type) and act for a, act in zip(operands, active, strict=True)]
    seeded = [c is not None and is_float(t) for c, t in
              zip(cts, emulated.out_types, strict=True)]
    if not any(wrt) or not any(seeded):
        return [None] * len(operands)
    n_out = len(emulated.outputs)
    grads_func = vjp_func(emulated, wrt, seeded)
    grads_func = dce(Func(grads_func.name, grads_func.inputs, grads_func.eqns,
                          grads_func.outputs[n_out:]))
    grads = iter(b.inline(grads_func, [*operands, *(c for c, s in zip(cts, seeded,
                                                                       strict=True) if s)]))
    return [next(grads) if w else None for w in wrt]


def _jvp(b, primals, tangents, *, emulated, **_):
    tangent_in = [t is not None for t in tangents]
    tangent_out = tangent_types(emulated.out_types)
    outs = b.inline(jvp_func(emulated, tangent_in, tangent_out),
                    [*primals, *(t for t in tangents if t is not None)])
    n = len(emulated.outputs)
    touts = iter(outs[n:])
    return list(outs[:n]), [next(touts) if f else None for f in tangent_out]


def _per_value(specs) -> ir.Attribute:
    inner = ", ".join(str(sharding_attr(s))[len("#sdy.sharding"):] for s in specs)
    return ir.Attribute.parse(f"#sdy.sharding_per_value<[{inner}]>")


def _lower(ctx, eqn, *operands):
    p = eqn.params
    if not ctx.partitioned or ctx.manual or tuple(p["mesh"]) != tuple(ctx.partition_mesh):
        return lower_body(ctx, p["emulated"], list(operands))
    body = p["body"]
    op = sdy.ManualComputationOp(
        [mlir_type(v.type) for v in eqn.outputs], list(operands), _per_value(p["in_specs"]),
        _per_value(p["out_specs"]),
        sdy.ManualAxesAttr.get([ir.StringAttr.get(n) for n in p["manual"]]))
    block = ir.Block.create_at_start(op.body, [mlir_type(t) for t in body.in_types])
    saved = ctx.axis_env, ctx.mesh_axes, ctx.manual
    ctx.axis_env = dict(p["mesh"])
    ctx.mesh_axes = tuple(n for n, _ in p["mesh"])
    ctx.manual = True                    # collectives across partitions (collectives.py)
    try:
        with ir.InsertionPoint(block):
            sdy.ReturnOp(lower_body(ctx, body, list(block.arguments)))
    finally:
        ctx.axis_env, ctx.mesh_axes, ctx.manual = saved
    return list(op.results)


shard_map_p = declare("shard_map", _rule, _impl, multiple_results=True)
batch_rules[shard_map_p] = _batch
jvp_rules[shard_map_p] = _jvp
vjp_rules[shard_map_p] = _vjp
lower_rules[shard_map_p] = _lower
activity_rules[shard_map_p] = lambda active, *, emulated, **_: active_outputs(emulated, active)
expand_rules[shard_map_p] = lambda *, emulated, **_: emulated     # differentiated globally
