"""``jax.extend.linear_util``: functions wrapped with a stack of transformations, as
JAX's function-transformation plumbing writes them (Flax's lifted transforms, Haiku,
NumPyro).

``wrap_init(f, params)`` makes a ``WrappedFun``; a transformation adds a layer that
sees the arguments on the way in and the result on the way out; ``call_wrapped`` runs
the whole stack. A transformation is written in one of two forms:

- ``transformation2`` / ``transformation_with_aux2``: a function
  ``gen(f, *static_args, *args, **kwargs)`` that calls ``f`` (the inner layers) itself
  (the aux form gets a ``store`` after ``f`` and stores its auxiliary output there);
- ``transformation`` / ``transformation_with_aux``: a generator
  ``gen(*static_args, *args, **kwargs)`` that yields ``(args, kwargs)`` for the inner
  layers, receives their result, and yields its own result (with the aux form, a pair
  ``(result, aux)``).

The auxiliary output is read back, after the call, from the thunk the aux forms
return with the new WrappedFun.
"""
from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Hashable
from typing import Any

from ..errors import StoreException

__all__ = ["WrappedFun", "wrap_init", "transformation", "transformation2",
           "transformation_with_aux", "transformation_with_aux2", "Store", "EqualStore",
           "StoreException", "cache", "merge_linear_aux"]


_EMPTY = object()


class Store:
    """Where a transformation puts its auxiliary output, once."""
    __slots__ = ("_value",)

    def __init__(self) -> None:
        self._value: Any = _EMPTY

    def store(self, value: Any) -> None:
        if self._value is not _EMPTY:
            raise StoreException("Store occupied")
        self._value = value

    def reset(self) -> None:
        self._value = _EMPTY

    @property
    def val(self) -> Any:
        if self._value is _EMPTY:
            raise StoreException("Store empty")
        return self._value

    def __bool__(self) -> bool:
        return self._value is not _EMPTY


class EqualStore(Store):
    """A store that may be written again with an equal value."""
    __slots__ = ()

    def store(self, value: Any) -> None:
        if self._value is _EMPTY:
            self._value = value
        elif not bool(self._value == value):
            raise StoreException("Store occupied with not-equal value")


class WrappedFun:
    """``f`` with ``transforms`` applied, outermost first; ``params`` are keyword
    arguments passed to ``f`` itself."""
    __slots__ = ("f", "f_transformed", "transforms", "stores", "params", "in_type",
                 "debug_info")

    def __init__(self, f: Callable[..., Any], f_transformed: Callable[..., Any],
                 transforms: tuple[tuple[Callable[..., Any], tuple[Hashable, ...]], ...],
                 stores: tuple[Store | None, ...], params: tuple[tuple[str, Any], ...],
                 in_type: Any, debug_info: Any):
        self.f = f
        self.f_transformed = f_transformed
        self.transforms = transforms
        self.stores = stores
        self.params = params
        self.in_type = in_type
        self.debug_info = debug_info

    @property
    def __name__(self) -> str:
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def wrap(self, gen: Callable[..., Any], gen_static_args: tuple[Any, ...],
             out_store: Store | None) -> WrappedFun:
        """This function with one more transformation (``gen``), outermost."""
        inner = (self.f_transformed,) if out_store is None else (self.f_transformed,
                                                                 out_store)
        return WrappedFun(self.f, functools.partial(gen, *inner, *gen_static_args),
                          ((gen, gen_static_args), *self.transforms),
                          (out_store, *self.stores), self.params, None, self.debug_info)

    def populate_stores(self, stores: tuple[Store | None, ...]) -> None:
        """Copy the values of ``stores`` (another call's) into this one's stores."""
        for mine, theirs in zip(self.stores, stores, strict=True):
            if mine is not None:
                mine.store(theirs.val)  # type: ignore[union-attr]

    def call_wrapped(self, *args: Any, **kwargs: Any) -> Any:
        """Run ``f`` through every transformation."""
        return self.f_transformed(*args, **kwargs)

    def __repr__(self) -> str:
        layers = "\n".join(f"{i}   : {getattr(gen, '__name__', gen)}   {args}"
                           for i, (gen, args) in enumerate(self.transforms))
        return f"Wrapped function:\n{layers}\nCore: {self.__name__}\n"

    def __hash__(self) -> int:
        return hash((self.f, self.transforms, self.params, self.in_type))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, WrappedFun) and self.f == other.f and
                self.transforms == other.transforms and self.params == other.params and
                self.in_type == other.in_type)


