"""Compiler passes: each is a pure function Func -> Func.

``run_pass(name, pass_fn, func, ...)`` is how every transformation applies a pass: it runs
the verifier afterwards when ``SPMDC_CHECKS=1`` (the test suite always sets it) and tells
the registered observers (``spmdc dump`` records each stage this way).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from ..ir import Func, check

__all__ = ["run_pass", "observers", "checks_enabled", "observe"]

observers: list[Callable[[str, Any], None]] = []
"""Called as ``observer(stage_name, func_or_text)`` after each pass."""


def checks_enabled() -> bool:
    return os.environ.get("SPMDC_CHECKS", "") not in ("", "0")


def observe(name: str, value: Any) -> None:
    for observer in observers:
        observer(name, value)


def run_pass(name: str, pass_fn: Callable[..., Func], func: Func, *args: Any,
             **kwargs: Any) -> Func:
    out = pass_fn(func, *args, **kwargs)
    if checks_enabled():
        check(out)
    if observers:
        observe(name, out)
    return out
