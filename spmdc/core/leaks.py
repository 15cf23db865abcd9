"""Tracer-leak checking (``jax.check_tracer_leaks`` / the ``jax_check_tracer_leaks``
option): when on, every function traced by ``trace_function`` is checked, once its
trace has ended, for Tracers of that trace that something still holds (a global, a
closure, an attribute), and such a leak is an UnexpectedTracerError at once instead of
when the Tracer is next used. Off by default, as in JAX: the check collects garbage and
walks every live object, so it is slow."""
from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator
from typing import Any

from ..errors import UnexpectedTracerError

__all__ = ["check_tracer_leaks", "checking_leaks", "leak_checking", "set_leak_checking",
           "check_no_leaks"]


class _Setting(threading.local):
    on: bool | None = None          # this thread's context, if any


_global = [False]
_local = _Setting()


def leak_checking() -> bool:
    return _global[0] if _local.on is None else _local.on


def set_leak_checking(name: str, value: Any) -> None:
    if not (isinstance(value, (bool, int)) and value in (0, 1)):
        raise TypeError(f"config option {name} takes True or False, got {value!r}")
    _global[0] = bool(value)


@contextlib.contextmanager
def check_tracer_leaks(value: bool = True) -> Iterator[None]:
    """Inside the block (in this thread), check every traced function for leaked
    Tracers when its trace ends (``value=False``: do not)."""
    if not (isinstance(value, (bool, int)) and value in (0, 1)):
        raise TypeError(f"check_tracer_leaks takes True or False, got {value!r}")
    previous, _local.on = _local.on, bool(value)
    try:
        yield
    finally:
        _local.on = previous


def checking_leaks() -> contextlib.AbstractContextManager[None]:
    """``check_tracer_leaks(True)`` (JAX's ``jax.checking_leaks``)."""
    return check_tracer_leaks(True)


def check_no_leaks(trace: Any, tracer_type: type, name: str) -> None:
    """Raise UnexpectedTracerError if a ``tracer_type`` of the ended ``trace`` is alive."""
    gc.collect()
    leaked = [o for o in gc.get_objects()
              if type(o) is tracer_type and o._trace is trace]
    if leaked:
        holders = {type(r).__name__ for o in leaked for r in gc.get_referrers(o)
                   if r is not leaked}
        raise UnexpectedTracerError(
            f"{len(leaked)} traced value(s) of {name!r} ({leaked[0]._var.type}) leaked: "
            f"still held (by {', '.join(sorted(holders)) or 'unknown objects'}) after "
            "its trace ended. Return values from transformed functions instead of "
            "storing them in globals, closures or attributes.")