def wrap_init(f: Callable[..., Any], params: dict[str, Any] | None = None, *,
              debug_info: Any = None) -> WrappedFun:
    """``f`` as a WrappedFun with no transformation; ``params`` are passed to ``f`` as
    keyword arguments; ``debug_info`` is kept on the WrappedFun for its user."""
    params_items = tuple(sorted((params or {}).items()))

    def call(*args: Any, **kwargs: Any) -> Any:
        return f(*args, **dict(params_items), **kwargs)
    return WrappedFun(f, call, (), (), params_items, None, debug_info)


def _curried(transform: Callable[..., Any]) -> Callable[..., Any]:
    """``transform(gen, fun, *args)`` usable as a decorator: ``transform(gen)`` gives
    ``(fun, *args) -> ...``."""
    @functools.wraps(transform)
    def curry(gen: Callable[..., Any], *rest: Any, **kwargs: Any) -> Any:
        if rest:
            return transform(gen, *rest, **kwargs)
        return functools.partial(transform, gen)
    return curry


@_curried
def transformation2(gen: Callable[..., Any], fun: WrappedFun,
                    *gen_static_args: Any) -> WrappedFun:
    """``fun`` wrapped in ``gen(f, *gen_static_args, *args, **kwargs)``."""
    return fun.wrap(gen, gen_static_args, None)


@_curried
def transformation_with_aux2(gen: Callable[..., Any], fun: WrappedFun,
                             *gen_static_args: Any, use_eq_store: bool = False
                             ) -> tuple[WrappedFun, Callable[[], Any]]:
    """``fun`` wrapped in ``gen(f, store, *gen_static_args, *args, **kwargs)``, and a
    thunk that reads what ``gen`` stored."""
    store = EqualStore() if use_eq_store else Store()
    return fun.wrap(gen, gen_static_args, store), lambda: store.val


def _from_generator(gen: Callable[..., Any], with_aux: bool) -> Callable[..., Any]:
    def layer(f: Callable[..., Any], *rest: Any, **kwargs: Any) -> Any:
        store, args = (rest[0], rest[1:]) if with_aux else (None, rest)
        steps = gen(*args, **kwargs)
        inner_args, inner_kwargs = next(steps)
        out = steps.send(f(*inner_args, **inner_kwargs))
        if store is None:
            return out
        result, aux = out
        store.store(aux)
        return result
    layer.__name__ = getattr(gen, "__name__", "transformation")
    return layer


@_curried
def transformation(gen: Callable[..., Any], fun: WrappedFun,
                   *gen_static_args: Any) -> WrappedFun:
    """``fun`` wrapped in the generator ``gen`` (see the module docstring)."""
    return fun.wrap(_from_generator(gen, False), gen_static_args, None)


@_curried
def transformation_with_aux(gen: Callable[..., Any], fun: WrappedFun,
                            *gen_static_args: Any) -> tuple[WrappedFun, Callable[[], Any]]:
    """``fun`` wrapped in the generator ``gen`` that also yields an auxiliary output,
    and a thunk that reads it after the call."""
    store = Store()
    return fun.wrap(_from_generator(gen, True), gen_static_args, store), lambda: store.val


def cache(call: Callable[..., Any]) -> Callable[..., Any]:
    """Memoise ``call(fun: WrappedFun, *args)`` by ``fun``'s function, transformations,
    params and ``args``; a hit copies the stored auxiliary outputs into ``fun``'s
    stores."""
    caches: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()

    def memoized(fun: WrappedFun, *args: Any) -> Any:
        table = caches.setdefault(fun.f, {})
        key = (fun.transforms, fun.params, fun.in_type, args)
        hit = table.get(key)
        if hit is not None:
            answer, stores = hit
            fun.populate_stores(stores)
            return answer
        answer = call(fun, *args)
        table[key] = (answer, fun.stores)
        return answer

    memoized.cache_clear = caches.clear  # type: ignore[attr-defined]
    return memoized


def merge_linear_aux(aux1: Callable[[], Any], aux2: Callable[[], Any]) -> tuple[bool, Any]:
    """Of two thunks exactly one of which has a value: ``(whether it was the first,
    its value)``."""
    try:
        out = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
    try:
        aux2()
    except StoreException:
        return True, out
    raise StoreException("both stores occupied")
