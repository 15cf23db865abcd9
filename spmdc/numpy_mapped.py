"""The names of ``spmdc.numpy`` that are built on the transformations and on lax's control
flow, which spmdc.numpy itself stands below (tests/test_layering.py): ``vectorize``
(NumPy's generalised ufunc signatures, by ``vmap``), ``apply_along_axis``,
``apply_over_axes``, ``ufunc`` and ``frompyfunc``. spmdc/__init__.py installs them into
spmdc.numpy, so ``import spmdc.numpy as jnp; jnp.vectorize`` works as in JAX.

As in JAX, a ``ufunc`` made by ``frompyfunc`` calls its function elementwise by
``vectorize``; ``reduce`` runs a ``fori_loop`` over the axis, ``accumulate`` a ``scan``,
``at`` a ``scan`` over the indices (applied one after another, so repeated indices
accumulate), ``reduceat`` a ``fori_loop``, and ``outer`` a double ``vmap``.
"""
from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Collection
from typing import Any

import numpy as np

from . import lax
from . import numpy as jnp
from .core.tracing import where as _where
from .transforms.eval_shape import eval_shape
from .transforms.jit import jit
from .transforms.vmap import vmap

__all__ = ["vectorize", "apply_along_axis", "apply_over_axes", "ufunc", "frompyfunc"]


# --- vectorize ---------------------------------------------------------------------------------

_DIM = r"\w+"
_CORE_DIMS = f"(?:{_DIM}(?:,{_DIM})*)?"
_ARGUMENT = rf"\({_CORE_DIMS}\)"
_ARGUMENTS = f"{_ARGUMENT}(?:,{_ARGUMENT})*"
_SIGNATURE = f"^{_ARGUMENTS}->{_ARGUMENTS}$"


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    if not re.match(_SIGNATURE, signature.replace(" ", "")):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r} (e.g. "
                         f"'(n),(n)->()'){_where()}")
    ins, outs = ([tuple(re.findall(_DIM, arg)) for arg in re.findall(_ARGUMENT, part)]
                 for part in signature.replace(" ", "").split("->"))
    return ins, outs


def _core_sizes(sizes: dict[str, int], shape: tuple[int, ...], core: tuple[str, ...],
                context: str, is_input: bool) -> None:
    if is_input and len(shape) < len(core):
        raise ValueError(f"vectorize: an input of shape {shape} has too few dimensions for "
                         f"its core dimensions {core} {context}")
    if not is_input and len(shape) != len(core):
        raise ValueError(f"vectorize: an output of shape {shape} does not match its core "
                         f"dimensions {core} {context}")
    for dim, size in zip(core, shape[len(shape) - len(core):], strict=True):
        if sizes.setdefault(dim, size) != size:
            raise ValueError(f"vectorize: inconsistent size for core dimension {dim!r}: "
                             f"{size} vs {sizes[dim]} {context}")


def _without(func: Callable[..., Any], excluded: Collection[int | str], args: list[Any],
             kwargs: dict[str, Any]) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    """``func`` with the excluded arguments bound, and the remaining arguments."""
    if not excluded:
        return func, args, kwargs
    static = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
              if i < len(args)]
    static_kw = {k: v for k, v in kwargs.items() if k in excluded}
    dynamic = [a for i, a in enumerate(args) if i not in excluded]
    dynamic_kw = {k: v for k, v in kwargs.items() if k not in excluded}

    def bound(*a: Any, **k: Any) -> Any:
        full = list(a)
        for i, v in static:
            full.insert(i, v)
        return func(*full, **k, **static_kw)
    return bound, dynamic, dynamic_kw


