"""Values as operands: conversion, weak-type promotion and broadcasting.

Every user-facing layer (lax, numpy, the transforms that build arrays) turns its arguments
into operands here: ``asarray`` makes a Python or NumPy value (or a list holding arrays)
an spmdc value, ``promote`` finds the common dtype on JAX's lattice with Python scalars
weak, and ``broadcast_to`` makes NumPy's broadcasting explicit with broadcast_in_dim.
"""
from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.primitives.elementwise import convert_p
from ..compiler.primitives.structural import (
    broadcast_in_dim_p,
    concatenate_p,
    iota_p,
    reshape_p,
)
from ..errors import at_line
from ..runtime.array import Array
from . import dtypes
from .devices import put_implicitly
from .tracing import Tracer, bind, current_trace, type_of, user_source

ARRAY_TYPES = (Tracer, Array)


def is_array(x: Any) -> bool:
    return isinstance(x, ARRAY_TYPES)


# Note [__jax_array__]
# ~~~~~~~~~~~~~~~~~~~~
# JAX's protocol for objects that stand for an array (Flax's nnx.Variable and Equinox
# modules define it): a function or an Array operator given one computes with what its
# ``__jax_array__()`` returns, which may be a traced value. The entry points of this
# module (asarray, literal, promote, all_weak) and the Array operators
# (numpy/array_methods.py) unwrap such an object first; arrays and Python and NumPy
# scalars are never such objects, so they are tested before the attribute lookup.

def unwrap(x: Any) -> Any:
    """``x.__jax_array__()`` for an object that defines it, else ``x``. See Note
    [__jax_array__]."""
    if isinstance(x, ARRAY_TYPES) or type(x) in _SCALARS:
        return x
    method = getattr(x, "__jax_array__", None)
    return x if method is None else method()


_SCALARS = frozenset({bool, int, float, complex})


def strong(x: Any) -> Any:
    """The spmdc array ``x`` with a strong type: the same value, no equation."""
    if isinstance(x, Tracer):
        return Tracer(x._var, x._trace, False)
    return Array(x._buffers, x.type, False, x._devices, x.split, x._sharding,
                 x.committed)


def weakly_typed(x: Any) -> Any:
    """The spmdc array ``x`` with a weak type: the same value, no equation."""
    if isinstance(x, Tracer):
        return Tracer(x._var, x._trace, True)
    return Array(x._buffers, x.type, True, x._devices, x.split, x._sharding, x.committed)


def error(op: str, message: str, kind: type[Exception] = TypeError) -> Exception:
    """An exception of class ``kind`` (TypeError unless JAX raises another there) naming
    ``op``, with the user's line appended."""
    return kind(f"{op}: {message}{at_line(user_source())}")


def asarray(x: Any, dtype: Any = None) -> Any:
    """``x`` as an spmdc value (a Tracer while tracing, else an Array)."""
    if x.__class__ is not Tracer and not isinstance(x, ARRAY_TYPES):   # the common case
        x = unwrap(x)                                                # See Note [__jax_array__]
    if x.__class__ is Tracer or isinstance(x, ARRAY_TYPES):
        return x if dtype is None else x.astype(dtype)
    if isinstance(x, (list, tuple)) and builtins.any(is_array(v) for v in flat_checked(x)):
        out = _stacked(x)
        return out if dtype is None else out.astype(dtype)
    t, weak = type_of(x if dtype is None else np.asarray(x, dtypes.canonicalize(dtype)))
    value = np.asarray(x, t.dtype)
    out = put_implicitly(value)      # See Note [transfer guards] in runtime/transfers.py
    out.weak = weak and dtype is None
    return out


def _stacked(values: Sequence[Any]) -> Any:
    """A list holding arrays as one array with a new leading axis (``jnp.stack``'s
    program: each element reshaped to a leading 1, then one concatenate)."""
    arrays = [asarray(v) for v in values]
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise error("stack", f"all input arrays must have the same shape, got {sorted(shapes)}",
                    ValueError)
    arrays = [bind(reshape_p, a, new_sizes=(1, *a.shape), weak=a.weak) for a in arrays]
    arrays, _, weak = promote("concatenate", *arrays)
    if len(arrays) == 1:
        return arrays[0]
    return bind(concatenate_p, *arrays, dimension=0, weak=weak)


