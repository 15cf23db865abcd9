"""``jax.extend.source_info_util``: where an operation comes from, for the messages and
names of libraries that trace or rewrite programs.

``register_exclusion(path)``, which Flax calls for its files so that the line a message
names is the user's and not Flax's: spmdc's ``user_source()`` skips the registered paths
(Note [library frames] in spmdc/errors.py). The name stack is spmdc's ``named_scope``
stack (core/names.py), per thread: ``current_name_stack()`` reads it as a ``NameStack``
(``str``: ``outer/inner``), ``extend_name_stack(name)`` pushes a name for a block,
``transform_name_stack(name)`` a transformation's name (which wraps the names after it:
``outer/jvp(inner)``), ``set_name_stack``/``reset_name_stack`` replace it for a block,
and equations traced there carry those names as named_scope's do. ``current()`` is a
``SourceInfo``: the user's frame of the calling code and the name stack; ``summarize``
gives that frame as ``file:line:column (function)``; ``user_context(traceback)`` makes a
block's operations come from that frame (and name stack), as a library that traces a
user's function later says where it came from.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..compiler.ir import SourceInfo as _ScopedSource
from ..core import names
from ..errors import pin_source, user_source
from ..errors import register_source_exclusion as register_exclusion
from ..transforms.jaxpr_view import set_source_info_maker

__all__ = ["register_exclusion", "NameStack", "SourceInfo", "current", "current_name_stack",
           "extend_name_stack", "new_name_stack", "new_source_info", "reset_name_stack",
           "set_name_stack", "summarize", "transform_name_stack", "user_context",
           "Scope", "Transform"]


@dataclass(frozen=True)
class Scope:
    """One name of a name stack."""
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Transform:
    """A transformation's name on a name stack: it wraps the names after it."""
    name: str

    def __str__(self) -> str:
        return self.name


def _entry(e: Scope | Transform) -> str:
    """A name stack's entry as core/names.py's stack holds it."""
    return names.TransformName(e.name) if isinstance(e, Transform) else e.name


@dataclass(frozen=True)
class NameStack:
    """The names an operation is traced under, outermost first (``str``: joined by
    ``/``, a transformation's name wrapping what follows it: ``outer/jvp(inner)``)."""
    stack: tuple[Scope | Transform, ...] = field(default=())

    def extend(self, name: str | tuple[str, ...]) -> NameStack:
        more = (name,) if isinstance(name, str) else tuple(name)
        return NameStack(self.stack + tuple(Scope(_checked(n)) for n in more))

    def transform(self, transform_name: str) -> NameStack:
        return NameStack(self.stack + (Transform(_checked(transform_name)),))

    def __getitem__(self, index: slice) -> NameStack:
        return NameStack(self.stack[index])

    def __add__(self, other: NameStack) -> NameStack:
        return NameStack(self.stack + other.stack)

    def __radd__(self, other: NameStack) -> NameStack:
        return NameStack(other.stack + self.stack)

    def __len__(self) -> int:
        return len(self.stack)

    def __str__(self) -> str:
        return names.joined([_entry(e) for e in self.stack])


def _checked(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"a name stack holds str names, got {name!r}")
    return name


@dataclass(frozen=True)
class SourceInfo:
    """Where an operation comes from: ``traceback``, the user's frame (a ``file:line``
    string that also knows its column and function, or None), and its ``name_stack``."""
    traceback: Any
    name_stack: NameStack

    def replace(self, *, traceback: Any = None, name_stack: NameStack | None = None
                ) -> SourceInfo:
        return SourceInfo(self.traceback if traceback is None else traceback,
                          self.name_stack if name_stack is None else name_stack)


def _of_equation(source: Any) -> SourceInfo:
    """An IR equation's source (None, a ``file:line`` string, or one that also holds the
    names it was traced under) as JAX's ``SourceInfo``. See Note [an equation's source
    info] in spmdc/transforms/jaxpr_view.py."""
    if isinstance(source, _ScopedSource):
        stack = NameStack(tuple(Scope(n) for n in source.scope.split("/") if n))
        return SourceInfo(str(source) or None, stack)
    return SourceInfo(source or None, NameStack())


set_source_info_maker(_of_equation)


def new_name_stack(name: str = "") -> NameStack:
    return NameStack((Scope(_checked(name)),) if name else ())


def new_source_info() -> SourceInfo:
    return SourceInfo(None, NameStack())


def current_name_stack() -> NameStack:
    return NameStack(tuple(Transform(str(n)) if isinstance(n, names.TransformName)
                           else Scope(n) for n in names._names.stack))


def current() -> SourceInfo:
    """The calling user code's frame and the names in effect."""
    return SourceInfo(user_source(), current_name_stack())


def summarize(source_info: SourceInfo, num_frames: int = 1) -> str:
    """``file:line:column (function)`` of the user's frame ('' when unknown)."""
    where = source_info.traceback
    if where is None:
        return ""
    located = getattr(where, "located", None)
    return located() if callable(located) else str(where)


@contextlib.contextmanager
def _stack_as(new: list[str]) -> Iterator[None]:
    stack = names._names.stack
    saved = stack[:]
    stack[:] = new
    try:
        yield
    finally:
        stack[:] = saved


@contextlib.contextmanager
def extend_name_stack(name: str) -> Iterator[NameStack]:
    """Trace the block under one more name (as ``named_scope(name)``)."""
    with names.named_scope(_checked(name)):
        yield current_name_stack()


@contextlib.contextmanager
def set_name_stack(name_stack: NameStack) -> Iterator[None]:
    """Trace the block under ``name_stack`` alone."""
    with _stack_as([_entry(e) for e in name_stack.stack]):
        yield


@contextlib.contextmanager
def transform_name_stack(name: str) -> Iterator[NameStack]:
    """Trace the block under the transformation ``name``, which wraps the names pushed
    inside it (``jvp(inner)``)."""
    stack = names._names.stack
    stack.append(names.TransformName(_checked(name)))
    try:
        yield current_name_stack()
    finally:
        stack.pop()


@contextlib.contextmanager
def user_context(traceback: Any, *, name_stack: NameStack | None = None
                 ) -> Iterator[None]:
    """The operations of the block come from ``traceback`` (a ``SourceInfo``'s
    ``traceback``, as ``current().traceback`` gives; None: from where they are traced),
    under ``name_stack`` when given. An error raised in the block is noted with that
    source, as JAX names the stack of the operation before its transformation."""
    before = pin_source(traceback)
    try:
        if name_stack is None:
            yield
        else:
            with set_name_stack(name_stack):
                yield
    except Exception as e:
        note = f"(the operation comes from {summarize(SourceInfo(traceback, NameStack()))})"
        if traceback is not None and note not in getattr(e, "__notes__", ()):
            e.add_note(note)
        raise
    finally:
        pin_source(before)


@contextlib.contextmanager
def reset_name_stack() -> Iterator[None]:
    """Trace the block under no names."""
    with _stack_as([]):
        yield
