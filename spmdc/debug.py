"""``spmdc.debug``: printing and callbacks from inside transformed functions, as
``jax.debug``.

``debug.print(fmt, *args, ordered=False, **kwargs)`` formats with ``str.format`` when the
program runs (an f-string would format the tracer at trace time instead), once per call
of the compiled program; under ``pmap`` once per device with that device's values, under
``vmap`` once per batch element, under ``grad`` with the primal values. Both are host
callbacks (spmdc/callbacks.py, Note [host callbacks] in compiler/stablehlo.py) that are
never dropped; ``ordered=True`` keeps program order among ordered ones. ``debug.log``
sends the message to ``logging`` instead; ``debug.breakpoint`` opens a debugger when the
program runs (Note [breakpoints at run time]). A jaxpr lists these callbacks' effects
as ``DebugEffect`` and ``OrderedDebugEffect``, as JAX's.
"""
from __future__ import annotations

import builtins
import cmd
import copy
import dataclasses
import inspect
import logging
import pprint
import string
import sys
import threading
import traceback
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from .callbacks import _describe, pure_callback, stage_callback
from .core.tracing import Tracer
from .core.tree import tree_flatten, tree_unflatten
from .errors import include_frame, user_source, where
from .sharding import visualize_array_sharding, visualize_sharding  # noqa: F401
from .transforms.jaxpr_view import DebugEffect, OrderedDebugEffect

__all__ = ["print", "log", "callback", "breakpoint",
           "visualize_array_sharding", "visualize_sharding", "DebugEffect",
           "OrderedDebugEffect"]

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
    return _print_or_log("print", fmt, args, ordered, kwargs)


def log(fmt: str | None = None, *args: Any, ordered: bool = False, **kwargs: Any) -> Any:
    """``debug.print``'s message as a logging record at INFO (``jax.debug.log``), on JAX's
    logger ``jax._src.debugging``, with the user's file and line as the record's."""
    return _print_or_log("log", fmt, args, ordered, kwargs)


_logger = logging.getLogger("jax._src.debugging")   # JAX's name, which programs listen on


def _print_or_log(what: str, fmt: str | None, args: tuple[Any, ...], ordered: bool,
                  kwargs: dict[str, Any]) -> Any:
    def stage(fmt: str, *c_args: Any, **c_kwargs: Any) -> None:
        if not isinstance(fmt, str):
            raise TypeError(f"spmdc.debug.{what}: the format must be a str, got {fmt!r}")
        _check_format(fmt, c_args, c_kwargs)
        has_placeholders = bool(fmt) and next(iter(string.Formatter().parse(fmt)))[1] \
            is not None
        options = np.get_printoptions()
        record = None
        if what == "log":
            source = user_source()
            file, _, line = (str(source) if source else "(unknown file):0").rpartition(":")
            record = _logger.makeRecord(_logger.name, logging.INFO, file, int(line), "", (),
                                        None)

        def emit(*values: Any, **kw_values: Any) -> None:
            with np.printoptions(**options):
                if has_placeholders:
                    msg = fmt.format(*values, **kw_values)
                else:
                    msg = " ".join((fmt, *(str(v) for v in values)))
            if record is None:
                sys.stdout.write(msg + "\n")
            else:
                emitted = copy.copy(record)
                emitted.msg = msg
                _logger.handle(emitted)
        stage_callback(emit, c_args, c_kwargs, [], what=f"debug.{what}({fmt!r})",
                       kind="debug", ordered=_check_ordered(ordered))

    if fmt is not None:
        stage(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"debug.{what} received unexpected arguments in the two-call form: "
                        f"args={args} kwargs={kwargs}")
    return stage


def _check_ordered(ordered: Any) -> bool:
    if not isinstance(ordered, bool):
        raise TypeError(f"spmdc.debug: ordered must be a bool, got {ordered!r}")
    return ordered


# --- breakpoint ---------------------------------------------------------------------------

