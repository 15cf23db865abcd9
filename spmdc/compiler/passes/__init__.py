"""Compiler passes: each is a pure function Func -> Func.

``run_pass(name, pass_fn, func, ...)`` is how every transformation applies a pass: it runs
the verifier afterwards when ``SPMDC_CHECKS=1`` (the test suite always sets it) and tells
the registered observers (``spmdc dump`` records each stage this way). With no observer
registered, recording costs one truth test per pass.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

from ..ir import Func, check

__all__ = ["run_pass", "observers", "checks_enabled", "observe", "recording"]

observers: list[Callable[[str, Any], None]] = []
"""Called as ``observer(stage_name, func_or_text)`` after each pass, and as
``observer(stage_name + ".input", func)`` with what each pass received."""


def checks_enabled() -> bool:
    return os.environ.get("SPMDC_CHECKS", "") not in ("", "0")


def observe(name: str, value: Any) -> None:
    for observer in observers:
        observer(name, value)


def run_pass(name: str, pass_fn: Callable[..., Func], func: Func, *args: Any,
             **kwargs: Any) -> Func:
    if observers:
        observe(name + ".input", func)
    out = pass_fn(func, *args, **kwargs)
    if checks_enabled():
        check(out)
    if observers:
        observe(name, out)
    return out


@contextlib.contextmanager
def recording() -> Iterator[list[tuple[str, Any]]]:
    """Collect the stages observed inside the ``with`` block, in order, as
    ``(name, Func or text)``. A pass's input is kept only when it is a freshly traced
    inner function (named ``traced``), not the previous stage's output or a copy of it
    with fewer outputs; a trace that prints like the previous stage (an inlined result)
    is dropped too."""
    stages: list[tuple[str, Any]] = []

    def record(name: str, value: Any) -> None:
        last = stages[-1][1] if stages else None
        if name.endswith(".input"):
            if isinstance(last, Func) and isinstance(value, Func) and last.eqns is value.eqns:
                return
            name = "traced"
        if name == "traced" and isinstance(last, Func) and str(last) == str(value):
            return
        stages.append((name, value))
    observers.append(record)
    try:
        yield stages
    finally:
        observers.remove(record)
