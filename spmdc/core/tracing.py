"""Tracing Python functions into Funcs: Tracer, the current trace, closure conversion.

While a function is traced, one ``Trace`` is current (``tracing(...)`` sets it); every
primitive bound by spmdc.numpy / spmdc.lax lands in its Builder as an equation and comes
back as a ``Tracer``. Values that do not belong to the current trace become explicit
inputs of the Func being built (closure conversion):

- a Tracer of an enclosing trace (a transformation inside a transformation) — unbatched
  for vmap, not differentiated for grad, because the pass only sees an extra input;
- a concrete array (NumPy or spmdc.Array) — at the outermost trace these are the
  "constants" that jit passes to the executable as inputs instead of embedding them.

Python scalars and 0-d NumPy values become literals. Each capture records the value it
stands for in ``Trace.capture_values``, so whoever applies the Func passes them along.

A Tracer used after its trace has ended (it escaped, e.g. stored in a global) is an
error, as is using it where Python needs a concrete value (``if``, ``int()``...).
"""
from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..compiler.builder import Builder, lit
from ..compiler.ir import Atom, Func, Lit, TensorType, Var
from ..compiler.primitives.core import Primitive, ShapeError, set_binder
from ..errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
    at_line,
    user_source,
    where,
)
from ..runtime import pjrt
from ..runtime.array import Array, set_traced_type
from . import dtypes, explicit_sharding, leaks
from .names import scoped
from .tracer_text import TracerView, tracer_repr, tracer_str

__all__ = ["Tracer", "Trace", "tracing", "current_trace", "bind", "to_atom",
           "trace_function", "apply_func", "type_of", "emitting_into", "value_of",
           "trace_detached", "known_value"]


# --- traces ------------------------------------------------------------------------------

class Trace:
    __slots__ = ("builder", "parent", "captures", "capture_values", "converted", "closed",
                 "axis_env", "sources", "values", "indexed", "producers", "emitting", "view",
                 "explicit", "kept")

    def __init__(self, parent: Trace | None, name: str, axis_env: dict[str, Any] | None = None,
                 concrete: bool = False):
        self.builder = Builder(name)
        self.parent = parent
        self.captures: dict[int, Var] = {}       # id(outer value) -> the input standing for it
        self.capture_values: list[Any] = []     # the outer values, in input order
        # NumPy arrays captured as a converted copy: the key of a capture is the id of
        # the array the user passed, so that array is kept alive as long as the trace
        # (a freed one's id may be reused by a later, different array).
        self.converted: list[Any] = []
        self.closed = False
        # Axis names bound here (vmap/pmap), on top of the enclosing traces' names.
        self.axis_env: dict[str, Any] = dict(parent.axis_env if parent else {})
        self.axis_env.update(axis_env or {})
        # Where the values of this trace's inputs come from, for a trace that may be
        # concretised (None: an abstract trace). See Note [concrete values while tracing]
        # in core/concrete.py, which owns the other three slots.
        self.sources: dict[Var, Any] | None = {} if concrete else None
        self.values: dict[Var, Any] = {}
        self.indexed = 0
        self.producers: dict[Var, int] = {}
        # What this trace emits for, when it emits into a pass's Builder (Note [rules
        # on values]); such a trace builds the constants it captures from literals.
        self.emitting: str | None = None
        # How JAX sees this trace's values, set by vmap and grad (Note [tracer text]).
        self.view: TracerView | None = None
        # The shardings in its values' types over Explicit mesh axes, if any (Note
        # [shardings in types] in core/explicit_sharding.py).
        self.explicit = explicit_sharding.explicit_context()
        # Traces of library functions kept while the outermost trace lasts, shared by
        # every trace under it (Note [a custom_jvp traced once per signature] in
        # transforms/custom_derivatives.py).
        self.kept: dict[Any, Any] = parent.kept if parent is not None else {}

    @property
    def main(self) -> Trace:
        """JAX's tag of a trace (``trace.main``), which its tracers' ``_trace.main``
        share: a spmdc trace is its own."""
        return self


