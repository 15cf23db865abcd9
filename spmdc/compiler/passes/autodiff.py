"""Reverse-mode autodiff as a pass over the IR.

``vjp_func(func, wrt)`` returns a Func with inputs ``func.inputs + (one cotangent per
seeded output)`` and outputs ``func.outputs + (one gradient per input marked in wrt)``. A forward
sweep copies the equations (their values are the residuals); a backward sweep walks them
in reverse, applying each primitive's VJP rule and accumulating cotangents with ``add``.
``None`` stands for a symbolic zero. Rules may recompute forward values (``b.cos(x)``);
CSE afterwards merges them with the forward copy, and DCE drops what no output needs.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..builder import Builder, lit
from ..ir import Atom, Func, Lit, TensorType, Var

__all__ = ["vjp_rules", "nondifferentiable", "vjp_func", "zeros", "is_float",
           "unbroadcast"]

VJPRule = Callable[..., Sequence[Atom | None]]
"""``rule(b, ct, *inputs, **params) -> [cotangent or None for each input]``

``ct`` is the output cotangent (a tuple with ``None`` for zeros when the primitive has
several results); rules emit ordinary primitives into ``b``."""

vjp_rules: dict[Any, VJPRule] = {}

nondifferentiable: dict[Any, str] = {}
"""Primitives whose output carries no gradient, with the reason (for the coverage test)."""


def is_float(t: TensorType) -> bool:
    return t.dtype.kind in "fc" or t.dtype.name == "bfloat16"


def zeros(b: Builder, t: TensorType) -> Atom:
    z = lit(0, t.dtype)
    return z if t.shape == () else b.broadcast_in_dim(z, shape=t.shape, broadcast_dimensions=())


def unbroadcast(b: Builder, ct: Atom, t: TensorType) -> Atom:
    """The cotangent of an elementwise operand of type ``t`` (rank 0 operands broadcast)."""
    if t.shape == ct.type.shape:
        return ct
    return b.reduce_sum(ct, axes=tuple(range(ct.type.ndim)))


def vjp_func(func: Func, wrt: Sequence[bool], seeded: Sequence[bool] | None = None) -> Func:
    """``seeded[k]``: output k gets a cotangent input (default: every output)."""
    b = Builder(func.name)
    inputs = [b.input(v.type) for v in func.inputs]
    seeded = [True] * len(func.outputs) if seeded is None else list(seeded)
    out_cts = [b.input(a.type) if s else None
               for a, s in zip(func.outputs, seeded, strict=True)]

    # Forward sweep: a copy of the equations (their types are known: no shape rules run).
    env: dict[Var, Atom] = {}
    primal_outs = b.inline(func, inputs, env)
    b.source = func.eqns[-1].source if func.eqns else None

    def read(a: Atom) -> Atom:
        return a if isinstance(a, Lit) else env[a]

    # ``active`` are values that depend on a differentiated input.
    active: set[Var] = {v for v, w in zip(func.inputs, wrt, strict=True) if w}
    for eqn in func.eqns:
        if not active.isdisjoint(eqn.inputs):
            active.update([v for v in eqn.outputs if is_float(v.type)])

    # Backward sweep.
    cts: dict[Var, Atom] = {}

    def accumulate(v: Var, ct: Atom) -> None:
        cts[v] = b.add(cts[v], ct) if v in cts else ct

    for a, ct in zip(func.outputs, out_cts, strict=True):
        if ct is not None and isinstance(a, Var) and a in active:
            accumulate(a, ct)
    for eqn in reversed(func.eqns):
        ct_outs = [cts.pop(v, None) for v in eqn.outputs]
        if all(c is None for c in ct_outs):
            continue
        rule = vjp_rules.get(eqn.prim)
        if rule is None:
            if eqn.prim in nondifferentiable:
                continue
            raise NotImplementedError(f"grad: no VJP rule for {eqn.prim.name!r}")
        b.source = eqn.source
        ct = tuple(ct_outs) if eqn.prim.multiple_results else ct_outs[0]
        in_cts = rule(b, ct, *map(read, eqn.inputs), **eqn.params)
        for a, c in zip(eqn.inputs, in_cts, strict=True):
            if c is not None and isinstance(a, Var) and a in active:
                accumulate(a, c)

    grads = [cts.get(v) if v in cts else zeros(b, v.type)
             for v, w in zip(func.inputs, wrt, strict=True) if w]
    return b.build([*primal_outs, *grads])


