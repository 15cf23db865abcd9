"""``jax.experimental.checkify``: user checks (``check``) made functional by
``checkify``, which returns an ``Error`` value beside the function's outputs, and the
error categories JAX names (``user_checks``, ``nan_checks``, ...).

See Note [checkify's checks] for what is checked where.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import numpy as jnp
from ..core.tracing import Trace, Tracer, current_trace
from ..runtime.array import Array
from ..tree_util import register_pytree_node, tree_flatten

__all__ = ["Error", "ErrorCategory", "JaxRuntimeError", "FailedCheckError", "NaNError",
           "OOBError", "DivisionByZeroError", "check", "checkify", "check_error",
           "user_checks", "nan_checks", "index_checks", "div_checks", "float_checks",
           "automatic_checks", "all_checks"]

# Note [checkify's checks]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# `check(pred, msg, *fmt_args)` records "not pred" and the format arguments as values
# of the trace that `checkify` was called in: `checkify(f)(x)` runs `f` with a
# collector for that trace current on this thread, and returns the recorded values
# as the leaves of an `Error` (a pytree whose static part is the messages). So
# `jit(checkify(f))` returns the error as outputs of the compiled program, and the
# first failed check in program order is the one `Error.get` reports, as in JAX.
#
# A check made in a trace nested inside the checkified function (a `jit`, `vmap`,
# `grad` or control-flow body called from `f`) would have its values in that inner
# trace, which cannot return them; such a check raises the ValueError JAX raises for
# a check it could not functionalize, naming the fix (`jit(checkify(f))`, not
# `checkify(jit(f))`). Outside `checkify`, a check on concrete values raises at once
# (JaxRuntimeError), and one inside a transformation raises that ValueError, as JAX.
#
# Only user checks are implemented. The automatic categories (NaN, out-of-bounds
# index, division by zero) exist as names, because libraries read them, but
# `checkify` refuses them with a ValueError rather than silently not checking.


class JaxRuntimeError(ValueError):
    """A failed check: raised by ``Error.throw``, ``check_error`` and an eager
    ``check``."""


class JaxException(Exception):
    """The base of the error categories."""


class FailedCheckError(JaxException):
    """A user's ``check`` failed."""


class NaNError(JaxException):
    """An operation produced a NaN (an automatic check)."""


class OOBError(JaxException):
    """An index was out of bounds (an automatic check)."""


class DivisionByZeroError(JaxException):
    """An integer division by zero (an automatic check)."""


ErrorCategory = type[JaxException]

user_checks: frozenset[ErrorCategory] = frozenset({FailedCheckError})
nan_checks: frozenset[ErrorCategory] = frozenset({NaNError})
index_checks: frozenset[ErrorCategory] = frozenset({OOBError})
div_checks: frozenset[ErrorCategory] = frozenset({DivisionByZeroError})
float_checks: frozenset[ErrorCategory] = nan_checks | div_checks
automatic_checks: frozenset[ErrorCategory] = float_checks | index_checks
all_checks: frozenset[ErrorCategory] = automatic_checks | user_checks

_NOT_FUNCTIONALIZED = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
    "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
    "functionalizing it through `checkify.checkify`.")


class Error:
    """The checks a ``checkify``-ed call made: for each, whether it failed and its
    format arguments (the leaves), and its message (static)."""

    def __init__(self, failed: tuple[Any, ...], payloads: tuple[Any, ...],
                 messages: tuple[str, ...]):
        self._failed = failed
        self._payloads = payloads
        self._messages = messages

    def get(self) -> str | None:
        """The message of the first check that failed, or None if none did."""
        for failed, payload, msg in zip(self._failed, self._payloads, self._messages,
                                        strict=True):
            if isinstance(failed, Tracer):
                raise ValueError(
                    "Error.get needs concrete values, but this Error is being traced; "
                    "return it from the jitted function and call .get() outside.")
            if bool(np.asarray(failed)):
                args, kwargs = payload
                return _format(msg, args, kwargs)
        return None

    def throw(self) -> None:
        """Raise JaxRuntimeError with the first failed check's message, if any."""
        message = self.get()
        if message is not None:
            raise JaxRuntimeError(message)

    def __repr__(self) -> str:
        return f"Error({self.get()})"


def _flatten_error(err: Error) -> tuple[tuple[Any, ...], tuple[str, ...]]:
    return (err._failed, err._payloads), err._messages


