"""jaxlib's profiler: the session that records a trace and writes it where TensorBoard and
Perfetto read it, the annotations it records, the server a remote profiler connects to,
the data of a recorded trace, and the client's device memory profile.

spmdc/profiler.py (``jax.profiler``) is the public face; everything it needs from
jaxlib's ``_profiler`` and ``_profile_data`` modules is named here, so a jaxlib upgrade
touches this file alone.
"""
from __future__ import annotations

import gzip
from typing import Any

from jaxlib import _profile_data, _profiler

from .backend import client

__all__ = ["TraceMe", "ProfileOptions", "ProfilerSession", "ProfileData", "ProfileEvent",
           "ProfilePlane", "start_server", "register_subprocess", "set_metadata",
           "clear_metadata", "heap_profile", "platform_metadata", "fdo_profile"]

# The classes JAX's profiler subclasses or hands out: ``TraceMe`` (a context manager that
# records one named event with its keyword arguments as metadata, while a session
# records), ``ProfileOptions`` (what a session collects), ``ProfilerSession`` (records
# from its creation; ``stop_and_export(log_dir)`` writes
# ``log_dir/plugins/profile/<run>/<host>.xplane.pb`` and ``<host>.trace.json.gz``) and the
# views of a recorded XSpace (``ProfileData``, its planes, lines and events).
TraceMe = _profiler.TraceMe
ProfileOptions = _profiler.ProfileOptions
ProfilerSession = _profiler.ProfilerSession
ProfileData = _profile_data.ProfileData
ProfileEvent = _profile_data.ProfileEvent
ProfilePlane = _profile_data.ProfilePlane


def start_server(port: int) -> Any:
    """jaxlib's profiler server listening on ``port``; it stops when the object is
    dropped."""
    return _profiler.start_server(port)


def register_subprocess(pid: int, port: int) -> Any:
    """Profile the process ``pid``, whose profiler server listens on ``port``, with this
    one; returns the function that unregisters it."""
    return _profiler.register_subprocess(pid, port)


def set_metadata(key: str, value: str) -> None:
    """Metadata of the next session's trace."""
    _profiler.set_metadata(key, value)


def clear_metadata() -> None:
    _profiler.clear_metadata()


def heap_profile() -> bytes:
    """The client's device memory profile: a gzipped pprof protocol buffer of the live
    buffers and executables, as JAX's ``device_memory_profile`` returns it."""
    return gzip.compress(client().heap_profile())


def platform_metadata() -> dict[str, str]:
    """What JAX writes into a trace's metadata about the runtime: jaxlib's version and
    the platform's."""
    import jaxlib
    c = client()
    return {"jaxlib_version": jaxlib.__version__, f"{c.platform}_version": c.platform_version}


def fdo_profile(xspace: bytes) -> bytes:
    """The profile XLA's profile-guided optimization reads, from a session's recorded
    XSpace (``ProfilerSession.stop()``); empty where the platform records none (CPU)."""
    return _profiler.get_fdo_profile(xspace)
