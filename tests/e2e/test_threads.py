"""spmdc used from several threads at once (README "Threads"; Note [threads] in
runtime/pjrt/once.py).

Each scenario runs in a subprocess, so that a crash of the interpreter (which is how
unguarded first use used to fail) is a failed test rather than a dead test runner.
The first-use race needs a fresh process each time (it runs twice, the second time
ahead of the concurrent tracing scenario); the trace-state scenarios are made
deterministic with events: one thread stops in the middle of tracing while another
thread works, which is exactly the interleaving that went wrong when the current trace
was one global.
"""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

PRELUDE = """
import sys, threading
import numpy as np
import spmdc, spmdc.numpy as jnp
from spmdc import lax
sys.setswitchinterval(1e-5)        # switch threads often, to meet more interleavings
errors = []

def guarded(fn, *args):
    def run():
        try:
            fn(*args)
        except BaseException as e:
            import traceback
            traceback.print_exc()
            errors.append(repr(e))
    return run

def in_threads(*targets):
    threads = [threading.Thread(target=t) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
        assert not t.is_alive(), "a thread hangs"

def done():
    # afterwards the process still computes values, not Tracers
    r = spmdc.jit(lambda v: v + 1)(np.ones(3, np.float32))
    assert type(r) is spmdc.Array and np.allclose(np.asarray(r), 2), r
    print("errors:", errors)
    sys.exit(1 if errors else 0)
"""


def run_script(body: str, timeout: float = 120) -> None:
    proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(body) + "\ndone()"],
                          capture_output=True, text=True, timeout=timeout)  # same devices
    assert proc.returncode == 0, \
        f"exit status {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


FIRST_USE = """
barrier = threading.Barrier(8)

def first_use(i):
    x = np.arange(8, dtype=np.float32) + i
    barrier.wait()
    if i % 2:
        r = spmdc.pmap(lambda v: lax.psum(v, 'i'), 'i')(x)
        assert np.allclose(np.asarray(r), x.sum()), r
    r = spmdc.jit(lambda v: jnp.sin(v) * 2)(x)
    assert type(r) is spmdc.Array and np.allclose(np.asarray(r), np.sin(x) * 2, rtol=1e-5)
    g = spmdc.grad(lambda v: (v * v).sum())(x)
    assert np.allclose(np.asarray(g), 2 * x)
    r = spmdc.pmap(lambda v: lax.psum(v, 'i'), 'i')(x)
    assert np.allclose(np.asarray(r), x.sum()), r

in_threads(*[guarded(first_use, i) for i in range(8)])
"""


@pytest.mark.devices(8)
def test_first_use_from_several_threads():
    # Two threads making the first call at once used to create two PJRT clients (and
    # build in the MLIR context concurrently): the process crashed most of the time. The
    # race runs in two fresh processes: this one, and the one that goes on to
    # test_tracing_and_calling_concurrently's scenario (one Python start fewer).
    run_script(FIRST_USE)