def _unflatten_error(messages: tuple[str, ...], children: Any) -> Error:
    failed, payloads = children
    return Error(tuple(failed), tuple(payloads), messages)


register_pytree_node(Error, _flatten_error, _unflatten_error)


def _format(msg: str, args: Any, kwargs: Any) -> str:
    return f"{msg.format(*args, **kwargs)} (`check` failed)"


class _Collector:
    def __init__(self, trace: Trace | None):
        self.trace = trace
        self.failed: list[Any] = []
        self.payloads: list[Any] = []
        self.messages: list[str] = []


class _Collectors(threading.local):
    stack: list[_Collector]

    def __init__(self) -> None:
        self.stack = []


_collectors = _Collectors()


def _is_array(x: Any) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic))


def check(pred: Any, msg: str, *fmt_args: Any, **fmt_kwargs: Any) -> None:
    """Check that ``pred`` (a scalar boolean) holds; if not, the error is ``msg``
    formatted with ``fmt_args``/``fmt_kwargs`` (pytrees of arrays). Under ``checkify``
    the check is recorded in its Error; outside it, a concrete false ``pred`` raises
    JaxRuntimeError. See Note [checkify's checks]."""
    if not isinstance(msg, str):
        raise TypeError(f"check takes a str message as argument, got {msg!r}")
    for leaf in tree_flatten((fmt_args, fmt_kwargs))[0]:
        if not _is_array(leaf):
            raise TypeError("Formatting arguments to checkify.check need to be PyTrees "
                            f"of arrays, but got {leaf!r} of type {type(leaf)}.")
    pred_array = pred if isinstance(pred, Tracer) else jnp.asarray(pred)
    if pred_array.shape != () or pred_array.dtype != np.bool_:
        raise TypeError(f"check takes a scalar pred as argument, got {pred}")
    trace = current_trace()
    collector = _collectors.stack[-1] if _collectors.stack else None
    if collector is not None and trace is collector.trace:
        collector.failed.append(jnp.logical_not(pred_array))
        collector.payloads.append((fmt_args, fmt_kwargs))
        collector.messages.append(msg)
        return
    if trace is not None:
        hint = ("" if collector is None else
                " This check runs inside a transformation (jit, vmap, grad, a loop or "
                "cond body) that is itself inside checkify: apply checkify inside it, "
                "e.g. jax.jit(checkify.checkify(f)) rather than "
                "checkify.checkify(jax.jit(f)).")
        raise ValueError(_NOT_FUNCTIONALIZED + hint)
    if not bool(np.asarray(pred_array)):
        raise JaxRuntimeError(_format(msg, fmt_args, fmt_kwargs))


def checkify(f: Callable[..., Any],
             errors: frozenset[ErrorCategory] = user_checks) -> Callable[..., Any]:
    """``f`` made to return ``(Error, outputs)``: the checks it makes are recorded in
    the Error instead of raising. ``errors``: the categories checked; spmdc checks
    user checks only (Note [checkify's checks])."""
    errors = frozenset(errors)
    unknown = errors - all_checks
    if unknown:
        raise TypeError(f"checkify's errors must be error categories such as "
                        f"checkify.user_checks, got {sorted(map(str, unknown))}")
    automatic = errors & automatic_checks
    if automatic:
        raise ValueError(
            f"checkify: spmdc implements user checks only, not the automatic "
            f"categories {sorted(c.__name__ for c in automatic)}; pass "
            f"errors=checkify.user_checks (and use check() for the conditions wanted).")

    def checkified(*args: Any, **kwargs: Any) -> tuple[Error, Any]:
        collector = _Collector(current_trace())
        _collectors.stack.append(collector)
        try:
            out = f(*args, **kwargs)
        finally:
            _collectors.stack.pop()
        if FailedCheckError not in errors:
            return Error((), (), ()), out
        return Error(tuple(collector.failed), tuple(collector.payloads),
                     tuple(collector.messages)), out

    return checkified


def check_error(error: Error) -> None:
    """Raise ``error``'s failure (as ``check`` does): at once when it is concrete, and
    into the enclosing ``checkify`` when traced."""
    if not isinstance(error, Error):
        raise TypeError(f"check_error takes a checkify.Error, got {type(error)}")
    for failed, (args, kwargs), msg in zip(error._failed, error._payloads,
                                           error._messages, strict=True):
        check(jnp.logical_not(failed), msg, *args, **kwargs)