def flat_checked(x: Any) -> list[Any]:
    """The leaves of nested lists and tuples (a cycle is the pytree cycle error)."""
    try:
        return flat(x)
    except RecursionError as e:
        from .tree_cycles import cycle_error
        raise cycle_error(x, None, e) from None


def flat(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in flat(v)]
    return [x]


def operand(x: Any, dtype: np.dtype, weak: bool = False) -> Any:
    """``x`` converted to ``dtype``: arrays with convert (weakly typed if ``weak``), Python
    values as 0-d NumPy."""
    if isinstance(x, ARRAY_TYPES):
        return x if x.dtype == dtype else bind(convert_p, x, new_dtype=dtype, weak=weak)
    if type(x) is int or (isinstance(x, int) and not isinstance(x, bool)):
        # Note [weak int conversion]: JAX converts a Python int to the default int
        # (OverflowError outside its range) and then casts, which wraps to a narrower
        # integer type (-1 * uint8 array multiplies by 255) and rounds to a float
        # (float16 gives inf beyond its range). NumPy refuses out-of-range ints instead.
        dtypes.dtype_and_weak(x)                         # the range check
        with np.errstate(over="ignore"):
            return np.asarray(x, dtypes.default_int()).astype(dtype)
    with np.errstate(over="ignore"):                     # 1e300 in float16 is inf
        return np.asarray(x, dtype)


def promote(op: str, *args: Any) -> tuple[list[Any], np.dtype, bool]:
    """``args`` converted to their common dtype (JAX's lattice, Python scalars weak), that
    dtype, and whether the result is weak."""
    args = tuple(unwrap(a) for a in args)
    pairs = tuple([(a.dtype, bool(a.weak)) if isinstance(a, ARRAY_TYPES)
                   else dtypes.dtype_and_weak(a) for a in args])
    dtype, weak = dtypes.result_type_of_pairs(pairs)
    return [operand(a, dtype, weak) for a in args], dtype, weak


# Note [weak literals]
# ~~~~~~~~~~~~~~~~~~~~
# As in JAX, a primitive's result is weakly typed iff all its operands are (lax computes
# it so: ``all_weak``), and a Python or NumPy scalar operand stays a literal of the
# program. A NumPy value is strongly typed and a Python scalar weakly, so a weak Python
# scalar that promotion gives the result's dtype must stay a Python scalar to keep its
# weak type: ``promote_operands`` keeps it one (of the promoted dtype's kind) where the
# result is weak. Weak types are the default dtype of their kind, which a Python scalar
# of that kind has (x64 mode included).

def literal(x: Any) -> Any:
    """``x`` as a primitive's operand: spmdc arrays, Python scalars (weak) and NumPy values
    (strong) as they are, so that a scalar is a literal of the program and a NumPy array
    a captured constant; anything else (a list, or an object with ``__jax_array__``)
    made an array. See Note [weak literals]."""
    if x.__class__ is Tracer or type(x) in (bool, int, float, complex) or isinstance(
            x, (Tracer, Array, np.ndarray, np.generic)):
        return x
    return asarray(x)


def all_weak(*xs: Any) -> bool:
    """Whether a result computed from ``xs`` is weakly typed: iff every operand is (Python
    scalars are weak, NumPy values strong). See Note [weak literals]."""
    for x in xs:                 # a loop, not all(): every traced primitive asks
        if not (x.weak if x.__class__ is Tracer else type_of(unwrap(x))[1]):
            return False
    return True


def promote_operands(op: str, *args: Any) -> tuple[list[Any], np.dtype, bool]:
    """``promote``, with the Python scalars of a weak result kept Python scalars of its
    dtype, so that each operand carries its weak type (Note [weak literals])."""
    out, dtype, weak = promote(op, *args)
    if weak:
        out = [_weak_scalar(a, p, dtype) if not is_array(a) else p
               for a, p in zip(args, out, strict=True)]
    return out, dtype, weak


def _weak_scalar(original: Any, promoted: Any, dtype: np.dtype) -> Any:
    """The promoted value of the weak Python scalar ``original`` as a Python scalar of
    ``dtype``'s kind, where one has that dtype; else ``promoted`` (a NumPy value)."""
    if type(original) not in (int, float, complex):
        return promoted
    scalar = np.asarray(promoted).item()
    try:
        if dtypes.dtype_and_weak(scalar) == (dtype, True):
            return scalar
    except OverflowError:
        pass
    return promoted


