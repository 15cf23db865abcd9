"""``jax.extend.core``: JAX's ``Primitive`` for library authors (and ``CallPrimitive``,
a primitive that calls a function, with its evaluation ``call_impl``; ``TraceTag``, the
tag a library's function transformation is keyed by), and the abstract-value helpers
that rules use (``mapped_aval``, ``unmapped_aval``, ``valid_jaxtype``,
``get_opaque_trace_state``), and ``Effect``, the base class of a library's effects.

A library defines a primitive as it does with JAX::

    p = Primitive("my_op")
    p.def_impl(impl)                  # run eagerly: impl(*arrays, **params)
    p.def_abstract_eval(rule)         # rule(*ShapedArrays, **params) -> ShapedArray(s)
    ad.primitive_jvps[p] = jvp        # spmdc/interpreters/: JAX's rule tables

``Primitive`` is spmdc's own primitive class (compiler/primitives/core.py) with JAX's
constructor and definers: its shape rule is the library's abstract evaluation, seen
through ShapedArrays, so an equation of it in spmdc's IR has the types that rule gives,
and every pass treats it as any other primitive, with the rules that JAX's tables
install (Note [JAX's rule tables] in spmdc/interpreters/tables.py).

Note [an evaluation rule without a lowering]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
JAX runs a primitive's ``impl`` wherever it evaluates eagerly, and that includes the
primal and backward passes of ``grad``, ``vjp`` and ``checkpoint`` outside ``jit``: a
primitive with only ``def_impl`` and an abstract evaluation (Haiku's tests count calls
that way) differentiates there without a lowering. spmdc compiles every evaluation,
eager gradients included, so ``def_impl`` also installs a lowering that calls ``impl`` on
the host (a host callback, Note [host callbacks] in compiler/stablehlo.py), with the
equation's operands as arrays and its params as keywords. A lowering the library
registers with ``mlir.register_lowering`` replaces it, before or after ``def_impl``. So such
a primitive runs under ``jit`` too, where JAX asks for a lowering rule.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ...compiler.ir import Eqn, TensorType
from ...compiler.passes.cleanup import effectful
from ...compiler.primitives.core import Primitive as _SpmdcPrimitive
from ...compiler.primitives.core import library_primitives
from ...compiler.stablehlo import LoweringContext, host_callback_op, lower_rules
from ...core import tracing
from ...core.abstract import AbstractValue, ShapedArray, typeof
from ...core.devices import device_put
from ...transforms.jaxpr_params import JaxPrimitive
from ...transforms.jaxpr_view import (
    ClosedJaxpr,
    DebugInfo,
    DropVar,
    Jaxpr,
    JaxprEqn,
    Literal,
    Var,
    jaxpr_as_fun,
    jaxprs_in_params,
    new_jaxpr_eqn,
    subjaxprs,
)

__all__ = ["Primitive", "CallPrimitive", "call_impl", "TraceTag", "Effect", "ShapedArray",
           "AbstractValue", "mapped_aval", "unmapped_aval",
           "valid_jaxtype", "get_opaque_trace_state", "OpaqueTraceState", "find_top_trace",
           "take_current_trace", "set_current_trace",
           "aval_of_type", "type_of_aval",
           "Jaxpr", "ClosedJaxpr", "JaxprEqn", "Var", "Literal", "DropVar", "DebugInfo",
           "jaxpr_as_fun", "jaxprs_in_params", "new_jaxpr_eqn", "subjaxprs",
           "Effects", "InconclusiveDimensionOperation", "JaxprTypeError", "array_types",
           "check_jaxpr", "concrete_or_error", "gensym", "no_effects",
           "nonempty_axis_env_DO_NOT_USE", "primal_dtype_to_tangent_dtype",
           "unsafe_get_axis_names_DO_NOT_USE", "unsafe_am_i_under_a_jit_DO_NOT_USE",
           "unsafe_am_i_under_a_vmap_DO_NOT_USE"]


def aval_of_type(t: TensorType) -> ShapedArray:
    """The ShapedArray JAX's rules see for a value of IR type ``t``."""
    return ShapedArray(t.shape, t.dtype)


def type_of_aval(aval: Any, what: str) -> TensorType:
    """The IR type of a ShapedArray (or anything with ``shape`` and ``dtype``) that the
    rule ``what`` returned; a TypeError naming the rule otherwise."""
    try:
        return TensorType(tuple(int(d) for d in aval.shape), np.dtype(aval.dtype))
    except (AttributeError, TypeError) as e:
        raise TypeError(f"{what} returned {aval!r} where an abstract value (a "
                        f"jax.core.ShapedArray) was expected ({e})") from None


class Effect:
    """JAX's base class of side effects: a library subclasses it and returns instances
    from an effectful abstract evaluation (``def_effectful_abstract_eval``, or a
    ``HiPrimitive``'s ``abstract_eval``). spmdc's IR knows one kind of effect, the
    equation's own (``effectful`` in compiler/passes/cleanup.py): a primitive whose
    abstract evaluation gives any effect is effectful there, so dead-code elimination
    keeps its equations although their results are unused, as JAX keeps them."""