# Note [thread-local trace]
# ~~~~~~~~~~~~~~~~~~~~~~~~~
# The current trace belongs to the thread that is tracing, as JAX's trace state does: a
# thread that traces a function must not make another thread's primitives land in its
# Builder (they would come back as Tracers, silently, instead of values), and two threads
# may trace at once. Every read of "the current trace" goes through ``_state.current``.
# What is shared between threads (the PJRT client, the MLIR context, the compile caches)
# is guarded where it lives; see Note [threads] in runtime/pjrt/once.py.

class _State(threading.local):
    current: Trace | None = None
    compile_time_eval = False       # See Note [compile-time evaluation]


_state = _State()


def current_trace() -> Trace | None:
    return _state.current


@contextmanager
def tracing(name: str, axis_env: dict[str, Any] | None = None,
            concrete: bool = False) -> Iterator[Trace]:
    """Make a new Trace (child of this thread's current one) current for the ``with``
    body. See Note [thread-local trace]; ``concrete``: Note [concrete values while
    tracing] in core/concrete.py."""
    trace = Trace(_state.current, name, axis_env, concrete)
    set_current(trace)
    try:
        yield trace
    finally:
        set_current(trace.parent)
        trace.closed = True


def set_current(trace: Trace | None) -> None:
    """Make ``trace`` (None: none) this thread's current trace; the C++ dispatchers'
    key follows (Note [Python-path state in the jit key] in runtime/pjrt/dispatch.py)."""
    _state.current = trace
    pjrt.set_tracing(trace is not None)


class Tracer:
    """A value being traced: a Var of one Trace, with JAX's weak-type flag."""
    # not var/trace: x.var(), x.trace() are methods; weakly referable, as JAX's tracers
    # and Arrays are (TFP's bijectors cache their results by weak references to them)
    __slots__ = ("_var", "_trace", "weak", "__weakref__")
    __array_priority__ = 1000

    def __init__(self, var: Var, trace: Trace, weak: bool = False):
        self._var = var
        self._trace = trace
        self.weak = weak

    @property
    def type(self) -> TensorType:
        return self._var.type

    @property
    def shape(self) -> tuple[int, ...]:
        return self._var.type.shape

    @property
    def dtype(self) -> np.dtype:
        return self._var.type.dtype

    @property
    def ndim(self) -> int:
        return self._var.type.ndim

    @property
    def size(self) -> int:
        return self._var.type.size

    @property
    def weak_type(self) -> bool:
        """JAX's name for ``weak`` (its tracers read it from their aval)."""
        return self.weak

    @property
    def aval(self) -> Any:
        """The abstract value, a ShapedArray (JAX's ``Tracer.aval``), with its sharding
        over Explicit mesh axes (Note [shardings in types])."""
        from .abstract import ShapedArray
        state = self._trace.explicit
        sharding = None if state is None else explicit_sharding.type_sharding(
            state, self._var)
        return ShapedArray(self._var.type.shape, self._var.type.dtype, self.weak,
                           sharding=sharding)

    def __repr__(self) -> str:
        return tracer_repr(self)            # See Note [tracer text] in core/tracer_text.py

    def __str__(self) -> str:
        return tracer_str(self)

    def _concrete(self, what: str, error: type[TypeError] = ConcretizationTypeError) -> Any:
        raise error(
            f"{what} needs a concrete value, but got a traced {self._var.type} inside a "
            f"transformation{where()}. Python control flow cannot depend on "
            "traced values: use spmdc.numpy.where / lax.select for data-dependent choices, "
            "or mark the argument static (jit(..., static_argnums=...)).")

    # bool, int, an index and item() read the value of a tracer whose value is known
    # (eager autodiff); float() and complex() never do, as in JAX, since the number they
    # return would silently drop the derivative. See Note [concrete values while tracing].
    # Otherwise each raises JAX's class: bool() a TracerBoolConversionError, an index
    # (operator.index) a TracerIntegerConversionError, int(), float(), complex() and item()
    # a ConcretizationTypeError.
    def __bool__(self) -> bool:
        value = known_value(self)
        if value is not None:
            return bool(value)
        return self._concrete("bool() (e.g. an `if` or `while` on a traced value)",
                              TracerBoolConversionError)

    def __int__(self) -> int:
        value = known_value(self)
        if value is not None:
            return int(value)
        return self._concrete("int()")

    def item(self, *args: Any) -> Any:
        value = known_value(self)
        if value is not None:
            return value.item(*args)
        return self._concrete("item()")

    def __float__(self) -> float:
        return self._concrete("float()")

    def __complex__(self) -> complex:
        return self._concrete("complex()")

    def __index__(self) -> int:
        value = known_value(self)
        if value is not None:
            return operator.index(value)
        return self._concrete("using a traced value as a Python index",
                              TracerIntegerConversionError)

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TracerArrayConversionError(
            f"cannot convert a traced {self._var.type} to a NumPy array{where()}; "
            "use spmdc.numpy functions inside transformed functions")

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d traced value")
        return self.shape[0]

    def __iter__(self) -> Iterator[Any]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d traced value")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self) -> int:
        raise TypeError("traced values are not hashable")