def vectorize(pyfunc: Callable[..., Any], *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """``pyfunc`` mapped over its arguments' leading (broadcast) dimensions by ``vmap``;
    ``signature`` (e.g. ``'(n),(n)->()'``) names the trailing core dimensions each
    argument and result keeps; ``excluded`` positions or names are passed through."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError(f"vectorize: excluded may hold only argument positions (ints) and "
                        f"names (strs), got {excluded!r}{_where()}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"vectorize: excluded={excluded!r} holds a negative position"
                         f"{_where()}")

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        context = f"(vectorize with excluded={excluded!r} and signature={signature!r})"
        func, args, kwargs = _without(pyfunc, excluded, list(args), kwargs)
        if signature is not None:
            in_core, out_core = _parse_signature(signature)
        else:
            in_core, out_core = [()] * len(args), None
        nones = {i for i, a in enumerate(args) if a is None}
        if nones:
            if any(in_core[i] for i in nones):
                raise ValueError(f"vectorize: None passed for arguments {sorted(nones)}, "
                                 f"which have core dimensions {context}")
            func, args, _ = _without(func, nones, args, {})
            in_core = [c for i, c in enumerate(in_core) if i not in nones]
        args = [jnp.asarray(a) for a in args]
        if len(args) != len(in_core):
            raise TypeError(f"vectorize: expected {len(in_core)} positional arguments, got "
                            f"{len(args)} {context}")
        sizes: dict[str, int] = {}
        loop_shapes = []
        for a, core in zip(args, in_core, strict=True):
            _core_sizes(sizes, a.shape, core, context, is_input=True)
            loop_shapes.append(a.shape[:a.ndim - len(core)])
        try:
            loop = np.broadcast_shapes(*loop_shapes)
        except ValueError:
            raise ValueError(f"vectorize: the arguments' loop dimensions {loop_shapes} do "
                             f"not broadcast {context}") from None
        checked = func if out_core is None else _checking_outputs(func, sizes, out_core,
                                                                   context)
        squeezed, reversed_shapes = [], []
        for a, core in zip(args, in_core, strict=True):
            outer = a.shape[:a.ndim - len(core)]
            reversed_shapes.append(((1,) * (len(loop) - len(outer)) + outer)[::-1])
            squeezed.append(jnp.squeeze(a, axis=tuple(i for i, s in enumerate(outer)
                                                      if s == 1)))
        mapped, expand = checked, []
        for negdim, dim_sizes in enumerate(zip(*reversed_shapes, strict=True)):
            in_axes = tuple(None if s == 1 else 0 for s in dim_sizes)
            if all(ax is None for ax in in_axes):
                expand.append(len(loop) - 1 - negdim)
            else:
                mapped = vmap(mapped, in_axes)
        result = mapped(*squeezed, **kwargs) if kwargs else mapped(*squeezed)
        if not expand:
            return result
        if isinstance(result, tuple):
            return tuple(jnp.expand_dims(r, axis=tuple(expand)) for r in result)
        return jnp.expand_dims(result, axis=tuple(expand))
    return wrapped


def _checking_outputs(func: Callable[..., Any], sizes: dict[str, int],
                      out_core: list[tuple[str, ...]], context: str) -> Callable[..., Any]:
    def checked(*args: Any, **kwargs: Any) -> Any:
        out = func(*args, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        if len(out_core) > 1 and not isinstance(out, tuple):
            raise TypeError(f"vectorize: the function must return a tuple of "
                            f"{len(out_core)} outputs {context}")
        if len(outs) != len(out_core):
            raise TypeError(f"vectorize: expected {len(out_core)} outputs, got {len(outs)} "
                            f"{context}")
        known = dict(sizes)
        for o, core in zip(outs, out_core, strict=True):
            _core_sizes(known, np.shape(o), core, context, is_input=False)
        return out
    return checked


# --- applying along axes ------------------------------------------------------------------------

def apply_along_axis(func1d: Callable[..., Any], axis: int, arr: Any, *args: Any,
                     **kwargs: Any) -> Any:
    """``func1d`` applied to each 1-d slice of ``arr`` along ``axis`` (by ``vmap``); the
    dimensions of its result take the place of ``axis``."""
    arr = jnp.asarray(arr)
    ndim = arr.ndim
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"apply_along_axis: axis {axis} is out of bounds for an array of "
                         f"dimension {ndim}{_where()}")
    axis %= ndim

    def func(x: Any) -> Any:
        return func1d(x, *args, **kwargs)
    for i in range(1, ndim - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


def apply_over_axes(func: Callable[[Any, int], Any], a: Any, axes: Any) -> Any:
    """``func(a, axis)`` applied over each of ``axes`` in turn; a result with one dimension
    less gets it back (size 1), so the rank stays."""
    a = jnp.asarray(a)
    for axis in [axes] if isinstance(axes, int) else axes:
        b = func(a, axis)
        a = b if b.ndim == a.ndim else jnp.expand_dims(b, axis)
    return a


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
        ones = [jnp.ones((), jnp.asarray(a).dtype) for a in args]
        return eval_shape(self._func, *ones).dtype

    def reduce(self, a: Any, axis: int | None = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: Any = None) -> Any:
        """The ufunc folded over ``axis`` (None: all of ``a``), from ``initial`` or the
        identity (or the first element), skipping entries where ``where`` is false."""
        self._binary("reduce")
        if out is not None:
            raise ValueError(f"{self.__name__}.reduce: out= is not supported{_where()}")
        if where is not None:
            where = jnp.asarray(where)
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
        arr = jnp.asarray(arr)
        initial = self.identity if initial is None else initial
        dtype = self._result_dtype(arr, arr) if dtype is None else dtype
        if where is not None:
            where = jnp.broadcast_to(where, arr.shape)
        if isinstance(axis, tuple):
            raise ValueError(f"{self.__name__}.reduce: a tuple of axes needs a ufunc with a "
                             f"reduce implementation; reduce one axis at a time{_where()}")
        if axis is None:
            final = (1,) * arr.ndim if keepdims else ()
            arr = jnp.ravel(arr)
            where = None if where is None else jnp.ravel(where)
            axis = 0
        else:
            axis = operator.index(axis) % max(arr.ndim, 1)
            final = (*arr.shape[:axis], 1, *arr.shape[axis + 1:]) if keepdims else \
                (*arr.shape[:axis], *arr.shape[axis + 1:])
        arr = jnp.moveaxis(arr, axis, 0)
        where = None if where is None else jnp.moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"{self.__name__}.reduce: zero-size array and no identity"
                                 f"{_where()}")
            return jnp.full(final, initial, dtype)

        def body(i: Any, val: Any) -> Any:
            new = self(val, arr[i].astype(dtype))
            return new if where is None else jnp.where(where[i], new, val)
        start, value = (1, arr[0]) if initial is None else (0, initial)
        value = jnp.broadcast_to(jnp.asarray(value).astype(dtype), arr.shape[1:])
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
        arr = jnp.asarray(a)
        dtype = self._result_dtype(arr, arr) if dtype is None else dtype
        if axis is None or isinstance(axis, tuple):
            raise ValueError(f"{self.__name__}.accumulate: takes one axis{_where()}")
        axis = operator.index(axis) % max(arr.ndim, 1)
        if arr.size == 0:
            return jnp.zeros(arr.shape, dtype)
        arr = jnp.moveaxis(arr, axis, 0)

        def step(carry: Any, _: Any) -> Any:
            i, x = carry
            y = jnp.where(i == 0, arr[0].astype(dtype), self(x.astype(dtype),
                                                             arr[i].astype(dtype)))
            return (i + 1, y), y
        _, result = lax.scan(step, (0, arr[0].astype(dtype)), None, length=arr.shape[0])
        return jnp.moveaxis(result, 0, axis)

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
        a = jnp.asarray(a).astype(dtype)
        args = tuple(jnp.asarray(x).astype(dtype) for x in args)
        indices = indices if isinstance(indices, tuple) else (indices,)
        indices = tuple(i if isinstance(i, slice) else jnp.asarray(i) for i in indices)
        shapes = [i.shape for i in indices if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        count = int(np.prod(shape))
        if args:
            arg = jnp.broadcast_to(args[0], (*shape, *args[0].shape[len(shape):]))
            args = (arg.reshape(count, *args[0].shape[len(shape):]),)
        flat = [i if isinstance(i, slice) else jnp.ravel(jnp.broadcast_to(i, shape))
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
        a, indices = jnp.asarray(a), jnp.asarray(indices)
        if a.ndim == 0:
            raise ValueError(f"{self.__name__}.reduceat: a must have at least one dimension"
                             f"{_where()}")
        if indices.ndim != 1:
            raise ValueError(f"{self.__name__}.reduceat: indices must be 1-d, got shape "
                             f"{indices.shape}{_where()}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError(f"{self.__name__}.reduceat: takes one axis{_where()}")
        axis = operator.index(axis) % a.ndim
        out_arr = jnp.take(a, indices, axis=axis)
        others = [d for d in range(out_arr.ndim) if d != axis]
        ind = jnp.expand_dims(jnp.append(indices, a.shape[axis]), others)
        starts = lax.slice_in_dim(ind, 0, ind.shape[axis] - 1, axis=axis)
        ends = lax.slice_in_dim(ind, 1, ind.shape[axis], axis=axis)

        def body(i: Any, acc: Any) -> Any:
            row = jnp.take(a, jnp.expand_dims(i, 0), axis=axis)
            return jnp.where((i > starts) & (i < ends), self(acc, row), acc)
        result = lax.fori_loop(0, a.shape[axis], body, out_arr)
        return result if dtype is None else result.astype(dtype)

    def outer(self, A: Any, B: Any, /) -> Any:
        """The ufunc of every pair ``(A[i...], B[j...])``: shape ``A.shape + B.shape``."""
        self._binary("outer")
        A, B = jnp.asarray(A), jnp.asarray(B)
        result = vmap(vmap(self, (None, 0)), (0, None))(jnp.ravel(A), jnp.ravel(B))
        return result.reshape(*A.shape, *B.shape)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *,
               identity: Any = None) -> ufunc:
    """A ``ufunc`` over ``func`` (which takes and returns scalars)."""
    return ufunc(func, nin, nout, identity=identity, call=jit(vectorize(func)))


def install(namespace: Any) -> None:
    """Put these names into spmdc.numpy (called by spmdc/__init__.py)."""
    for name in __all__:
        setattr(namespace, name, globals()[name])
