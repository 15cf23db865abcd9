"""``named_scope`` and ``named_call``: names that equations carry into the dump and into
the StableHLO locations (as JAX's name stack).

The stack of names is per thread, like the current trace. ``bind`` stamps every
equation it emits with ``scoped(source)``: the user's ``file:line`` as a
``SourceInfo`` that also holds the names in effect (``outer/inner``). Passes copy an
equation's source onto what they emit for it, so the names survive vmap, grad, jvp and
the rest; the IR printer shows them as a trailing comment and the lowering as each op's
location (``loc("outer/inner/sin"(file:line))``).
"""
from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..compiler.ir import SourceInfo

__all__ = ["named_scope", "named_call", "scoped", "TransformName", "joined"]


class TransformName(str):
    """A transformation's name on the stack (``jax.extend.source_info_util``'s
    ``transform_name_stack``): it wraps the names after it, ``jvp(inner)``, as JAX's."""
    __slots__ = ()


class _Names(threading.local):
    def __init__(self) -> None:
        self.stack: list[str] = []


_names = _Names()


def joined(stack: list[str]) -> str:
    """The names of ``stack`` as JAX prints a name stack: scopes joined by ``/``, a
    transformation wrapping the name that follows it (``outer/jvp(inner)``)."""
    parts: list[str] = []
    for name in reversed(stack):
        if isinstance(name, TransformName):
            if parts:
                parts[-1] = f"{name}({parts[-1]})"
            else:
                parts.append(f"{name}()")
        else:
            parts.append(name)
    return "/".join(reversed(parts))


def scoped(source: str | None) -> str | None:
    """``source`` with the names in effect, if any (else ``source`` itself)."""
    stack = _names.stack
    if not stack:
        return source
    return SourceInfo(source or "", joined(stack))


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """Name the operations traced inside the ``with`` block (as ``jax.named_scope``):
    ``spmdc dump`` shows ``# name`` after each of their equations, nested scopes joined
    by ``/``, and the StableHLO carries the names as the ops' locations."""
    if not isinstance(name, str):
        raise TypeError(f"named_scope: the name must be a str, got {name!r}")
    stack = _names.stack
    stack.append(name)
    try:
        yield
    finally:
        stack.pop()


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``fun`` with its operations traced under the scope ``name`` (default: its
    ``__name__``), as ``jax.named_call``."""
    if not callable(fun):
        raise TypeError(f"named_call: expected a callable, got {fun!r}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"named_call: name must be a str or None, got {name!r}")
    scope = name if name is not None else getattr(fun, "__name__", "fun")

    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        with named_scope(scope):
            return fun(*args, **kwargs)
    return call
