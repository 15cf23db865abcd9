"""spmdc.profiler (jax.profiler) through jaxlib's profiler: a trace written where
TensorBoard reads it (plugins/profile/<run>/<host>.xplane.pb, with trace.json.gz and, on
request, Perfetto's perfetto_trace.json.gz) holding the annotations the program made;
one trace at a time (Note [one trace at a time] in spmdc/profiler.py); the profiler
server; and device memory profiles in pprof form naming the allocating code."""
from __future__ import annotations

import gzip
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import profiler


def _run_dir(log_dir):
    runs = os.listdir(os.path.join(log_dir, "plugins", "profile"))
    assert len(runs) == 1
    return os.path.join(log_dir, "plugins", "profile", runs[0])


def _events(data):
    """name -> [(duration in ns, stats)] of every event in a ProfileData."""
    found: dict[str, list] = {}
    for plane in data.planes:
        for line in plane.lines:
            for event in line.events:
                found.setdefault(event.name, []).append((event.duration_ns,
                                                         dict(event.stats)))
    return found


@profiler.annotate_function
def scaled_sine(x):
    return (jnp.sin(x) * 2.0).block_until_ready()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """One trace of a small program with each kind of annotation (shared by the tests)."""
    log_dir = str(tmp_path_factory.mktemp("trace"))
    x = np.linspace(0, 1, 16, dtype=np.float32)
    with profiler.trace(log_dir, create_perfetto_trace=True):
        with profiler.TraceAnnotation("outer_block", phase="warmup"):
            outs = [scaled_sine(x)]
            for step in range(2):
                with profiler.StepTraceAnnotation("train", step_num=step):
                    outs.append(scaled_sine(x))
    return log_dir, x, outs


def test_the_trace_is_written_where_tensorboard_reads_it(recorded):
    log_dir, x, outs = recorded
    run = _run_dir(log_dir)
    names = sorted(os.listdir(run))
    xplane = [n for n in names if n.endswith(".xplane.pb")]
    assert len(xplane) == 1 and os.path.getsize(os.path.join(run, xplane[0])) > 1000
    assert any(n.endswith(".trace.json.gz") for n in names)
    for out in outs:             # the traced program computed what it computes untraced
        np.testing.assert_allclose(np.asarray(out), np.sin(x) * 2, rtol=1e-6)


def test_the_trace_holds_the_annotations(recorded):
    log_dir, _, _ = recorded
    run = _run_dir(log_dir)
    xplane, = (n for n in os.listdir(run) if n.endswith(".xplane.pb"))
    events = _events(profiler.ProfileData.from_file(os.path.join(run, xplane)))
    assert len(events["outer_block"]) == 1 and events["outer_block"][0][1]["phase"] == "warmup"
    assert sorted(int(s["step_num"]) for _, s in events["train"]) == [0, 1]
    assert len(events["scaled_sine"]) == 3      # annotate_function: one event per call
    outer, = (d for d, _ in events["outer_block"])
    assert all(0 < d <= outer for d, _ in events["scaled_sine"])
    # by default the Python tracer records calls, named "$file:line function"
    assert any(n.startswith("$test_profiler.py:") and n.endswith(" scaled_sine")
               for n in events)
    with open(os.path.join(run, xplane), "rb") as f:      # the same from the bytes
        again = _events(profiler.ProfileData.from_serialized_xspace(f.read()))
    assert len(again["train"]) == 2


def test_the_perfetto_trace_is_the_json_trace_without_metadata(recorded):
    log_dir, _, _ = recorded
    run = _run_dir(log_dir)
    with gzip.open(os.path.join(run, "perfetto_trace.json.gz")) as f:
        perfetto = json.load(f)
    trace_json, = (n for n in os.listdir(run) if n.endswith(".trace.json.gz"))
    with gzip.open(os.path.join(run, trace_json)) as f:
        full = json.load(f)
    assert "metadata" in full and "metadata" not in perfetto
    assert perfetto["traceEvents"] == full["traceEvents"]
    train = [e for e in perfetto["traceEvents"] if e.get("name") == "train"]
    assert sorted(e["args"]["step_num"] for e in train) == ["0", "1"]


def test_one_trace_at_a_time(tmp_path):
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    profiler.start_trace(tmp_path / "a")
    try:
        with pytest.raises(RuntimeError, match="already been started"):
            profiler.start_trace(tmp_path / "b")
    finally:
        profiler.stop_trace()
    with pytest.raises(KeyError):                # an exception ends the trace ...
        with profiler.trace(tmp_path / "c"):
            raise KeyError("inside the trace")
    profiler.start_trace(str(tmp_path / "d"))    # ... so another may start
    profiler.stop_trace()
    assert os.path.isdir(tmp_path / "c" / "plugins" / "profile")
    assert not os.path.exists(tmp_path / "b")
    with pytest.raises(TypeError, match="log_dir must be a path"):
        profiler.start_trace(3)
    with pytest.raises(TypeError, match="func must be callable"):
        profiler.annotate_function("f")


