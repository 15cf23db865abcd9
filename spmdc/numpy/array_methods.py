"""Operators, NumPy-style methods and basic indexing for Tracer and spmdc.Array.

``install_methods(cls)`` gives both classes the same behaviour, so code reads the same
inside and outside transformations. Basic indexing (ints, slices, None, Ellipsis, traced
scalar ints) is one ``slice`` (plus ``rev`` for negative steps, ``dynamic_slice`` for
traced indices) and a reshape; integer-array indexing and ``.at[...]`` go through
gather/scatter in indexing.py.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import lax
from ..core import dtypes
from ..core.config import strict_indexing_enabled
from ..core.operands import unwrap
from ..core.tracing import Tracer, user_source
from ..transforms.partitioned import place_computed
from .indexing import (
    advanced_getitem,
    check_hints,
    normalize_index,
    scatter_update,
)

__all__ = ["install_methods", "getitem"]


_loaded: dict[str, Any] = {}      # the namespace (set by install_methods), Array (on first use)


def _jnp() -> Any:
    return _loaded["jnp"]


def _is_array(x: Any) -> bool:
    try:
        types = _loaded["array_types"]
    except KeyError:
        from ..runtime.array import Array
        types = _loaded["array_types"] = (Tracer, Array)
    return isinstance(x, types)


def _index_error(message: str, kind: type[Exception] = IndexError) -> Exception:
    source = user_source()
    return kind(message + (f" (at {source})" if source else ""))


# --- indexing ---------------------------------------------------------------------------------

def _is_advanced(i: Any) -> bool:
    if isinstance(i, (list, np.ndarray, bool, np.bool_)):   # x[True] adds an axis, as NumPy
        return True
    return _is_array(i) and (i.ndim > 0 or i.dtype == np.bool_)


def getitem(x: Any, index: Any) -> Any:
    jnp = _jnp()
    index = normalize_index(x.ndim, index)
    if any(_is_advanced(i) for i in index):
        return advanced_getitem(x, index)
    starts, limits, strides, flips, out_shape = [], [], [], [], []
    dynamic: list[tuple[int, Any]] = []
    dim = 0
    for i in index:
        if i is None:
            out_shape.append(1)
            continue
        n = x.shape[dim]
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step < 0:
                flips.append(dim)
                start, stop, step = n - 1 - start, n - 1 - stop, -step
            count = max(0, -(-(stop - start) // step))
            starts.append(start)
            limits.append(start + (count - 1) * step + 1 if count else start)
            strides.append(step)
            out_shape.append(count)
        elif _is_array(i):                      # a traced (or device) scalar index
            if i.dtype.kind not in "iu":
                raise _index_error(f"Indexer must have integer or boolean type, got indexer "
                                   f"with type {i.dtype}", TypeError)
            dynamic.append((dim, i))
            starts.append(0)
            limits.append(n)
            strides.append(1)
        else:
            try:
                k = operator.index(i)
            except TypeError:
                raise _index_error(f"only integers, slices, None, Ellipsis and integer "
                                   f"arrays are valid indices, got {type(i).__name__} "
                                   f"{i!r}", TypeError) from None
            if not -n <= k < n:             # See Note [out-of-bounds ints] in index_plan.py
                if n == 0:
                    raise _index_error(f"index is out of bounds for axis {dim} with size 0")
                if strict_indexing_enabled():
                    raise _index_error(f"index {k} is out of bounds for axis {dim} with size "
                                       f"{n} (spmdc_strict_indexing is on)")
                k = min(max(k + n if k < 0 else k, 0), n - 1)
            k %= n
            starts.append(k)
            limits.append(k + 1)
            strides.append(1)
        dim += 1
    y = x
    if flips:
        y = lax.rev(y, flips)
    if (tuple(starts) != (0,) * y.ndim or tuple(limits) != y.shape
            or any(s != 1 for s in strides)):
        y = lax.slice(y, starts, limits, None if all(s == 1 for s in strides) else strides)
    if dynamic:
        idx: list[Any] = [0] * y.ndim
        sizes = list(y.shape)
        for d, i in dynamic:
            i = i.astype(dtypes.default_int())
            idx[d] = jnp.where(i < 0, i + x.shape[d], i)
            sizes[d] = 1
        y = lax.dynamic_slice(y, idx, sizes, allow_negative_indices=False)
    if tuple(out_shape) == y.shape:
        return y
    if len(out_shape) == y.ndim + sum(i is None for i in index):    # only new axes
        return lax.expand_dims(y, [k for k, i in enumerate(index) if i is None])
    return jnp.reshape(y, tuple(out_shape))


class _IndexUpdateHelper:
    """``x.at``: ``x.at[idx].set(v)``, ``.add``, ``.subtract``, ``.multiply``, ``.divide``,
    ``.power``, ``.min``, ``.max``, ``.get``; each takes ``mode=`` (Note [index modes] in
    indexing.py), ``wrap_negative_indices=`` and the hints ``indices_are_sorted=`` /
    ``unique_indices=``."""
    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.array, index)


class _IndexUpdateRef:
    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array, self.index = array, index

    def get(self, *, indices_are_sorted: bool = False, unique_indices: bool = False,
            mode: Any = None, fill_value: Any = None, wrap_negative_indices: bool = True,
            out_sharding: Any = None) -> Any:
        """``x[idx]``; out-of-bounds indices clamp, or read ``fill_value`` with mode='fill'
        (as in JAX, ``fill_value`` only matters in that mode); ``out_sharding`` lays the
        result out (lax.dot_general's)."""
        check_hints(indices_are_sorted, unique_indices)
        # One gather, whatever the index: a Python int out of bounds follows the mode here
        # (clamped by default), as in JAX, where x[i] would raise.
        x = self.array
        return place_computed(lambda: advanced_getitem(
            x, normalize_index(x.ndim, self.index), mode=mode, fill_value=fill_value,
            wrap_negative_indices=wrap_negative_indices, check_ints=False), out_sharding)

    def _update(self, values: Any, combine: str, indices_are_sorted: bool,
                unique_indices: bool, mode: Any, wrap_negative_indices: bool,
                array: Any = None) -> Any:
        check_hints(indices_are_sorted, unique_indices)
        return scatter_update(self.array if array is None else array, self.index, values,
                              combine, mode=mode, wrap_negative_indices=wrap_negative_indices)

    def set(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        return self._update(values, "set", indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices)

    def add(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        return self._update(values, "add", indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices)

    def subtract(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None,
                 wrap_negative_indices: bool = True) -> Any:
        return self._update(_jnp().negative(values), "add", indices_are_sorted,
                            unique_indices, mode, wrap_negative_indices)

    def multiply(self, values: Any, *, indices_are_sorted: bool = False,
                 unique_indices: bool = False, mode: Any = None,
                 wrap_negative_indices: bool = True) -> Any:
        return self._update(values, "mul", indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices)

    mul = multiply

    def divide(self, values: Any, *, indices_are_sorted: bool = False,
               unique_indices: bool = False, mode: Any = None,
               wrap_negative_indices: bool = True) -> Any:
        """``x / ones.at[idx].multiply(values)``: true division (ints give floats)."""
        jnp = _jnp()
        divisor = self._update(values, "mul", indices_are_sorted, unique_indices, mode,
                               wrap_negative_indices, array=jnp.ones_like(self.array))
        return jnp.divide(self.array, divisor)

    def power(self, values: Any, *, indices_are_sorted: bool = False,
              unique_indices: bool = False, mode: Any = None,
              wrap_negative_indices: bool = True) -> Any:
        """``x ** ones.at[idx].multiply(values)``."""
        jnp = _jnp()
        exponent = self._update(values, "mul", indices_are_sorted, unique_indices, mode,
                                wrap_negative_indices, array=jnp.ones_like(self.array))
        return jnp.power(self.array, exponent)

    def min(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        return self._update(values, "min", indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices)

    def max(self, values: Any, *, indices_are_sorted: bool = False,
            unique_indices: bool = False, mode: Any = None,
            wrap_negative_indices: bool = True) -> Any:
        return self._update(values, "max", indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices)


# --- installation --------------------------------------------------------------------------------

def _binary(name: str, reflected: bool = False) -> Any:
    def op(self: Any, other: Any) -> Any:
        other = unwrap(other)                    # See Note [__jax_array__]
        if not _operand_ok(other):
            return NotImplemented
        fn = getattr(_jnp(), name)
        return fn(other, self) if reflected else fn(self, other)
    return op


def _operand_ok(x: Any) -> bool:
    return _is_array(x) or isinstance(x, (int, float, complex, bool, np.ndarray, np.generic))


def _astype(self: Any, dtype: Any) -> Any:
    return lax.convert_element_type(self, dtype)


def _reshape(self: Any, *shape: Any, order: str = "C") -> Any:
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    return _jnp().reshape(self, shape, order=order)


def _transpose(self: Any, *axes: Any) -> Any:
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
        axes = axes[0]
    return _jnp().transpose(self, axes or None)


def _method(name: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(_jnp(), name)(self, *args, **kwargs)
    method.__name__ = name
    return method


# The spmdc.numpy functions that are also methods (x.sum() is jnp.sum(x) ...); the same
# on Tracer and spmdc.Array (tests/test_methods.py runs each both ways).
METHODS = ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "all", "any", "var",
           "std", "ravel", "squeeze", "clip", "dot", "cumsum", "cumprod", "round", "swapaxes",
           "repeat", "take", "trace", "sort", "argsort")


def _operator_round(self: Any, ndigits: int | None = None) -> Any:
    """Python's ``round(x, ndigits)``: ``jnp.round``; with no ``ndigits`` an integer array
    of the default int, as ``round`` of a float is an int (JAX's answer too)."""
    out = _jnp().round(self, ndigits or 0)
    return out.astype(int) if ndigits is None else out


def install_methods(cls: type, namespace: Any) -> None:
    """Give ``cls`` NumPy's operators and methods, each calling ``namespace``'s function of
    that name (spmdc.numpy, which installs them once all its functions are defined)."""
    _loaded["jnp"] = namespace
    for dunder, name in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                         ("truediv", "true_divide"), ("floordiv", "floor_divide"),
                         ("mod", "remainder"), ("pow", "power"), ("matmul", "matmul"),
                         ("and", "bitwise_and"), ("or", "bitwise_or"),
                         ("xor", "bitwise_xor"), ("lshift", "left_shift"),
                         ("rshift", "right_shift")]:
        setattr(cls, f"__{dunder}__", _binary(name))
        setattr(cls, f"__r{dunder}__", _binary(name, reflected=True))
    for dunder, name in [("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                         ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")]:
        setattr(cls, f"__{dunder}__", _binary(name))
    cls.__neg__ = lambda self: _jnp().negative(self)
    cls.__pos__ = lambda self: self
    cls.__abs__ = lambda self: _jnp().absolute(self)
    cls.__round__ = _operator_round
    cls.__invert__ = lambda self: _jnp().invert(self)
    cls.__getitem__ = getitem
    cls.__divmod__ = _binary("divmod")
    cls.__rdivmod__ = _binary("divmod", reflected=True)
    cls.at = property(_IndexUpdateHelper)
    cls.T = property(lambda self: _jnp().transpose(self))
    cls.mT = property(lambda self: _jnp().swapaxes(self, -1, -2))
    cls.astype = _astype
    cls.reshape = _reshape
    cls.transpose = _transpose
    cls.flatten = lambda self: _jnp().ravel(self)
    for name in METHODS:
        setattr(cls, name, _method(name))
    cls.copy = lambda self: _jnp().copy(self)   # See Note [copies are new buffers]
