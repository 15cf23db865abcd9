"""spmdc.profiler (``jax.profiler``): traces that TensorBoard and Perfetto open, the
annotations they show, the profiler server, and device memory profiles, all through
jaxlib's profiler (spmdc/runtime/pjrt/profiler.py) as JAX 0.10.2's are.

``start_trace(log_dir)`` ... ``stop_trace()`` (or ``with trace(log_dir):``) records the
host's activity, Python calls included, and XLA's, and writes
``log_dir/plugins/profile/<run>/<host>.xplane.pb`` (TensorBoard's profile plugin) with
``<host>.trace.json.gz`` beside it; ``create_perfetto_trace=True`` adds
``perfetto_trace.json.gz`` for ui.perfetto.dev. ``TraceAnnotation``, ``StepTraceAnnotation``
and ``annotate_function`` name spans of the program in that trace.
"""
from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import json
import os
import pathlib
import socketserver
import threading
from collections.abc import Callable, Iterator
from typing import Any

from .core.devices import check_backend
from .errors import where
from .runtime.pjrt import profiler as _jaxlib

__all__ = ["ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane",
           "StepTraceAnnotation", "TraceAnnotation", "annotate_function",
           "device_memory_profile", "register_subprocess", "save_device_memory_profile",
           "start_server", "start_trace", "stop_server", "stop_trace", "trace"]

ProfileData = _jaxlib.ProfileData
ProfileEvent = _jaxlib.ProfileEvent
ProfilePlane = _jaxlib.ProfilePlane


class ProfileOptions(_jaxlib.ProfileOptions):
    """What a trace collects: ``host_tracer_level``, ``python_tracer_level``,
    ``enable_hlo_proto``, ``duration_ms``, ``advanced_configuration`` ... (jaxlib's
    options, as JAX's ``ProfileOptions``)."""


class TraceAnnotation(_jaxlib.TraceMe):
    """``with TraceAnnotation("name", **metadata):`` shows an event ``name`` spanning the
    block on the trace's timeline (when a trace is being recorded), its keyword arguments
    as the event's arguments."""


class StepTraceAnnotation(TraceAnnotation):
    """A ``TraceAnnotation`` that marks one step of a loop (``step_num=`` its number),
    which the profiler's step analysis groups by."""

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: Callable[..., Any], name: str | None = None,
                      **decorator_kwargs: Any) -> Callable[..., Any]:
    """``func``, each call of it recorded as an event named ``name`` (its qualified name
    by default) with ``decorator_kwargs`` as metadata."""
    if not callable(func):
        raise TypeError(f"annotate_function: func must be callable, got "
                        f"{type(func).__name__} {func!r}; decorate a function, or pass "
                        f"name= through functools.partial{where()}")
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


# Note [one trace at a time]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# jaxlib records one session per process, so, as in JAX, a second start_trace while one
# records is a RuntimeError, and so is stop_trace with none. The state below is the
# session with where it writes, behind one lock: two threads starting at once get one
# trace and one error. The trace's metadata (jaxlib's and the platform's versions, as
# JAX writes them) is set just before the session starts and cleared when it ends.

class _TraceState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.session: Any = None
        self.log_dir = ""
        self.perfetto_trace = False
        self.perfetto_link = False


_state = _TraceState()


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
    """Start recording a trace that ``stop_trace`` writes under ``log_dir`` (Note [one
    trace at a time]). ``create_perfetto_trace``: also write ``perfetto_trace.json.gz``;
    ``create_perfetto_link``: that too, then print a ui.perfetto.dev link and serve the
    file on 127.0.0.1:9001 until Perfetto has loaded it (``stop_trace`` waits)."""
    if not isinstance(log_dir, (str, os.PathLike)):
        raise TypeError(f"start_trace: log_dir must be a path (str or os.PathLike), got "
                        f"{type(log_dir).__name__} {log_dir!r}{where()}")
    if profiler_options is not None and not isinstance(profiler_options,
                                                       _jaxlib.ProfileOptions):
        raise TypeError(f"start_trace: profiler_options must be a "
                        f"jax.profiler.ProfileOptions, got {profiler_options!r}{where()}")
    with _state.lock:
        if _state.session is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time: call stop_trace() first" + where())
        _jaxlib.clear_metadata()
        for key, value in _jaxlib.platform_metadata().items():
            _jaxlib.set_metadata(key, value)
        _state.session = _jaxlib.ProfilerSession(profiler_options or ProfileOptions())
        _state.log_dir = os.fspath(log_dir)
        _state.perfetto_trace = bool(create_perfetto_trace or create_perfetto_link)
        _state.perfetto_link = bool(create_perfetto_link)


