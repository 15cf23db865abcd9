"""JAX's hi-types on spmdc: user-defined abstract values (``HiType``, ``MutableHiType``
with its quasi-dynamic data), ``register_hitype`` that makes a Python class's values
arguments and results of the transformations, and the records JAX's hijax API passes
around (``AvalQDD``, ``AvalMutableQDD``, ``aval_method``, ``aval_property``,
``EffectTypeSet`` with ``control_flow_allowed_effects``).

Note [hi-types as their lo values]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
In JAX a value of a registered hi-type (a ``QArray`` of an int8 array and its scales) is
traced as one tracer whose abstract value is the ``HiType``; after tracing, the
hi-jaxpr is lowered to arrays: each hi input becomes ``ty.lo_ty()`` inputs, each hi
primitive is replaced by its ``to_lojax``, run on ``ty.raise_val(*lo_tracers)``.

spmdc's traced values are arrays only, so it does that lowering at once instead of
after tracing:

- ``register_hitype(cls, typeof_fn)`` makes ``typeof`` of a ``cls`` value
  ``typeof_fn(value)``, and makes ``cls`` a node for the transformations' flattening
  whose children are ``typeof(v).lower_val(v)`` and whose auxiliary data is the hi-type
  itself; rebuilding is ``ty.raise_val(*children)``. For ``tree_util`` a hi value is a
  leaf, as in JAX (``jax.tree.leaves(q)`` is ``[q]``; Note [array nodes] in
  spmdc/core/tree.py). So every transformation (jit, vmap, grad, jvp, scan,
  cond, while_loop) takes and returns hi values through its lo values, as JAX's
  lowering does, and the traced function sees the hi value made of traced lo values:
  ``QArray(arr=<tracer>, scale=<tracer>)``, on which ``to_lojax`` computes directly.
- A ``HiPrimitive`` is high when its ``is_high(*avals, **params)`` says so; the default
  says it is when an operand's or a result's abstract value is a hi-type. ``bind`` of
  a high primitive checks the operands with ``abstract_eval`` (as JAX type checks the
  hi-jaxpr) and runs ``to_lojax`` on the operands, in or out of a transformation: the
  primitive is inlined as JAX's lowering inlines it. Its ``jvp`` and ``transpose``
  methods are then not what differentiates it: spmdc differentiates the operations
  ``to_lojax`` is made of. A primitive on arrays alone stays a primitive of the IR,
  with its methods as its rules (Note [HiPrimitive on spmdc's types]).

What differs from JAX: a value of a mutable hi-type (``has_qdd``: its lo types depend
on its current state, ``cur_qdd()``) works outside transformations, when created inside
one, as a pytree leaf and as an argument or result of jit (Note [mutable hi values
through jit] in spmdc/core/mutable_hi.py), but not as an argument or result of the other
transformations (JAX writes its final state back into the caller's object; spmdc raises
a TypeError when one of them flattens it, saying so), and one closed over
by a transformed function must not be set to a traced value there; since
no tracer has a hi-type, ``aval_method`` and ``aval_property`` are JAX's records
(``.fun``, ``.fget``) with nothing in spmdc reading them, and a type's methods are
called on its values themselves.
"""
from __future__ import annotations

import dataclasses
import weakref
from collections import namedtuple
from collections.abc import Callable, Iterable
from typing import Any

from ..core import mutable_hi
from ..core.abstract import AbstractValue, aval_rules
from ..core.tree import register_array_node

__all__ = ["HiType", "MutableHiType", "QuasiDynamicData", "MutableQuasiDynamicData",
           "AvalQDD", "AvalMutableQDD", "aval_method", "aval_property", "register_hitype",
           "is_hi_value", "is_hi_aval", "cur_qdd", "EffectTypeSet",
           "control_flow_allowed_effects"]


aval_property = namedtuple("aval_property", ["fget"])
aval_property.__doc__ = ("JAX's record of a property a hi-type defines for its traced "
                         "values: ``fget(value)``. See Note [hi-types as their lo values].")
aval_method = namedtuple("aval_method", ["fun"])
aval_method.__doc__ = ("JAX's record of a method a hi-type defines for its traced values: "
                       "``fun(value, *args)``. See Note [hi-types as their lo values].")


