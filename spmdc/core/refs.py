"""Mutable array references (``jax.new_ref``, ``jax.Ref``, ``jax.freeze``, ``jax.empty_ref``,
``jax.ref.{get, set, swap, addupdate}``) and their abstract type ``AbstractRef``
(``jax._src.state.types.AbstractRef``, printed ``Ref{float32[3]}``).

A Ref is a box holding an immutable value; reading and writing it replace that value, and
the transformations that trace functions thread the values of the refs they touch as
ordinary inputs and outputs. See Note [refs as threaded state].
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import at_line, user_source
from ..runtime.array import Array
from . import dtypes
from .abstract import AbstractValue, ShapedArray, aval_rules
from .operands import asarray, strong
from .ref_scopes import home, innermost, touch
from .tracing import Trace, Tracer, current_trace
from .tree import keystr, tree_flatten_with_path

__all__ = ["AbstractRef", "Ref", "new_ref", "empty_ref", "freeze", "free_ref", "get", "set_",
           "swap", "addupdate", "is_ref", "ref_values", "write_values", "returned_ref",
           "ref_argument"]


# Note [refs as threaded state]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX gives a Ref an abstract type of its own and state primitives (get, swap, addupdate)
# that a "discharge" pass later turns into values threaded through the program. spmdc
# discharges while tracing instead: a Ref is a Python box whose ``_value`` is an ordinary
# value (an Array eagerly, a Tracer while tracing); ``ref[idx]`` reads ``_value[idx]`` and
# ``ref[idx] = v`` replaces ``_value`` by ``_value.at[idx].set(v)``. Eagerly the box holds
# a device buffer and nothing else is needed. Inside one trace the box carries the current
# value from one statement to the next, so the traced program is already the discharged
# one: no primitive, no pass and no runtime of its own.
#
# What needs care is a Ref that a traced function touches but did not create: written in
# a loop body, the box would end up holding a Tracer of the body, which escapes. So every
# transformation that can thread state traces its function inside a ``RefScope``:
#   - a scope *owns* the refs created inside it and those it binds (the refs it threads);
#   - touching (reading or writing) any other ref logs it, with its value at that moment,
#     in every open scope from the innermost out to the one that owns it;
#   - closing a scope puts the logged refs' values back as they were.
# The transformation then looks at what the scope logged. If it touched refs from
# outside, it traces again with those refs *bound*: their values become explicit inputs
# and their final values explicit outputs (a loop carry for scan, while_loop and
# fori_loop; branch outputs for cond and switch; program inputs and outputs for jit, whose
# caller's refs are then updated with the results). The enclosing trace reads and writes
# the refs around the call as any statement would, so nesting composes: a loop body that
# writes a ref created outside ``jit`` makes the loop thread it, and the loop's read and
# write of it make ``jit`` thread it too. A jitted function remembers the refs it closes
# over, so every later call passes their current values (a cache hit traces nothing).
# Loops and branches that only read an outer ref keep closing over its value, which does
# not change inside them.
#
# grad, value_and_grad, vjp and jvp thread the refs their function writes the same way,
# their final values being an auxiliary output (not differentiated); vmap batches a ref
# argument along its in axis (its value is one example's inside) and keeps a closed-over
# ref unbatched, so writing a batched value to it is JAX's error. Transformations that
# thread no state (checkpoint, custom_jvp and custom_vjp rules, pmap, shard_map) may
# create and use refs inside; writing one of their values into a ref made outside would
# leak a Tracer, and is refused (move the ref in, or pass it as an argument). Returning a
# ref from a traced function, passing one ref twice and differentiating with respect to
# a ref are refused as JAX refuses them (spmdc/transforms/refs.py).

class AbstractRef(AbstractValue):
    """The abstract type of a mutable array reference: the type of the value it holds
    (``inner_aval``), a memory space and a kind; printed ``Ref{float32[3]}`` as in JAX."""
    __slots__ = ("inner_aval", "memory_space", "kind")

    def __init__(self, inner_aval: Any, memory_space: Any = None, kind: Any = None):
        self.inner_aval = inner_aval
        self.memory_space = memory_space
        self.kind = kind

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    weak_type = property(lambda self: self.inner_aval.weak_type)
    sharding = property(lambda self: self.inner_aval.sharding)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    is_high = False

    def update(self, inner_aval: Any = None, memory_space: Any = None,
               kind: Any = None) -> AbstractRef:
        """This type with the given fields replaced."""
        return AbstractRef(self.inner_aval if inner_aval is None else inner_aval,
                           self.memory_space if memory_space is None else memory_space,
                           self.kind if kind is None else kind)

    def update_weak_type(self, weak_type: bool) -> AbstractRef:
        return self.update(inner_aval=self.inner_aval.update(weak_type=weak_type))

    def to_tangent_aval(self) -> AbstractRef:
        return AbstractRef(self.inner_aval.to_tangent_aval(), self.memory_space, self.kind)

    to_ct_aval = to_tangent_aval

    def str_short(self, short_dtypes: bool = False, mesh_axis_types: bool = False) -> str:
        inner = self.inner_aval.str_short().lstrip("~")     # JAX shows no weak type here
        if self.memory_space is not None:
            return f"Ref<{self.memory_space}>{{{inner}}}"
        return f"Ref{{{inner}}}"

    __str__ = __repr__ = str_short

    def __eq__(self, other: object) -> bool:
        return (type(self) is type(other) and self.inner_aval == other.inner_aval
                and self.memory_space == other.memory_space)

    def __hash__(self) -> int:
        return hash((AbstractRef, self.inner_aval, self.memory_space))


class Ref:
    """A mutable array reference (``jax.Ref``): made by ``new_ref``, read with ``ref[idx]``,
    written with ``ref[idx] = v``. See Note [refs as threaded state]."""
    __slots__ = ("_aval", "_value", "_scope", "_trace", "__weakref__")

    def __init__(self, aval: AbstractRef, value: Any):
        self._aval = aval
        self._value = value
        self._scope = innermost()          # the scope that owns it (None: none)
        self._trace = current_trace()       # the trace it was made in (None: eagerly)

    # The shape is the value's: under vmap, a batched ref argument holds one example's.
    shape = property(lambda self: tuple(self._value.shape))
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    weak_type = property(lambda self: self._aval.weak_type)

    @property
    def aval(self) -> AbstractRef:
        if self.shape == self._aval.shape:
            return self._aval
        inner = self._aval.inner_aval
        return self._aval.update(inner_aval=inner.update(shape=self.shape))

    @property
    def sharding(self) -> Any:
        return _read(self).sharding

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, idx: Any) -> Any:
        return get(self, idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        set_(self, idx, value)

    def get(self, idx: Any = ()) -> Any:
        return get(self, idx)

    def set(self, value: Any, idx: Any = ()) -> None:
        set_(self, idx, value)

    def swap(self, value: Any, idx: Any = ()) -> Any:
        return swap(self, idx, value)

    def addupdate(self, value: Any, idx: Any = ()) -> None:
        addupdate(self, idx, value)

    def __repr__(self) -> str:
        value = self._value
        if isinstance(value, Tracer):
            return f"Traced<{self._aval.str_short()}>"
        return "Ref" + repr(value)[len("Array"):]

    __str__ = __repr__

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        return np.asarray(_read(self), *args, **kwargs)


def returned_ref(name: str, out: Any) -> None:
    """JAX's ValueError for a traced function ``name`` (a loop body, a branch ...) that
    returned a ref in ``out``."""
    path, ref = next((p, leaf) for p, leaf in tree_flatten_with_path(out)[0]
                     if isinstance(leaf, Ref))
    raise ValueError(
        f"function {name} traced for a transformation returned a mutable array reference of "
        f"type {ref.aval}{f' at output {keystr(path)}' if path else ''}, but mutable array "
        f"references cannot be returned; return ref[...] (or jax.freeze(ref)) instead"
        f"{at_line(user_source())}")


def ref_argument(name: str, args: Any) -> None:
    """The TypeError for a ref among the arguments of a traced function ``name`` that does
    not take refs (spmdc threads refs through jit, vmap and closures, not through the
    carries and operands of loops and branches, nor into lower, trace or make_jaxpr)."""
    path, ref = next((p, leaf) for p, leaf in tree_flatten_with_path(args)[0]
                     if isinstance(leaf, Ref))
    raise TypeError(
        f"{name}: argument {('args' if path[0].idx == 0 else 'kwargs') + keystr(path[1:])} "
        f"is a mutable array reference of type {ref.aval}; "
        "spmdc passes refs as arguments to jit and vmap calls only (not to loop carries, "
        "branch operands, lower, trace, eval_shape or make_jaxpr): close over the ref "
        f"instead, or pass ref[...]{at_line(user_source())}")


def is_ref(x: Any) -> bool:
    return isinstance(x, Ref)


aval_rules[Ref] = lambda r: r.aval           # jax.typeof(ref) is its AbstractRef


def ref_values(refs: Sequence[Ref]) -> list[Any]:
    """The refs' current values, read as the enclosing function reads them."""
    return [_read(r) for r in refs]


