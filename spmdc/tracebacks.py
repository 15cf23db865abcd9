"""The filtering of tracebacks at the entry points of spmdc's API: ``api_boundary``
and the modes of config ``jax_traceback_filtering`` (``JAX_TRACEBACK_FILTERING`` in the
environment, read at import). Which frames are left out is spmdc/errors.py's (the
excluded paths, ``include_frame``); Note [library frames] there says how the two fit.
Like errors.py, this module imports nothing from spmdc but errors.py, so every floor may
wrap its entry points."""
from __future__ import annotations

import functools
import os
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any

from .errors import UnfilteredStackTrace, include_frame

__all__ = ["api_boundary", "traceback_filtering", "set_traceback_filtering",
           "TRACEBACK_FILTERING_MODES", "SIMPLIFIED_NOTE"]

# The modes of JAX_TRACEBACK_FILTERING / config 'jax_traceback_filtering'.
TRACEBACK_FILTERING_MODES = ("off", "tracebackhide", "remove_frames", "quiet_remove_frames",
                             "auto")


def _mode_from_environment() -> str:
    value = os.environ.get("JAX_TRACEBACK_FILTERING", "auto")
    if value not in TRACEBACK_FILTERING_MODES:
        raise ValueError(f"JAX_TRACEBACK_FILTERING={value!r} is not a mode of traceback "
                         f"filtering; use one of {', '.join(TRACEBACK_FILTERING_MODES)}")
    return value


_filtering = [_mode_from_environment()]


def traceback_filtering() -> str:
    """The mode set by config ``jax_traceback_filtering`` (or JAX_TRACEBACK_FILTERING)."""
    return _filtering[0]


def set_traceback_filtering(mode: Any) -> None:
    """Set the mode (config ``jax_traceback_filtering``); see Note [library frames]."""
    if mode not in TRACEBACK_FILTERING_MODES:
        raise ValueError(f"config option jax_traceback_filtering takes one of "
                         f"{', '.join(TRACEBACK_FILTERING_MODES)}, got {mode!r}")
    _filtering[0] = mode


SIMPLIFIED_NOTE = ("--------------------\n"
                   "For simplicity, spmdc has removed its internal frames from the traceback "
                   "of the following exception. Set JAX_TRACEBACK_FILTERING=off to include "
                   "these.")
_UNFILTERED_NOTE = ("The stack trace below excludes spmdc-internal frames.\n"
                    "The preceding is the original exception that occurred, unmodified.\n"
                    "\n--------------------")


def _under_ipython() -> bool:
    try:
        get_ipython()           # type: ignore[name-defined]  # noqa: F821
    except NameError:
        return False
    import IPython  # only where IPython already runs
    return IPython.version_info[:2] >= (7, 17)   # the first to honour __tracebackhide__


def _effective_mode() -> str:
    mode = _filtering[0]
    if mode == "auto":
        return "tracebackhide" if _under_ipython() else "quiet_remove_frames"
    return mode


def _is_boundary(frame: types.FrameType) -> bool:
    return frame.f_code in _boundary_codes


def _under_another_boundary(frame: types.FrameType) -> bool:
    caller = frame.f_back
    while caller is not None:
        if _is_boundary(caller):
            return True
        caller = caller.f_back
    return False


def _filtered(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the frames of excluded files (the innermost first, relinked)."""
    kept = None
    for frame, lineno in reversed(list(traceback.walk_tb(tb))):
        if include_frame(frame):
            kept = types.TracebackType(kept, frame, frame.f_lasti, lineno)
    return kept


def _with_callers(tb: types.TracebackType) -> types.TracebackType:
    """``tb`` extended by the kept frames of its callers, up to the first run of
    module-level frames (the script or the REPL line that called)."""
    out, at_module_level = tb, False
    for frame, lineno in traceback.walk_stack(tb.tb_frame):
        if "importlib._bootstrap" in frame.f_code.co_filename:
            continue
        if at_module_level and frame.f_code.co_name != "<module>":
            break
        if include_frame(frame):
            out = types.TracebackType(out, frame, frame.f_lasti, lineno)
        at_module_level = at_module_level or frame.f_code.co_name == "<module>"
    return out


def filter_at_boundary(error: BaseException, boundary: types.FrameType) -> None:
    """Rewrite ``error``'s traceback as the outermost boundary does (see the Note); an
    ``inline_boundary`` calls it from its own ``except`` clauses."""
    mode = _effective_mode()
    tb = error.__traceback__
    if mode == "off" or tb is None or _under_another_boundary(boundary):
        return
    if mode == "tracebackhide":
        for frame, _ in traceback.walk_tb(tb):
            if not include_frame(frame) and not _is_boundary(frame):
                frame.f_locals["__tracebackhide__"] = True
        return
    error.with_traceback(_filtered(tb))
    if mode == "quiet_remove_frames":
        if SIMPLIFIED_NOTE not in getattr(error, "__notes__", ()):
            error.add_note(SIMPLIFIED_NOTE)
        return
    summary = "".join(traceback.format_exception_only(type(error), error)).strip()
    unfiltered = UnfilteredStackTrace(f"{summary}\n\n{_UNFILTERED_NOTE}")
    unfiltered.with_traceback(_with_callers(tb))
    unfiltered.__cause__, unfiltered.__context__ = error.__cause__, error.__context__
    unfiltered.__suppress_context__ = error.__suppress_context__
    error.__cause__, error.__context__ = unfiltered, None


def api_boundary(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun`` as an entry point of spmdc's API: an exception raised below it reaches the
    caller with the frames of spmdc and of the registered libraries taken out of its
    traceback (JAX's ``traceback_util.api_boundary``; see Note [library frames])."""

    @functools.wraps(fun)
    def reraise_with_filtered_traceback(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True            # noqa: F841  (read by pytest and IPython)
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            filter_at_boundary(e, sys._getframe())
            raise
    return reraise_with_filtered_traceback


def inline_boundary(fun: Callable[..., Any]) -> Callable[..., Any]:
    """``fun`` marked as an API boundary that filters its exceptions itself (it calls
    ``filter_at_boundary`` before re-raising): ``api_boundary`` without its wrapper's frame,
    for the jit call, whose every microsecond counts (Note [dispatch fast path])."""
    _boundary_codes.add(fun.__code__)
    return fun


_boundary_codes = {api_boundary(lambda: None).__code__}