# --- atoms: getting any value into the current Builder --------------------------------------

def type_of(x: Any) -> tuple[TensorType, bool]:
    """The (canonical) type and weak flag of any array-like value."""
    # Exact types (neither has subclasses): isinstance(x, Array) runs Python code for
    # other values (Note [traced values are Arrays] in runtime/array.py).
    if x.__class__ is Tracer or x.__class__ is Array:
        return x.type, x.weak
    dtype, weak = dtypes.dtype_and_weak(x)
    return TensorType(np.shape(x), dtype), weak


def _escaped(x: Tracer) -> UnexpectedTracerError:
    return UnexpectedTracerError(
        f"a traced value ({x._var.type}) escaped the transformation that created it and "
        f"was used later{where()}. Return values from transformed functions "
        "instead of storing them in globals or closures.")


def raise_if_escaped(values: Sequence[Any]) -> None:
    """Called with no trace current: a Tracer among ``values`` outlived its trace (JAX's
    UnexpectedTracerError, not a failed conversion to NumPy)."""
    for x in values:
        if x.__class__ is Tracer:
            raise _escaped(x)


def _capture(trace: Trace, key: int, value: Any, t: TensorType) -> Var:
    var = trace.captures.get(key)
    if var is None:
        if trace.emitting is not None:       # See Note [rules on values]
            var = trace.captures[key] = _emitted_constant(trace, value, t)
            # ``key`` is the value's id: kept alive, so that no later value reuses it
            trace.capture_values.append(value)
            return var
        var = trace.captures[key] = trace.builder.input(t)
        trace.capture_values.append(value)
        if trace.sources is not None:
            trace.sources[var] = value
        _typed_input(trace, var, value)
    return var


def _typed_inputs(trace: Trace, args: Sequence[Tracer], values: Sequence[Any]) -> None:
    for a, value in zip(args, values, strict=True):
        _typed_input(trace, a._var, value)


def _typed_input(trace: Trace, var: Var, value: Any) -> None:
    """``var``, an input of ``trace`` standing for ``value`` (or a leading slice of it,
    ``explicit_sharding.Sliced``), takes the sharding in its type (Note [shardings in
    types] in core/explicit_sharding.py)."""
    without = None
    if value.__class__ is explicit_sharding.Sliced:
        value, without = value.value, value.axis
    if value.__class__ is Tracer:
        if value._trace.explicit is not None:
            explicit_sharding.note_traced(trace, var, value._trace.explicit, value._var,
                                          without)
    elif value.__class__ is Array:
        explicit_sharding.note_array(trace, var, value, without)


# The largest array constant a rule run in a pass may use (Note [rules on values]).
_MAX_EMITTED_CONSTANT = 1024


