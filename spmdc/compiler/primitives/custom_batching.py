"""A function whose batching the user defines (``jax.custom_batching.custom_vmap``):

    custom_vmap_call(*args, *consts)   {call, rule, num_consts}

Note [custom vmap]
~~~~~~~~~~~~~~~~~
``call`` is the traced function (its values closed over are the ``consts``), and the
equation computes what it computes everywhere but in the vmap pass. There the pass moves
each batched argument's batch dimension to the front and asks the user's rule, traced for
the batch size and which arguments are batched (``rule.get(size, in_batched) -> (Func,
out_batched)``, spmdc/custom_batching.py), for the batched program, which it inlines;
the outputs the rule marks batched carry the batch at dimension 0. A batched
closed-over value is an error: the rule sees the explicit arguments only. Forward and
reverse mode differentiate ``call`` itself (its JVP and VJP are inlined), so ``vmap``
of a derivative batches the derivative's own operations (JAX instead differentiates the
rule, so there the rule also batches the derivative); ``grad`` of ``vmap`` differentiates
the rule's program.
"""
from __future__ import annotations

from ...errors import BatchingError, at_line
from ..builder import Builder
from ..interpreter import evaluate
from ..ir import TensorType
from ..passes.autodiff import active_outputs, activity_rules, is_float, vjp_func, vjp_rules
from ..passes.collectives import control_varying_rules, varying_axes
from ..passes.forward import jvp_func, jvp_rules, tangent_types
from ..passes.vmap import BatchAxis, batch_rules, move_axis
from ..stablehlo import lower_body, lower_rules
from .core import ShapeError, declare

__all__ = ["custom_vmap_call_p"]


def _batch(b: Builder, axis: BatchAxis, operands, dims, *, call, rule, num_consts):
    n = len(operands) - num_consts
    if any(d is not None for d in dims[n:]):
        raise BatchingError(
            f"custom_vmap: {rule.name} closes over a value that vmap batches"
            f"{at_line(b.source)}; its rule sees only the explicit arguments, so pass the "
            "value as an argument")
    args = [a if d is None else move_axis(b, a, d, 0)
            for a, d in zip(operands[:n], dims[:n], strict=True)]
    in_batched = tuple(d is not None for d in dims[:n])
    func, out_batched = rule.get(axis.size, in_batched)
    outs = b.inline(func, args)
    return list(outs), [0 if batched else None for batched in out_batched]


def _jvp(b: Builder, primals, tangents, *, call, rule, num_consts):
    mask = [t is not None for t in tangents]
    out_t = tangent_types(call.out_types)
    outs = b.inline(jvp_func(call, mask, out_t),
                    [*primals, *(t for t in tangents if t is not None)])
    n = len(call.outputs)
    tangent_outs = iter(outs[n:])
    return list(outs[:n]), [next(tangent_outs) if f else None for f in out_t]


def _vjp(b: Builder, ct, *operands, call, rule, num_consts, active=None):
    cts = ct if isinstance(ct, tuple) else (ct,)
    wrt = [is_float(t) and (active is None or bool(a))
           for t, a in zip(call.in_types, active or [True] * len(operands), strict=True)]
    seeded = [c is not None for c in cts]
    if not any(wrt) or not any(seeded):
        return [None] * len(operands)
    outs = b.inline(vjp_func(call, wrt, seeded), [*operands, *(c for c in cts if c is not None)])
    pulled = iter(outs[len(call.outputs):])
    return [next(pulled) if w else None for w in wrt]


def _out_types(*operands: TensorType, call, rule, num_consts):
    if tuple(operands) != call.in_types:
        raise ShapeError(f"custom_vmap_call: operands {operands} do not match the "
                         f"function's inputs {call.in_types}")
    return call.out_types


def _impl(*operands, call, rule, num_consts):
    return tuple(evaluate(call, *operands))


custom_vmap_call_p = declare("custom_vmap_call", _out_types, _impl, multiple_results=True)
batch_rules[custom_vmap_call_p] = _batch
jvp_rules[custom_vmap_call_p] = _jvp
vjp_rules[custom_vmap_call_p] = _vjp
lower_rules[custom_vmap_call_p] = lambda ctx, eqn, *operands: lower_body(
    ctx, eqn.params["call"], operands)
control_varying_rules[custom_vmap_call_p] = lambda ins, *, call, **params: varying_axes(call,
                                                                                       ins)
activity_rules[custom_vmap_call_p] = lambda active, *, call, **params: active_outputs(call,
                                                                                      active)