class HiType(AbstractValue):
    """An immutable user-defined abstract value. A subclass defines ``__eq__`` and
    ``__hash__`` (a frozen dataclass has them), ``lo_ty()`` (the ShapedArrays it lowers
    to), ``lower_val(hi_value) -> [lo values]`` and ``raise_val(*lo_values)``, and for
    differentiation ``to_tangent_aval()``. See Note [hi-types as their lo values]."""
    __slots__ = ()
    is_high = True
    has_qdd = False

    def to_ct_aval(self) -> Any:
        """The type of a cotangent: the tangent type unless a subclass says otherwise."""
        return self.to_tangent_aval()

    def str_short(self, short_dtypes: bool = False, **_: Any) -> str:
        return type(self).__name__


class QuasiDynamicData:
    """The base class of a mutable hi-type's state (JAX's ``QuasiDynamicData``)."""


class MutableQuasiDynamicData:
    """A mutable hi-type's state as an abstract evaluation sees and updates it."""

    def __init__(self, val: Any):
        self.init_val = val
        self.cur_val = val

    def update(self, val: Any) -> None:
        self.cur_val = val

    def __repr__(self) -> str:
        return (f"MutableQuasiDynamicData(init_val={self.init_val}, "
                f"cur_val={self.cur_val})")


def cur_qdd(x: Any) -> Any:
    """The current state of the mutable hi value ``x``: its ``cur_qdd()``."""
    try:
        method = x.cur_qdd
    except AttributeError:
        raise TypeError(f"cur_qdd: a {type(x).__name__} is not a value of a mutable "
                        f"hi-type (its class defines no cur_qdd method)") from None
    return method()


class MutableHiType(AbstractValue):
    """A mutable user-defined abstract value whose lo types depend on its state (a
    ``QuasiDynamicData``): a subclass defines ``lo_ty_qdd(state)``,
    ``new_from_loval(state, *lo_values)``, ``read_loval(state, value)``,
    ``update_from_loval(state, value, *lo_values)`` and ``to_tangent_aval()``. See Note
    [hi-types as their lo values]."""
    __slots__ = ()
    is_high = True
    has_qdd = True
    is_writer = False
    type_state = aval_method(cur_qdd)

    def read_loval_in(self, state: Any, val: Any) -> Any:
        return self.read_loval(state, val)

    def to_ct_aval(self) -> Any:
        return self.to_tangent_aval()

    def str_short(self, short_dtypes: bool = False, **_: Any) -> str:
        return type(self).__name__


@dataclasses.dataclass(frozen=True)
class AvalQDD:
    """A mutable hi-type with its state: what a mutable hi primitive's abstract
    evaluation returns for a new value."""
    aval: Any
    qdd: Any
    is_high = True
    has_qdd = True

    def lo_ty(self) -> list[Any]:
        return self.aval.lo_ty_qdd(self.qdd)

    def read_loval(self, val: Any) -> list[Any]:
        return self.aval.read_loval(self.qdd, val)

    def new_from_loval(self, *lovals: Any) -> Any:
        return self.aval.new_from_loval(self.qdd, *lovals)

    def to_tangent_aval(self) -> AvalQDD:
        return AvalQDD(self.aval.to_tangent_aval(),
                       self.qdd and self.qdd.to_tangent_qdd())


@dataclasses.dataclass(frozen=True)
class AvalMutableQDD:
    """A mutable hi-type with its state as an operand of an abstract evaluation, which
    may update the state (``mutable_qdd.update(new_state)``)."""
    aval: Any
    mutable_qdd: MutableQuasiDynamicData


_hi_classes: set[type] = set()


def is_hi_value(x: Any) -> bool:
    """Whether ``x`` is a value of a class registered with ``register_hitype``."""
    return type(x) in _hi_classes


def is_hi_aval(aval: Any) -> bool:
    """Whether ``aval`` is a hi-type (a ``HiType``, ``MutableHiType`` or ``AvalQDD``)."""
    return isinstance(aval, (HiType, MutableHiType, AvalQDD))


# Note [the type a hi value was raised with]
# A transformation rebuilds a hi value from whatever its pytree's leaves have become:
# traced arrays, but also the markers and axis numbers it maps over the structure
# (``QArray(0, 0)`` when scan or vmap pairs a tree with its axes). ``typeof_fn`` of
# such a value fails, so flattening it again uses the hi-type it was raised with,
# remembered beside the value for as long as the value lives (by identity, since a hi
# value need not be hashable).
_raised_types: dict[int, tuple[weakref.ref, Any]] = {}


