"""jnp.ufunc and jnp.frompyfunc: NumPy-style universal functions over a Python function.

As in JAX, a ``ufunc`` made by ``frompyfunc`` calls its function elementwise by
``vectorize``; ``reduce`` runs a ``fori_loop`` over the axis, ``accumulate`` a ``scan``,
``at`` a ``scan`` over the indices (applied one after another, so repeated indices
accumulate), ``reduceat`` a ``fori_loop``, and ``outer`` a double ``vmap``.

Part of spmdc.numpy, which re-exports every name defined here."""
from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from ..core.tracing import where as _where
from ..transforms.eval_shape import eval_shape
from ..transforms.jit import jit
from ..transforms.vmap import vmap
from .array_creation import full, ones, zeros
from .comparisons import where as where_
from .core import asarray, broadcast_to
from .indexing import take
from .joining import append
from .shape_ops import expand_dims, moveaxis, ravel
from .vectorize import vectorize

__all__ = ["ufunc", "frompyfunc"]


# --- ufunc --------------------------------------------------------------------------------------

class ufunc:
    """A NumPy-style universal function over ``func`` (``nin`` inputs, ``nout`` outputs),
    with ``reduce``, ``accumulate``, ``at``, ``reduceat`` and ``outer`` for binary ones.
    ``call``/``reduce``/... give faster implementations of the methods, as in JAX."""

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *,
                 name: str | None = None, nargs: int | None = None, identity: Any = None,
                 call: Callable[..., Any] | None = None,
                 reduce: Callable[..., Any] | None = None,
                 accumulate: Callable[..., Any] | None = None,
                 at: Callable[..., Any] | None = None,
                 reduceat: Callable[..., Any] | None = None):
        self.__doc__ = func.__doc__
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._func = func
        self.nin, self.nout = operator.index(nin), operator.index(nout)
        self.nargs = operator.index(nargs or nin)
        self.identity = identity
        self._impl = {"call": call, "reduce": reduce, "accumulate": accumulate, "at": at,
                      "reduceat": reduceat}

    def _key(self) -> tuple[Any, ...]:
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self) -> str:
        return f"<jnp.ufunc '{self.__name__}'>"

    def _binary(self, method: str) -> None:
        if self.nin != 2:
            raise ValueError(f"{self.__name__}.{method}: only binary ufuncs have it{_where()}")
        if self.nout != 1:
            raise ValueError(f"{self.__name__}.{method}: only ufuncs with one output have it"
                             f"{_where()}")

    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        if out is not None or where is not None:
            raise ValueError(f"{self.__name__}: out= and where= are not supported (arrays "
                             f"are immutable); use jnp.where on the result{_where()}")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__} takes {self.nin} arguments, got {len(args)}"
                            f"{_where()}")
        call = self._impl["call"] or vectorize(self._func)
        return call(*args)

    def _result_dtype(self, *args: Any) -> Any:
        samples = [ones((), asarray(a).dtype) for a in args]
        return eval_shape(self._func, *samples).dtype

    def reduce(self, a: Any, axis: int | None = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        """The ufunc folded over ``axis`` (None: all of ``a``), from ``initial`` or the
        identity (or the first element), skipping entries where ``where`` is false."""
        self._binary("reduce")
        if out is not None:
            raise ValueError(f"{self.__name__}.reduce: out= is not supported{_where()}")
        if where is not None:
            where = asarray(where)
            if self.identity is None and initial is None:
                raise ValueError(f"{self.__name__}.reduce: a where mask needs initial= "
                                 f"(the ufunc has no identity){_where()}")
            if where.dtype != np.bool_:
                raise ValueError(f"{self.__name__}.reduce: where must be boolean, got "
                                 f"{where.dtype}{_where()}")
        custom = self._impl["reduce"]
        if custom is not None:
            return custom(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                          where=where)
        return self._reduce_by_loop(a, axis, dtype, keepdims, initial, where)

    def _reduce_by_loop(self, arr: Any, axis: Any, dtype: Any, keepdims: bool, initial: Any,
                        where: Any) -> Any:
        arr = asarray(arr)
        initial = self.identity if initial is None else initial
        dtype = self._result_dtype(arr, arr) if dtype is None else dtype
        if where is not None:
            where = broadcast_to(where, arr.shape)
        if isinstance(axis, tuple):
            raise ValueError(f"{self.__name__}.reduce: a tuple of axes needs a ufunc with a "
                             f"reduce implementation; reduce one axis at a time{_where()}")
        if axis is None:
            final = (1,) * arr.ndim if keepdims else ()
            arr = ravel(arr)
            where = None if where is None else ravel(where)
            axis = 0
        else:
            axis = operator.index(axis) % max(arr.ndim, 1)
            final = (*arr.shape[:axis], 1, *arr.shape[axis + 1:]) if keepdims else \
                (*arr.shape[:axis], *arr.shape[axis + 1:])
        arr = moveaxis(arr, axis, 0)
        where = None if where is None else moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"{self.__name__}.reduce: zero-size array and no identity"
                                 f"{_where()}")
            return full(final, initial, dtype)

        def body(i: Any, val: Any) -> Any:
            new = self(val, arr[i].astype(dtype))
            return new if where is None else where_(where[i], new, val)
        start, value = (1, arr[0]) if initial is None else (0, initial)
        value = broadcast_to(asarray(value).astype(dtype), arr.shape[1:])
        result = lax.fori_loop(start, arr.shape[0], body, value)
        return result.reshape(final) if keepdims else result

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running ufunc along ``axis``."""
        self._binary("accumulate")
        if out is not None:
            raise ValueError(f"{self.__name__}.accumulate: out= is not supported{_where()}")
        custom = self._impl["accumulate"]
        if custom is not None:
            return custom(a, axis=axis, dtype=dtype)
        arr = asarray(a)
        dtype = self._result_dtype(arr, arr) if dtype is None else dtype
        if axis is None or isinstance(axis, tuple):
            raise ValueError(f"{self.__name__}.accumulate: takes one axis{_where()}")
        axis = operator.index(axis) % max(arr.ndim, 1)
        if arr.size == 0:
            return zeros(arr.shape, dtype)
        arr = moveaxis(arr, axis, 0)

        def step(carry: Any, _: Any) -> Any:
            i, x = carry
            y = where_(i == 0, arr[0].astype(dtype), self(x.astype(dtype),
                                                             arr[i].astype(dtype)))
            return (i + 1, y), y
        _, result = lax.scan(step, (0, arr[0].astype(dtype)), None, length=arr.shape[0])
        return moveaxis(result, 0, axis)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """``a`` with the ufunc applied at ``indices`` (with ``b`` for binary ones), one
        index after another, so repeated indices accumulate; needs ``inplace=False``."""
        if inplace:
            raise ValueError(f"{self.__name__}.at cannot modify an array in place: arrays "
                             f"are immutable; pass inplace=False{_where()}")
        custom = self._impl["at"]
        if custom is not None:
            return custom(a, indices) if b is None else custom(a, indices, b)
        args = () if b is None else (b,)
        dtype = self._result_dtype(a, *args)
        a = asarray(a).astype(dtype)
        args = tuple(asarray(x).astype(dtype) for x in args)
        indices = indices if isinstance(indices, tuple) else (indices,)
        indices = tuple(i if isinstance(i, slice) else asarray(i) for i in indices)
        shapes = [i.shape for i in indices if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        count = int(np.prod(shape))
        if args:
            arg = broadcast_to(args[0], (*shape, *args[0].shape[len(shape):]))
            args = (arg.reshape(count, *args[0].shape[len(shape):]),)
        flat = [i if isinstance(i, slice) else ravel(broadcast_to(i, shape))
                for i in indices]

        def step(carry: Any, _: Any) -> Any:
            k, acc = carry
            idx = tuple(i if isinstance(i, slice) else i[k] for i in flat)
            acc = acc.at[idx].set(self(acc.at[idx].get(), *(x[k] for x in args)))
            return (k + 1, acc), None
        (_, result), _ = lax.scan(step, (0, a), None, length=count)
        return result

    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None,
                 out: None = None) -> Any:
        """The ufunc reduced over the slices ``indices[i]:indices[i + 1]`` along ``axis``
        (NumPy's rule: just ``a[indices[i]]`` where the next index is not larger)."""
        self._binary("reduceat")
        if out is not None:
            raise ValueError(f"{self.__name__}.reduceat: out= is not supported{_where()}")
        custom = self._impl["reduceat"]
        if custom is not None:
            return custom(a, indices, axis=axis, dtype=dtype)
        a, indices = asarray(a), asarray(indices)
        if a.ndim == 0:
            raise ValueError(f"{self.__name__}.reduceat: a must have at least one dimension"
                             f"{_where()}")
        if indices.ndim != 1:
            raise ValueError(f"{self.__name__}.reduceat: indices must be 1-d, got shape "
                             f"{indices.shape}{_where()}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError(f"{self.__name__}.reduceat: takes one axis{_where()}")
        axis = operator.index(axis) % a.ndim
        out_arr = take(a, indices, axis=axis)
        others = [d for d in range(out_arr.ndim) if d != axis]
        ind = expand_dims(append(indices, a.shape[axis]), others)
        starts = lax.slice_in_dim(ind, 0, ind.shape[axis] - 1, axis=axis)
        ends = lax.slice_in_dim(ind, 1, ind.shape[axis], axis=axis)

        def body(i: Any, acc: Any) -> Any:
            row = take(a, expand_dims(i, 0), axis=axis)
            return where_((i > starts) & (i < ends), self(acc, row), acc)
        result = lax.fori_loop(0, a.shape[axis], body, out_arr)
        return result if dtype is None else result.astype(dtype)

    def outer(self, A: Any, B: Any, /) -> Any:
        """The ufunc of every pair ``(A[i...], B[j...])``: shape ``A.shape + B.shape``."""
        self._binary("outer")
        A, B = asarray(A), asarray(B)
        result = vmap(vmap(self, (None, 0)), (0, None))(ravel(A), ravel(B))
        return result.reshape(*A.shape, *B.shape)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *,
               identity: Any = None) -> ufunc:
    """A ``ufunc`` over ``func`` (which takes and returns scalars)."""
    return ufunc(func, nin, nout, identity=identity, call=jit(vectorize(func)))
