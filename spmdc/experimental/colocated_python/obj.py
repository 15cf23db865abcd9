"""``jax.experimental.colocated_python.obj``: ``colocated_python_class``'s wrapper class.

An instance of the wrapper holds the arguments of its constructor; the user's object is
made from them on the first method call (in this process: Note [colocated Python in this
process] in func.py), lives as long as the wrapper, and is dropped with it (its
``__del__`` runs then). Each method is a colocated Python callable (with
``specialize``), so its arguments and results are checked as a function's are."""
from __future__ import annotations

import functools
import inspect
import threading
from typing import Any

from .func import make_callable

__all__ = ["wrap_class"]

# Methods the wrapper itself defines: it makes the object lazily and drops it with itself.
_OWN = frozenset({"__init__", "__del__", "__reduce__", "__reduce_ex__"})


class _LazyObject:
    """The user's object, made on first use. The wrapper's methods hold this holder,
    never the wrapper, so dropping the wrapper drops the object."""

    def __init__(self, cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]):
        self._make = functools.partial(cls, *args, **kwargs)
        self._lock = threading.Lock()
        self._obj: Any = None
        self._made = False

    def get(self) -> Any:
        with self._lock:
            if not self._made:
                self._obj = self._make()
                self._made = True
            return self._obj


def _method(holder: _LazyObject, name: str, original: Any, sourceinfo: str | None) -> Any:
    def run(*args: Any, **kwargs: Any) -> Any:
        return getattr(holder.get(), name)(*args, **kwargs)

    functools.update_wrapper(run, original)
    return make_callable(run, sourceinfo, inspect.signature(original))


def wrap_class(cls: type, cls_sourceinfo: str | None) -> type:
    """The wrapper class of ``cls`` (see the module docstring)."""

    class WrappedClass:
        @functools.wraps(cls.__init__)
        def __init__(self, *init_args: Any, **init_kwargs: Any) -> None:
            holder = _LazyObject(cls, init_args, init_kwargs)
            for name in dir(cls):
                member = getattr(cls, name)
                if inspect.isfunction(member) and name not in _OWN:
                    setattr(self, name, _method(holder, name, member, cls_sourceinfo))

    WrappedClass.__name__ = cls.__name__
    WrappedClass.__qualname__ = cls.__qualname__
    WrappedClass.__doc__ = cls.__doc__
    return WrappedClass
