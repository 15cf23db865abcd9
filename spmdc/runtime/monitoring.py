"""Named events and the listeners that hear them (``jax.monitoring``'s registry), and the
moments of spmdc's compile path that it reports under JAX's event names.

A program or a library marks a point with ``record_event(name, **metadata)``, a duration
with ``record_event_duration_secs``, an interval with ``record_event_time_span`` and a
value with ``record_scalar``; every listener registered for that kind is called with the
same arguments, in the order the listeners were registered. The registry lives on the
runtime floor so that the compile path (runtime/executable.py, runtime/pjrt/) and the
transformations above it can report; spmdc/monitoring.py is its public face.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["record_event", "record_event_duration_secs", "record_event_time_span",
           "record_scalar", "register_event_listener",
           "register_event_duration_secs_listener", "register_event_time_span_listener",
           "register_scalar_listener", "unregister_event_listener",
           "unregister_event_duration_listener", "unregister_event_time_span_listener",
           "unregister_scalar_listener", "clear_event_listeners", "get_event_listeners",
           "get_event_duration_listeners", "get_event_time_span_listeners",
           "get_scalar_listeners", "Elapsed", "timed",
           "JAXPR_TRACE_EVENT", "JAXPR_TO_MLIR_MODULE_EVENT", "BACKEND_COMPILE_EVENT"]

Listener = Callable[..., None]

_event_listeners: list[Listener] = []
_duration_listeners: list[Listener] = []
_time_span_listeners: list[Listener] = []
_scalar_listeners: list[Listener] = []


def record_event(event: str, **kwargs: str | int) -> None:
    """Tell every event listener that ``event`` happened, with ``kwargs`` as metadata
    (pass the same names in the same order each time for one event, as JAX asks)."""
    for listener in tuple(_event_listeners):
        listener(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Tell every duration listener that ``event`` took ``duration`` seconds."""
    for listener in tuple(_duration_listeners):
        listener(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Tell every time-span listener that ``event`` ran from ``start_time`` to
    ``end_time`` (seconds since the epoch, as ``time.time()``)."""
    for listener in tuple(_time_span_listeners):
        listener(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Tell every scalar listener the value ``value`` of ``event``."""
    for listener in tuple(_scalar_listeners):
        listener(event, value, **kwargs)


def _check_callable(what: str, callback: Any) -> None:
    if not callable(callback):
        raise TypeError(f"{what}: a listener must be callable, got "
                        f"{type(callback).__name__} {callback!r}; pass a function that "
                        "takes the event's name first")


def register_event_listener(callback: Listener) -> None:
    """Call ``callback(event, **kwargs)`` on every ``record_event``."""
    _check_callable("register_event_listener", callback)
    _event_listeners.append(callback)


def register_event_duration_secs_listener(callback: Listener) -> None:
    """Call ``callback(event, duration_secs, **kwargs)`` on every
    ``record_event_duration_secs``."""
    _check_callable("register_event_duration_secs_listener", callback)
    _duration_listeners.append(callback)


def register_event_time_span_listener(callback: Listener) -> None:
    """Call ``callback(event, start_time, end_time, **kwargs)`` on every
    ``record_event_time_span``."""
    _check_callable("register_event_time_span_listener", callback)
    _time_span_listeners.append(callback)


def register_scalar_listener(callback: Listener) -> None:
    """Call ``callback(event, value, **kwargs)`` on every ``record_scalar``."""
    _check_callable("register_scalar_listener", callback)
    _scalar_listeners.append(callback)


def _unregister(what: str, listeners: list[Listener], callback: Listener) -> None:
    # JAX asserts that the listener is registered: the same AssertionError, with a message
    if callback not in listeners:
        raise AssertionError(f"{what}: {callback!r} is not a registered listener of this "
                             f"kind; register it first, or unregister the one you "
                             f"registered")
    listeners.remove(callback)


def unregister_event_listener(callback: Listener) -> None:
    """Stop calling ``callback`` on ``record_event``."""
    _unregister("unregister_event_listener", _event_listeners, callback)


def unregister_event_duration_listener(callback: Listener) -> None:
    """Stop calling ``callback`` on ``record_event_duration_secs``."""
    _unregister("unregister_event_duration_listener", _duration_listeners, callback)


def unregister_event_time_span_listener(callback: Listener) -> None:
    """Stop calling ``callback`` on ``record_event_time_span``."""
    _unregister("unregister_event_time_span_listener", _time_span_listeners, callback)


def unregister_scalar_listener(callback: Listener) -> None:
    """Stop calling ``callback`` on ``record_scalar``."""
    _unregister("unregister_scalar_listener", _scalar_listeners, callback)


def get_event_listeners() -> list[Listener]:
    """A copy of the event listeners."""
    return list(_event_listeners)


def get_event_duration_listeners() -> list[Listener]:
    """A copy of the duration listeners."""
    return list(_duration_listeners)


def get_event_time_span_listeners() -> list[Listener]:
    """A copy of the time-span listeners."""
    return list(_time_span_listeners)


def get_scalar_listeners() -> list[Listener]:
    """A copy of the scalar listeners."""
    return list(_scalar_listeners)


def clear_event_listeners() -> None:
    """Forget every listener of the event, duration and time-span kinds (JAX's
    ``clear_event_listeners`` leaves the scalar listeners registered, and so does this)."""
    _event_listeners.clear()
    _duration_listeners.clear()
    _time_span_listeners.clear()


# Note [JAX's compile events]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX reports the stages of turning a function into an executable under fixed names,
# and tools (and libraries' tests) count compilations by listening for them. spmdc
# reports the same names at its equivalent moments, with JAX's metadata ``fun_name``:
#
# - ``/jax/core/compile/jaxpr_trace_duration``: jit traces the function into a Func
#   (transforms/jit.py; JAX: pjit's trace to a jaxpr), named as the function is
#   (``my_kernel``; an eager operation by its primitive, ``cos``); as in JAX, only a
#   trace begun outside any other (a jit inside a traced function reports nothing);
# - ``/jax/core/compile/jaxpr_to_mlir_module_duration``: a Func is lowered to StableHLO
#   (runtime/executable.py's ``compile_func``; JAX: lowering the jaxpr to MLIR), named
#   as JAX names the module, ``jit(my_kernel)`` (a pmap's too, which JAX names
#   ``pmap(...)``; an eager operation's is ``jit(f)``, JAX's ``jit(cos)``);
# - ``/jax/core/compile/backend_compile_duration``: XLA compiles the module
#   (``compile_func`` again; JAX: ``compile_or_get_cached``), also when the persistent
#   cache answers, as in JAX.
#
# Each is three records, as JAX's ``log_elapsed_time`` makes them: a scalar holding the
# start time (``time.time()``) when the stage begins, then its duration in seconds and
# its time span when it ends (also when it raised, as JAX's). The persistent compilation cache
# (runtime/pjrt/compilation.py) records JAX's ``/jax/compilation_cache/...`` events:
# ``tasks_using_cache`` or ``task_disabled_cache`` once per process at the first
# compile, ``compile_requests_use_cache`` for each compile that asks the cache,
# ``cache_hits`` with ``cache_retrieval_time_sec`` for an answer, ``cache_misses`` when
# a compiled program is written. JAX's ``compile_time_saved_sec`` is not recorded:
# spmdc's cache entries do not keep how long the compile took. Without a cache
# directory spmdc asks no cache, so it reports ``task_disabled_cache`` and no requests,
# where JAX 0.10.2 (its cache enabled by default) reports ``tasks_using_cache`` and a
# ``compile_requests_use_cache`` per compile that finds nothing.

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
JAXPR_TO_MLIR_MODULE_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class Elapsed:
    """``with Elapsed(event, fun_name):`` reports the stage ``event`` of compiling
    ``fun_name`` (Note [JAX's compile events]); with ``event`` None, nothing."""

    __slots__ = ("event", "fun_name", "start")

    def __init__(self, event: str | None, fun_name: str):
        self.event = event
        self.fun_name = fun_name

    def __enter__(self) -> None:
        self.start = time.time()
        if self.event is not None and _scalar_listeners:
            record_scalar(self.event, self.start, fun_name=self.fun_name)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self.event is None:
            return
        end = time.time()
        record_event_duration_secs(self.event, end - self.start, fun_name=self.fun_name)
        record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)


def timed(event: str, fun_name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, reporting each call as the stage ``event`` of compiling ``fun_name``
    (Note [JAX's compile events])."""
    def call(*args: Any, **kwargs: Any) -> Any:
        with Elapsed(event, fun_name):
            return fn(*args, **kwargs)
    return call