def result_type(*args: Any) -> np.dtype:
    """``jnp.result_type``: each argument an array, a value, a dtype specifier (a dtype,
    ``jnp.float32``, a name) or a Python type, as dtypes.result_type takes them. Arrays
    of one extended dtype (typed keys) have that dtype; it promotes with nothing else, as
    in JAX."""
    from .abstract import extended_dtype_classes
    given = [getattr(a, "dtype", a) for a in args]
    extended = [d for d in given if isinstance(d, tuple(extended_dtype_classes))]
    if extended:
        if len(extended) == len(args) and all(d == extended[0] for d in extended):
            return extended[0]
        raise ValueError(f"dtype={extended[0]} is not a valid dtype for JAX type promotion.")
    return dtypes.result_type(*[(a.dtype, bool(a.weak)) if is_array(a) else a
                                for a in args])[0]


def dtype_of(x: Any) -> np.dtype:
    x = unwrap(x)
    return x.dtype if is_array(x) else dtypes.dtype_and_weak(x)[0]


def inexact(*args: Any) -> list[Any]:
    """``args`` as arrays of one inexact dtype (their promoted one, or the default float),
    as JAX's ``promote_args_inexact``."""
    arrays = [asarray(a) for a in args]
    dtype = result_type(*args)
    if not dtypes.issubdtype(dtype, np.inexact):
        dtype = dtypes.default_float()
    return [a if a.dtype == dtype else a.astype(dtype) for a in arrays]


def shape_of(x: Any) -> tuple[int, ...]:
    x = unwrap(x)
    return x.shape if isinstance(x, ARRAY_TYPES) else np.shape(x)


# Note [broadcast error classes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Shapes that do not broadcast raise the class JAX 0.10.2 raises there, which depends on
# how it got there: the functions whose job is broadcasting (and jnp.where and matmul's
# batch dimensions, which broadcast their operands first) raise ValueError; an
# elementwise operation raises ValueError when its operands' non-scalar ranks differ
# (JAX's promote_shapes calls lax.broadcast_shapes to find the rank to promote to) and
# TypeError when they are of one rank (the lax operation itself rejects the shapes).
_BROADCASTING_FUNCTIONS = ("broadcast_shapes", "broadcast_to", "broadcast_arrays", "where",
                           "matmul")


def _broadcast_error_class(op: str, shapes: Sequence[Sequence[int]]) -> type[Exception]:
    """The class JAX raises for ``shapes`` that do not broadcast in ``op``.
    See Note [broadcast error classes]."""
    ranks = {len(s) for s in shapes if len(s)}
    return ValueError if op in _BROADCASTING_FUNCTIONS or len(ranks) > 1 else TypeError


def broadcast_shapes(*shapes: Sequence[int], op: str = "broadcast_shapes") -> tuple[int, ...]:
    if shapes and builtins.all(type(s) is tuple and s == shapes[0] for s in shapes):
        return shapes[0]                # the common case: nothing to broadcast
    ndim = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            listed = ", ".join(str(tuple(s)) for s in shapes)
            if op in _BROADCASTING_FUNCTIONS:    # worded as JAX's
                raise error(op, "Incompatible shapes for broadcasting: " + listed, ValueError)
            raise error(op, "incompatible shapes for broadcasting: " + listed,
                        _broadcast_error_class(op, shapes))
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def stretch_size_one(operands: Sequence[Any]) -> list[Any]:
    """The operands of a binary ``lax`` operation with their size-1 dimensions stretched,
    as JAX 0.10.2's ``lax.add`` and its kin accept them (``add a:f32[2,3] b:f32[1,3]``):
    operands of one rank (rank-0 ones aside) whose sizes agree but where one is 1 are
    broadcast to the common shape (Note [size-1 dimensions of lax operations]). Operands
    that do not fit so are returned as they are, for the primitive to refuse."""
    shapes = [shape_of(x) for x in operands]
    ranked = [s for s in shapes if s != ()]
    if len({*ranked}) <= 1 or len({len(s) for s in ranked}) != 1:
        return list(operands)
    target = []
    for sizes in zip(*ranked, strict=True):
        others = {n for n in sizes if n != 1}
        if len(others) > 1:
            return list(operands)
        target.append(others.pop() if others else 1)
    return [broadcast_to(x, tuple(target)) for x in operands]


