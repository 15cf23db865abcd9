"""What the persistent compilation cache refuses to load (Note [persistent compilation
cache], Note [trusted cache entries] in spmdc/runtime/cache.py): an entry with one byte
flipped anywhere (header, compressed bytes, the program's constants, its machine code),
an entry written for another context or in the earlier, uncompressed format, and a
directory or entry that another user owns or may write, or that is a symbolic link. Each
is reported with a warning, the program is compiled again and gives the right values,
and the refused bytes never reach jaxlib's deserializer."""
from __future__ import annotations

import os
import stat
import threading
import warnings
import zlib

import numpy as np
import pytest

import spmdc
from spmdc.runtime import cache, pjrt

NOBODY = 65534
X = np.arange(8, dtype=np.float32)
EXPECTED = X * np.float32(2.5) + np.float32(1.25)


def _program(x):
    return x * 2.5 + 1.25


@pytest.fixture
def cache_dir(tmp_path):
    """A cache directory in use by this process, holding the entry of ``_program``."""
    directory = tmp_path / "cache"
    before = spmdc.config.read("jax_compilation_cache_dir")
    spmdc.config.update("jax_compilation_cache_dir", str(directory))
    try:
        spmdc.clear_caches()
        np.testing.assert_array_equal(spmdc.jit(_program)(X), EXPECTED)
        yield directory
    finally:
        spmdc.config.update("jax_compilation_cache_dir", before)
        spmdc.clear_caches()


def _entry(directory):
    (name,) = [n for n in os.listdir(directory) if not n.startswith(".tmp-")]
    return directory / name


def _run_again():
    """Run ``_program`` in a fresh jit: (whether it was loaded from the cache, the
    warnings it gave)."""
    spmdc.clear_caches()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        f = spmdc.jit(_program)
        np.testing.assert_array_equal(f(X), EXPECTED)
    (compiled,) = f._cache.values()
    return pjrt.from_cache(compiled.executable.exe), [str(w.message) for w in caught]


def _split(data: bytes) -> tuple[bytes, bytes]:
    """An entry's header (format, name, checksum) and the executable it stores."""
    header = data.index(b"\n", data.index(b"\n", len(cache._MAGIC)) + 1) + 1
    return data[:header], zlib.decompress(data[header:])


def _offset_classes(data: bytes) -> dict[str, list[int]]:
    """Offsets by what they hold: of the entry, its header (format, name, checksum) and
    its compressed bytes; of the executable it stores, the program's two f32 constants,
    the machine code (the ELF object's text sections) and every other byte. (On the CPU
    platform; elsewhere the executable holds no ELF object, and its code counts among
    the other bytes.)"""
    header, exe = _split(data)
    classes = {"header": list(range(len(header))),
               "compressed": list(range(len(header), len(data)))}
    constants = [i + k for value in (2.5, 1.25)
                 for i in _find_all(exe, np.float32(value).tobytes()) for k in range(4)]
    elf = exe.find(b"\x7fELF")
    if elf < 0:
        taken = set(constants)
        return {**classes, "constants": constants, "code": [],
                "other": [i for i in range(len(exe)) if i not in taken]}
    section_table = elf + int.from_bytes(exe[elf + 0x28:elf + 0x30], "little")
    entry_size = int.from_bytes(exe[elf + 0x3A:elf + 0x3C], "little")
    count = int.from_bytes(exe[elf + 0x3C:elf + 0x3E], "little")
    names_index = int.from_bytes(exe[elf + 0x3E:elf + 0x40], "little")

    def section(k):
        at = section_table + k * entry_size
        return (int.from_bytes(exe[at:at + 4], "little"),
                elf + int.from_bytes(exe[at + 0x18:at + 0x20], "little"),
                int.from_bytes(exe[at + 0x20:at + 0x28], "little"))
    names_offset = section(names_index)[1]
    code = []
    for k in range(count):
        name_at, offset, size = section(k)
        name = exe[names_offset + name_at:exe.index(b"\0", names_offset + name_at)]
        if name in (b".text", b".ltext"):       # .ltext: code of the large code model
            code += range(offset, offset + size)
    taken = set(constants) | set(code)
    return {**classes, "constants": constants, "code": code,
            "other": [i for i in range(len(exe)) if i not in taken]}


# Classes whose offsets are in the entry as stored; the others are in the executable.
STORED = ("header", "compressed")


def _flipped(data: bytes, kind: str, offset: int, bits: int = 0xFF) -> bytes:
    """``data`` with one byte inverted: a byte of the entry as stored, or (an entry that
    a writer damaged before compressing) a byte of the executable, compressed again
    behind the original header."""
    if kind in STORED:
        flipped = bytearray(data)
        flipped[offset] ^= bits
        return bytes(flipped)
    header, exe = _split(data)
    flipped = bytearray(exe)
    flipped[offset] ^= bits
    return header + zlib.compress(bytes(flipped))


