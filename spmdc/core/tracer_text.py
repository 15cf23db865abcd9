"""How a traced value prints: JAX 0.10.2's text for the tracer JAX would hold there.

JAX has one Tracer class per transformation, and a program (a tutorial, a library's
error message, a test) prints or compares their text: ``JitTracer(float32[3,4])`` under
``jit`` (``~float32[]`` for a weakly typed value), ``VmapTracer(aval=float32[4],
batched=float32[3,4])`` under ``vmap``, ``GradTracer(primal=[1. 2.],
typeof(tangent)=f32[2])`` under ``grad``/``vjp``/``value_and_grad``. spmdc has one
Tracer class; its trace carries a ``TracerView`` that says which transformation traces
it and which inputs that transformation maps or differentiates. See Note [tracer text].
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..compiler.ir import Var, dtype_name
from ..runtime.array import array_text

__all__ = ["TracerView", "tracer_repr", "tracer_str", "held_as_jvp_tracer", "perturbed_values"]


# Note [tracer text]
# ~~~~~~~~~~~~~~~~~~
# A traced value prints as the tracer JAX would hold at that point: the innermost
# transformation that touches the value decides its class, and where that tracer shows a
# primal (or a tangent), the primal is written as the next transformation out holds it.
#
# - in a trace of ``vmap``, a value computed from a mapped input is JAX's VmapTracer:
#   ``VmapTracer(aval=<one example's type>, batched=<the batched type>)``, the batch
#   axis where ``in_axes`` put it for an input and for what an elementwise operation
#   computes from it (a result of the operand's shape), first for anything else (JAX's
#   batching rules move it there);
# - in a trace of ``grad``, ``value_and_grad``, ``vjp`` or ``linearize``, a value computed
#   from a differentiated input is JAX's GradTracer: ``GradTracer(primal=<the primal>,
#   typeof(tangent)=<its short type, f32[3]>)``;
# - in a trace of ``jvp``, a value computed from an input with a tangent is JAX's
#   JVPTracer: ``JVPTracer(primal=<the primal>, tangent=<the tangent>)``;
# - a primal (or tangent) whose value is known (eager autodiff, Note [concrete values
#   while tracing] in core/concrete.py) is written by ``str``; else as the enclosing
#   trace holds it: ``vmap(grad(f))`` shows ``GradTracer(primal=VmapTracer(...), ...)``.
#   The enclosing trace transforms the values computed from the inputs whose outer value
#   (the Tracer the input stands for, an argument or a captured value) it transforms;
# - any other value of those traces does not depend on the transformation, and JAX holds
#   it as the enclosing trace does: an Array when its value is known (``repr`` gives
#   ``Array(...)`` and ``str`` its values, as an Array's), else the enclosing trace's
#   tracer;
# - every other trace (jit, make_jaxpr, the bodies of scan, cond and while, shard_map,
#   eval_shape ...) is abstract, and its values are JitTracers: ``JitTracer(float32[3])``,
#   whatever encloses it.
#
# A known tangent is computed when printed: the forward pass (compiler/passes/forward.py)
# over the trace's equations so far, evaluated on the inputs' values and tangents by the
# NumPy interpreter. An unknown one is written as the enclosing trace holds a value
# computed from both the primal inputs and the tangents. ``str`` of a tracer is its
# ``repr``, as in JAX. Not reproduced: a shard_map body's JitTracer does not carry JAX's
# ``{V:i}`` varying-axes suffix.

@dataclass(frozen=True)
class TracerView:
    """How JAX sees a trace's tracers: ``kind`` 'vmap', 'grad' or 'jvp', and per explicit
    input its batch axis (vmap) or 0 for a differentiated input (grad, jvp); None:
    neither. ``tangents``: for jvp, the tangent of each explicit input (None: none)."""
    kind: str
    dims: tuple[int | None, ...]
    size: int = 0                   # the vmap's batch size
    tangents: tuple[Any, ...] = ()


def _aval(t: Any, weak: bool, key: str | None = None) -> str:
    """JAX's ``str`` of a ShapedArray: ``~float32[3,4]``; ``key``: the value is the data
    of a key array of that key type (its last axis is the key's, ``key<fry>[]``)."""
    shape, name = (t.shape[:-1], key) if key else (t.shape, np.dtype(t.dtype).name)
    return f"{'~' if weak else ''}{name}[{','.join(map(str, shape))}]"


def _propagate(trace: Any, seeds: dict[Var, int]) -> dict[Var, int]:
    """``seeds`` (inputs of ``trace`` with a batch axis) and the Vars computed from them,
    with the batch axis each is given (Note [tracer text])."""
    found = dict(seeds)
    for eqn in trace.builder.eqns:
        hit = [(a, found[a]) for a in eqn.inputs if isinstance(a, Var) and a in found]
        for out in eqn.outputs if hit else ():
            same_shape = [d for a, d in hit if a.type.shape == out.type.shape]
            found[out] = same_shape[0] if same_shape else 0
    return found


# Note [which values are JVPTracers]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX's ``jvp`` makes a JVPTracer of each primal whose tangent is not a symbolic zero
# (a ``float0`` tangent, an integer input's, is one), and a primitive applied to them
# gives a JVPTracer only where its output tangent is not a zero (``maybe_jvp_tracer``):
# an integer or bool result, a nondifferentiable primitive's or one whose JVP is zero
# (``stop_gradient``, ``floor``: ``zero_tangent`` in passes/forward.py), and anything
# computed only from closed-over values are plain values. Libraries test for it: Equinox's
# ``filter_jvp`` returns a tangent for the outputs that are JVPTracers of its own trace
# and None for the rest. ``isinstance(x, jax.interpreters.ad.JVPTracer)`` is therefore
# true of a value of a jvp's trace computed, through differentiable primitives and
# floating point values, from an input with a tangent; of nothing else (grad's values
# are JAX's LinearizeTracers, jit's its JitTracers).

def held_as_jvp_tracer(x: Any) -> bool:
    """Whether JAX holds the traced value ``x`` as a JVPTracer of ``x``'s own trace
    (Note [which values are JVPTracers])."""
    from ..compiler.passes.autodiff import is_float, nondifferentiable
    from ..compiler.passes.forward import zero_tangent
    trace = x._trace
    view = trace.view
    if view is None or view.kind != "jvp" or not is_float(x.type):
        return False
    found = {v for v, d, t in zip(trace.builder.inputs, view.dims, view.tangents, strict=False)
             if d is not None and t is not None}
    for eqn in trace.builder.eqns:
        if eqn.prim in nondifferentiable or eqn.prim in zero_tangent or not any(
                isinstance(a, Var) and a in found for a in eqn.inputs):
            continue
        found.update(out for out in eqn.outputs if is_float(out.type))
    return x._var in found


def perturbed_values(xs: list[Any]) -> list[bool] | None:
    """For the values ``xs`` (Tracers of the current trace, or anything else): whether JAX,
    differentiating as the current trace does (the trace of a ``grad``, ``vjp``,
    ``linearize`` or ``jvp``), holds each with a tangent that is not a symbolic zero.
    None where the current trace is no such trace. See Note [custom rules run when
    the call is made] in transforms/custom_derivatives.py."""
    from ..compiler.passes.autodiff import activity_rules, is_float, nondifferentiable
    from ..compiler.passes.forward import zero_tangent
    from .tracing import Tracer, current_trace
    trace = current_trace()
    view = trace.view if trace is not None else None
    if view is None or view.kind not in ("grad", "jvp"):
        return None
    seeds = view.tangents if view.kind == "jvp" else view.dims
    found = {v for v, d, s in zip(trace.builder.inputs, view.dims, seeds, strict=False)
             if d is not None and s is not None and is_float(v.type)}
    for eqn in trace.builder.eqns:
        ins = [isinstance(a, Var) and a in found for a in eqn.inputs]
        if not any(ins) or eqn.prim in nondifferentiable or eqn.prim in zero_tangent:
            continue
        rule = activity_rules.get(eqn.prim)
        outs = rule(ins, **eqn.params) if rule is not None else [True] * len(eqn.outputs)
        found.update(v for v, o in zip(eqn.outputs, outs, strict=True) if o and is_float(v.type))
    return [isinstance(x, Tracer) and x._trace is trace and x._var in found for x in xs]


def _outer_values(trace: Any) -> dict[Var, Any]:
    """The value of the enclosing trace each input of ``trace`` stands for, where known:
    the captured values, and the explicit inputs of a trace that may read values."""
    inputs = trace.builder.inputs
    n = len(inputs) - len(trace.capture_values)
    outer = dict(zip(inputs[n:], trace.capture_values, strict=True))
    if trace.sources is not None:
        outer.update(trace.sources)
    return outer


def _seeds_from(trace: Any, values: dict[Var, Any], level_dims: dict[Var, int]) -> dict[Var, int]:
    """The inputs of ``trace`` whose outer value (a Tracer of ``trace.parent``) is one of
    ``level_dims``, with its batch axis."""
    from .tracing import Tracer
    return {v: level_dims[o._var] for v, o in values.items()
            if isinstance(o, Tracer) and o._trace is trace.parent and o._var in level_dims}


def _dims_at(trace: Any, level: Any, tangents: bool = False) -> dict[Var, int]:
    """The Vars of ``trace`` that the transformation of ``level`` (``trace`` or a trace
    enclosing it) transforms, with their batch axes; ``tangents``: also those computed
    from the tangents of ``trace`` (a jvp's)."""
    if level is trace:
        view = trace.view
        inputs = trace.builder.inputs     # the explicit inputs first; captures are not
        return _propagate(trace, {v: d for v, d in zip(inputs, view.dims, strict=False)
                                  if d is not None})
    parent_dims = _dims_at(trace.parent, level)
    seeds = _seeds_from(trace, _outer_values(trace), parent_dims)
    if tangents and trace.view is not None and trace.view.tangents:
        inputs = trace.builder.inputs     # a jvp's tangents, one per explicit input
        given = {v: t for v, t in zip(inputs, trace.view.tangents, strict=False)}
        seeds = {**_seeds_from(trace, given, parent_dims), **seeds}
    return _propagate(trace, seeds)


def _known(x: Any) -> np.ndarray | None:
    """``x``'s value where known. Printing a value reads it without deciding anything
    the program depends on, so the read does not count as one that specialises the
    program (Note [concrete values while tracing] in core/concrete.py)."""
    if x._trace.sources is None:
        return None
    from .concrete import concrete_value, concretisations
    from .tracing import _state
    reads = concretisations()
    value = concrete_value(x)
    _state.concretised = reads
    return value


def _known_tangent(x: Any) -> np.ndarray | None:
    """The tangent of ``x`` (a value of a jvp's trace) where its inputs' values and
    tangents are known (Note [tracer text])."""
    from ..compiler.passes.forward import jvp_func
    from .concrete import concrete_value, concretisations
    from .tracing import Tracer as _Tracer
    from .tracing import _state
    trace = x._trace
    inputs = trace.builder.inputs
    tangents = list(trace.view.tangents) + [None] * (len(inputs) - len(trace.view.tangents))
    reads = concretisations()
    try:
        values = [concrete_value(_Tracer(v, trace, False)) for v in inputs]
        tangent_values = [None if t is None else
                          (concrete_value(t) if isinstance(t, _Tracer) else np.asarray(t))
                          for t in tangents]
    finally:
        _state.concretised = reads
    if any(v is None for v in values) or any(
            t is None for t, u in zip(tangent_values, tangents, strict=True) if u is not None):
        return None
    func = trace.builder.build([x._var])
    jf = jvp_func(func, [t is not None for t in tangents], [True])
    args = values + [t for t in tangent_values if t is not None]
    return np.asarray(_run(jf, args)[1], x.dtype)


def _run(func: Any, args: list[Any]) -> list[Any]:
    """``func`` applied to ``args`` equation by equation, each run as an eager operation
    would run it (XLA's numbers, as JAX's tangent would have)."""
    from . import tracing
    env = dict(zip(func.inputs, args, strict=True))

    def read(a: Any) -> Any:
        return env[a] if isinstance(a, Var) else np.asarray(a.value, a.type.dtype)
    saved = tracing._state.current
    tracing.set_current(None)
    try:
        for eqn in func.eqns:
            out = tracing.run_eagerly(eqn.prim, [read(a) for a in eqn.inputs], eqn.params,
                                      False)
            env.update(zip(eqn.outputs, out if eqn.prim.multiple_results else [out],
                           strict=True))
    finally:
        tracing.set_current(saved)
    return [np.asarray(read(a)) for a in func.outputs]


def _abstract_text(t: Any, weak: bool, key: str | None, typed: str | None = None) -> str:
    """A value of type ``t`` whose value is not known, as JAX's tracer (``typed``: its
    type with its sharding, when it has one and is no key)."""
    return f"JitTracer({typed if typed and not key else _aval(t, weak, key)})"


def _value_text(x: Any, as_str: bool, key: str | None) -> str | None:
    """``x`` as JAX holds a value no transformation touches: an Array, if known."""
    value = _known(x)
    if value is None:
        return None
    value = np.asarray(value, x.dtype)
    if key:                                # JAX's text of a key array
        return f"Array({value.shape[:-1]}, dtype={key}) overlaying:\n{value}"
    return str(value) if as_str else array_text(value, x.weak)


def _held(x: Any, level: Any, as_str: bool, key: str | None, tangents: bool = False) -> str:
    """``x`` (a value of ``x._trace``) as the transformation of ``level`` (``x._trace``
    or a trace enclosing it), or the first one out that touches it, holds it."""
    while level is not None:
        view = level.view
        if view is None:
            if level.sources is not None:      # eager: the value, if known
                text = _value_text(x, as_str, key)
                if text is not None:
                    return text
            return _abstract_text(x.type, x.weak, key, _typed(x))
        dims = _dims_at(x._trace, level, tangents)
        if x._var in dims:
            return _tracer_text(x, level, view, dims[x._var], key)
        level = level.parent
    return _value_text(x, as_str, key) or _abstract_text(x.type, x.weak, key, _typed(x))


def _typed(x: Any) -> str | None:
    """``x``'s type with its sharding over Explicit axes (``float32[8@X,4]``), if it has
    one (Note [shardings in types] in core/explicit_sharding.py)."""
    if x._trace.explicit is None:
        return None
    return str(x.aval)


def _tracer_text(x: Any, level: Any, view: TracerView, dim: int, key: str | None) -> str:
    """``x`` as the tracer of the transformation ``view`` (of trace ``level``)."""
    if view.kind == "vmap":
        shape = list(x.shape)
        shape.insert(dim, view.size)
        batched = _aval(type(x.type)(tuple(shape), x.dtype), x.weak, key)
        return f"VmapTracer(aval={_aval(x.type, x.weak, key)}, batched={batched})"
    value = _known(x)
    primal = (str(np.asarray(value, x.dtype)) if value is not None
              else _held(x, level.parent, False, key))
    if view.kind == "jvp":
        tangent_value = _known_tangent(x) if level is x._trace and value is not None else None
        tangent = (str(tangent_value) if tangent_value is not None
                   else _held(x, level.parent, False, key, tangents=True))
        return f"JVPTracer(primal={primal}, tangent={tangent})"
    tangent_type = f"{dtype_name(x.dtype)}[{','.join(map(str, x.shape))}]"
    return f"GradTracer(primal={primal}, typeof(tangent)={tangent_type})"


def _text(x: Any, as_str: bool, key: str | None) -> str:
    return _held(x, x._trace, as_str, key)


def tracer_repr(x: Any, key: str | None = None) -> str:
    """``repr(x)`` for a Tracer (Note [tracer text]); ``key``: ``x`` is the data of a
    key array of that key type (``key<fry>``), whose text JAX gives instead."""
    return _text(x, False, key)


def tracer_str(x: Any) -> str:
    """``str(x)`` for a Tracer: its repr, unless JAX would hold an Array there."""
    return _text(x, True, None)