# Note [size-1 dimensions of lax operations]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX 0.10.2's n-ary elementwise primitives (add, mul, max, the comparisons, ...) accept
# operands of one rank whose dimensions differ where one of them is 1, and its jnp
# emits them so (``add a:f32[2] b:f32[1]``, no broadcast first). spmdc's primitives keep
# one shape (rank-0 operands aside): ``lax``'s functions and a primitive's ``bind`` in
# JAX's form (a jaxpr a library runs again) stretch such operands with a
# ``broadcast_in_dim`` first, and the jaxpr view shows such a broadcast folded into the
# operation that uses it, as JAX prints it (transforms/jaxpr_view.py).


def broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """NumPy broadcasting of one operand; rank-0 operands stay rank 0 (primitives take them)."""
    xs = shape_of(x)
    if xs == shape or xs == ():
        return x
    weak = False
    if not is_array(x):
        x = np.asarray(x)
        if not x.ndim or current_trace() is None:
            return np.broadcast_to(x, shape) if x.ndim else x
        # Under a trace the NumPy operand is captured as it is and broadcast by the
        # program: broadcast on the host, it was captured at the full shape (comparing a
        # [64, 48, 1] index with np.arange(48) captured a [64, 48, 48] constant).
    else:
        weak = x.weak
    # broadcast_in_dim stretches size-1 axes itself (as JAX emits it): no squeeze first.
    lead = len(shape) - len(xs)
    return bind(broadcast_in_dim_p, x, shape=tuple(shape),
                broadcast_dimensions=tuple(range(lead, len(shape))), weak=weak)


def full(shape: tuple[int, ...], fill_value: Any, dtype: Any = None) -> Any:
    """An array of ``shape`` (already checked) filled with ``fill_value``."""
    if not is_array(fill_value) and np.ndim(fill_value) == 0:
        # A Python or NumPy scalar stays a literal of the program (placed on the device
        # and captured, it was an argument XLA could not fold: x + zeros(...) kept its add).
        t, weak = type_of(fill_value)
        fill = np.asarray(fill_value, t.dtype)
        if dtype is not None and dtypes.canonicalize(dtype) != t.dtype:
            fill, weak = bind(convert_p, fill, new_dtype=dtypes.canonicalize(dtype)), False
        return bind(broadcast_in_dim_p, fill, shape=shape, broadcast_dimensions=(),
                    weak=weak and dtype is None)
    if dtype is None:
        fill = asarray(fill_value)
    else:
        fill = asarray(fill_value).astype(dtypes.canonicalize(dtype))
    if fill.ndim:
        broadcast_shapes(fill.shape, shape, op="broadcast_to")
        return fill if fill.shape == shape else broadcast_to(fill, shape)
    return bind(broadcast_in_dim_p, fill, shape=shape, broadcast_dimensions=(),
                weak=fill.weak)


def shape_arg(shape: Any, op: str = "shape") -> tuple[int, ...]:
    """A shape argument as a tuple of non-negative ints (else the error naming ``op``)."""
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        dims = tuple(int(operator.index(d)) for d in shape)
    except TypeError:
        raise error(op, f"shape must be a tuple of Python ints, got {shape!r} "
                     "(a traced value cannot be a shape; make it static)") from None
    if builtins.any(d < 0 for d in dims):
        raise error(op, f"shape {dims} has a negative dimension; every dimension must be "
                     ">= 0")
    return dims


def iota(dtype: np.dtype, shape: tuple[int, ...], dimension: int) -> Any:
    """Counting 0, 1 ... along ``dimension``: a constant built on the host outside a
    trace, the iota primitive in a program."""
    if current_trace() is None:            # a constant: build it on the host
        value = np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(
            [-1 if i == dimension else 1 for i in range(len(shape))]), shape)
        return asarray(np.ascontiguousarray(value))
    return bind(iota_p, dtype=dtype, shape=shape, dimension=dimension)


def check_flag(op: str, name: str, value: Any) -> None:
    """A True/False option that changes nothing on immutable arrays (``copy=``, hints):
    checked, so a wrong value is an error rather than ignored."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{op}: {name} must be True or False, got {value!r}")