# Note [breakpoints at run time]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# ``debug.breakpoint()`` inside a jitted (vmapped, differentiated ...) function stops the
# program *when it runs*, with the values it computes, as JAX's does: at trace time it
# captures the Python frames above it (spmdc's and the registered libraries' left out
# unless ``filter_frames=False``; the innermost ``num_frames``), splits each frame's
# locals into traced leaves and everything else, and stages a debug callback whose
# arguments are the traced leaves. When the program reaches it, the callback puts the
# computed values back into the frames and hands them to the debugger: the registered
# one of highest priority, or ``backend``'s. spmdc registers "cli", JAX's jdb: a
# ``cmd.Cmd`` with the prompt "(jdb) " reading the process's stdin (``stdin=``/
# ``stdout=`` keyword arguments are passed to it), whose commands are JAX's: ``p``/``pp``
# expression, ``u(p)``/``d(own)`` between frames, ``l(ist)``, ``w(here)``/``bt``,
# ``c(ont(inue))`` and ``q(uit)``; anything else is evaluated in the frame.


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
    """One Python frame at a breakpoint: its file, line, locals (with the program's
    values) and source."""
    filename: str
    locals: dict[str, Any]
    globals: dict[str, Any]
    code_context: Any
    source: list[str]
    lineno: int
    offset: int | None

    @classmethod
    def from_frameinfo(cls, info: inspect.FrameInfo) -> DebuggerFrame:
        try:
            lines, start = inspect.getsourcelines(info.frame)
            source = [line.rstrip("\n") for line in lines]
            offset: int | None = info.lineno - max(start, 1)
            if offset is None or offset >= len(source):
                source, offset = [], None
        except (OSError, TypeError):
            source, offset = [], None
        return cls(info.filename, dict(info.frame.f_locals), {}, info.code_context, source,
                   info.lineno, offset)


_debuggers: dict[str, tuple[int, Callable[..., None]]] = {}
_debug_lock = threading.Lock()


def register_debugger(name: str, debugger: Callable[..., None], priority: int) -> None:
    """Make ``debugger(frames, thread_id, **kwargs)`` a breakpoint backend."""
    if name in _debuggers:
        raise ValueError(f"Debugger with name \"{name}\" already registered.")
    _debuggers[name] = (priority, debugger)


def get_debugger(backend: str | None = None) -> Callable[..., None]:
    if backend is not None and backend in _debuggers:
        return _debuggers[backend][1]
    if not _debuggers:
        raise ValueError("No debuggers registered!")
    return max(_debuggers.values(), key=lambda entry: entry[0])[1]


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token: Any = None,
               **kwargs: Any) -> Any:
    """Stop the program here when it runs and open a debugger on the frames above, with
    the values the program computes (as ``jax.debug.breakpoint``; See Note [breakpoints
    at run time]). With ``token`` (a pytree of arrays), the breakpoint runs once
    ``token`` is computed, and ``token`` is returned to pass on."""
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    if num_frames is not None and (isinstance(num_frames, bool) or
                                   not isinstance(num_frames, int) or num_frames < 0):
        raise TypeError(f"spmdc.debug.breakpoint: num_frames must be a non-negative int "
                        f"or None, got {num_frames!r}{where()}")
    infos = inspect.stack()[1:]
    frames = [DebuggerFrame.from_frameinfo(info) for info in infos
              if not filter_frames or include_frame(info.frame)]
    del infos
    if num_frames is not None:
        frames = frames[:num_frames]
    traced: list[Any] = []
    layouts = []                # per frame, per local: (name, tree, leaves or slots)
    for frame in frames:
        layout = []
        for name, value in frame.locals.items():
            try:
                leaves, tree = tree_flatten(value)
            except Exception:           # a local that does not flatten stays as it is
                layout.append((name, None, value))
                continue
            slots = []
            for leaf in leaves:
                if isinstance(leaf, Tracer):
                    slots.append(_Slot(len(traced)))
                    traced.append(leaf)
                else:
                    slots.append(leaf)
            layout.append((name, tree, slots))
        layouts.append(layout)

    def stop(*values: Any) -> None:
        def local(tree: Any, slots: Any) -> Any:
            if tree is None:
                return slots
            return tree_unflatten(tree, [values[s.index] if type(s) is _Slot else s
                                         for s in slots])
        ready = [dataclasses.replace(frame, locals={n: local(t, s) for n, t, s in layout})
                 for frame, layout in zip(frames, layouts, strict=True)]
        thread = (None if threading.current_thread() is threading.main_thread()
                  else threading.get_ident())
        debugger = get_debugger(backend)
        with _debug_lock:          # callbacks may run on several threads at once
            debugger(ready, thread, **kwargs)

    if token is None:
        stage_callback(stop, tuple(traced), {}, [], what="debug.breakpoint()",
                       kind="debug", ordered=_check_ordered(ordered))
        return None

    def stop_then_pass(x: Any, *values: Any) -> Any:
        stop(*values)
        return x
    return pure_callback(stop_then_pass, token, token, *traced)


