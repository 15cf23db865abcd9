"""``jax.experimental.hijax``: JAX's method-defined primitives (``HiPrimitive``) on
spmdc's arrays, and the values their rules work with (``Zero``, ``instantiate_zeros``,
``is_undefined_primal``, ``AbstractValue``, ``ShapedArray``).

Note [HiPrimitive on spmdc's types]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
JAX's ``HiPrimitive`` is a ``Primitive`` whose rules are methods of a subclass:
``abstract_eval(*avals, **params) -> (aval(s), effects)``, ``to_lojax(*args,
**params)`` (the primitive written with other operations), ``jvp(primals, tangents,
**params)`` and ``transpose(cts, *args, **params)``. spmdc's ``HiPrimitive`` is
``jax.extend.core.Primitive`` (spmdc/extend/core/__init__.py) with those methods
installed where a library would install the rules by hand, so it goes through the same
one adapter (Note [JAX's rule tables] in spmdc/interpreters/tables.py):

- ``abstract_eval`` is the primitive's abstract evaluation: the IR type of its
  equation; an ``Effect`` it returns makes the primitive effectful, kept by DCE;
- ``to_lojax`` is both its evaluation (``bind`` outside any transformation runs it, as
  JAX's evaluation trace does) and its lowering (``mlir.lower_fun(to_lojax)``: traced
  into spmdc's IR when the program is lowered);
- ``jvp`` goes into ``ad.primitive_jvps``, ``transpose`` into
  ``ad.primitive_transposes``; ``batch(args, dims, **params) -> (out, out_dims)``, which
  JAX's ``HiPrimitive`` leaves to ``batching.primitive_batchers``, may also be a method;
  each is installed only when the subclass defines it, so a primitive without one gets
  spmdc's error for a missing rule, naming the primitive, as with any other.

A HiPrimitive is "high" when it computes on hi-types: user-defined abstract values
(``HiType``, ``MutableHiType`` with quasi-dynamic data, ``register_hitype``) that the
transformations lower to arrays; ``bind`` of a high one runs its ``to_lojax`` at once
(Note [hi-types as their lo values] in spmdc/experimental/hitypes.py). ``AbstractRef``
is the abstract value of spmdc's mutable references (spmdc/core/refs.py);
``VJPHiPrimitive``, ``HiPspec`` and ``TransformedRef`` are absent (docs/ecosystem.md).
"""
from __future__ import annotations

from typing import Any

from ..core.abstract import AbstractValue, ShapedArray, typeof
from ..core.refs import AbstractRef
from ..extend.core import Primitive
from ..interpreters import ad, batching, mlir
from ..interpreters.ad import Zero, instantiate_zeros, is_undefined_primal
from .hitypes import (
    AvalMutableQDD,
    AvalQDD,
    HiType,
    MutableHiType,
    MutableQuasiDynamicData,
    aval_method,
    aval_property,
    control_flow_allowed_effects,
    cur_qdd,
    is_hi_aval,
    is_hi_value,
    register_hitype,
)

__all__ = ["HiPrimitive", "Zero", "instantiate_zeros", "is_undefined_primal",
           "AbstractValue", "ShapedArray", "HiType", "MutableHiType", "register_hitype",
           "AvalQDD", "AvalMutableQDD", "aval_method", "aval_property",
           "control_flow_allowed_effects", "AbstractRef"]


def _operand_aval(x: Any) -> Any:
    """The abstract value a hi primitive's ``abstract_eval`` sees for operand ``x``: a
    mutable hi value's type with its current state, which the rule may update."""
    aval = typeof(x)
    if isinstance(aval, MutableHiType):
        return AvalMutableQDD(aval, MutableQuasiDynamicData(cur_qdd(x)))
    return aval


class HiPrimitive(Primitive):
    """A primitive defined by the methods of a subclass: ``abstract_eval``,
    ``to_lojax`` and, as the program needs them, ``jvp``, ``transpose`` and ``batch``.
    Set ``multiple_results = True`` on the subclass for a primitive with several
    results. See Note [HiPrimitive on spmdc's types]."""

    def __init__(self, name: str):
        missing = [m for m, defined in (
            ("abstract_eval", type(self).abstract_eval is not Primitive.abstract_eval),
            ("to_lojax", hasattr(type(self), "to_lojax"))) if not defined]
        if missing:
            raise TypeError(f"HiPrimitive '{name}': {type(self).__qualname__} must define "
                            f"the method{'s' if len(missing) > 1 else ''} "
                            f"{' and '.join(missing)}")
        declared = getattr(type(self), "multiple_results", False)
        super().__init__(name)
        # The base class keeps multiple_results in a slot; a subclass's class attribute
        # is what the primitive declares.
        self.multiple_results = declared if isinstance(declared, bool) else False
        self.def_impl(self.to_lojax)
        mlir.register_lowering(self, mlir.lower_fun(self.to_lojax, self.multiple_results))
        if hasattr(self, "jvp"):
            ad.primitive_jvps[self] = self.jvp
        if hasattr(self, "transpose"):
            ad.primitive_transposes[self] = self.transpose
        if hasattr(self, "batch"):
            batching.primitive_batchers[self] = self.batch

    def is_high(self, *avals: Any, **params: Any) -> bool:
        """Whether the primitive computes on hi-types here: by default, when an operand's
        or a result's abstract value is one. See Note [hi-types as their lo values]."""
        if any(is_hi_aval(a) or isinstance(a, AvalMutableQDD) for a in avals):
            return True
        out, _ = self.abstract_eval(*avals, **params)
        outs = out if self.multiple_results else [out]
        return any(is_hi_aval(o) for o in outs)

    def bind(self, /, *args: Any, **params: Any) -> Any:
        """A high primitive is checked by its ``abstract_eval`` and runs its
        ``to_lojax`` at once; one on arrays is emitted or run as any primitive. See
        Note [hi-types as their lo values]."""
        if any(is_hi_value(a) for a in args):
            avals = [_operand_aval(a) for a in args]
            if self.is_high(*avals, **params):
                self.abstract_eval(*avals, **params)
                return self.to_lojax(*args, **params)
        elif self.is_high(*map(typeof, args), **params):
            return self.to_lojax(*args, **params)
        return super().bind(*args, **params)
