"""Builder: the one object that emits equations, for tracing and for every pass.

``b.bind(prim, *atoms, **params)`` runs the primitive's shape rule, creates the output
Vars and appends the equation. ``b.sin(x)``, ``b.add(x, y)`` ... are shorthands for
``b.bind(registry["sin"], x)``, so rules read like the math they implement.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .ir import Atom, Eqn, Func, Lit, TensorType, Var
from .primitives.core import Primitive, registry

__all__ = ["Builder", "lit"]


def lit(value: Any, dtype: np.dtype) -> Lit:
    """A scalar literal of the given dtype."""
    dtype = np.dtype(dtype)
    return Lit(np.asarray(value, dtype).item(), TensorType((), dtype))


class Builder:
    __slots__ = ("name", "inputs", "eqns", "source")

    def __init__(self, name: str = "f"):
        self.name = name
        self.inputs: list[Var] = []
        self.eqns: list[Eqn] = []
        self.source: str | None = None     # user source line stamped on new equations

    def input(self, type: TensorType) -> Var:
        v = Var(type)
        self.inputs.append(v)
        return v

    def bind(self, prim: Primitive, *inputs: Atom, **params: Any) -> Any:
        """Emit ``prim(*inputs)``; return its output Var (a tuple if multiple results)."""
        # Primitive.abstract_eval, inlined: this is the hottest call of tracing.
        out_type = prim.shape_rule(*[a.type for a in inputs], **params)
        if prim.multiple_results:
            outputs = tuple(map(Var, out_type))
            self.eqns.append(Eqn(prim, inputs, params, outputs, self.source))
            return outputs
        out = Var(out_type)
        self.eqns.append(Eqn(prim, inputs, params, (out,), self.source))
        return out

    def __getattr__(self, name: str) -> Any:
        try:
            prim = registry[name]
        except KeyError:
            raise AttributeError(f"Builder has no attribute or primitive {name!r}") from None

        def shorthand(self: Builder, *inputs: Atom, **params: Any) -> Any:
            return self.bind(prim, *inputs, **params)
        # Kept as a method of the class: later uses are ordinary method calls, not a
        # failed attribute lookup and a new closure each (rules call these in hot loops).
        shorthand.__name__ = name
        setattr(Builder, name, shorthand)
        return getattr(self, name)

    def inline(self, func: Func, args: Sequence[Atom],
               env: dict[Var, Atom] | None = None) -> list[Atom]:
        """Emit ``func``'s equations with its inputs replaced by ``args``. ``env``, if
        given, receives what each of ``func``'s Vars became."""
        env = {} if env is None else env
        env.update(zip(func.inputs, args, strict=True))
        for eqn in func.eqns:
            ins = tuple([a if isinstance(a, Lit) else env[a] for a in eqn.inputs])
            outs = tuple([Var(v.type) for v in eqn.outputs])
            env.update(zip(eqn.outputs, outs, strict=True))
            self.eqns.append(Eqn(eqn.prim, ins, eqn.params, outs, eqn.source))
        return [a if isinstance(a, Lit) else env[a] for a in func.outputs]

    def build(self, outputs: Sequence[Atom]) -> Func:
        return Func(self.name, tuple(self.inputs), tuple(self.eqns), tuple(outputs))