def test_trace_decorates_a_function_and_options_apply(tmp_path):
    options = profiler.ProfileOptions()
    options.python_tracer_level = 0           # no Python call events
    options.host_tracer_level = 2

    @profiler.trace(str(tmp_path), profiler_options=options)
    def program():
        with profiler.TraceAnnotation("inside_decorated"):
            return float(jnp.sum(jnp.arange(4.0)))

    assert program() == 6.0
    run = _run_dir(tmp_path)
    xplane, = (n for n in os.listdir(run) if n.endswith(".xplane.pb"))
    events = _events(profiler.ProfileData.from_file(os.path.join(run, xplane)))
    assert "inside_decorated" in events
    assert not any(n.startswith("$") for n in events)    # Python calls are "$file:line f"


def test_a_perfetto_link_serves_the_trace_until_it_is_fetched(tmp_path, capsys):
    profiler.start_trace(tmp_path, create_perfetto_link=True)
    with profiler.TraceAnnotation("linked"):
        pass
    stopper = threading.Thread(target=profiler.stop_trace)
    stopper.start()
    body = None
    for _ in range(100):                      # the server starts once the trace is written
        try:
            with urllib.request.urlopen(
                    f"http://127.0.0.1:{profiler.PERFETTO_PORT}/perfetto_trace.json.gz",
                    timeout=5) as reply:
                body = reply.read()
            break
        except OSError:
            time.sleep(0.05)
    stopper.join(timeout=10)
    assert not stopper.is_alive() and body is not None
    assert any(e.get("name") == "linked" for e in json.loads(gzip.decompress(body))
               ["traceEvents"])
    assert "https://ui.perfetto.dev/#!/?url=http://127.0.0.1:9001/perfetto_trace.json.gz" \
        in capsys.readouterr().out


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_profiler_server_listens_until_stopped():
    port = _free_port()
    server = profiler.start_server(port)
    try:
        assert server is not None
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        with pytest.raises(ValueError, match="Only one profiler server"):
            profiler.start_server(_free_port())
    finally:
        profiler.stop_server()
    del server
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    with pytest.raises(ValueError, match="No active profiler server"):
        profiler.stop_server()
    with pytest.raises(TypeError, match="port must be an int"):
        profiler.start_server("9000")


def test_a_subprocess_registers_and_unregisters():
    port = _free_port()
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom jaxlib import _profiler\n"
         f"s = _profiler.start_server({port})\nprint('up', flush=True)\ntime.sleep(60)"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert child.stdout.readline().strip() == "up"
        unregister = profiler.register_subprocess(child.pid, port)
        assert callable(unregister)
        unregister()
    finally:
        child.kill()
        child.wait()


def make_weights():
    return spmdc.device_put(np.ones((123, 7), np.float32))


def test_device_memory_profile_names_live_buffers_and_their_code(tmp_path):
    weights = make_weights()
    profile = gzip.decompress(profiler.device_memory_profile())
    assert b"buffer" in profile and b"make_weights" in profile
    assert b"cpu" in profile or b"gpu" in profile
    path = tmp_path / "memory.prof"
    profiler.save_device_memory_profile(str(path), backend=spmdc.default_backend())
    assert b"make_weights" in gzip.decompress(path.read_bytes())
    with pytest.raises(RuntimeError, match="Unknown backend"):
        profiler.device_memory_profile("tpu")
    del weights


def test_stop_and_get_fdo_profile_ends_the_trace_without_writing_it(tmp_path):
    from spmdc._src import profiler as src_profiler  # jax._src.profiler
    profiler.start_trace(tmp_path)
    spmdc.jit(lambda x: x * 2.0)(np.ones(3, np.float32)).block_until_ready()
    fdo = src_profiler.stop_and_get_fdo_profile()
    assert isinstance(fdo, bytes)            # XLA's PGO profile; only GPU programs fill it
    assert not os.path.exists(tmp_path / "plugins")
    with pytest.raises(RuntimeError, match="No profile started"):
        src_profiler.stop_and_get_fdo_profile()
    profiler.start_trace(tmp_path)           # the session ended: another may start
    profiler.stop_trace()
    assert os.path.isdir(tmp_path / "plugins" / "profile")