def _emitted_constant(trace: Trace, value: Any, t: TensorType) -> Var:
    """The array ``value`` (of type ``t``) built from literals in ``trace``'s Builder."""
    if t.size > _MAX_EMITTED_CONSTANT:
        raise TypeError(
            f"{trace.emitting} uses an array constant of type {t}{where()}; a rule run "
            f"inside a transformation may use constants of up to {_MAX_EMITTED_CONSTANT} "
            "elements: compute a larger one from the operands with jnp functions (e.g. "
            "jnp.arange, jnp.full), or pass it as an operand of the primitive")
    b = trace.builder
    flat = np.asarray(value, t.dtype).reshape(-1)
    if flat.size == 0 or (flat == flat[0]).all():
        fill = lit(flat[0] if flat.size else 0, t.dtype)
        return b.broadcast_in_dim(fill, shape=t.shape, broadcast_dimensions=())
    pieces = [b.broadcast_in_dim(lit(v, t.dtype), shape=(1,), broadcast_dimensions=())
              for v in flat]
    return b.reshape(b.concatenate(*pieces, dimension=0), new_sizes=t.shape)


def known_value(x: Tracer) -> np.ndarray | None:
    """``x``'s value where it is known (Note [concrete values while tracing]), else None."""
    if x._trace.sources is None:
        return None
    from .concrete import concrete_value
    return concrete_value(x)


def to_atom(trace: Trace, x: Any) -> Atom:
    """``x`` as an operand in ``trace``'s Builder (see the module docstring)."""
    if isinstance(x, Tracer):
        if x._trace is trace:
            return x._var
        if x._trace.closed:
            raise _escaped(x)
        if trace.parent is None:
            raise _escaped(x)
        outer = x if x._trace is trace.parent else _lift(trace.parent, x)
        return _capture(trace, id(x), outer, x._var.type)
    if x.__class__ is Array:      # See Note [traced values are Arrays] in runtime/array.py
        return _capture(trace, id(x), x, x.type)
    if isinstance(x, np.ndarray) and x.ndim > 0:
        t, _ = type_of(x)
        value = x
        if x.dtype != t.dtype:
            value = x.astype(t.dtype)
            trace.converted.append(x)          # its id is the capture's key
        return _capture(trace, id(x), value, t)
    if isinstance(x, (Var, Lit)):
        return x
    t, _ = type_of(x)
    if t.shape != ():
        raise TypeError(f"cannot use {type(x).__name__} of shape {t.shape} as an operand")
    return Lit(np.asarray(x, t.dtype).item(), t)


def _lift(trace: Trace, x: Tracer) -> Tracer:
    """``x`` (a Tracer of an ancestor of ``trace``) as a Tracer of ``trace``."""
    return Tracer(to_atom(trace, x), trace, x.weak)  # type: ignore[arg-type]


# --- binding primitives ----------------------------------------------------------------------

# Note [eager execution]
# ~~~~~~~~~~~~~~~~~~~~~~
# A primitive bound with no trace current (``jnp.sin(x)`` at top level) runs at once on
# its concrete operands. Running it is jit's work: a cached jit of the one equation
# (transforms/eager.py), whose Python path, C++ dispatcher grant, layouts over a mesh and
# runtime checks are jit's own; a second copy of that machinery below transforms/ would
# be a second way to compile and launch. The core may not import transforms/
# (tests/e2e/test_layering.py), so the one dependency that points up is turned around and
# made explicit: transforms/eager.py, which imports the core (downward), hands its
# runner to ``set_eager_runner`` when it is imported, and spmdc/__init__.py imports it
# first, before anything can bind a primitive. ``bind`` calls the runner directly (no
# extra frame on the eager path); the rest of spmdc calls ``run_eagerly``.
_eager_runner: Callable[..., Any] | None = None


def set_eager_runner(run: Callable[..., Any]) -> None:
    """Install ``run(prim, args, params, weak)``, which runs one primitive on concrete
    values (Note [eager execution])."""
    global _eager_runner
    _eager_runner = run


def run_eagerly(prim: Primitive, args: Sequence[Any], params: dict[str, Any],
                weak: bool) -> Any:
    """``prim`` applied to the concrete ``args`` now (Note [eager execution])."""
    return _eager_runner(prim, args, params, weak)  # type: ignore[misc]


