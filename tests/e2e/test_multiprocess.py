"""One pmap program over several processes (spmdc.distributed, Note [pmap over
processes]): launched on 127.0.0.1 by ``python -m spmdc.launch``, every program of
multiprocess_programs.py gives, in each process, its piece of what one process with
all the devices computes; a process that dies or never starts is a clear error in the
others, within seconds (Note [failing fast] in runtime/distributed.py).

Every subprocess is bounded by a timeout, so a hang fails the test instead of the suite.
"""
from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

import multiprocess_programs
import numpy as np
import pytest

import spmdc as jax
from spmdc.launch import launch

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(TESTS, "multiprocess_worker.py")
ROOT = os.path.dirname(TESTS)


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPMDC_", "SLURM_",
                                                                     "OMPI_"))}
    env["PYTHONPATH"] = os.pathsep.join([ROOT, env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def _launch(pytest_fixtures: tuple, *argv: str) -> subprocess.CompletedProcess[str]:
    """``python -m spmdc.launch argv`` run here, by ``launch(argv)`` (what that command
    calls), with its output captured: the processes it starts are what is tested, and
    the launcher's own Python start would add an ``import spmdc``. They get ``_env()``'s
    environment and start in tests/; ``--timeout`` bounds the run (status 124)."""
    monkeypatch, capsys = pytest_fixtures
    wanted = _env()
    with monkeypatch.context() as here:
        for name in [name for name in os.environ if name not in wanted]:
            here.delenv(name)
        for name, value in wanted.items():
            here.setenv(name, value)
        here.chdir(TESTS)
        status = launch(["--timeout", "240", *argv])
    out = capsys.readouterr()
    return subprocess.CompletedProcess(argv, status, out.out, out.err)


def _check_programs(procs: int, devices: int, tmp_path: object,
                    pytest_fixtures: tuple) -> None:
    out = os.path.join(str(tmp_path), "results")
    run = _launch(pytest_fixtures, "-n", str(procs), "--devices-per-process", str(devices),
                  WORKER, "programs", out)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "[Gloo]" not in run.stdout + run.stderr      # silenced by the launcher
    n = procs * devices
    if jax.device_count() < n:
        pytest.skip(f"the reference run needs {n} devices in this process")
    reference = multiprocess_programs.run(lambda x: x, n)
    for p in range(procs):
        assert f"[p{p}] " in run.stdout
        got = np.load(f"{out}.{p}.npz")
        _check_multihost(got, procs, n, p)
        for name, outs in reference.items():
            for k, (mapped, want) in enumerate(outs):
                value = got[f"{name}.{k}.{int(mapped)}"]
                if mapped:
                    want = np.split(want, procs)[p]
                # Gloo sums in another order than one process does: rounding only.
                np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-5,
                                           err_msg=f"{name} output {k}, process {p}")


def _check_multihost(got: object, procs: int, n: int, p: int) -> None:
    """multihost_utils, from process ``p``: gathers, broadcasts, assert_equal, host-local
    pieces to global arrays and back, live devices."""
    rows = np.array([[p, 10 * p] for p in range(procs)])
    np.testing.assert_array_equal(got["mh.gather"], rows)
    np.testing.assert_array_equal(got["mh.tiled"], rows.ravel())
    np.testing.assert_array_equal(got["mh.broadcast"], [5.0])
    local = n // procs
    pieces = [(100 * q + np.arange(local * 3)).reshape(-1, 3) for q in range(procs)]
    np.testing.assert_array_equal(got["mh.global_shape"], [n, 3])
    np.testing.assert_array_equal(got["mh.global_whole"], np.concatenate(pieces))
    np.testing.assert_array_equal(got["mh.local_back"], pieces[p])
    assert len(got["mh.all_ids"]) == n       # every process alive: every device
    np.testing.assert_array_equal(got["mh.live"], got["mh.all_ids"])
    assert float(got["mh.from_last"]) == procs - 1
    assert not got["global.addressable"]       # Note [arrays over processes]
    assert list(got["global.shards"]) == [n // procs, n]
    assert "holds only some of its blocks, so its value cannot be read here" in \
        str(got["global.read_refused"])
    assert "which can place data only on its own devices" in str(got["remote_put_refused"])
    message = str(got["mh.assert_message"])
    assert message.startswith("differs on purpose. leaf 0 differs between process 0 and "
                              "process"), message


def test_two_processes_of_four_devices(tmp_path: object, monkeypatch, capsys) -> None:
    _check_programs(2, 4, tmp_path, (monkeypatch, capsys))


@pytest.mark.slow
def test_three_processes_of_two_devices(tmp_path: object, monkeypatch, capsys) -> None:
    # 6 devices: the nested program's outer axis has 3, split one per process.
    _check_programs(3, 2, tmp_path, (monkeypatch, capsys))


def _free_port() -> int:
    """A port whose successor is free too (spmdc's rendezvous uses the next port)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 1))
        except OSError:
            continue
        return port
    raise RuntimeError("no free pair of ports")


def _start(procs: int, ids: list[int], mode: str, port: int, timeout_s: int = 60,
           devices: tuple[int, ...] = (), **extra: str) -> list[subprocess.Popen[str]]:
    """Processes ``ids`` of ``procs``, each with 2 CPU devices (or ``devices[i]``)."""
    return [subprocess.Popen(
        [sys.executable, WORKER, *mode.split()],
        env=_env(SPMDC_COORDINATOR_ADDRESS=f"127.0.0.1:{port}",
                 SPMDC_NUM_PROCESSES=str(procs), SPMDC_PROCESS_ID=str(p),
                 SPMDC_CPU_DEVICES=str(devices[i] if devices else 2),
                 MP_TIMEOUT=str(timeout_s), **extra),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=TESTS)
        for i, p in enumerate(ids)]


def _finish(proc: subprocess.Popen[str], timeout: float) -> tuple[int, str, float]:
    start = time.monotonic()
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the process hung for {timeout} s:\n{out}\n{err}")
    return proc.returncode, out + err, time.monotonic() - start


# jaxlib's distributed client aborts its process (SIGABRT, status 134) when the
# coordination service goes away under it: every failure below must end every process
# with status 1 and its Python message (Note [failing fast]).
ABORTED = "Terminating process because the JAX distributed service"


# make test runs the raise; make test-slow also the two exits (the same detection path)
@pytest.mark.parametrize("how", ["die", pytest.param("exit", marks=pytest.mark.slow),
                                 pytest.param("exit0", marks=pytest.mark.slow)])
def test_a_process_that_dies_stops_the_others_with_a_clear_error(how: str) -> None:
    procs = _start(2, [0, 1], how, _free_port())
    failing, other = (0, 1) if how == "exit0" else (1, 0)
    code_f, text_f, _ = _finish(procs[failing], 120)
    code_o, text_o, after = _finish(procs[other], 60)
    if how == "die":
        assert code_f == -signal.SIGKILL
    else:
        assert code_f == 1, text_f
        assert f"RuntimeError: process {failing} fails on purpose" in text_f
    assert code_o == 1, text_o
    assert ABORTED not in text_f + text_o
    assert "the loop finished" not in text_o
    assert (f"process {failing} of this computation stopped" in text_o
            or "another process of this computation died or left" in text_o), text_o
    assert after < 30, f"process {other} took {after:.0f} s to notice"


@pytest.mark.parametrize("leaver", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_a_process_that_finishes_early_stops_the_others_at_once(leaver: int) -> None:
    # The leaver returns after 3 launches; the other's 4th would wait for it forever.
    procs = _start(2, [0, 1], f"early {leaver}", _free_port())
    results = [_finish(p, 60) for p in procs]
    other = 1 - leaver
    assert [code for code, _, _ in results] == [1, 1], results
    assert all(ABORTED not in text for _, text, _ in results), results
    assert "all launches done" in results[leaver][1]
    assert "all launches done" not in results[other][1]
    assert re.search(f"process {leaver} of this computation stopped \\(it finished after "
                     f"its launch 3 \\([^)]+#[0-9a-f]{{16}}\\)", results[other][1]), results
    assert f"process {other} of this computation stopped (PeerLost: process {leaver} of " \
        "this computation stopped (it finished after its launch 3" in results[leaver][1]
    assert max(took for _, _, took in results) < 30


# --- process 0 killed or terminated (Note [the service outlives process 0], Note [SIGTERM])

@pytest.mark.parametrize("how", ["SIGKILL", pytest.param("SIGTERM", marks=pytest.mark.slow)])
def test_process_0_stopped_by_a_signal_stops_the_others_with_status_1(how: str) -> None:
    # The coordination service outlives process 0: jaxlib does not abort the others.
    procs = _start(2, [0, 1], "run", _free_port())
    assert procs[0].stdout is not None
    for line in procs[0].stdout:             # process 0 runs collectives with process 1
        if line.strip() == "running":
            break
    start = time.monotonic()
    procs[0].send_signal(getattr(signal, how))
    code0, text0, _ = _finish(procs[0], 60)
    code1, text1, _ = _finish(procs[1], 60)
    took = time.monotonic() - start
    assert ABORTED not in text0 + text1 and "Check failure" not in text0 + text1
    assert "the loop finished" not in text0 + text1
    assert code1 == 1, text1
    if how == "SIGKILL":
        assert code0 == -signal.SIGKILL
        assert ("process 0 of this computation stopped (it exited without saying why: "
                "killed, or crashed)" in text1
                or "another process of this computation died or left" in text1), text1
    else:
        assert code0 == 1, text0
        assert "DistributedError: process 0 was terminated by SIGTERM" in text0, text0
        assert "process 0 of this computation stopped (DistributedError: process 0 was " \
            "terminated by SIGTERM" in text1, text1
    assert took < 20, f"the processes took {took:.0f} s to end"


@pytest.mark.slow
def test_a_process_that_goes_on_after_process_0_died_ends_before_the_service() -> None:
    procs = _start(2, [0, 1], "run catch", _free_port())
    assert procs[1].stdout is not None
    for line in procs[1].stdout:
        if line.strip() == "running":
            break
    procs[0].kill()
    code1, text1, took = _finish(procs[1], 60)
    assert code1 == 1 and ABORTED not in text1, text1
    assert "caught PeerLost; going on" in text1
    assert "process 0 of this computation died, and its coordination service stops now, " \
        "which would make jaxlib abort this process: exiting" in text1
    assert took < 20
    procs[0].wait()


def test_processes_with_different_device_counts_are_refused() -> None:
    procs = _start(2, [0, 1], "programs /nonexistent", _free_port(), devices=(2, 3))
    for p, proc in enumerate(procs):
        code, text, _ = _finish(proc, 60)
        assert code == 1, text
        assert ("DistributedError: " + ("" if p == 0 else "process 1: ") +
                "the processes have different local devices (process 0: 2 cpu devices; "
                "process 1: 3 cpu devices)") in text, text


def test_a_launched_program_that_does_not_initialize_is_refused(tmp_path: object, monkeypatch,
                                                                capsys) -> None:
    script = os.path.join(str(tmp_path), "alone.py")
    with open(script, "w") as f:
        f.write("import spmdc.numpy as jnp\nprint('sum', jnp.ones(4).sum())\n")
    run = _launch((monkeypatch, capsys), "-n", "2", script)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "sum" not in run.stdout
    assert "DistributedError: this process was started as process " in run.stdout + \
        run.stderr
    assert "but it uses the devices without having called spmdc.distributed.initialize()" \
        in run.stderr, run.stderr


def test_a_busy_process_gets_a_catchable_exception_when_a_peer_dies() -> None:
    procs = _start(2, [0, 1], "idle", _free_port())
    code1, _, _ = _finish(procs[1], 120)
    assert code1 == -signal.SIGKILL
    code0, text0, after = _finish(procs[0], 60)
    assert code0 == 3, text0
    assert "caught PeerLost: process 1 of this computation stopped (it exited without " \
        "saying why: killed, or crashed)" in text0
    # a launch after the loss would wait for process 1 forever: it raises instead
    assert "and again at the next launch: process 1 of this computation stopped" in text0
    assert after < 10, f"process 0 took {after:.0f} s to notice"


@pytest.mark.slow       # waits out the start timeout: make test-slow
def test_a_process_that_never_starts_is_named_after_the_timeout() -> None:
    port = _free_port()
    [alone] = _start(2, [0], "programs", port, timeout_s=3)
    code, text, took = _finish(alone, 60)
    assert code == 1
    assert "DistributedError: process 1 of 2 did not start within initialization_timeout" \
        in text, text
    assert took < 30
    [orphan] = _start(2, [1], "programs", _free_port(), timeout_s=3)
    code, text, _ = _finish(orphan, 60)
    assert code == 1
    assert "could not reach process 0 (the coordinator)" in text, text


def test_two_processes_with_the_same_id_are_refused() -> None:
    port = _free_port()
    procs = _start(3, [0], "programs", port, timeout_s=20) + \
        _start(3, [1, 1], "programs", port, timeout_s=20)
    texts = [_finish(p, 60)[1] for p in procs]
    assert all("two processes have process id 1" in t for t in texts[:1]), texts[0]
    assert any("two processes have process id 1" in t for t in texts[1:]), texts


@pytest.mark.parametrize("how", [pytest.param("other", marks=pytest.mark.slow), "extra"])
def test_mismatched_launches_are_named_with_check_launches(how: str) -> None:
    procs = _start(2, [0, 1], how, _free_port(), timeout_s=5, SPMDC_CHECK_LAUNCHES="1")
    results = [_finish(p, 90) for p in procs]
    assert all(code != 0 for code, _, _ in results), results
    assert "no difference noticed" not in results[1][1]
    if how == "other":
        # The first process to compare names both programs; the other fails at its
        # own check or hears from the watchdog, whichever comes first.
        named = [re.search(r"launch 3: process \d runs (\S+), process \d runs (\S+)\.",
                           text) for _, text, _ in results]
        assert any(named), results
        assert all(m is None or m.group(1) != m.group(2) for m in named)
        assert all("(SPMDC_CHECK_LAUNCHES)" in text or "of this computation stopped" in text
                   for _, text, _ in results), results
    else:
        # Process 0 left after 3 launches: its count (Note [launch counts]) or the
        # check names the 4th, whichever comes first.
        assert ("process 1's launch 4 (" in results[1][1] and "did not launch a program "
                "4-th within 5 s, or has stopped" in results[1][1]) or \
            "process 0 of this computation stopped (it finished after its launch 3 (" in \
            results[1][1], results[1][1]
        assert "process 1 of this computation stopped (" in results[0][1]


def test_initialize_after_the_first_computation_is_refused() -> None:
    code = ("import spmdc, spmdc.numpy as jnp; jnp.ones(2) + 1\n"
            "try:\n"
            "    spmdc.distributed.initialize('127.0.0.1:1234', 2, 0)\n"
            "except spmdc.distributed.DistributedError as e:\n"
            "    print('refused:', e)\n"
            "print((jnp.ones(2) * 3).tolist(), spmdc.process_count())\n")
    run = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "refused: spmdc.distributed.initialize must be called before any" in run.stdout
    assert "[3.0, 3.0] 1" in run.stdout      # and the library goes on working
