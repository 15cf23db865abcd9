"""Compiler passes: each is a pure function Func -> Func.

``run_pass(name, pass_fn, func, ...)`` is how every transformation applies a pass: it runs
the verifier afterwards when ``SPMDC_CHECKS=1`` (the test suite always sets it) and tells
the registered observers (``spmdc dump`` records each stage this way). With no observer
registered, recording costs one truth test per pass. Observers are per thread: a
``recording()`` sees the passes its own thread runs, not another thread's compiles.
"""
from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ...env import flag as env_flag
from ..ir import Func, Lit, check

__all__ = ["run_pass", "checks_enabled", "set_checks_option", "observe", "recording"]


class _Observers(threading.local):
    def __init__(self) -> None:
        self.observers: list[Callable[[str, Any], None]] = []
        """This thread's observers, called as ``observer(stage_name, func_or_text)`` after
        each pass, and as ``observer(stage_name + ".input", func)`` with what each pass
        received."""


_local = _Observers()


_checks_option: list[Callable[[], bool]] = []


def set_checks_option(read: Callable[[], bool]) -> None:
    """Also run the verifier while ``read()`` is true (``jax_enable_checks``, which the
    core hands over: the compiler imports no floor above it)."""
    _checks_option[:] = [read]


def checks_enabled() -> bool:
    return env_flag("SPMDC_CHECKS") or any(read() for read in _checks_option)


def observe(name: str, value: Any) -> None:
    for observer in _local.observers:
        observer(name, value)


def run_pass(name: str, pass_fn: Callable[..., Func], func: Func, *args: Any,
             **kwargs: Any) -> Func:
    observers = _local.observers
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
        if name == "traced" and isinstance(last, Func) and _prints_alike(last, value):
            return
        stages.append((name, value))
    observers = _local.observers
    observers.append(record)
    try:
        yield stages
    finally:
        observers.remove(record)


def _prints_alike(a: Func, b: Func) -> bool:
    """``str(a) == str(b)``, printing only when the structure does not decide it.

    Funcs of different names or numbers of inputs, outputs or equations print differently.
    A copy made by ``Builder.inline`` (fresh Vars, the same primitives, params objects and
    literals, equal types) prints the same: this is the common case (the trace of a
    transformation inlined into its caller), and printing both Funcs would cost as much
    as a third of tracing a gradient (benchmark W2)."""
    if (a.name != b.name or len(a.eqns) != len(b.eqns) or len(a.inputs) != len(b.inputs)
            or len(a.outputs) != len(b.outputs)):
        return False
    return _is_copy(a, b) or str(a) == str(b)


def _is_copy(a: Func, b: Func) -> bool:
    """Whether ``b`` is ``a`` with its Vars renamed one to one (see _prints_alike)."""
    rename: dict[Any, Any] = {}

    def define(xs: tuple[Any, ...], ys: tuple[Any, ...]) -> bool:
        for x, y in zip(xs, ys, strict=True):
            if x.type != y.type or x in rename:
                return False
            rename[x] = y
        return True

    def same_uses(xs: tuple[Any, ...], ys: tuple[Any, ...]) -> bool:
        return len(xs) == len(ys) and all(
            x is y if isinstance(x, Lit) else rename.get(x) is y
            for x, y in zip(xs, ys, strict=True))

    if not define(a.inputs, b.inputs):
        return False
    for e, f in zip(a.eqns, b.eqns, strict=True):
        if (e.prim is not f.prim or e.params is not f.params or len(e.outputs) != len(f.outputs)
                or not same_uses(e.inputs, f.inputs) or not define(e.outputs, f.outputs)):
            return False
    return same_uses(a.outputs, b.outputs) and len(set(rename.values())) == len(rename)