def stop_trace() -> None:
    """Stop the trace ``start_trace`` began and write it (Note [one trace at a time])."""
    with _state.lock:
        if _state.session is None:
            raise RuntimeError("No profile started: call start_trace(log_dir) first"
                               + where())
        session, log_dir = _state.session, _state.log_dir
        perfetto_trace, perfetto_link = _state.perfetto_trace, _state.perfetto_link
        _state.session = None
        try:
            session.stop_and_export(log_dir)
            if perfetto_trace:
                written = _write_perfetto_trace(log_dir)
                if perfetto_link:
                    _serve_to_perfetto(written)
        finally:
            _jaxlib.clear_metadata()


def stop_and_get_fdo_profile() -> bytes:
    """Stop the trace ``start_trace`` began and return the profile XLA's profile-guided
    optimization reads, instead of writing the trace (JAX's
    ``jax._src.profiler.stop_and_get_fdo_profile``; only GPU programs fill it)."""
    with _state.lock:
        if _state.session is None:
            raise RuntimeError("No profile started: call start_trace(log_dir) first"
                               + where())
        session, _state.session = _state.session, None
        try:
            return _jaxlib.fdo_profile(session.stop())
        finally:
            _jaxlib.clear_metadata()


@contextlib.contextmanager
def trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False,
          profiler_options: ProfileOptions | None = None) -> Iterator[None]:
    """``with trace(log_dir):`` (or ``@trace(log_dir)``) records a trace of the block:
    ``start_trace`` with the same arguments, ``stop_trace`` when it ends, also by an
    exception."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


def _write_perfetto_trace(log_dir: str) -> pathlib.Path:
    """``perfetto_trace.json.gz`` beside the run's ``trace.json.gz``, without the
    ``metadata`` field Perfetto refuses."""
    runs = (pathlib.Path(log_dir).absolute() / "plugins" / "profile").iterdir()
    run = max(runs, key=os.path.getmtime)
    found = list(run.glob("*.trace.json.gz"))
    if len(found) != 1:
        raise ValueError(f"stop_trace: expected one *.trace.json.gz in {run}, found "
                         f"{[p.name for p in found]}")
    with gzip.open(found[0], "rb") as f:
        events = json.load(f)
    events.pop("metadata", None)
    written = run / "perfetto_trace.json.gz"
    with gzip.open(written, "wb") as f:
        f.write(json.dumps(events).encode("utf-8"))
    return written


class _PerfettoHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the trace to ui.perfetto.dev, which fetches it from another origin."""

    def end_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def do_GET(self) -> None:         # noqa: N802  (http.server's name)
        self.server.last_request = self.path      # type: ignore[attr-defined]
        super().do_GET()

    def log_message(self, *args: Any) -> None:
        pass


PERFETTO_PORT = 9001     # where ui.perfetto.dev's "open from URL" looks, as in JAX


def _serve_to_perfetto(path: pathlib.Path) -> None:
    handler = functools.partial(_PerfettoHandler, directory=str(path.parent))
    socketserver.TCPServer.allow_reuse_address = True
    with socketserver.TCPServer(("127.0.0.1", PERFETTO_PORT), handler) as httpd:
        print(f"Open URL in browser: https://ui.perfetto.dev/#!/?url="
              f"http://127.0.0.1:{PERFETTO_PORT}/{path.name}", flush=True)
        while getattr(httpd, "last_request", None) != "/" + path.name:
            httpd.handle_request()


_server: list[Any] = []


def start_server(port: int, requires_backend: bool = True) -> Any:
    """Start jaxlib's profiler server on ``port``, which TensorBoard's profiler (and
    ``register_subprocess`` of another process) connects to; one at a time."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise TypeError(f"start_server: port must be an int in 1..65535, got {port!r}"
                        f"{where()}")
    if _server:
        raise ValueError("Only one profiler server can be active at a time: call "
                         "stop_server() first" + where())
    if requires_backend:
        _jaxlib.platform_metadata()        # the client exists before the server
    _server.append(_jaxlib.start_server(port))
    return _server[0]


def stop_server() -> None:
    """Stop the server ``start_server`` started."""
    if not _server:
        raise ValueError("No active profiler server: start one with start_server(port)"
                         + where())
    _server.clear()


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Profile the process ``pid``, whose profiler server listens on ``port``, along with
    this one; returns the function that unregisters it (a RuntimeError if it cannot be
    reached or is registered already)."""
    return _jaxlib.register_subprocess(pid, port)


def device_memory_profile(backend: str | None = None) -> bytes:
    """A snapshot of the device memory in use (live arrays, executables) with where each
    was allocated, as a gzipped ``pprof`` protocol buffer (``pprof`` reads it)."""
    check_backend("device_memory_profile", backend)
    return _jaxlib.heap_profile()


def save_device_memory_profile(filename: os.PathLike | str,
                               backend: str | None = None) -> None:
    """Write ``device_memory_profile(backend)`` to ``filename``."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)