PAUSED_TRACE = """
x = np.arange(4, dtype=np.float32)
compiled = spmdc.jit(lambda v: v * 3)
on_device = spmdc.device_put(x)
compiled(on_device); compiled(on_device)          # compiled, and granted the C++ launch
inside, go = threading.Event(), threading.Event()
result = {}

def paused(v):                    # traced by the background thread; waits mid-trace
    y = jnp.tanh(v)
    inside.set()
    assert go.wait(30)
    return y * 2

def background():
    result["jit"] = spmdc.jit(paused)(x)

def pmap_body(v):
    inside.set()
    assert go.wait(30)
    return lax.psum(v, 'i')

def background_pmap():
    result["pmap"] = spmdc.pmap(pmap_body, 'i')(np.arange(8, dtype=np.float32))

def foreground():
    assert inside.wait(30)
    try:
        # while another thread is in the middle of a trace, this thread's calls compute
        for r in (compiled(on_device), compiled(x), spmdc.jit(lambda v: v - 1)(x)):
            assert type(r) is spmdc.Array, type(r)
        assert np.allclose(np.asarray(compiled(x)), x * 3)
        assert np.allclose(np.asarray(jnp.cos(x)), np.cos(x))
        assert np.allclose(np.asarray(spmdc.grad(lambda v: (v ** 3).sum())(x)), 3 * x ** 2)
        assert np.allclose(np.asarray(spmdc.vmap(jnp.outer)(x[:, None], x[:, None])),
                           (x * x)[:, None, None])
        # the stages recorded by lower() are this thread's own
        stages = spmdc.jit(jnp.cosh).lower(x).stages(hlo=False)
        assert all("cosh" in text for _, text in stages), stages
    finally:
        go.set()

for name, target in (("jit", background), ("pmap", background_pmap)):
    inside.clear(); go.clear()
    in_threads(guarded(target), guarded(foreground))
    if name in result:
        expected = np.tanh(x) * 2 if name == "jit" else np.full(8, 28.0)
        assert type(result[name]) is spmdc.Array, result
        assert np.allclose(np.asarray(result[name]), expected, rtol=1e-5), result
    else:
        errors.append(f"the background {name} did not finish")

# Two outer pmaps traced at once, the second one started while the first is inside its
# body: the first one's nested pmap belongs to its own device mesh, not to the other's.
first_inside, second_inside = threading.Event(), threading.Event()

def first_body(v):
    first_inside.set()
    assert second_inside.wait(30)
    return spmdc.pmap(lambda w: lax.psum(w, 'j'), 'j')(v)

def second_body(v):
    second_inside.set()
    assert go.wait(30)
    return lax.psum(v, 'i')

def first():
    try:
        result["nested"] = spmdc.pmap(first_body, 'k')(np.ones((2, 4), np.float32))
    finally:
        go.set()

def second():
    assert first_inside.wait(30)
    result["flat"] = spmdc.pmap(second_body, 'i')(np.ones(8, np.float32))

go.clear()
in_threads(guarded(first), guarded(second))
assert np.allclose(np.asarray(result["nested"]), 4), result
assert np.allclose(np.asarray(result["flat"]), 8), result

# Stages recorded by lower() in one thread while another thread compiles.
inside.clear(); go.clear()

def lowered_pausing(v):
    inside.set()
    assert go.wait(30)
    return jnp.cosh(v)

def lower_it():
    result["stages"] = spmdc.jit(lowered_pausing).lower(x).stages(hlo=False)

def compile_meanwhile():
    assert inside.wait(30)
    try:
        assert np.allclose(np.asarray(spmdc.jit(lambda v: jnp.sinh(v) * 5)(x)), np.sinh(x) * 5)
    finally:
        go.set()

in_threads(guarded(lower_it), guarded(compile_meanwhile))
assert all("cosh" in t and "sinh" not in t for _, t in result["stages"]), result["stages"]
"""


@pytest.mark.devices(8)
def test_calls_while_another_thread_traces():
    # The current trace was one global: a call made while another thread traced was
    # recorded into that trace and returned a Tracer (silently), and the stray state
    # could outlive both threads.
    run_script(PAUSED_TRACE)


STRESS = """
x = np.arange(4, dtype=np.float32)
compiled = spmdc.jit(lambda v: v * 3)
compiled(spmdc.device_put(x))
stop = threading.Event()

def trace_many(i):
    for k in range(8):
        r = spmdc.jit(lambda v: jnp.tanh(v) + k + i)(x)        # a new function: traces
        assert type(r) is spmdc.Array, type(r)
        assert np.allclose(np.asarray(r), np.tanh(x) + k + i, rtol=1e-5)
        g = spmdc.grad(lambda v: jnp.sum(v ** 3) * (k + 1))(x)
        assert np.allclose(np.asarray(g), 3 * x ** 2 * (k + 1), rtol=1e-4)
        r = spmdc.pmap(lambda v: lax.psum(v, 'i') * k, 'i')(np.ones(8, np.float32))
        assert np.allclose(np.asarray(r), 8 * k)

def call_compiled():
    a = spmdc.device_put(x)
    while not stop.is_set():
        for r in (compiled(a), compiled(x)):
            assert type(r) is spmdc.Array, type(r)
            assert np.allclose(np.asarray(r), x * 3)

def tracers():
    try:
        in_threads(*[guarded(trace_many, i) for i in range(3)])
    finally:
        stop.set()

in_threads(tracers, guarded(call_compiled), guarded(call_compiled))
"""


@pytest.mark.devices(8)
def test_tracing_and_calling_concurrently():
    run_script(FIRST_USE + STRESS)      # first use: see test_first_use_from_several_threads
