"""Programs that use spmdc under JAX's name (``sys.modules['jax'] = spmdc``, spmdc/aliases.py),
run for several test files by one child process.

The alias changes the process's ``sys.modules``, so such a program cannot run in the test
process; a Python start each would cost an ``import spmdc`` each. A test module registers
its program when it is imported (``PROGRAM = register("name", code)``); the first test that
asks for a result runs every registered program in one child, each with globals of its own
and its printed output kept apart, and ``run(PROGRAM)`` gives that program's output like
``subprocess.run`` would (stdout; stderr holds the traceback when it failed). Under
pytest-xdist each worker that runs such a test starts one child. A program that depends on
being first in its process (nothing made before it, modules not yet loaded) keeps a process
of its own (tests/test_aliases.py, tests/test_src_xla_bridge.py).
"""
from __future__ import annotations

import functools
import json
import subprocess
import sys
import textwrap

_PROGRAMS: dict[str, str] = {}

_RUNNER = """
import contextlib, io, json, sys, traceback
import spmdc
sys.modules["jax"] = spmdc
results = {}
for name, code in json.loads(sys.stdin.read()).items():
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, name, "exec"), {"__name__": "__main__"})
        results[name] = [out.getvalue(), ""]
    except BaseException:
        results[name] = [out.getvalue(), traceback.format_exc()]
sys.stdout.write(json.dumps(results))
"""


def register(name: str, code: str) -> str:
    """Add ``code`` (a program that makes the alias itself, as a script would) under
    ``name``, unique among the registered programs; returns ``name`` for ``run``."""
    if name in _PROGRAMS:
        raise ValueError(f"an alias program named {name!r} is registered already")
    _PROGRAMS[name] = textwrap.dedent(code)
    return name


@functools.cache
def _outputs(names: tuple[str, ...]) -> dict[str, list[str]]:
    done = subprocess.run([sys.executable, "-c", _RUNNER],
                          input=json.dumps({name: _PROGRAMS[name] for name in names}),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"the alias programs' process failed:\n{done.stderr}"
    return json.loads(done.stdout)


def run(name: str) -> subprocess.CompletedProcess[str]:
    """Program ``name``'s printed output (``stdout``) and its traceback if it raised
    (``stderr``, and ``returncode`` 1)."""
    stdout, error = _outputs(tuple(sorted(_PROGRAMS)))[name]
    return subprocess.CompletedProcess([name], 1 if error else 0, stdout, error)
