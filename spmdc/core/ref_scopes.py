"""The scopes in which transformations trace functions that may touch mutable array
references made outside them, and what they record (Note [refs as threaded state] in
spmdc/core/refs.py): which refs a traced function touched or wrote, the binding of refs
to the values a transformation threads, and ``Recorder`` for loops and branches."""
from __future__ import annotations

import functools
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from .tracing import Trace, current_trace

__all__ = ["RefScope", "ref_scope", "innermost", "touch", "home", "RefsFound", "bound_refs",
           "Recorder", "run_bound"]


# --- scopes --------------------------------------------------------------------------------

class RefScope:
    """What one traced function touched of the refs it does not own (Note [refs as threaded
    state]): each such ref with its value when first touched, and whether it was written."""

    def __init__(self, trace: Trace | None):
        self.trace = trace
        self.bound: set[int] = set()            # ids of the refs this scope threads
        self.touched: dict[int, tuple[Any, Any]] = {}
        self.wrote: set[int] = set()

    def owns(self, ref: Any) -> bool:
        return ref._scope is self or id(ref) in self.bound

    def refs(self, only_written: bool = False) -> list[Any]:
        """The refs touched from outside, in the order first touched."""
        return [r for i, (r, _) in self.touched.items() if not only_written or i in self.wrote]


class _Scopes(threading.local):
    stack: list[RefScope] | None = None


_scopes = _Scopes()


def _stack() -> list[RefScope]:
    if _scopes.stack is None:
        _scopes.stack = []
    return _scopes.stack


def innermost() -> RefScope | None:
    stack = _scopes.stack
    return stack[-1] if stack else None


@contextmanager
def ref_scope(refs: Sequence[Any] = (), values: Sequence[Any] = ()) -> Iterator[RefScope]:
    """Open a scope (in the current trace) binding ``refs`` to ``values``; on exit, every
    ref it bound or touched has its value from before put back."""
    scope = RefScope(current_trace())
    saved = [(r, r._value) for r in refs]
    for r, v in zip(refs, values, strict=True):
        scope.bound.add(id(r))
        r._value = v
    stack = _stack()
    stack.append(scope)
    try:
        yield scope
    finally:
        stack.pop()
        for r, v in saved:
            r._value = v
        for r, v in scope.touched.values():
            r._value = v


def touch(ref: Any, writing: bool) -> None:
    for scope in reversed(_scopes.stack or ()):
        if scope.owns(ref):
            return
        key = id(ref)
        if key not in scope.touched:
            scope.touched[key] = (ref, ref._value)
        if writing:
            scope.wrote.add(key)


def home(ref: Any) -> Trace | None:
    """The trace whose values ``ref`` may hold: its innermost scope's, or where it was made."""
    scope = innermost()
    if scope is None or ref._scope is scope:
        return ref._trace
    return scope.trace


class RefsFound(Exception):
    """Raised by a transformation's tracing when its function touched refs it did not
    bind; the transformation catches it and traces again threading them (Note [refs as
    threaded state])."""

    def __init__(self, refs: list[Any]):
        super().__init__(f"the traced function uses {len(refs)} mutable array "
                         "reference(s) it does not take as arguments")
        self.refs = refs


@contextmanager
def bound_refs(refs: Sequence[Any], values: Sequence[Any]) -> Iterator[list[Any]]:
    """A scope binding ``refs`` to ``values``; the list it yields is filled, on leaving
    the ``with`` body normally, with the refs' final values."""
    finals: list[Any] = []
    with ref_scope(refs, values) as scope:
        yield finals
        finals.extend(r._value for r in refs)
    if scope.touched:
        raise RefsFound(scope.refs())


# --- loops and branches ----------------------------------------------------------------------

class Recorder:
    """Runs functions each in a scope of its own and says which outer refs they wrote: a
    loop or a branch traces its functions through ``wrap`` once, then threads those refs
    (Note [refs as threaded state])."""

    def __init__(self) -> None:
        self.scopes: list[RefScope] = []

    def wrap(self, fun: Any) -> Any:
        @functools.wraps(fun)
        def run(*args: Any, **kwargs: Any) -> Any:
            with ref_scope() as scope:
                self.scopes.append(scope)
                return fun(*args, **kwargs)
        return run

    def written(self) -> list[Any]:
        out: dict[int, Any] = {}
        for scope in self.scopes:
            for r in scope.refs(only_written=True):
                out.setdefault(id(r), r)
        return list(out.values())


def run_bound(fun: Any, refs: Sequence[Any], values: Sequence[Any], *args: Any
              ) -> tuple[Any, list[Any]]:
    """``fun(*args)`` with ``refs`` bound to ``values``, and the refs' final values."""
    with ref_scope(refs, values):
        out = fun(*args)
        return out, [r._value for r in refs]
