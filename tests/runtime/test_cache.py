"""The persistent compilation cache (Note [persistent compilation cache] in
spmdc/runtime/cache.py): a second process loads what the first compiled, a damaged entry
is compiled again and replaced, concurrent writers are safe, the size bound holds, and
the config option and `spmdc dump --stats` report it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.runtime import cache, pjrt

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# a child's program; _run_here below computes the same in the test's process
PROGRAM = """
import sys, numpy as np, spmdc, spmdc.numpy as jnp
from spmdc.runtime import pjrt
f = spmdc.jit(spmdc.value_and_grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)))
w = np.linspace(-1, 1, 64 * 32, dtype=np.float32).reshape(64, 32)
x = np.ones((8, 64), np.float32)
value, grad = f(w, x)
exe = list(f._cache.values())[0].executable.exe
print(pjrt.from_cache(exe), float(value), float(np.asarray(grad).sum()))
"""


def _run(directory, program=PROGRAM, extra_env=None):
    env = dict(os.environ, SPMDC_CACHE_DIR=str(directory), PYTHONPATH=ROOT,
               **(extra_env or {}))
    out = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    hit, value, grad = out.stdout.split()
    return hit == "True", float(value), float(grad)


def _run_here(directory):
    """PROGRAM's computation in this process, over the cache in ``directory`` (the same
    program, so the same entry as a child's), with fresh in-memory caches before and
    after: what a process start would give, without one."""
    before = spmdc.config.read("jax_compilation_cache_dir")
    spmdc.clear_caches()
    try:
        spmdc.config.update("jax_compilation_cache_dir", str(directory))
        f = spmdc.jit(spmdc.value_and_grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)))
        w = np.linspace(-1, 1, 64 * 32, dtype=np.float32).reshape(64, 32)
        value, grad = f(w, np.ones((8, 64), np.float32))
        exe = list(f._cache.values())[0].executable.exe
        return pjrt.from_cache(exe), float(value), float(np.asarray(grad).sum())
    finally:
        spmdc.config.update("jax_compilation_cache_dir", before)
        spmdc.clear_caches()


def _entries(directory):
    return sorted(n for n in os.listdir(directory) if n.endswith(".exe")
                  and not n.startswith(".tmp-"))


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A cache directory that one process filled, and what that process computed: made
    once for the tests below, each of which works on a copy (a process start and a
    compile are seconds of the suite's time)."""
    directory = tmp_path_factory.mktemp("stored")
    first = _run(directory)
    assert not first[0] and len(_entries(directory)) >= 1
    return directory, first


def _copy_of(stored, tmp_path):
    directory = tmp_path / "cache"
    shutil.copytree(stored[0], directory)
    os.chmod(directory, 0o700)
    return directory, stored[1]


def test_a_second_process_loads_the_program(stored, tmp_path):
    directory, first = _copy_of(stored, tmp_path)
    second = _run(directory)
    assert second[0] and second[1:] == first[1:]


def test_a_damaged_entry_is_compiled_again_and_replaced(stored, tmp_path):
    # in this process (_run_here): the entries are the first process's, under the same keys
    tmp_path, first = _copy_of(stored, tmp_path)
    names = _entries(tmp_path)
    assert _run_here(tmp_path)[0]            # the same key: this process finds the entry
    for name in names:                       # truncate every entry to half its length
        path = tmp_path / name
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.warns(UserWarning, match="is damaged: its checksum does not match"):
        again = _run_here(tmp_path)
    assert not again[0] and again[1:] == first[1:]
    assert _entries(tmp_path) == names       # replaced, under the same name
    assert _run_here(tmp_path)[0]            # and the replacement loads
    for name in names:                       # garbage behind a valid-looking name
        (tmp_path / name).write_bytes(b"not an executable")
    with pytest.warns(UserWarning, match="is damaged: its header is not spmdc's"):
        assert _run_here(tmp_path)[1:] == first[1:]


def test_concurrent_writers_of_one_program(tmp_path):
    env = dict(os.environ, SPMDC_CACHE_DIR=str(tmp_path), PYTHONPATH=ROOT)
    procs = [subprocess.Popen([sys.executable, "-c", PROGRAM], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    results = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [r[1] for r in results]
    assert not [r[1] for r in results if "compilation cache" in r[1]]   # no warning
    values = {tuple(r[0].split()[1:]) for r in results}
    assert len(values) == 1
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".tmp-")]
    assert _run(tmp_path)[0]


def test_the_store_keeps_its_size_bound_and_checks_its_entries(tmp_path):
    store = cache.CompilationCache(str(tmp_path), max_bytes=2700)
    # random bytes, which zlib cannot shrink (Note [compressed cache entries])
    payload = np.random.default_rng(0).bytes(1000)
    for k in range(5):
        store.put(f"key{k}", b"cpu", payload)
        os.utime(tmp_path / f"key{k}.exe", (k, k))      # an order to evict in
    sizes = [os.path.getsize(tmp_path / n) for n in _entries(tmp_path)]
    assert len(sizes) == 2 and sum(sizes) <= 2700
    assert store.get("key4", b"cpu") == payload and store.get("key0", b"cpu") is None
    store.put("zeros", b"cpu", bytes(100_000))          # and what zlib can shrink, it does
    assert os.path.getsize(tmp_path / "zeros.exe") < 1000
    assert store.get("zeros", b"cpu") == bytes(100_000)
    (tmp_path / "key4.exe").write_bytes(cache._MAGIC + b"key3\n" + bytes(10))
    with pytest.warns(UserWarning, match="key4.exe' is damaged: its header"):
        assert store.get("key4", b"cpu") is None
    assert not (tmp_path / "key4.exe").exists()
    assert cache.key_of([b"a", b"bc"]) != cache.key_of([b"ab", b"c"])


def test_the_config_option_and_the_dump_report_it(tmp_path):
    before = spmdc.config.read("jax_compilation_cache_dir")
    try:
        spmdc.config.update("jax_compilation_cache_dir", str(tmp_path))
        assert spmdc.config.jax_compilation_cache_dir == str(tmp_path)
        f = spmdc.jit(lambda x: x * 3 + 1)
        np.testing.assert_allclose(f(np.ones(3, np.float32)), 4.0)
        assert _entries(tmp_path)
        spmdc.clear_caches()
        g = spmdc.jit(lambda x: x * 3 + 1)
        g(np.ones(3, np.float32))
        assert any(pjrt.from_cache(e.executable.exe) for e in g._cache.values())
    finally:
        spmdc.config.update("jax_compilation_cache_dir", before)
    script = tmp_path / "prog.py"
    script.write_text("import numpy as np, spmdc\n"
                      "f = spmdc.jit(lambda x: x * 2)\nx = np.ones(3, np.float32)\n")
    env = dict(os.environ, SPMDC_CACHE_DIR=str(tmp_path / "c"), PYTHONPATH=ROOT)
    reports = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-m", "spmdc.cli", "dump", f"{script}:f",
                              "--arg", "f32[3]",
                              "--stats", "--format", "json"], env=env, capture_output=True,
                             text=True, timeout=120, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        reports.append(json.loads(out.stdout)["compilation_cache"])
    assert [r["hit"] for r in reports] == [False, True] and reports[0]["enabled"]
