"""Splitting a VJP into a forward Func that keeps residuals and a backward Func that uses
them (for ``scan`` and ``checkpoint``; see Note [residuals] in autodiff.py).

``split_vjp(vjp, n_in, n_out, saveable)`` takes the output of ``vjp_func``: inputs
``(*primals, *cotangents)``, outputs ``(*primal outputs, *gradients)``. It returns

- ``forward``: ``(*primals) -> (*primal outputs, *residuals)``;
- ``backward``: ``(*primals, *residuals, *cotangents) -> (*gradients)``;
- ``residuals``: the forward equations whose outputs became residuals, one per residual.

A forward value the backward part needs is a residual when ``saveable(eqn)`` says so for
the equation that makes it; otherwise that equation is copied into the backward Func (it
is *recomputed*), and the values it needs in turn are decided the same way. Primal inputs
are always available to the backward Func; constants (equations without Var inputs) are
always recomputed.

Note [recomputation stays in the backward part]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
What the backward part computes is recognised by dependence: a value is backward when it
depends on a cotangent input or on the output of a ``recompute_markers`` primitive (the
``optimization_barrier`` that a checkpoint's VJP puts in front of its recomputation) that
the primal outputs do not need (a barrier of the function being differentiated, as in a
second derivative, is forward work like any other equation). The
marker is what keeps a nested checkpoint's recomputation in the backward part when the
enclosing scan or checkpoint splits its own VJP: without it those equations, which use
no cotangent, would look like forward work and be saved.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ir import Eqn, Func, Var
from .cleanup import cse, dce

__all__ = ["split_vjp", "Split", "recompute_markers", "used_inputs"]

recompute_markers: set[Any] = set()
"""Primitives whose outputs start recomputation (Note [recomputation stays in the backward
part])."""


@dataclass(frozen=True)
class Split:
    forward: Func
    backward: Func
    residuals: tuple[Eqn, ...]          # the equation that makes each residual


def split_vjp(vjp: Func, n_in: int, n_out: int, saveable: Callable[[Eqn], bool]) -> Split:
    # a rule's recomputed forward value merges with the forward copy; a cotangent that no
    # input gets (one of an inactive operand) is dropped, and with it what it reads
    vjp = dce(cse(vjp))
    primals, cotangents = vjp.inputs[:n_in], vjp.inputs[n_in:]
    primal = _producers(vjp, vjp.outputs[:n_out])
    backward_vars: set[Var] = set(cotangents)
    forward_eqns: list[Eqn] = []
    backward_eqns: list[Eqn] = []
    for k, eqn in enumerate(vjp.eqns):
        if (eqn.prim in recompute_markers and k not in primal) or any(
                isinstance(a, Var) and a in backward_vars for a in eqn.inputs):
            backward_eqns.append(eqn)
            backward_vars.update(eqn.outputs)
        else:
            forward_eqns.append(eqn)
    grads = vjp.outputs[n_out:]
    needed = {a for eqn in backward_eqns for a in eqn.inputs
              if isinstance(a, Var) and a not in backward_vars}
    needed.update(a for a in grads if isinstance(a, Var) and a not in backward_vars)
    recomputed: list[Eqn] = []
    saved: dict[Var, Eqn] = {}
    for eqn in reversed(forward_eqns):
        if needed.isdisjoint(eqn.outputs):
            continue
        has_inputs = any(isinstance(a, Var) for a in eqn.inputs)
        if has_inputs and saveable(eqn):
            saved.update((v, eqn) for v in eqn.outputs if v in needed)
        else:
            recomputed.append(eqn)
            needed.update(a for a in eqn.inputs if isinstance(a, Var))
    order = {v: k for k, eqn in enumerate(forward_eqns) for v in eqn.outputs}
    residual_vars = sorted(saved, key=lambda v: (order[v], saved[v].outputs.index(v)))
    forward = dce(Func(vjp.name, primals, tuple(forward_eqns),
                       (*vjp.outputs[:n_out], *residual_vars)))
    backward = dce(Func(f"{vjp.name}_bwd", (*primals, *residual_vars, *cotangents),
                        (*reversed(recomputed), *backward_eqns), grads))
    return Split(forward, backward, tuple(saved[v] for v in residual_vars))


def _producers(func: Func, outputs) -> set[int]:
    """The indices of the equations that computing ``outputs`` needs."""
    needed = {a for a in outputs if isinstance(a, Var)}
    out: set[int] = set()
    for k in range(len(func.eqns) - 1, -1, -1):
        eqn = func.eqns[k]
        if not needed.isdisjoint(eqn.outputs):
            out.add(k)
            needed.update(a for a in eqn.inputs if isinstance(a, Var))
    return out


def used_inputs(func: Func) -> list[bool]:
    """Which inputs of ``func`` an equation or an output reads."""
    used = {a for eqn in func.eqns for a in eqn.inputs if isinstance(a, Var)}
    used.update(a for a in func.outputs if isinstance(a, Var))
    return [v in used for v in func.inputs]
