"""``jax.interpreters.partial_eval``: ``PartialVal``, a value that is either known (a
constant) or unknown (only its abstract value), as function-transformation plumbing
passes them around, and the two tracing entry points libraries call with a
``linear_util.WrappedFun`` of flat arguments: ``trace_to_jaxpr_dynamic`` (a jaxpr of
the function at abstract values) and ``trace_to_jaxpr_nounits`` (the known outputs
computed, the rest left as a jaxpr; Flax's ``lazy_init`` and ``nn.scan`` use it).
Both trace into spmdc's IR and show it as a jaxpr (transforms/jaxpr_view.py); the split
into known and unknown parts is spmdc's own partial evaluation (passes/forward.py
``partial_eval``, on the IR). See Note [partial evaluation for libraries]. Dead-code
elimination on jaxprs (``dce_jaxpr``, ``dce_rules`` ...) is in interpreters/dead_code.py."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.ir import Func, TensorType, Var
from ..compiler.passes.forward import partial_eval
from ..core.abstract import AbstractValue, ShapedArray, typeof
from ..core.tracing import Tracer, trace_function
from ..random import key_data, wrap_key_data
from ..random.keys import KEY_DTYPE, PRNGKeyArray
from ..transforms.jaxpr_view import Jaxpr, closed_jaxpr, eval_jaxpr
from .dead_code import (
    dce_jaxpr,
    dce_jaxpr_call_rule,
    dce_jaxpr_closed_call_rule,
    dce_jaxpr_consts,
    dce_rules,
)

__all__ = ["PartialVal", "trace_to_jaxpr_dynamic", "trace_to_jaxpr_nounits",
           "DynamicJaxprTracer", "JaxprTracer", "dce_jaxpr", "dce_jaxpr_consts", "dce_rules",
           "dce_jaxpr_call_rule", "dce_jaxpr_closed_call_rule"]

# One Tracer class serves every transformation in spmdc (see ad.JVPTracer): the values a
# function is traced on into a program, which JAX's DynamicJaxprTracer (jit, make_jaxpr)
# and JaxprTracer (partial evaluation) are, are spmdc's Tracers.
DynamicJaxprTracer = Tracer
JaxprTracer = Tracer


class PartialVal(tuple):
    """``(aval, None)`` for an unknown value, ``(None, const)`` for a known one."""

    def __new__(cls, xs: tuple[Any, Any]) -> PartialVal:
        aval, const = xs
        if (aval is None) == (const is None):
            raise ValueError(f"PartialVal{tuple(xs)!r}: exactly one of the abstract value "
                             "and the constant is None")
        if aval is not None and not isinstance(aval, AbstractValue):
            raise TypeError(f"PartialVal: {aval!r} is not an abstract value")
        return tuple.__new__(cls, (aval, const))

    @classmethod
    def known(cls, const: Any) -> PartialVal:
        return cls((None, const))

    @classmethod
    def unknown(cls, aval: Any) -> PartialVal:
        return cls((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self) -> Any:
        """The constant if known, else None."""
        return self[1] if self[0] is None else None

    def get_aval(self) -> Any:
        """The abstract value (of the constant, when known)."""
        return typeof(self[1]) if self[0] is None else self[0]


# Note [partial evaluation for libraries]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX's ``trace_to_jaxpr_nounits`` runs the function once, computing what depends only
# on known inputs as it goes (in the enclosing trace) and recording the rest. spmdc
# traces the function once into a Func with every input abstract (a known input that is
# a concrete value is its source, so Python may still read it: Note [concrete values
# while tracing] in core/concrete.py), marks what depends on an unknown input (an
# equation reading an unknown value gives unknown results), and splits the Func with
# passes/forward.py's ``partial_eval``: the known Func is run at once on the known
# values (by binding its equations, so under an enclosing transformation its results
# are that transformation's traced values, as in JAX), the unknown Func is the returned
# jaxpr, its constvars the residuals the known side computed for it.

# Note [typed keys in partial evaluation]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A library flattens its arguments with the user view of pytrees, where a typed key is
# one leaf, and hands over its abstract value, ``ShapedArray(shape, key<fry>)`` (Flax's
# ``nn.scan`` does so for the rngs it carries). spmdc's IR has no extended dtypes (Note
# [typed keys] in spmdc/random/keys.py), so such an input is traced as its uint32 data
# and given to the function as a key array around that data; a key array the function
# returns is traced as its data, and rebuilt as a key in the known outputs and in the
# unknown outputs' abstract values. The jaxpr itself reads and writes the data.

def _in_types(avals: Sequence[Any]) -> tuple[list[TensorType], list[bool]]:
    for a in avals:
        if not isinstance(a, AbstractValue):
            raise TypeError(f"partial_eval: {a!r} is not an abstract value (a ShapedArray)")
    return ([TensorType((*a.shape, 2), np.dtype(np.uint32)) if _is_key(a) else
             TensorType(tuple(a.shape), a.dtype) for a in avals],
            [bool(getattr(a, "weak_type", False)) for a in avals])


def _is_key(aval: Any) -> bool:
    return isinstance(aval, ShapedArray) and aval.dtype == KEY_DTYPE


def _trace(fun: Any, avals: Sequence[Any], types: Sequence[TensorType],
           weak: Sequence[bool], sources: Sequence[Any] | None
           ) -> tuple[Func, list[bool], list[Any], list[bool]]:
    """The traced Func, its outputs' weak flags, its captured values, and which of its
    outputs are key arrays (traced as their data). See Note [typed keys in partial
    evaluation]."""
    if not callable(getattr(fun, "call_wrapped", None)):
        raise TypeError(f"partial_eval: expected a linear_util.WrappedFun (lu.wrap_init(f)), "
                        f"got {type(fun).__name__}")
    out_keys: list[bool] = []

    def flat(tracers: list[Tracer]) -> list[Any]:
        args = [wrap_key_data(t) if _is_key(a) else t
                for t, a in zip(tracers, avals, strict=True)]
        out = fun.call_wrapped(*args)
        if not isinstance(out, (list, tuple)):
            raise TypeError(f"partial_eval: {fun.__name__} must return a list of arrays "
                            f"(flatten it with api_util.flatten_fun), got {type(out).__name__}")
        out_keys[:] = [isinstance(x, PRNGKeyArray) for x in out]
        return [key_data(x) if k else x for x, k in zip(out, out_keys, strict=True)]
    func, out_weak, captured = trace_function(flat, types, weak, fun.__name__,
                                              sources=sources)
    return func, out_weak, captured, out_keys


def _rekeyed_aval(aval: ShapedArray, is_key: bool) -> ShapedArray:
    return ShapedArray(aval.shape[:-1], KEY_DTYPE) if is_key else aval


def trace_to_jaxpr_dynamic(fun: Any, in_avals: Sequence[AbstractValue]
                           ) -> tuple[Jaxpr, list[ShapedArray], list[Any]]:
    """``fun`` (flat arrays in, a flat list out) traced at ``in_avals``: its jaxpr, the
    outputs' abstract values and the constants the jaxpr's constvars stand for."""
    types, weak = _in_types(in_avals)
    func, out_weak, consts, out_keys = _trace(fun, in_avals, types, weak, None)
    closed = closed_jaxpr(func, consts, len(types), weak, out_weak)
    return (closed.jaxpr, [_rekeyed_aval(a, k) for a, k in
                           zip(closed.out_avals, out_keys, strict=True)], list(closed.consts))


def _unknown_outputs(func: Func, known: Sequence[bool]) -> list[bool]:
    unknown = {v for v, k in zip(func.inputs, known, strict=True) if not k}
    for eqn in func.eqns:
        if not unknown.isdisjoint(eqn.inputs):
            unknown.update(eqn.outputs)
    return [isinstance(a, Var) and a in unknown for a in func.outputs]


def trace_to_jaxpr_nounits(fun: Any, pvals: Sequence[PartialVal],
                           instantiate: bool | Sequence[bool] = False
                           ) -> tuple[Jaxpr, list[PartialVal], list[Any]]:
    """Partially evaluate ``fun`` (flat arrays in, a flat list out) at ``pvals``: the
    outputs that depend only on known inputs are computed now (``PartialVal.known``),
    the others (and those ``instantiate`` names) are ``PartialVal.unknown`` and
    computed by the returned jaxpr from the unknown inputs, its constvars standing for
    the returned constants. See Note [partial evaluation for libraries]."""
    pvals = [pv if isinstance(pv, PartialVal) else PartialVal(pv) for pv in pvals]
    avals = [pv.get_aval() for pv in pvals]
    types, weak = _in_types(avals)
    sources = [None if not pv.is_known() or isinstance(pv[1], Tracer) else
               key_data(pv[1]) if isinstance(pv[1], PRNGKeyArray) else pv[1]
               for pv in pvals]
    func, out_weak, captured, out_keys = _trace(
        fun, avals, types, weak, sources if any(s is not None for s in sources) else None)
    known = [pv.is_known() for pv in pvals] + [True] * len(captured)
    unknown_out = _unknown_outputs(func, known)
    forced = ([bool(instantiate)] * len(unknown_out) if isinstance(instantiate, bool)
              else list(instantiate))
    if len(forced) != len(unknown_out):
        raise ValueError(f"trace_to_jaxpr_nounits: instantiate has {len(forced)} entries "
                         f"for {len(unknown_out)} outputs")
    unknown_out = [u or f for u, f in zip(unknown_out, forced, strict=True)]
    known_func, unknown_func, n_res = partial_eval(func, known, set(), unknown_out)
    known_values = [key_data(pv[1]) if isinstance(pv[1], PRNGKeyArray) else pv[1]
                    for pv in pvals if pv.is_known()] + list(captured)
    known_closed = closed_jaxpr(known_func, [], len(known_func.inputs))
    computed = eval_jaxpr(known_closed.jaxpr, known_closed.consts, *known_values)
    n_known = len(computed) - n_res
    known_outs, residuals = computed[:n_known], computed[n_known:]
    # the unknown Func reads (residuals, unknown inputs): put the inputs first, so the
    # residuals are the jaxpr's constvars
    res_vars = unknown_func.inputs[:n_res]
    args = unknown_func.inputs[n_res:]
    residual_func = Func(unknown_func.name, (*args, *res_vars), unknown_func.eqns,
                         unknown_func.outputs)
    unknown_weak = [w for w, u in zip(out_weak, unknown_out, strict=True) if u]
    in_weak = [w for w, pv in zip(weak, pvals, strict=True) if not pv.is_known()]
    closed = closed_jaxpr(residual_func, residuals, len(args), in_weak, unknown_weak)
    known_iter, out_avals = iter(known_outs), iter(closed.out_avals)
    out_pvals = [PartialVal.unknown(_rekeyed_aval(next(out_avals), k)) if u else
                 PartialVal.known(wrap_key_data(next(known_iter)) if k
                                  else next(known_iter))
                 for u, k in zip(unknown_out, out_keys, strict=True)]
    return closed.jaxpr, out_pvals, list(closed.consts)
