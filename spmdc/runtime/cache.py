"""The persistent compilation cache: compiled executables kept on disk, so that a second
process (or a later run) loads a program instead of compiling it again.

Note [persistent compilation cache]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
On when a directory is given (``SPMDC_CACHE_DIR``, or
``spmdc.config.update('jax_compilation_cache_dir', path)``). An entry's name is the
SHA-256 of everything that changes the executable: the StableHLO text, jaxlib's version,
the platform and its version, the device ids in their replica/partition order, and the
serialized compile options (replicas, partitions, the SPMD partitioner). Its content is
jaxlib's serialized executable behind a small header holding the same digest, so a file
that is truncated or corrupt (or written by another version) fails the check and is
compiled again and replaced, never loaded. Writes go to a temporary file in the same
directory and are renamed into place (``os.replace``, atomic), so processes sharing the
directory see whole entries or none, and two writers of one entry simply both succeed.
Programs with host callbacks are not cached: their executable refers to Python objects
of this process. The directory is kept under ``SPMDC_CACHE_MAX_BYTES`` (default 1 GiB)
by deleting the least recently used entries (a hit refreshes an entry's time).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from typing import Any

from .. import env

__all__ = ["CompilationCache", "cache", "set_directory"]

_MAGIC = b"spmdc-executable-1\n"


class CompilationCache:
    """One cache directory (Note [persistent compilation cache])."""

    def __init__(self, directory: str, max_bytes: int):
        self.directory = directory
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key + ".exe")

    def get(self, key: str) -> bytes | None:
        """The serialized executable stored under ``key``, or None (absent, unreadable,
        or failing its check: then the entry is removed)."""
        path = self._path(key)
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            self.misses += 1
            return None
        header = _MAGIC + key.encode() + b"\n"
        if not data.startswith(header) or len(data) == len(header):
            self._discard(path)
            self.misses += 1
            return None
        try:
            os.utime(path)                 # least recently used: this one was just used
        except OSError:
            pass
        self.hits += 1
        return data[len(header):]

    def put(self, key: str, payload: bytes) -> None:
        """Store ``payload`` under ``key`` atomically, then keep the size bound."""
        try:
            os.makedirs(self.directory, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-", suffix=".exe")
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + key.encode() + b"\n")
                fh.write(payload)
            os.replace(tmp, self._path(key))
        except OSError:
            return                    # a cache that cannot be written is only slower
        self._evict()

    def invalid(self, key: str) -> None:
        """Forget an entry that jaxlib could not load."""
        self._discard(self._path(key))

    def _discard(self, path: str) -> None:
        try:
            os.remove(path)
        except OSError:
            pass

    def _evict(self) -> None:
        with self._lock:
            try:
                entries = []
                for name in os.listdir(self.directory):
                    if name.endswith(".exe") and not name.startswith(".tmp-"):
                        st = os.stat(os.path.join(self.directory, name))
                        entries.append((st.st_mtime, st.st_size, name))
            except OSError:
                return
            total = sum(size for _, size, _ in entries)
            for _, size, name in sorted(entries):
                if total <= self.max_bytes:
                    break
                self._discard(os.path.join(self.directory, name))
                total -= size


def key_of(parts: list[bytes]) -> str:
    """The digest naming an entry, of everything that changes the executable."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()


_state: dict[str, Any] = {"directory": None, "cache": None}


def set_directory(directory: str | None) -> None:
    """Use ``directory`` for the cache (None: no persistent cache); what
    ``config.update('jax_compilation_cache_dir', ...)`` calls."""
    if directory is not None and not isinstance(directory, (str, os.PathLike)):
        raise TypeError(f"the compilation cache directory must be a path, got "
                        f"{directory!r}")
    _state["directory"] = None if directory is None else os.fspath(directory)
    _state["cache"] = None


def cache() -> CompilationCache | None:
    """The cache in use, or None; SPMDC_CACHE_DIR unless a directory was set."""
    if _state["cache"] is None:
        directory = _state["directory"]
        if directory is None:
            directory = env.path("SPMDC_CACHE_DIR")
        if directory is None:
            return None
        _state["cache"] = CompilationCache(
            directory, env.positive_int("SPMDC_CACHE_MAX_BYTES", 1 << 30))
    return _state["cache"]
