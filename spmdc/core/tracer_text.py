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

__all__ = ["TracerView", "tracer_repr", "tracer_str"]


# Note [tracer text]
# ~~~~~~~~~~~~~~~~~~
# A traced value prints as the value JAX would hold at that point:
#
# - in a trace of ``vmap``, a value computed from a mapped input is JAX's VmapTracer:
#   ``VmapTracer(aval=<one example's type>, batched=<the batched type>)``, the batch
#   axis where ``in_axes`` put it for an input and for what an elementwise operation
#   computes from it (a result of the operand's shape), first for anything else (JAX's
#   batching rules move it there);
# - in a trace of ``grad``, ``value_and_grad`` or ``vjp``, a value computed from a
#   differentiated input is JAX's GradTracer: ``GradTracer(primal=<the primal>,
#   typeof(tangent)=<its short type, f32[3]>)``, the primal written by ``str`` when its
#   value is known (eager autodiff, Note [concrete values while tracing] in
#   core/concrete.py), else as the enclosing trace's tracer;
# - any other value of those traces does not depend on the transformation, and JAX holds
#   it as the enclosing trace does: an Array when its value is known (``repr`` gives
#   ``Array(...)`` and ``str`` its values, as an Array's), else the enclosing trace's
#   tracer;
# - every other trace (jit, make_jaxpr, the bodies of scan, cond and while, shard_map,
#   eval_shape ...) is abstract, and its values are JitTracers: ``JitTracer(float32[3])``.
#
# ``str`` of a tracer is its ``repr``, as in JAX. What this does not reproduce: inside
# ``jvp`` JAX's JVPTracer shows the tangent's value, which spmdc's forward pass computes
# only after tracing, so a value there prints as the enclosing trace's tracer; and a
# shard_map body's JitTracer does not carry JAX's ``{V:i}`` varying-axes suffix.

@dataclass(frozen=True)
class TracerView:
    """How JAX sees a trace's tracers: ``kind`` 'vmap' or 'grad', and per explicit input
    its batch axis (vmap) or 0 for a differentiated input (grad); None: neither."""
    kind: str
    dims: tuple[int | None, ...]
    size: int = 0                   # the vmap's batch size


def _aval(t: Any, weak: bool, key: str | None = None) -> str:
    """JAX's ``str`` of a ShapedArray: ``~float32[3,4]``; ``key``: the value is the data
    of a key array of that key type (its last axis is the key's, ``key<fry>[]``)."""
    shape, name = (t.shape[:-1], key) if key else (t.shape, np.dtype(t.dtype).name)
    return f"{'~' if weak else ''}{name}[{','.join(map(str, shape))}]"


def _transformed(trace: Any) -> dict[Var, int]:
    """The Vars of ``trace`` computed from its mapped or differentiated inputs, with the
    batch axis each is given (Note [tracer text])."""
    view = trace.view
    inputs = trace.builder.inputs
    # the explicit inputs come first; the captured values after them are not transformed
    found = {v: d for v, d in zip(inputs, view.dims, strict=False) if d is not None}
    for eqn in trace.builder.eqns:
        hit = [(a, found[a]) for a in eqn.inputs if isinstance(a, Var) and a in found]
        for out in eqn.outputs if hit else ():
            same_shape = [d for a, d in hit if a.type.shape == out.type.shape]
            found[out] = same_shape[0] if same_shape else 0
    return found


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


def _outer_text(x: Any, as_str: bool, key: str | None) -> str:
    """``x`` as JAX holds a value its trace's transformation does not touch."""
    value = _known(x)
    if value is None:
        return _abstract_text(x.type, x.weak, key)
    value = np.asarray(value, x.dtype)
    if key:                                # JAX's text of a key array
        return f"Array({value.shape[:-1]}, dtype={key}) overlaying:\n{value}"
    return str(value) if as_str else array_text(value, x.weak)


def _abstract_text(t: Any, weak: bool, key: str | None) -> str:
    """A value of type ``t`` whose value is not known, as JAX's tracer."""
    return f"JitTracer({_aval(t, weak, key)})"


def _text(x: Any, as_str: bool, key: str | None) -> str:
    trace = x._trace
    view = trace.view
    if view is None:
        if trace.sources is not None and _known(x) is not None:   # an eager program's value
            return _outer_text(x, as_str, key)
        return _abstract_text(x.type, x.weak, key)
    dims = _transformed(trace)
    if x._var not in dims:
        return _outer_text(x, as_str, key)
    if view.kind == "vmap":
        shape = list(x.shape)
        shape.insert(dims[x._var], view.size)
        batched = _aval(type(x.type)(tuple(shape), x.dtype), x.weak, key)
        return f"VmapTracer(aval={_aval(x.type, x.weak, key)}, batched={batched})"
    value = _known(x)
    primal = (str(np.asarray(value, x.dtype)) if value is not None
              else _abstract_text(x.type, x.weak, key))
    tangent = f"{dtype_name(x.dtype)}[{','.join(map(str, x.shape))}]"
    return f"GradTracer(primal={primal}, typeof(tangent)={tangent})"


def tracer_repr(x: Any, key: str | None = None) -> str:
    """``repr(x)`` for a Tracer (Note [tracer text]); ``key``: ``x`` is the data of a
    key array of that key type (``key<fry>``), whose text JAX gives instead."""
    return _text(x, False, key)


def tracer_str(x: Any) -> str:
    """``str(x)`` for a Tracer: its repr, unless JAX would hold an Array there."""
    return _text(x, True, None)
