"""Crashes of the whole process that spmdc prevents before XLA sees the program.

Each case used to kill the interpreter (an uncaught C++ exception, a failed check or a
segfault), so each runs in a subprocess: a crash is a failed test, not a dead runner.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

import spmdc
import spmdc.numpy as jnp


def run_child(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=timeout)   # the child has this process's devices


SIZES = """
import numpy as np
import spmdc, spmdc.numpy as jnp
from spmdc import lax

def refused(fn, fragment):
    try:
        fn()
    except TypeError as e:
        assert fragment in str(e), str(e)
        assert "more than any array can hold" in str(e), str(e)
        return
    raise AssertionError("no error")

big = (2 ** 40, 2 ** 40)
refused(lambda: jnp.ones(big), "the result f32[1099511627776,1099511627776]")
refused(lambda: jnp.zeros((2 ** 21,) * 3, np.int8), "i8[2097152,2097152,2097152]")
refused(lambda: spmdc.jit(lambda: jnp.full(big, 2.0))(), "(at <string>:")
refused(lambda: spmdc.jit(lambda x: jnp.broadcast_to(x, big))(1.0), "broadcast_in_dim")
# each operand fits; their broadcast does not
refused(lambda: spmdc.jit(lambda: jnp.ones((2 ** 31, 1)) * jnp.ones((1, 2 ** 33)))(),
        "f32[2147483648,8589934592]")
print("sizes: ok", flush=True)

# A replica that runs out of memory (XLA cannot allocate 2**54 bytes: refused at once)
# fails its pmap like jit fails: reading the result is a clean RESOURCE_EXHAUSTED.
n = 2 ** 52
for name, run in [("jit", lambda: spmdc.jit(lambda x: jnp.zeros((n,)) + x)(1.0)),
                  ("pmap", lambda: spmdc.pmap(lambda x: jnp.zeros((n,)) + x)(
                      np.ones(2, np.float32)))]:
    try:
        out = run()
        np.asarray(out)
    except Exception as e:
        assert "RESOURCE_EXHAUSTED" in str(e), (name, e)
    else:
        raise AssertionError(f"{name}: no error")
# later launches are not blamed for the failed one, and everything still works
f = spmdc.pmap(lambda x: lax.psum(x, 'i'), 'i')
for _ in range(6):
    r = f(np.ones(4, np.float32))
assert np.allclose(np.asarray(r), 4)
assert np.allclose(np.asarray(spmdc.jit(lambda x: x + 1)(1.0)), 2)
print("oom: ok", flush=True)
"""


@pytest.mark.devices(4)
def test_oversized_shapes_and_out_of_memory_are_python_errors():
    done = run_child(SIZES)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert "sizes: ok" in done.stdout and "oom: ok" in done.stdout


def test_size_limit_in_process():
    # (now safe in-process) the largest shapes that fit are still traced
    assert spmdc.make_ir(lambda: jnp.zeros((2 ** 40,)))() is not None
    with pytest.raises(TypeError, match=r"the result f32\[2,1152921504606846976\] would "
                       r"have 2305843009213693952 elements .*test_crashes.py"):
        spmdc.make_ir(lambda: jnp.ones((2, 1)) + jnp.ones((1, 2 ** 60)))()


INTERRUPTED = """
import sys, time
import numpy as np
import spmdc, spmdc.numpy as jnp
from spmdc.runtime import executable, pjrt

compile = pjrt.compile
def announced(*args, **kwargs):
    print("compiling", flush=True)
    return compile(*args, **kwargs)
executable.pjrt.compile = announced

def long(x):                   # a program that takes XLA about two seconds to compile
    for _ in range(800):       # (time for the signal to arrive in it on a loaded host)
        x = jnp.sin(x) * 1.0001 + jnp.cos(x[::-1])
    return x

start = time.time()
try:
    spmdc.jit(long).lower(np.ones(64, np.float32)).compile()   # (XLA:CPU would take
    # exponential time to run it: each step uses x twice)
    print("finished before the interrupt", flush=True)
except KeyboardInterrupt:
    print(f"interrupted after {time.time() - start:.2f}s", flush=True)
assert np.allclose(np.asarray(spmdc.jit(lambda x: x * 2)(1.0)), 2)
print("exiting", flush=True)
"""


def test_ctrl_c_during_a_compile_then_a_clean_exit():
    # KeyboardInterrupt during XLA's compile left the compile running in the background,
    # and the process crashed (segfault) when it exited after handling the interrupt.
    # (a loaded host may deliver the signal only after the compile: then try again)
    for _ in range(3):
        child = subprocess.Popen([sys.executable, "-c", INTERRUPTED], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            assert child.stdout.readline().strip() == "compiling"
            time.sleep(0.2)
            child.send_signal(signal.SIGINT)
            out, err = child.communicate(timeout=120)
        finally:
            child.kill()
        if "finished before the interrupt" not in out:
            break
    assert child.returncode == 0, f"exit status {child.returncode}\n{out}\n{err[-3000:]}"
    assert "interrupted after" in out and out.rstrip().endswith("exiting"), out
