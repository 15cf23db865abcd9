"""The compile log (``jax_log_compiles``): what spmdc traces, lowers and compiles, as
JAX's messages say it, logged at WARNING while the option is on and at DEBUG otherwise
(``logging.getLogger("spmdc")`` and its children receive them)."""
from __future__ import annotations

import inspect
import logging
from typing import Any

from . import config_states

__all__ = ["compile_log", "log_compile", "fun_source", "in_avals_text"]

_log = logging.getLogger("spmdc.compile")


def compile_log() -> logging.Logger:
    return _log


def log_compile(message: str, *args: Any) -> None:
    """One line of the compile log, at WARNING while ``log_compiles`` is on."""
    level = logging.WARNING if config_states.log_compiles.value else logging.DEBUG
    if _log.isEnabledFor(level):
        _log.log(level, message, *args)


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
