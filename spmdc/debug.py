"""``spmdc.debug``: printing and callbacks from inside transformed functions, as
``jax.debug``.

``debug.print(fmt, *args, ordered=False, **kwargs)`` formats with ``str.format`` when the
program runs (an f-string would format the tracer at trace time instead), once per call
of the compiled program; under ``pmap`` once per device with that device's values, under
``vmap`` once per batch element, under ``grad`` with the primal values. Both are host
callbacks (spmdc/callbacks.py, Note [host callbacks] in compiler/stablehlo.py) that are
never dropped; ``ordered=True`` keeps program order among ordered ones.
"""
from __future__ import annotations

import string
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from .callbacks import _describe, stage_callback
from .errors import where
from .sharding import visualize_array_sharding, visualize_sharding  # noqa: F401

__all__ = ["print", "callback", "visualize_array_sharding", "visualize_sharding"]

def callback(callback: Callable[..., Any] | None = None, *args: Any, ordered: bool = False,
             **kwargs: Any) -> Any:
    """Call ``callback(*args, **kwargs)`` for its effect, with the values the program
    computes (as ``jax.debug.callback``). Also the two-call form
    ``debug.callback(ordered=True)(callback, *args, **kwargs)``. Returns None."""
    def stage(fn: Callable[..., Any], *c_args: Any, **c_kwargs: Any) -> None:
        if not callable(fn):
            raise TypeError("first argument to spmdc.debug.callback must be callable, "
                            f"but got an object of type {type(fn).__name__}")
        stage_callback(fn, c_args, c_kwargs, [], what=f"debug.callback({_describe(fn)})",
                       kind="debug", ordered=_check_ordered(ordered))

    if callback is not None:
        stage(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug.callback received unexpected arguments in the two-call form: "
                        f"args={args} kwargs={kwargs}")
    return stage


class _FormatChecker(string.Formatter):
    """Checks at trace time that the format string uses exactly the given arguments."""

    def format_field(self, value: Any, format_spec: str) -> str:
        return ""

    def check_unused_args(self, used_args: Any, args: Any, kwargs: Any) -> None:
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `spmdc.debug.print`: {unused}")
        if unused_kw:
            raise ValueError(
                f"Unused keyword arguments to `spmdc.debug.print`: {unused_kw}. You may be "
                "passing an f-string (f\"{x}\") into `spmdc.debug.print`; pass a plain "
                "format string and the values instead: debug.print(\"{x}\", x=x)")


_checker = _FormatChecker()


def _check_format(fmt: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Raise, at trace time, the error ``fmt.format(*args, **kwargs)`` would raise when
    the program runs, of the type ``str.format`` raises (as JAX's), naming debug.print,
    the format string and the user's line."""
    try:
        fields = [field for _, field, _, _ in string.Formatter().parse(fmt)
                  if field is not None]
    except ValueError as e:
        raise ValueError(f"spmdc.debug.print: the format string {fmt!r} is not a valid "
                         f"format ({e}){where()}. Write literal braces as '{{{{' and "
                         "'}}'") from None
    try:
        _checker.format(fmt, *args, **kwargs)
    except IndexError:
        automatic = sum(1 for field in fields if field == "" or field[0] in ".[")
        numbered = [int(field.split(".")[0].split("[")[0]) for field in fields
                    if field[:1].isdigit()]
        needed = max(automatic, max(numbered, default=-1) + 1)
        raise IndexError(
            f"spmdc.debug.print: the format string {fmt!r} needs {needed} positional "
            f"value{'s' if needed != 1 else ''}, but {len(args)} "
            f"{'was' if len(args) == 1 else 'were'} given{where()}. Pass one value per "
            "'{}' placeholder, or name them: debug.print('{x}', x=x)") from None
    except KeyError as e:
        name = e.args[0]
        given = ", ".join(f"{k}=" for k in kwargs) or "none"
        raise KeyError(
            f"spmdc.debug.print: the format string {fmt!r} names {{{name}}}, but no "
            f"keyword argument {name}= was given (given: {given}){where()}. Pass it: "
            f"debug.print({fmt!r}, {name}=...)") from None


def print(fmt: str | None = None, *args: Any, ordered: bool = False, **kwargs: Any) -> Any:  # noqa: A001
    """Print ``fmt.format(*args, **kwargs)`` with the values the program computes (as
    ``jax.debug.print``); a format without placeholders prints the values after it,
    separated by spaces. NumPy print options are those in effect at the call. Also the
    two-call form ``debug.print(ordered=True)(fmt, *args, **kwargs)``."""
    def stage(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not isinstance(fmt, str):
            raise TypeError(f"spmdc.debug.print: the format must be a str, got {fmt!r}")
        _check_format(fmt, c_args, c_kwargs)
        has_placeholders = bool(fmt) and next(iter(string.Formatter().parse(fmt)))[1] \
            is not None
        options = np.get_printoptions()

        def emit(*values: Any, **kw_values: Any) -> None:
            with np.printoptions(**options):
                if has_placeholders:
                    msg = fmt.format(*values, **kw_values)
                else:
                    msg = " ".join((fmt, *(str(v) for v in values)))
            sys.stdout.write(msg + "\n")
        stage_callback(emit, c_args, c_kwargs, [], what=f"debug.print({fmt!r})",
                       kind="debug", ordered=_check_ordered(ordered))

    if fmt is not None:
        stage(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError("debug.print received unexpected arguments in the two-call form: "
                        f"args={args} kwargs={kwargs}")
    return stage


def _check_ordered(ordered: Any) -> bool:
    if not isinstance(ordered, bool):
        raise TypeError(f"spmdc.debug: ordered must be a bool, got {ordered!r}")
    return ordered