def bind(prim: Primitive, /, *args: Any, weak: bool = False, **params: Any) -> Any:
    """Apply ``prim`` to ``args``: emitted into the current trace, or run eagerly."""
    trace = _state.current
    if trace is None:
        for a in args:
            if isinstance(a, Tracer):
                raise _escaped(a)
        return _eager_runner(prim, args, params, weak)  # type: ignore[misc]
    if _state.compile_time_eval and not any(isinstance(a, Tracer) for a in args):
        return _evaluate_now(trace, prim, args, params, weak)
    b = trace.builder
    atoms = [a._var if a.__class__ is Tracer and a._trace is trace else to_atom(trace, a)
             for a in args]             # the first case is to_atom's common one, inlined
    b.source = scoped(user_source())      # with the named_scope names, if any
    try:
        out = b.bind(prim, *atoms, **params)
    except ShapeError as e:
        raise TypeError(f"{e}{at_line(b.source)}") from None
    if trace.explicit is not None:         # See Note [shardings in types]
        explicit_sharding.apply_rule(trace.explicit, prim, atoms, params,
                                     out if prim.multiple_results else [out])
    if prim.multiple_results:
        return [Tracer(v, trace, weak) for v in out]
    return Tracer(out, trace, weak)


set_binder(bind)            # See Note [Primitive.bind] in compiler/primitives/core.py
set_traced_type(Tracer)     # See Note [traced values are Arrays] in runtime/array.py


# Note [rules on values]
# ~~~~~~~~~~~~~~~~~~~~~~
# JAX's rules for a primitive (JVP, transpose, batching, ``lower_fun``) are Python on
# values: they call ``prim.bind`` or jnp functions on their operands. spmdc's passes
# call rules on a Builder and Atoms. The adapter between the two (spmdc/interpreters/)
# runs a JAX rule under ``emitting_into(b)``: a trace, current for the call, whose
# Builder is the pass's own, so that what the rule binds lands in the program the pass
# is building, and the operands are Tracers of that trace (``value_of``). The trace has
# no parent, and the pass's program has fixed inputs: a traced value of any other trace
# is an error naming the rule, and an array constant the rule uses (``jnp.array([0,
# 1])``), which a trace would make an input, is built from literals instead (up to
# ``_MAX_EMITTED_CONSTANT`` elements; a larger one is an error naming the rule). The
# Builder's source line is restored afterwards, so the pass's own stamps stay.

@contextmanager
def emitting_into(builder: Builder, what: str) -> Iterator[Trace]:
    """A trace emitting into ``builder``, current for the ``with`` body; ``what`` names
    the rule for errors (Note [rules on values])."""
    trace = Trace(None, builder.name)
    trace.builder = builder
    trace.emitting = what
    outer, source = _state.current, builder.source
    set_current(trace)
    try:
        yield trace
    finally:
        set_current(outer)
        trace.closed = True
        builder.source = source


def value_of(trace: Trace, a: Atom) -> Tracer:
    """The Atom ``a`` of ``trace``'s Builder as a Tracer (a literal becomes a value)."""
    return Tracer(_var(trace, a), trace)


def trace_detached(fun: Callable[[list[Tracer]], list[Any]],
                   in_types: Sequence[TensorType], name: str) -> tuple[Func, list[Any]]:
    """Trace ``fun`` in a trace of its own, whatever trace is current: the Func (inputs,
    then one per captured constant) and the captured values (NumPy arrays or Arrays)."""
    outer = _state.current
    set_current(None)
    try:
        func, _, captured = trace_function(fun, in_types, [False] * len(in_types), name)
    finally:
        set_current(outer)
    return func, captured
# Note [compile-time evaluation]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``ensure_compile_time_eval()`` (JAX's name) makes an operation on values that are all
# concrete run at once while a function is being traced, instead of becoming part of
# the program: its result is an Array the trace can read (``float(y)``, ``int(i)``),
# as Equinox's ``error_if`` needs to check a predicate it can know before running.
# An operation with a traced operand is traced as usual. The eager run leaves the trace
# for its duration, so the one-equation jit that runs it is compiled, not inlined.
# The setting is per thread, as the current trace is, and off during the eager run
# (which traces the one operation itself).

