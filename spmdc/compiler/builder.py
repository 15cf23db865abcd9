"""Builder: the one object that emits equations, for tracing and for every pass.

``b.bind(prim, *atoms, **params)`` runs the primitive's shape rule, creates the output
Vars and appends the equation. ``b.sin(x)``, ``b.add(x, y)`` ... are shorthands for
``b.bind(registry["sin"], x)``, so rules read like the math they implement.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .ir import Atom, Eqn, Func, Lit, TensorType, Var
from .primitives.core import Primitive, ShapeError, registry

__all__ = ["Builder", "lit"]

# Note [array size limit]
# ~~~~~~~~~~~~~~~~~~~~~~~
# XLA aborts the whole process (an uncaught C++ exception) on a shape whose element or
# byte count overflows int64, e.g. jnp.ones((2**40, 2**40)) or the broadcast of
# (2**31, 1) against (1, 2**33). Every shape a program can have is the output of some
# shape rule or one of its inputs (a pmap result, whose shards fit, can be too large as
# a whole), so Builder.bind checks each output type and Builder.input each input type,
# before anything reaches XLA: a product of dimensions above 2**59 (as many complex128
# elements would already need 2**63 bytes) is looked at exactly and refused when its
# byte size does not fit in an int64. The test costs one math.prod per equation.
_CHECK_ABOVE = 2 ** 59
_MAX_BYTES = 2 ** 63 - 1


def _check_size(what: str, t: TensorType) -> None:
    elements = math.prod(t.shape)
    if elements * t.dtype.itemsize > _MAX_BYTES:
        raise ShapeError(
            f"{what} {t} would have {elements} elements "
            f"({elements * t.dtype.itemsize} bytes), more than any array can hold (sizes "
            "are limited to 2**63 - 1 bytes); check the shape")


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
        if math.prod(type.shape) > _CHECK_ABOVE:            # See Note [array size limit]
            _check_size("an input of type", type)
        v = Var(type)
        self.inputs.append(v)
        return v

    def bind(self, prim: Primitive, /, *inputs: Atom, **params: Any) -> Any:
        """Emit ``prim(*inputs)``; return its output Var (a tuple if multiple results)."""
        # Primitive.abstract_eval, inlined: this is the hottest call of tracing.
        out_type = prim.shape_rule(*[a.type for a in inputs], **params)
        if prim.multiple_results:
            for t in out_type:
                if math.prod(t.shape) > _CHECK_ABOVE:      # See Note [array size limit]
                    _check_size(f"{prim.name}: the result", t)
            outputs = tuple(map(Var, out_type))
            self.eqns.append(Eqn(prim, inputs, params, outputs, self.source))
            return outputs
        if math.prod(out_type.shape) > _CHECK_ABOVE:        # See Note [array size limit]
            _check_size(f"{prim.name}: the result", out_type)
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