class _Slot:
    """Where a traced leaf's value goes back into a frame's locals."""
    __slots__ = ("index",)

    def __init__(self, index: int):
        self.index = index


class CliDebugger(cmd.Cmd):
    """JAX's jdb: the text debugger a breakpoint opens (See Note [breakpoints at run
    time])."""
    prompt = "(jdb) "

    def __init__(self, frames: list[DebuggerFrame], thread_id: int | None,
                 stdin: IO[str] | None = None, stdout: IO[str] | None = None,
                 completekey: str = "tab"):
        super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
        self.use_rawinput = stdin is None
        self.frames = frames
        self.frame_index = 0
        self.thread_id = thread_id
        self.intro = "Entering jdb:"

    def evaluate(self, expr: str) -> Any:
        frame = self.frames[self.frame_index]
        return eval(expr, {}, {**frame.globals, **frame.locals})

    def _show(self, expr: str, pretty: bool = False) -> None:
        try:
            value = self.evaluate(expr)
            builtins.print(pprint.pformat(value) if pretty else repr(value), file=self.stdout)
        except Exception:
            kind, error = sys.exc_info()[:2]
            text = traceback.format_exception_only(kind, error)[-1].strip()
            builtins.print("***", text, file=self.stdout)

    def default(self, line: str) -> None:
        """Evaluates an expression."""
        self._show(line)

    def do_p(self, arg: str) -> None:
        """p expression
        Evaluates and prints the value of an expression"""
        self._show(arg)

    def do_pp(self, arg: str) -> None:
        """pp expression
        Evaluates and pretty-prints the value of an expression"""
        self._show(arg, pretty=True)

    def do_up(self, arg: str) -> None:
        """u(p)
        Move up a stack frame."""
        if self.frame_index == len(self.frames) - 1:
            builtins.print("At topmost frame.", file=self.stdout)
        else:
            self.frame_index += 1
        self.print_context()
    do_u = do_up

    def do_down(self, arg: str) -> None:
        """d(own)
        Move down a stack frame."""
        if self.frame_index == 0:
            builtins.print("At bottommost frame.", file=self.stdout)
        else:
            self.frame_index -= 1
        self.print_context()
    do_d = do_down

    def do_list(self, arg: str) -> None:
        """l(ist)
        List source code for the current file."""
        self.print_context(num_lines=5)
    do_l = do_list

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue))
        Continue the program's execution."""
        return True
    do_c = do_cont = do_continue

    def do_quit(self, arg: str) -> None:
        """q(uit)
        Quit the debugger. The program is given an exit command."""
        sys.exit(0)
    do_q = do_EOF = do_exit = do_quit

    def do_where(self, arg: str) -> None:
        """w(here)
        Prints a stack trace with the most recent frame on the bottom."""
        lines = ["Traceback:"]
        for frame in self.frames[::-1]:
            lines.append(f'  File "{frame.filename}", line {frame.lineno}')
            lines.append("    <no source>" if frame.offset is None
                         else f"    {frame.source[frame.offset].strip()}")
        builtins.print("\n".join(lines), file=self.stdout)
    do_w = do_bt = do_where

    def print_context(self, num_lines: int = 2) -> None:
        frame = self.frames[self.frame_index]
        lines = [f"> {frame.filename}({frame.lineno})"]
        if frame.offset is not None:
            for i, line in enumerate(frame.source):
                if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
                    lines.append(("->  " if i == frame.offset else "    ") + line)
        builtins.print("\n".join(lines), file=self.stdout)

    def run(self) -> None:
        while True:
            try:
                self.cmdloop()
                return
            except KeyboardInterrupt:
                builtins.print("--KeyboardInterrupt--", file=sys.stdout)


def _run_cli_debugger(frames: list[DebuggerFrame], thread_id: int | None,
                      **kwargs: Any) -> None:
    CliDebugger(frames, thread_id, **kwargs).run()


register_debugger("cli", _run_cli_debugger, -1)