def write_values(refs: Sequence[Ref], values: Sequence[Any]) -> None:
    """Give the refs new whole values, written as the enclosing function writes them."""
    for r, v in zip(refs, values, strict=True):
        touch(r, True)
        r._value = v


# --- reading and writing ---------------------------------------------------------------------

def _check_ref(op: str, ref: Any) -> Ref:
    if not isinstance(ref, Ref):
        raise TypeError(f"{op}: expected a mutable array reference (jax.Ref, made by "
                        f"jax.new_ref), got {type(ref).__name__}{at_line(user_source())}")
    return ref


class _Freed:
    """What a ref freed by ``free_ref`` holds."""
    __slots__ = ()
    shape = ()

    def __repr__(self) -> str:
        return "<freed>"


_FREED = _Freed()


def _live(op: str, ref: Ref) -> Ref:
    if ref._value is _FREED:
        raise ValueError(f"{op}: the mutable array reference of type {ref._aval} was freed by "
                         "jax.free_ref and cannot be used any more"
                         f"{at_line(user_source())}")
    return ref


def _read(ref: Ref) -> Any:
    touch(ref, False)
    return _live("ref read", ref)._value


def _whole(idx: Any) -> bool:
    return idx is Ellipsis or (isinstance(idx, tuple) and (
        len(idx) == 0 or (len(idx) == 1 and idx[0] is Ellipsis)))