def _remember_type(v: Any, ty: Any) -> None:
    key = id(v)
    try:
        ref = weakref.ref(v, lambda _: _raised_types.pop(key, None))
    except TypeError:          # a class without weak references: typeof_fn decides
        return
    _raised_types[key] = (ref, ty)


def _raised_type(v: Any) -> Any:
    entry = _raised_types.get(id(v))
    return entry[1] if entry is not None and entry[0]() is v else None


def register_hitype(val_cls: type, typeof_fn: Callable[[Any], Any]) -> None:
    """Make ``typeof(v)`` of a ``val_cls`` value ``typeof_fn(v)``, a hi-type, and let
    the transformations take and return such values through their lo values. See Note
    [hi-types as their lo values]."""
    if not isinstance(val_cls, type):
        raise TypeError(f"register_hitype: the first argument must be a class, got "
                        f"{val_cls!r}")
    if val_cls in _hi_classes:
        raise ValueError(f"register_hitype: {val_cls.__name__} is already registered")

    def flatten(v: Any) -> tuple[list[Any], Any]:
        ty = _raised_type(v)
        ty = typeof_fn(v) if ty is None else ty
        if getattr(ty, "has_qdd", False):       # See Note [mutable hi values through jit]
            if not mutable_hi.flatten_allowed():
                raise mutable_hi.MutableHiArgument(
                    f"a {val_cls.__name__}, a value of the mutable hi-type "
                    f"{ty.str_short()}, is an argument or result of a transformation that "
                    f"cannot write its changed state back (spmdc's jit does; vmap, grad, "
                    f"scan and the others do not): pass its contents, or create it inside "
                    f"the transformed function (see Note [mutable hi values through jit] "
                    f"in spmdc/core/mutable_hi.py)")
            qdd = v.cur_qdd()
            return list(ty.read_loval(qdd, v)), _MutableState(ty, qdd)
        return list(ty.lower_val(v)), ty

    def unflatten(ty: Any, lo_vals: Iterable[Any]) -> Any:
        if isinstance(ty, _MutableState):
            v = ty.ty.new_from_loval(ty.qdd, *lo_vals)
            _remember_type(v, ty.ty)
            return v
        v = ty.raise_val(*lo_vals)
        _remember_type(v, ty)
        return v

    aval_rules[val_cls] = typeof_fn
    register_array_node(val_cls, flatten, unflatten)
    _hi_classes.add(val_cls)
    mutable_hi.register_class(val_cls)


@dataclasses.dataclass(frozen=True)
class _MutableState:
    """The auxiliary data of a mutable hi value taken apart by jit: its type and state.
    See Note [mutable hi values through jit] in spmdc/core/mutable_hi.py."""
    ty: Any
    qdd: Any


class EffectTypeSet:
    """A set of effect classes (JAX's ``effects.EffectTypeSet``): ``add_type`` adds
    one; ``contains(effect)`` says whether an effect is an instance of one."""

    def __init__(self) -> None:
        self._effect_types: set[type] = set()

    def __repr__(self) -> str:
        return f"EffectTypeSet({self._effect_types})"

    def add_type(self, effect_type: type) -> None:
        if not isinstance(effect_type, type):
            raise TypeError(f"EffectTypeSet.add_type takes an effect class, got "
                            f"{effect_type!r}")
        self._effect_types.add(effect_type)

    def contains(self, eff: Any) -> bool:
        return any(isinstance(eff, t) for t in self._effect_types)

    def filter_in(self, effects: Iterable[Any]) -> list[Any]:
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects: Iterable[Any]) -> list[Any]:
        return [e for e in effects if not self.contains(e)]


control_flow_allowed_effects = EffectTypeSet()
"""The effects a library allows in the bodies of ``cond``, ``while_loop`` and ``scan``
(JAX rejects the others there). spmdc's control flow allows every effect (Note
[effects] in spmdc/compiler/passes/cleanup.py), so the set is one libraries add to
(Flax's hijax ``Variable`` effect) and ask with ``contains``."""