# Note [every primitive is a jax Primitive]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# In JAX, ``jax.extend.core.Primitive`` is the class of every primitive, the built-in
# ones (``lax.add_p``) included, and libraries annotate the interpreters they write over
# jaxprs with it (Equinox's ``_finalise_jaxpr`` checks ``prim: Primitive`` with a runtime
# type checker, on every equation). spmdc's built-in primitives are instances of the
# compiler's Primitive (compiler/primitives/core.py), which may not depend on this
# module, and a jaxpr equation whose JAX name differs holds a JaxPrimitive
# (transforms/jaxpr_params.py), and a call equation a CallPrimitive (primitives.py). So
# the class that libraries construct is a subclass of the compiler's, and its metaclass
# makes an instance test against it true of every primitive a jaxpr can hold, as JAX's
# is: a type test against the library-facing class means "is this a primitive", never
# "did a library define it".

class _PrimitiveClass(type):
    def __instancecheck__(cls, x: Any) -> bool:
        if cls is Primitive:
            return isinstance(x, (_SpmdcPrimitive, JaxPrimitive, CallPrimitive))
        return type.__instancecheck__(cls, x)

    def __subclasscheck__(cls, sub: type) -> bool:
        if cls is Primitive:
            return issubclass(sub, (_SpmdcPrimitive, JaxPrimitive, CallPrimitive))
        return type.__subclasscheck__(cls, sub)


class Primitive(_SpmdcPrimitive, metaclass=_PrimitiveClass):
    """JAX's ``Primitive(name)``: define its evaluation with ``def_impl`` and its
    abstract evaluation with ``def_abstract_eval``; bind it with ``bind``. Every
    primitive, built in or not, is an instance (Note [every primitive is a jax
    Primitive])."""

    call_primitive = False
    map_primitive = False

    def __init__(self, name: str):
        super().__init__(name, self._shape_rule, self._no_impl)
        self._abstract_eval_rule: Callable[..., Any] | None = None
        self._effectful = False
        library_primitives.add(self)

    # --- JAX's definers ------------------------------------------------------------------

    def def_impl(self, impl: Callable[..., Any]) -> Callable[..., Any]:
        """``impl(*args, **params)``: what ``bind`` runs outside any transformation (and,
        until a lowering is registered, what a compiled program calls on the host: Note
        [an evaluation rule without a lowering])."""
        self.impl = impl
        lower_rules.setdefault(self, functools.partial(_impl_on_host, self))
        return impl

    def def_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """``rule(*avals, **params) -> aval`` (a sequence of them when
        ``multiple_results``): the output shapes and dtypes."""
        self._abstract_eval_rule, self._effectful = rule, False
        return rule

    def def_effectful_abstract_eval(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """``rule(*avals, **params) -> (aval(s), effects)``; a primitive with effects is
        kept by dead-code elimination even when its outputs are unused."""
        self._abstract_eval_rule, self._effectful = rule, True
        return rule

    # --- what JAX's API calls --------------------------------------------------------------

    def bind(self, /, *args: Any, **params: Any) -> Any:
        """Emit into the current transformation, or run ``impl`` outside any (as JAX's
        evaluation trace does)."""
        if tracing.current_trace() is None:
            for a in args:
                if isinstance(a, tracing.Tracer):
                    return tracing.bind(self, *args, **params)   # the escaped-tracer error
            return self.impl(*args, **params)
        return tracing.bind(self, *args, **params)

    def abstract_eval(self, /, *avals: Any, **params: Any) -> tuple[Any, set[Any]]:
        """JAX's: ``(output aval(s), effects)``."""
        rule = self._checked_rule()
        if self._effectful:
            out, effects = rule(*avals, **params)
            return out, set(effects)
        return rule(*avals, **params), set()

    def _no_impl(self, /, *args: Any, **params: Any) -> Any:
        raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented: "
                                  f"give it one with {self.name}.def_impl(impl)")

    def _checked_rule(self) -> Callable[..., Any]:
        if self._abstract_eval_rule is None:
            raise NotImplementedError(
                f"Abstract evaluation for '{self.name}' not implemented: give it one with "
                f"{self.name}.def_abstract_eval(rule)")
        return self._abstract_eval_rule

    def _shape_rule(self, /, *in_types: TensorType, **params: Any) -> Any:
        """The IR shape rule: the abstract evaluation, on ShapedArrays."""
        out, effects = self.abstract_eval(*map(aval_of_type, in_types), **params)
        if effects:
            effectful.add(self)
        what = f"the abstract evaluation rule of primitive '{self.name}'"
        if not self.multiple_results:
            return type_of_aval(out, what)
        if not isinstance(out, Sequence) or isinstance(out, AbstractValue):
            raise TypeError(f"{what} returned {out!r}; a primitive with multiple_results "
                            "must return a sequence of abstract values")
        return tuple(type_of_aval(a, what) for a in out)