def get(ref: Ref, idx: Any = ()) -> Any:
    """``ref[idx]``: the value the ref holds, indexed as an array is."""
    value = _read(_check_ref("ref get", ref))
    return value if _whole(idx) else value[idx]


def _leaks(value: Any, home: Trace | None) -> bool:
    """Whether ``value`` is a Tracer of a trace nested inside ``home`` (None: eager)."""
    if not isinstance(value, Tracer):
        return False
    trace = value._trace
    if home is None:
        return True
    while trace is not None and trace is not home:
        trace = trace.parent
    return trace is home and value._trace is not home


def _checked_value(op: str, ref: Ref, idx: Any, value: Any) -> Any:
    value = asarray(value)
    current = ref._value
    expected = ref.shape if _whole(idx) else current[idx].shape
    if value.shape != tuple(expected):
        raise ValueError(f"Invalid shape for `{op}`. Ref shape: {ref.shape}. Expected shape: "
                         f"{tuple(expected)}. Value shape: {value.shape}. Index: {idx!r}"
                         f"{at_line(user_source())}")
    if value.dtype != ref.dtype:
        # JAX's implicit cast: a weakly typed float into a float ref, any integer into an
        # integer ref; every other dtype difference is an error
        floats = all(dtypes.issubdtype(d, np.floating) for d in (value.dtype, ref.dtype))
        ints = all(dtypes.issubdtype(d, np.integer) for d in (value.dtype, ref.dtype))
        if not ((getattr(value, "weak", False) and floats) or ints):
            raise ValueError(f"Invalid dtype for `{op}`. Ref dtype: {ref.dtype}. Value dtype: "
                             f"{value.dtype}{at_line(user_source())}")
        value = value.astype(ref.dtype)
    if _leaks(value, home(ref)):
        raise Exception(
            f"performing a set/swap operation with a transformed value (traced by "
            f"{value._trace.builder.name}) on an array reference of type {ref.aval} created "
            "outside that transformation. Move the array reference to be an argument of the "
            f"transformed function, or create it inside{at_line(user_source())}")
    return value


