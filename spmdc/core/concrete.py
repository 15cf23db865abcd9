"""Reading the value of a Tracer while its function is being traced (eager autodiff).

Note [concrete values while tracing]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
JAX evaluates ``grad``, ``vjp``, ``jvp``, ``linearize``, ``jacfwd``/``jacrev`` and
``vmap`` eagerly outside ``jit``: the primal values are concrete, so Python control flow
on them works (``if x > 0``, a ``while`` on a value, ``int(x)``, ``x.item()``). spmdc
traces those transformations into one program and compiles it, which is what makes the
common case fast; to give Python the values it asks for, a trace may know where its
inputs come from, and compute the value of any of its Tracers on demand.

- A trace started by one of those transformations records a *source* for each input:
  the value (or the enclosing trace's Tracer) the input stands for, including the values
  it captures (``Trace.sources``). Every other trace (``jit``, ``pmap``, control-flow
  bodies, ``make_jaxpr``, ``eval_shape``, ``checkpoint``) has none, so under ``jit`` the
  same code is still a ConcretizationTypeError naming the user's line, as in JAX; so is
  a value that depends on a ``vmap``ped (batched) input, whose input has no source.
- ``bool``/``int``/``operator.index``/``item()`` on a Tracer ask ``concrete_value``. The
  value is known if every trace from the Tracer's up to the outermost one records
  sources (a ``jit`` anywhere above blocks it) and the Tracer depends only on inputs with
  sources. It is computed op by op with the eager primitives (the same cached one-equation
  executables as ``jnp.sin(x)`` outside any trace, so the numbers are those of eager
  code), evaluating only the equations it needs that have not been evaluated yet; values
  are memoised per trace (``Trace.values``), so a Python ``while`` loop over a value costs
  one evaluation of each new equation, not a re-run of the prefix.
- Nothing else changes while tracing: the Python branch taken is simply what gets
  traced, so the program is *specialised* to these values. Every read bumps a counter
  (``concretisations``); the outermost transformation compares it before and after
  tracing, and a program that read values is never stored in a compile cache (it would
  be wrong for other values): it is evaluated once, op by op, and the next call traces
  again. A function that reads no value is traced every call too (as JAX runs it every
  call), but compiled once: the call runs the program compiled for an equal one (Note
  [eager transformations trace every call] in transforms/jit.py).

The rules of ``custom_jvp``/``custom_vjp`` functions are traced when a transformation
needs them, after the trace that called the function has ended; in eager autodiff the
``custom_jvp`` rule and the ``custom_vjp`` fwd rule are traced right away instead, their
inputs' sources being the call's arguments, so they may branch on primal values too, as
in JAX (``values_readable``; the ``bwd`` rule, which needs the residuals, is still traced
later and abstractly).

``float()`` and ``complex()`` of a Tracer stay errors, as in JAX: the Python number would
silently cut the derivative. ``np.asarray`` of a Tracer stays a
TracerArrayConversionError, for the same reason.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..compiler.ir import Lit, Var
from . import tracing
from .tracing import Trace, Tracer

__all__ = ["concrete_value", "concretisations", "values_readable"]


class _Unknown(Exception):
    """The value depends on an input whose value is not known."""


def concretisations() -> int:
    """How many values this thread has read from traces (Note [concrete values while
    tracing]): a transformation whose count moved while tracing was specialised."""
    return getattr(tracing._state, "concretised", 0)


def values_readable() -> bool:
    """Whether values of the current trace's inputs may be read: every trace up to the
    outermost records sources (eager autodiff, no jit above)."""
    trace = tracing._state.current
    if trace is None:
        return False
    while trace is not None:
        if trace.sources is None:
            return False
        trace = trace.parent
    return True


def concrete_value(x: Tracer) -> np.ndarray | None:
    """``x``'s value as a NumPy array if it can be known, else None."""
    trace: Trace | None = x._trace
    while trace is not None:
        if trace.sources is None or trace.closed:
            return None
        trace = trace.parent
    saved = tracing._state.current
    tracing.set_current(None)           # the eager primitives run outside any trace
    try:
        value = _value(x._trace, x._var)
    except _Unknown:
        return None
    except Exception:           # e.g. a collective over an axis only a vmap binds:
        return None             # no value outside it, so the usual error follows
    finally:
        tracing.set_current(saved)
    tracing._state.concretised = concretisations() + 1
    return np.asarray(value)


def _source_value(src: Any) -> Any:
    if isinstance(src, Tracer):
        if src._trace.sources is None or src._trace.closed:
            raise _Unknown
        return _value(src._trace, src._var)
    return src


def _literal(a: Lit) -> np.ndarray:
    return np.asarray(a.value, a.type.dtype)


def _value(trace: Trace, var: Var) -> Any:
    memo = trace.values
    if var in memo:
        return memo[var]
    eqns = trace.builder.eqns
    producers = trace.producers
    for k in range(trace.indexed, len(eqns)):       # index the equations added since
        for out in eqns[k].outputs:
            producers[out] = k
    trace.indexed = len(eqns)
    # Which equations the value needs (iteratively: a Python loop makes long chains).
    needed: set[int] = set()
    stack, seen = [var], set()
    while stack:
        v = stack.pop()
        if v in memo or v in seen:
            continue
        seen.add(v)
        if v in trace.sources:
            memo[v] = _source_value(trace.sources[v])
            continue
        k = producers.get(v)
        if k is None:
            raise _Unknown
        needed.add(k)
        stack.extend(a for a in eqns[k].inputs if isinstance(a, Var))
    for k in sorted(needed):
        eqn = eqns[k]
        args = [memo[a] if isinstance(a, Var) else _literal(a) for a in eqn.inputs]
        out = tracing.run_eagerly(eqn.prim, args, eqn.params, False)
        memo.update(zip(eqn.outputs, out if eqn.prim.multiple_results else [out],
                        strict=True))
    return memo[var]
