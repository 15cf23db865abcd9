"""The persistent compilation cache: compiled executables kept on disk, so that a second
process (or a later run) loads a program instead of compiling it again.

Note [persistent compilation cache]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
On when a directory is given (``SPMDC_CACHE_DIR``, or
``spmdc.config.update('jax_compilation_cache_dir', path)``). An entry's name is the
SHA-256 of everything that changes the executable: the StableHLO text, jaxlib's version,
the platform and its version, the device ids in their replica/partition order, and the
serialized compile options (replicas, partitions, the SPMD partitioner). Programs with
host callbacks are not cached: their executable refers to Python objects of this
process. The directory is kept under ``SPMDC_CACHE_MAX_BYTES`` (default 1 GiB) by
deleting the least recently used entries (a hit refreshes an entry's time).

An entry is native machine code that this process will run, so nothing is handed to
jaxlib's deserializer before it passes two checks (Note [trusted cache entries]):

- **Whole.** The entry is ``spmdc-executable-3\\n<name>\\n<checksum>\\n<stored>``,
  ``<stored>`` being the serialized executable compressed with zlib (as JAX compresses
  its entries: a half to a quarter of the size, Note [compressed cache entries]) and
  the checksum the SHA-256 of the format, the name, the context (jaxlib's and spmdc's
  versions, the platform and the device kind, which the compile path gives) and the
  stored bytes. It is checked before anything is decompressed or deserialized. One
  flipped or missing byte anywhere (header, constants, machine code) fails it: the entry
  is reported (a warning naming the file), removed, and the program is compiled again.
  The name alone would not do: it is the digest of the *inputs*, and says nothing about
  the bytes behind it. An entry of an earlier format (``spmdc-executable-2``: the same
  layout, uncompressed) fails the header check and is compiled again, never misread.
- **Ours.** The directory and the entry must be owned by this user (or root) and be
  writable by no one else, and the entry must be a regular file, not a symbolic link;
  otherwise the cache (or the entry) is refused with a warning saying why and how to
  fix the permissions, as ssh refuses keys that others may write. Without this, anyone
  who can write a shared cache directory chooses code that runs in this process, and
  a checksum (which anyone can compute) would not stop them.

Writes are atomic: an entry is written to a fresh ``.tmp-*`` file (``O_EXCL``, mode
0600) in the directory and renamed into place (``os.replace``), so processes filling
the directory at once see whole entries or none, and two writers of one entry both
succeed. The directory is created with mode 0700.

Note [trusted cache entries]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every operation opens the directory once, checks that open directory (``fstat``), and
reaches its entries relative to it (``dir_fd``), so a directory renamed or swapped
after the check is not the one read. An entry is looked at without following links
(``lstat``), opened with ``O_NOFOLLOW | O_NONBLOCK`` (a link or a FIFO put there after
the look is neither followed nor waited on), and checked again on the open file. Root
is trusted as an owner (it can change any file anyway), as ssh trusts it. The
directories above the cache directory are not checked (ssh checks them): one who may
rename entries in a parent can put another directory in its place, but not one owned by
this user that others cannot write, which is all the checks accept. A refused
cache directory is warned about once per reason; the program is then compiled as if
there were no cache.

Note [compressed cache entries]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A serialized CPU executable is mostly an ELF object with symbol tables and padding, which
zlib (the standard library's, level 6) shrinks to between a half and a quarter: measured
on three programs, 5,843 -> 2,608 bytes (``x * 2 + 1``), 13,497 -> 4,859 (a
value_and_grad), 34,052 -> 8,406 (a three-layer MLP's training step). A cache under its
size bound keeps two to four times as many programs, and a shared or network directory
moves that much less. Compressing costs 0.4-1.3 ms at a compile of 100-1,000 ms;
decompressing 0.05-0.15 ms at a load of tens of ms. The checksum covers the compressed
bytes, as stored, so damage is found before zlib reads anything.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import stat
import threading
import time
import warnings
import zlib
from typing import Any

from .. import env

__all__ = ["CompilationCache", "cache", "set_directory", "reset"]

_MAGIC = b"spmdc-executable-3\n"   # 2: uncompressed (Note [compressed cache entries])
_CHECKSUM_LEN = 64                   # hex digits of a SHA-256
_STALE_TEMPORARY_SECONDS = 3600      # a .tmp-* file this old was left by a dead writer


class CompilationCache:
    """One cache directory (Note [persistent compilation cache])."""

    def __init__(self, directory: str, max_bytes: int):
        self.directory = directory
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key + ".exe")

    def get(self, key: str, context: bytes) -> bytes | None:
        """The serialized executable stored under ``key`` for ``context`` (versions and
        device kind), or None: absent, refused (Note [trusted cache entries]) or failing
        its checksum (then the entry is removed, with a warning)."""
        data = self._read(key)
        if data is None:
            self.misses += 1
            return None
        payload, damage = _unpack(data, key, context)
        if payload is None:
            self._discard_damaged(key, damage)
            self.misses += 1
            return None
        try:
            os.utime(self._path(key), follow_symlinks=False)   # least recently used
        except OSError:
            pass
        self.hits += 1
        return payload

    def put(self, key: str, context: bytes, payload: bytes) -> None:
        """Store ``payload`` under ``key`` atomically (mode 0600), then keep the size
        bound. A cache that cannot be written is only slower: errors are dropped."""
        try:
            os.makedirs(self.directory, mode=0o700, exist_ok=True)
        except OSError:
            return
        directory = self._open_directory()
        if directory is None:
            return
        try:
            temporary = f".tmp-{secrets.token_hex(8)}.exe"
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                         0o600, dir_fd=directory)
            try:
                with os.fdopen(fd, "wb") as fh:
                    os.fchmod(fh.fileno(), 0o600)       # whatever the umask
                    fh.write(_pack(key, context, payload))
                os.replace(temporary, key + ".exe", src_dir_fd=directory,
                           dst_dir_fd=directory)
            except OSError:
                _unlink(temporary, directory)
                return
            self._evict(directory)
        except OSError:
            return
        finally:
            os.close(directory)

    def invalid(self, key: str, reason: str) -> None:
        """Forget an entry that passed its checks but that jaxlib could not load."""
        self._discard_damaged(key, f"jaxlib could not load it ({reason})")

    def _discard_damaged(self, key: str, damage: str) -> None:
        path = self._path(key)
        warnings.warn(f"spmdc: the compilation cache entry {path!r} is damaged: {damage}. "
                      "It was removed, and the program is compiled again.", stacklevel=2)
        directory = self._open_directory()
        if directory is not None:
            _unlink(key + ".exe", directory)
            os.close(directory)

    def _open_directory(self) -> int | None:
        """A descriptor of the cache directory once it passed its checks, or None
        (absent, or refused with a warning; Note [trusted cache entries])."""
        try:
            fd = os.open(self.directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return None
        problem = _distrust(os.fstat(fd), "700")
        if problem is None:
            return fd
        os.close(fd)
        why, fix = problem
        if why not in self._warned:           # once per reason, not once per compile
            self._warned.add(why)
            warnings.warn(
                f"spmdc: not using the compilation cache directory {self.directory!r}: "
                f"{why}, so another user could choose the code this process runs. "
                f"{fix.format(path=self.directory)}, or set SPMDC_CACHE_DIR to a "
                "directory that only you can write.", stacklevel=2)
        return None

    def _read(self, key: str) -> bytes | None:
        """The bytes of the entry for ``key`` if the directory and the entry pass their
        checks; None if absent or refused (with a warning)."""
        directory = self._open_directory()
        if directory is None:
            return None
        name = key + ".exe"
        try:
            try:
                seen = os.stat(name, dir_fd=directory, follow_symlinks=False)
                problem = _entry_problem(seen, name, directory)
                if problem is None:
                    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK,
                                 dir_fd=directory)
                    with os.fdopen(fd, "rb") as fh:
                        problem = _entry_problem(os.fstat(fh.fileno()), name, directory)
                        if problem is None:
                            return fh.read()
            except OSError:
                return None
        finally:
            os.close(directory)
        why, fix = problem
        path = self._path(key)
        fix = f"{fix.format(path=path)}, or remove it" if fix else "Remove it"
        warnings.warn(f"spmdc: not loading the compilation cache entry {path!r}: {why}. "
                      f"The program is compiled again and the entry replaced. {fix} "
                      f"(rm {path}), and check who else writes to {self.directory!r}.",
                      stacklevel=2)
        return None

    def _evict(self, directory: int) -> None:
        """Delete the least recently used entries until the directory fits the bound,
        and temporary files that writers which died left behind."""
        with self._lock:
            entries = []
            now = time.time()
            for name in os.listdir(directory):
                try:
                    st = os.stat(name, dir_fd=directory, follow_symlinks=False)
                except OSError:
                    continue                  # removed by another process meanwhile
                if name.startswith(".tmp-"):
                    if now - st.st_mtime > _STALE_TEMPORARY_SECONDS:
                        _unlink(name, directory)
                elif name.endswith(".exe"):
                    entries.append((st.st_mtime, st.st_size, name))
            total = sum(size for _, size, _ in entries)
            for _, size, name in sorted(entries):
                if total <= self.max_bytes:
                    break
                _unlink(name, directory)
                total -= size


def _checksum(key: str, context: bytes, stored: bytes) -> bytes:
    return key_of([_MAGIC, key.encode(), context, stored]).encode()


def _pack(key: str, context: bytes, payload: bytes) -> bytes:
    stored = zlib.compress(payload)
    return b"".join([_MAGIC, key.encode(), b"\n", _checksum(key, context, stored), b"\n",
                     stored])


def _unpack(data: bytes, key: str, context: bytes) -> tuple[bytes | None, str]:
    """``(payload, "")`` for an entry that is whole, else ``(None, what is wrong)``."""
    header = _MAGIC + key.encode() + b"\n"
    if data.startswith(b"spmdc-executable-") and not data.startswith(_MAGIC):
        written = data.split(b"\n", 1)[0][:40].decode(errors="replace")
        return None, (f"it is in another entry format ({written!r}, this spmdc writes "
                      f"{_MAGIC.decode().strip()!r})")
    if not data.startswith(header):
        return None, ("its header is not spmdc's for this program (written by another "
                      "version, or damaged)")
    start = len(header) + _CHECKSUM_LEN + 1
    if len(data) <= start or data[start - 1:start] != b"\n":
        return None, f"it is truncated ({len(data)} bytes)"
    stored = data[start:]
    if data[len(header):start - 1] != _checksum(key, context, stored):
        return None, ("its checksum does not match its content (or it was written by "
                      "another version of jaxlib or spmdc, or for another device kind)")
    try:
        return zlib.decompress(stored), ""
    except zlib.error as e:       # whole, yet not what _pack writes
        return None, f"its content does not decompress ({e})"


def _distrust(st: os.stat_result, mode: str) -> tuple[str, str] | None:
    """Why a file or directory with status ``st`` may not be trusted, and the fix
    (a format string of ``path``), or None (Note [trusted cache entries])."""
    uid = os.getuid()
    if st.st_uid not in (uid, 0):
        return (f"it is owned by uid {st.st_uid}, not by this user (uid {uid})",
                f"If it is yours, take it back with `chown {uid} {{path}}`")
    writers = [who for who, bit in (("its group", stat.S_IWGRP), ("others", stat.S_IWOTH))
               if st.st_mode & bit]
    if writers:
        return (f"it is writable by {' and '.join(writers)} "
                f"(mode {stat.S_IMODE(st.st_mode):04o})",
                f"Fix its permissions with `chmod {mode} {{path}}`")
    return None


def _entry_problem(st: os.stat_result, name: str, directory: int
                   ) -> tuple[str, str] | None:
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(name, dir_fd=directory)
        except OSError:
            target = "?"
        return (f"it is a symbolic link (to {target!r}), and an entry must be a file in "
                "the cache directory", "")
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file", ""
    return _distrust(st, "600")


def _unlink(name: str, directory: int) -> None:
    try:
        os.unlink(name, dir_fd=directory)
    except OSError:
        pass


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


def reset() -> None:
    """Forget the cache object (its counters and warnings): the next compile opens the
    configured directory afresh (``jax.experimental.compilation_cache.reset_cache``)."""
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