@contextmanager
def compile_time_eval() -> Iterator[None]:
    """Inside the block, operations on concrete values run now even while tracing (Note
    [compile-time evaluation]); JAX's ``ensure_compile_time_eval``."""
    previous, _state.compile_time_eval = _state.compile_time_eval, True
    try:
        yield
    finally:
        _state.compile_time_eval = previous


def _evaluate_now(trace: Trace, prim: Primitive, args: tuple[Any, ...],
                  params: dict[str, Any], weak: bool) -> Any:
    set_current(None)
    _state.compile_time_eval = False     # the eager run traces prim itself: trace it
    try:
        return _eager_runner(prim, args, params, weak)  # type: ignore[misc]
    finally:
        _state.compile_time_eval = True
        set_current(trace)


# --- tracing whole functions ---------------------------------------------------------------

def trace_function(fun: Callable[[list[Tracer]], list[Any]], in_types: Sequence[TensorType],
                   in_weak: Sequence[bool], name: str,
                   axis_env: dict[str, Any] | None = None,
                   sources: Sequence[Any] | None = None, view: TracerView | None = None,
                   typed_by: Sequence[Any] | None = None, constrain: bool = True
                   ) -> tuple[Func, list[bool], list[Any]]:
    """Trace ``fun`` (flat Tracers in, flat values out) in a child of the current trace.

    Returns the Func (explicit inputs first, then one input per captured value), the
    outputs' weak flags and the captured values (to pass along when applying the Func).
    ``sources`` (one per input; None where unknown) are the values the inputs stand for,
    and make the trace one whose values may be read (Note [concrete values while
    tracing] in core/concrete.py). ``view``: how JAX sees the traced values (Note
    [tracer text] in core/tracer_text.py). ``typed_by`` (one per input): the values whose
    shardings over Explicit mesh axes the inputs' types take (Note [shardings in types]);
    the outputs are then constrained to their types, unless ``constrain`` is False (a
    control-flow body, whose results the loop's or cond's rule types).
    """
    with tracing(name, axis_env, concrete=sources is not None) as trace:
        trace.view = view
        b = trace.builder
        args = [Tracer(b.input(t), trace, w) for t, w in zip(in_types, in_weak, strict=True)]
        if typed_by is not None:    # (in a function: no loop variable here outlives it)
            _typed_inputs(trace, args, typed_by)
        if sources is not None:     # (a comprehension: no loop variable outlives it to
            trace.sources.update({  # hold a Tracer past the trace, which leak checks see)
                a._var: src for a, src in zip(args, sources, strict=True) if src is not None})
        outs = fun(args)
        atoms = [to_atom(trace, o) for o in outs]
        weak = [type_of(o)[1] for o in outs]
        if trace.explicit is not None and typed_by is not None and constrain:
            atoms = explicit_sharding.constrain_outputs(trace.explicit, b, atoms)
    if leaks.leak_checking():
        del args, outs
        leaks.check_no_leaks(trace, Tracer, name)
    return b.build(atoms), weak, trace.capture_values


def apply_func(func: Func, args: Sequence[Any], out_weak: Sequence[bool]) -> list[Tracer]:
    """Inline ``func`` into the current trace with ``args`` (explicit inputs + captures)."""
    trace = _state.current
    assert trace is not None
    atoms = [to_atom(trace, a) for a in args]
    outs = trace.builder.inline(func, atoms)
    tracers = [Tracer(_var(trace, o), trace, w) for o, w in zip(outs, out_weak, strict=True)]
    if trace.explicit is not None:
        explicit_sharding.note_outputs(trace.explicit, func, atoms, [t._var for t in tracers])
    return tracers


def _var(trace: Trace, a: Atom) -> Var:
    # Outputs that are literals become values, so that every result is a Tracer.
    if isinstance(a, Lit):
        return trace.builder.convert(a, new_dtype=a.type.dtype)
    return a