def _impl_on_host(prim: Primitive, ctx: LoweringContext, eqn: Eqn, /,
                  *operands: Any) -> list[Any]:
    """Lower ``eqn`` as a host call of ``prim.impl``. See Note [an evaluation rule
    without a lowering]."""
    results = [v.type for v in eqn.outputs]

    def on_host(*arrays: Any) -> tuple[Any, ...]:
        out = prim.impl(*map(device_put, arrays), **eqn.params)
        outs = list(out) if prim.multiple_results else [out]
        if len(outs) != len(results):
            raise ValueError(f"the evaluation rule of primitive '{prim.name}' gave "
                             f"{len(outs)} results for {len(results)} outputs")
        return tuple(np.asarray(o, t.dtype) for o, t in zip(outs, results, strict=True))
    return host_callback_op(ctx, on_host, operands, results,
                            has_side_effect=prim in effectful, ordered=False)


def mapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """``aval`` without its dimension ``axis`` of length ``size`` (None: unchanged)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval} has size "
                         f"{aval.shape[axis]}, not {size}")
    shape = list(aval.shape)
    del shape[axis]
    return aval.update(shape=tuple(shape))


def unmapped_aval(size: int, axis: int | None, aval: ShapedArray) -> ShapedArray:
    """``aval`` with a dimension of length ``size`` inserted at ``axis`` (None:
    unchanged)."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    shape.insert(axis, size)
    return aval.update(shape=tuple(shape))


def valid_jaxtype(x: Any) -> bool:
    """Whether ``x`` is a value spmdc can compute with (an array, a tracer, a scalar)."""
    try:
        typeof(x)
    except TypeError:
        return False
    return True


class OpaqueTraceState:
    """Which trace was current when it was taken; equal states are the same trace."""
    __slots__ = ("_trace",)

    def __init__(self, trace: tracing.Trace | None):
        self._trace = trace

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OpaqueTraceState) and other._trace is self._trace

    def __hash__(self) -> int:
        return id(self._trace)


def find_top_trace(values: Any) -> tracing.Trace | None:
    """The trace now current (None outside any transformation). JAX's signature takes
    the values whose trace is wanted; since JAX keeps one current trace, JAX returns
    it whatever they are, and so does spmdc."""
    return tracing.current_trace()


def get_opaque_trace_state(convention: Any = None) -> OpaqueTraceState:
    """The current trace, opaquely (JAX's signature takes a ``convention`` that JAX
    itself does not read; neither does spmdc)."""
    return OpaqueTraceState(tracing.current_trace())


@contextmanager
def take_current_trace() -> Iterator[tracing.Trace | None]:
    """Yield the current trace (None outside any transformation) with none current in
    the ``with`` body, as JAX's ``take_current_trace`` yields it with its evaluation
    trace current; ``set_current_trace`` makes it current again."""
    trace = tracing.current_trace()
    tracing.set_current(None)
    try:
        yield trace
    finally:
        tracing.set_current(trace)


@contextmanager
def set_current_trace(trace: tracing.Trace | None) -> Iterator[None]:
    """Make ``trace`` (one that ``take_current_trace`` or ``find_top_trace`` gave; None:
    none) current for the ``with`` body. spmdc's traces are its own transformations' (a
    Builder each): a Trace of another class, such as a library's subclass with
    ``process_primitive``, cannot be made current and is a TypeError."""
    if trace is not None and type(trace) is not tracing.Trace:
        raise TypeError(
            f"set_current_trace: {type(trace).__qualname__} is not a trace spmdc made; "
            "spmdc runs primitives through its own traces only, so a jax.core.Trace "
            "subclass (with process_primitive) cannot be made current. Pass a trace "
            "from take_current_trace() or find_top_trace(), or None.")
    previous = tracing.current_trace()
    tracing.set_current(trace)
    try:
        yield
    finally:
        tracing.set_current(previous)


# ``jax.extend.core.primitives`` is an attribute of the package without an import of its
# own, as in JAX (distrax reads ``jex.core.primitives.jit_p``).
from . import bind_params, primitives  # noqa: E402,F401
from .primitives import CallPrimitive, call_impl  # noqa: E402


class TraceTag:
    """The tag of a function transformation's trace (``lu.transformation``s take one to
    say which tracers are theirs): every tag equals every other and hashes alike, as in
    JAX, so a cache keyed by a transformation and its tag is not missed by a new tag."""
    __slots__ = ()

    def __hash__(self) -> int:
        return hash(TraceTag)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TraceTag)

    def __repr__(self) -> str:
        return "TraceTag()"


from .checks import (  # noqa: E402
    Effects,
    InconclusiveDimensionOperation,
    JaxprTypeError,
    array_types,
    check_jaxpr,
    concrete_or_error,
    gensym,
    no_effects,
    nonempty_axis_env_DO_NOT_USE,
    primal_dtype_to_tangent_dtype,
    unsafe_am_i_under_a_jit_DO_NOT_USE,
    unsafe_am_i_under_a_vmap_DO_NOT_USE,
    unsafe_get_axis_names_DO_NOT_USE,
)