def _store(ref: Ref, idx: Any, value: Any) -> None:
    new = value if _whole(idx) else ref._value.at[idx].set(value)
    if not ref.weak_type and getattr(new, "weak", False):
        new = strong(new)
    ref._value = new


def swap(ref: Ref, idx: Any, value: Any) -> Any:
    """Write ``value`` at ``ref[idx]`` and return what was there (``jax.ref.swap``)."""
    _check_ref("ref swap", ref)
    touch(ref, True)
    _live("ref write", ref)
    value = _checked_value("swap", ref, idx, value)
    old = ref._value if _whole(idx) else ref._value[idx]
    _store(ref, idx, value)
    return old


def set_(ref: Ref, idx: Any, value: Any) -> None:
    """``ref[idx] = value`` (``jax.ref.set``): the shape and dtype must be ``ref[idx]``'s."""
    swap(ref, idx, value)


def addupdate(ref: Ref, idx: Any, value: Any) -> None:
    """``ref[idx] += value`` (``jax.ref.addupdate``), ``value`` of ``ref[idx]``'s shape."""
    _check_ref("ref addupdate", ref)
    touch(ref, True)
    _live("ref addupdate", ref)
    value = _checked_value("addupdate", ref, idx, value)
    old = ref._value if _whole(idx) else ref._value[idx]
    _store(ref, idx, old + value)


# --- making and freezing ---------------------------------------------------------------------

def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """A mutable array reference holding ``init_val`` (``jax.new_ref``)."""
    if memory_space is not None:
        raise ValueError(f"new_ref: memory_space={memory_space!r}: spmdc places every ref in "
                         f"device memory; leave memory_space=None{at_line(user_source())}")
    if isinstance(init_val, Ref):
        raise TypeError("new_ref: the initial value is itself a Ref; pass jax.freeze(ref) "
                        f"or ref[...] for a new reference to a copy{at_line(user_source())}")
    if isinstance(init_val, (list, tuple, dict)) or not _array_like(init_val):
        raise TypeError(
            "Error interpreting argument to new_ref as a JAX value. The problematic value is "
            f"of type {type(init_val)} and was passed to new_ref at position 0"
            f"{at_line(user_source())}")
    value = asarray(init_val)
    inner = ShapedArray(value.shape, value.dtype, bool(getattr(value, "weak", False)))
    return Ref(AbstractRef(inner, None, kind), value)


def _array_like(x: Any) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic, bool, int, float, complex)
                      ) or hasattr(x, "__jax_array__")


def empty_ref(ty: Any, memory_space: Any = None) -> Ref:
    """A ref of type ``ty`` (a ShapeDtypeStruct or ShapedArray) whose contents are not
    yet written (``jax.empty_ref``); spmdc fills it with zeros."""
    if memory_space is not None:
        raise ValueError(f"empty_ref: memory_space={memory_space!r}: spmdc places every ref "
                         f"in device memory; leave memory_space=None{at_line(user_source())}")
    try:
        shape, dtype = tuple(ty.shape), ty.dtype
    except AttributeError:
        raise TypeError(f"empty_ref: expected a type with a shape and a dtype (a "
                        f"jax.ShapeDtypeStruct), got {type(ty).__name__}"
                        f"{at_line(user_source())}") from None
    value = asarray(np.zeros(shape, dtype))
    return Ref(AbstractRef(ShapedArray(shape, dtype), None, None), value)


def freeze(ref: Ref) -> Any:
    """The final value of ``ref`` (``jax.freeze``)."""
    if not isinstance(ref, Ref):
        raise TypeError(f"freeze: expected a mutable array reference (jax.Ref), got "
                        f"{type(ref).__name__}{at_line(user_source())}")
    return _read(ref)


def free_ref(ref: Ref) -> tuple[()]:
    """Invalidate ``ref`` (``jax.free_ref``): reading, writing or freeing it again raises.
    Only a ref made in the function being traced (or eagerly, outside any) can be freed."""
    _check_ref("free_ref", ref)
    scope = innermost()
    if scope is not None and not scope.owns(ref):
        raise ValueError("free_ref: the mutable array reference was made outside the function "
                         "being transformed; free it where it was made"
                         f"{at_line(user_source())}")
    _live("free_ref", ref)._value = _FREED
    return ()