def _find_all(data, pattern):
    found, at = [], data.find(pattern)
    while at >= 0:
        found.append(at)
        at = data.find(pattern, at + 1)
    return found


def _context_of_the_program(monkeypatch):
    """The context the compile path gives the cache for ``_program`` (versions and
    device kind), seen by watching it ask."""
    store, asked = cache.cache(), []
    real_get = store.get
    monkeypatch.setattr(store, "get", lambda key, context: asked.append(context)
                        or real_get(key, context))
    assert _run_again() == (True, [])
    monkeypatch.undo()
    (context,) = asked
    assert b"jaxlib " in context and spmdc.devices()[0].device_kind.encode() in context
    return store, context


def _refused_at(store, key, context, path, data, kind, offsets):
    """Assert that the entry with each of ``offsets`` of ``kind`` flipped is refused
    and removed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for offset in offsets:
            path.write_bytes(_flipped(data, kind, offset))
            assert store.get(key, context) is None, (kind, offset)
            assert not path.exists(), (kind, offset)      # the damaged entry is removed


def _sweep_setup(cache_dir, monkeypatch):
    path = _entry(cache_dir)
    data = path.read_bytes()
    store, context = _context_of_the_program(monkeypatch)
    key = path.name.removesuffix(".exe")
    payload = store.get(key, context)
    assert payload is not None and _split(data)[1] == payload
    assert len(data) < len(payload)          # compressed (Note [compressed cache entries])
    return store, key, context, path, data


def test_one_byte_flips_of_every_kind_are_refused_before_loading(cache_dir, monkeypatch):
    store, key, context, path, data = _sweep_setup(cache_dir, monkeypatch)
    classes = _offset_classes(data)
    found = {k: len(v) for k, v in classes.items()}
    if spmdc.default_backend() == "cpu":
        assert all(found.values()), found
    classes = {k: v for k, v in classes.items() if v}
    # Every byte of the header, the constants and the code, every 8th of the rest,
    # through the check itself (the sweep over all offsets is the slow test below).
    for kind, offsets in classes.items():
        every = 1 if kind in ("header", "constants", "code") else 8
        _refused_at(store, key, context, path, data, kind, offsets[::every])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for cut in (0, 10, len(data) // 2, len(data) - 1):
            path.write_bytes(data[:cut])
            assert store.get(key, context) is None, cut
    # One offset of each class through the whole path: warned, compiled again, right.
    for kind, offsets in classes.items():
        path.write_bytes(_flipped(data, kind, offsets[len(offsets) // 2], 0x01))
        loaded, messages = _run_again()
        assert not loaded, kind
        assert any(f"{path}' is damaged" in m and "compiled again" in m
                   for m in messages), (kind, messages)
        assert _run_again() == (True, []), kind      # the replacement loads, silently


@pytest.mark.slow
def test_every_one_byte_flip_is_refused(cache_dir, monkeypatch):
    store, key, context, path, data = _sweep_setup(cache_dir, monkeypatch)
    for kind, offsets in _offset_classes(data).items():
        _refused_at(store, key, context, path, data, kind, offsets)
    for offset in range(0, len(data), 16):       # and through jit, every 16th
        path.write_bytes(_flipped(data, "compressed" if offset else "header", offset))
        loaded, messages = _run_again()
        assert not loaded and any("is damaged" in m for m in messages), offset
        path.write_bytes(data)


def test_an_entry_of_the_uncompressed_format_is_compiled_again(cache_dir, monkeypatch):
    # spmdc-executable-2, as the previous release wrote it: the executable uncompressed
    # behind a checksum that is right for that format.
    store, key, context, path, data = _sweep_setup(cache_dir, monkeypatch)
    exe, old = _split(data)[1], b"spmdc-executable-2\n"
    checksum = cache.key_of([old, key.encode(), context, exe]).encode()
    path.write_bytes(old + key.encode() + b"\n" + checksum + b"\n" + exe)
    loaded, messages = _run_again()
    assert not loaded
    assert any(f"{path}' is damaged: it is in another entry format "
               "('spmdc-executable-2', this spmdc writes 'spmdc-executable-3')" in m
               for m in messages), messages
    assert path.read_bytes().startswith(cache._MAGIC)       # replaced
    assert _run_again() == (True, [])


def test_an_entry_for_another_context_is_refused(tmp_path):
    store = cache.CompilationCache(str(tmp_path), max_bytes=1 << 20)
    store.put("k", b"jaxlib 0.10.2; cpu", b"payload")
    with pytest.warns(UserWarning, match="checksum does not match"):
        assert store.get("k", b"jaxlib 0.10.2; NVIDIA H100") is None
    store.put("k", b"jaxlib 0.10.2; cpu", b"payload")
    assert store.get("k", b"jaxlib 0.10.2; cpu") == b"payload"


def test_the_directory_is_made_0700_and_entries_0600(tmp_path):
    old = os.umask(0)
    try:
        store = cache.CompilationCache(str(tmp_path / "new"), max_bytes=1 << 20)
        store.put("k", b"c", b"payload")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o700
    assert stat.S_IMODE(os.stat(tmp_path / "new" / "k.exe").st_mode) == 0o600


def test_a_world_writable_directory_is_refused(cache_dir):
    os.chmod(cache_dir, 0o777)
    loaded, messages = _run_again()
    assert not loaded
    (message,) = [m for m in messages if "not using the compilation cache" in m]
    assert "writable by its group and others (mode 0777)" in message
    assert f"chmod 700 {cache_dir}" in message
    os.chmod(cache_dir, 0o720)
    message = _run_again()[1][0]
    assert "writable by its group (mode 0720)" in message
    os.chmod(cache_dir, 0o700)
    assert _run_again() == (True, [])


def test_a_directory_of_another_user_is_refused(cache_dir, monkeypatch):
    if os.getuid() == 0:
        os.chown(cache_dir, NOBODY, NOBODY)
        owner = NOBODY
    else:            # the directory is this user's: pretend to be another one
        owner = os.getuid()
        monkeypatch.setattr(cache.os, "getuid", lambda: owner + 1)
    loaded, messages = _run_again()
    assert not loaded
    (message,) = [m for m in messages if "not using the compilation cache" in m]
    assert f"owned by uid {owner}, not by this user" in message and "chown" in message


def _need_root():
    if os.getuid() != 0:
        pytest.skip("giving a file to another user needs root")


def test_an_entry_of_another_user_is_refused(cache_dir):
    _need_root()
    path = _entry(cache_dir)
    os.chown(path, NOBODY, NOBODY)       # a whole, valid entry: only its owner is wrong
    loaded, messages = _run_again()
    assert not loaded
    assert any(f"not loading the compilation cache entry '{path}': it is owned by uid "
               f"{NOBODY}" in m for m in messages), messages
    assert os.stat(path).st_uid == os.getuid()       # replaced by this process's entry
    assert _run_again() == (True, [])


def test_a_writable_entry_is_refused(cache_dir):
    path = _entry(cache_dir)
    os.chmod(path, 0o622)
    loaded, messages = _run_again()
    assert not loaded
    assert any("writable by its group and others (mode 0622)" in m
               and f"chmod 600 {path}" in m for m in messages), messages
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_a_symbolic_link_out_of_the_directory_is_refused(cache_dir, tmp_path):
    path = _entry(cache_dir)
    outside = tmp_path / "elsewhere.exe"
    os.replace(path, outside)            # a whole, valid entry, reached through a link
    os.symlink(outside, path)
    loaded, messages = _run_again()
    assert not loaded
    assert any(f"'{path}': it is a symbolic link (to '{outside}')" in m
               for m in messages), messages
    assert not os.path.islink(path) and outside.exists()   # the link replaced, not followed
    assert _run_again() == (True, [])


def test_a_fifo_in_place_of_an_entry_does_not_block(cache_dir):
    path = _entry(cache_dir)
    os.remove(path)
    os.mkfifo(path)
    loaded, messages = _run_again()
    assert not loaded and any("not a regular file" in m for m in messages), messages
    assert stat.S_ISREG(os.lstat(path).st_mode)


def test_writers_and_readers_at_once_see_whole_entries(tmp_path):
    # Four writers put their own version of the same six entries while reading others'
    # (threads here; tests/runtime/test_cache.py runs whole processes): every read is a
    # whole payload of one writer or nothing, and nothing is reported damaged.
    store = cache.CompilationCache(str(tmp_path), max_bytes=1 << 30)
    payloads = {k: [bytes([16 * k + w]) * (5000 + 997 * w) for w in range(4)]
                for k in range(6)}
    wrong = []

    def writer(w):
        for _ in range(25):
            for k in range(6):
                store.put(f"k{k}", b"ctx", payloads[k][w])
                other = (k + w) % 6
                got = store.get(f"k{other}", b"ctx")
                if got is not None and got not in payloads[other]:
                    wrong.append((other, len(got)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not wrong and not [str(w.message) for w in caught]
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".tmp-")]
    assert all(store.get(f"k{k}", b"ctx") in payloads[k] for k in range(6))
