"""The compile log (``jax_log_compiles``): what spmdc traces, lowers and compiles, as
JAX's messages say it, logged at WARNING while the option is on and at DEBUG otherwise.

The records go to JAX's loggers, ``jax._src.dispatch`` ("Finished tracing ...",
"Finished ... compilation ...") and ``jax._src.interpreters.pxla`` ("Compiling ..."):
programs listen on them by name (Optax's test utilities attach a handler to the ``jax``
logger to assert that a step does not compile again), and the name of a logger is all
they share with JAX's modules."""
from __future__ import annotations

import inspect
import logging
from typing import Any

from . import config_states

__all__ = ["log_compile", "fun_source", "in_avals_text"]

_dispatch_log = logging.getLogger("jax._src.dispatch")
_pxla_log = logging.getLogger("jax._src.interpreters.pxla")


def log_compile(message: str, *args: Any) -> None:
    """One line of the compile log, at WARNING while ``log_compiles`` is on ("Compiling"
    lines on pxla's logger, the others on dispatch's, as JAX)."""
    log = _pxla_log if message.startswith("Compiling") else _dispatch_log
    level = logging.WARNING if config_states.log_compiles.value else logging.DEBUG
    if log.isEnabledFor(level):
        log.log(level, message, *args)


def fun_source(fun: Any) -> str:
    """``file:line`` where ``fun`` is defined (JAX's ``fun_sourceinfo``), or its type's
    name when Python cannot tell."""
    target = inspect.unwrap(fun) if callable(fun) else fun
    code = getattr(target, "__code__", None)
    if code is None:
        return f"<unknown ({type(fun).__name__})>"
    return f"{code.co_filename}:{code.co_firstlineno}"


class in_avals_text:
    """JAX's ``(ShapedArray(float32[3]),)`` for a program's inputs, made only when the
    line is logged."""
    __slots__ = ("func",)

    def __init__(self, func: Any):
        self.func = func

    def __str__(self) -> str:
        texts = [f"ShapedArray({t.dtype.name}[{','.join(map(str, t.shape))}])"
                 for t in self.func.in_types]
        return "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
