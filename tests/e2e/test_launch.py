"""``python -m spmdc.launch`` on small throwaway scripts that print their environment, exit
with a status or sleep; none of them imports spmdc, so each run takes well under a second
unless it is meant to wait. The launcher runs in the test's own process (``launch(argv)``,
what ``python -m spmdc.launch`` calls, its output captured) except where the test is about
the launcher's process itself (Ctrl-C), which saves a Python start and an ``import spmdc``
per run."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from spmdc.launch import launch

ROOT = Path(__file__).resolve().parents[2]

# Prints who it is; process ``fail`` exits with ``status`` after ``delay`` seconds; the
# others sleep ``sleep`` seconds, after leaving their pid in pid<id>.
SCRIPT = """\
import os, sys, time
p = int(os.environ["SPMDC_PROCESS_ID"])
names = ["SPMDC_COORDINATOR_ADDRESS", "SPMDC_NUM_PROCESSES", "SPMDC_PROCESS_ID",
         "SPMDC_CPU_DEVICES", "SPMDC_LOCAL_DEVICE_IDS", "PYTHONUNBUFFERED"]
print(" ".join(f"{name}={os.environ.get(name)}" for name in names))
print(f"to stderr from {p}", file=sys.stderr)
print("args", *sys.argv[1:])
sys.stdout.write("no newline")
"""


def write(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return str(path)


@pytest.fixture
def run_launcher(capsys):
    """Run the launcher on ``argv`` here; its status, output and the seconds it took."""
    def run(*argv: str) -> tuple[subprocess.CompletedProcess, float]:
        start = time.monotonic()
        status = launch(list(argv))
        elapsed = time.monotonic() - start
        out = capsys.readouterr()
        return subprocess.CompletedProcess(argv, status, out.out, out.err), elapsed
    return run


def lines(text: str, prefix: str) -> list[str]:
    return [line[len(prefix):] for line in text.splitlines() if line.startswith(prefix)]


def test_environment_and_prefixes(tmp_path, run_launcher):
    script = write(tmp_path, "who.py", SCRIPT)
    done, _ = run_launcher("-n", "3", "--devices-per-process", "4", "--gpus-per-process", "2",
                           script, "--flag", "x")
    assert done.returncode == 0, done.stderr
    addresses = set()
    for p in range(3):
        env, args, last = lines(done.stdout, f"[p{p}] ")
        assert f"SPMDC_NUM_PROCESSES=3 SPMDC_PROCESS_ID={p} SPMDC_CPU_DEVICES=4 " \
               f"SPMDC_LOCAL_DEVICE_IDS={2 * p},{2 * p + 1} PYTHONUNBUFFERED=1" in env
        addresses.add(env.split()[0])
        assert args == "args --flag x"
        assert last == "no newline"               # completed with a newline of its own
        assert lines(done.stderr, f"[p{p}] ") == [f"to stderr from {p}"]
    assert len(addresses) == 1 and addresses.pop().startswith(
        "SPMDC_COORDINATOR_ADDRESS=127.0.0.1:")
    assert all(line.startswith(("[p0] ", "[p1] ", "[p2] ")) for line in
               done.stdout.splitlines())


GLOO = ("[Gloo] Rank {} is connected to 7 peer ranks. Expected number of connected peer "
        "ranks is : 7\n")


def test_gloo_connection_lines_are_dropped_unless_asked_for(tmp_path, run_launcher):
    script = write(tmp_path, "chatty.py", f"""
        import sys
        sys.stdout.write({GLOO.format(0)!r})
        sys.stdout.write("mine, then " + {GLOO.format(1)!r} + "the rest\\n")
        head, tail = {GLOO.format(5)!r}.split("5")          # cut by the program's own line
        sys.stdout.write(head + "5\\n" + tail.rstrip() + "done\\n")
        print("last")
        """)
    done, _ = run_launcher("-n", "1", script)
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout, "[p0] ") == ["mine, then ", "the rest", "done", "last"]
    done, _ = run_launcher("-n", "1", "--gloo-logs", script)
    assert "[p0] " + GLOO.format(0).strip() in done.stdout.splitlines()


def test_port_and_defaults(tmp_path, run_launcher):
    script = write(tmp_path, "who.py", SCRIPT)
    done, _ = run_launcher("-n", "1", "--port", "23456", "--", script)
    assert done.returncode == 0, done.stderr
    env = lines(done.stdout, "[p0] ")[0]
    assert "SPMDC_COORDINATOR_ADDRESS=127.0.0.1:23456 SPMDC_NUM_PROCESSES=1" in env
    if "SPMDC_CPU_DEVICES" not in os.environ:
        assert "SPMDC_CPU_DEVICES=None" in env


def test_module(tmp_path, run_launcher, monkeypatch):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    write(package, "main.py", SCRIPT)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    done, _ = run_launcher("-n", "2", "-m", "pkg.main", "-n", "7")
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout, "[p1] ")[1] == "args -n 7"


def test_first_failure_stops_a_sleeping_peer(tmp_path, run_launcher):
    script = write(tmp_path, "fail.py", """\
        import os, sys, time
        p = int(os.environ["SPMDC_PROCESS_ID"])
        if p == 1:
            time.sleep(0.5)
            sys.exit(3)
        here = os.path.dirname(__file__)
        open(os.path.join(here, f"pid{p}"), "w").write(str(os.getpid()))
        time.sleep(60)
        """)
    done, elapsed = run_launcher("-n", "3", script)
    assert done.returncode == 3
    assert elapsed < 15
    assert "process 1 exited with status 3; stopping the others" in done.stderr
    for p in (0, 2):
        with pytest.raises(ProcessLookupError):
            os.kill(int((tmp_path / f"pid{p}").read_text()), 0)


def test_first_failure_in_time_not_in_rank(tmp_path, run_launcher):
    script = write(tmp_path, "fail.py", """\
        import os, sys, time
        p = int(os.environ["SPMDC_PROCESS_ID"])
        time.sleep(2 if p == 0 else 0)
        sys.exit(5 if p == 0 else 7)
        """)
    done, _ = run_launcher("-n", "2", script)
    assert done.returncode == 7
    assert "process 1 exited with status 7" in done.stderr


def test_a_peer_ignoring_sigterm_is_killed(tmp_path, run_launcher):
    script = write(tmp_path, "stubborn.py", """\
        import os, signal, sys, time
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if os.environ["SPMDC_PROCESS_ID"] == "1":
            sys.exit(4)
        time.sleep(60)
        """)
    done, elapsed = run_launcher("-n", "2", script)
    assert done.returncode == 4
    assert elapsed < 15


def test_death_by_signal(tmp_path, run_launcher):
    script = write(tmp_path, "killed.py", """\
        import os, signal, time
        if os.environ["SPMDC_PROCESS_ID"] == "1":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(60)
        """)
    done, _ = run_launcher("-n", "2", script)
    assert done.returncode == 128 + signal.SIGKILL
    assert "process 1 exited with status 137" in done.stderr


def test_timeout(tmp_path, run_launcher):
    script = write(tmp_path, "sleep.py", "import time; print('up'); time.sleep(60)\n")
    done, elapsed = run_launcher("-n", "2", "--timeout", "1", script)
    assert done.returncode == 124
    assert "timed out after 1 s" in done.stderr
    assert lines(done.stdout, "[p1] ") == ["up"]
    assert elapsed < 15


def test_ctrl_c_reaches_the_processes(tmp_path):
    script = write(tmp_path, "sleep.py", "import time; print('up'); time.sleep(60)\n")
    environ = dict(os.environ, PYTHONPATH=str(ROOT))
    launcher = subprocess.Popen([sys.executable, "-m", "spmdc.launch", "-n", "2", script],
                                env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    try:
        assert {launcher.stdout.readline(), launcher.stdout.readline()} == \
            {"[p0] up\n", "[p1] up\n"}
        launcher.send_signal(signal.SIGINT)
        _, err = launcher.communicate(timeout=15)
    finally:
        if launcher.poll() is None:         # SIGTERM: the launcher stops its processes
            launcher.terminate()
            launcher.wait(10)
    assert launcher.returncode == 128 + signal.SIGINT
    assert "KeyboardInterrupt" in err


@pytest.mark.parametrize("argv, message", [
    (["-n", "2"], "give the program to run"),
    (["-n", "2", "-m"], "-m needs a module name"),
    (["-n", "0", "x.py"], "argument -n/--num-processes: '0' is not an integer from 1"),
    (["x.py"], "the following arguments are required: -n/--num-processes"),
    (["-n", "1", "--port", "70000", "x.py"], "argument --port"),
])
def test_usage_errors(capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        launch(argv)
    assert info.value.code == 2
    assert message in capsys.readouterr().err


def test_launch_in_process(tmp_path, capsys):
    script = write(tmp_path, "exit.py", "import os, sys; print('hi'); sys.exit(0)\n")
    assert launch(["-n", "2", script]) == 0
    assert sorted(capsys.readouterr().out.splitlines()) == ["[p0] hi", "[p1] hi"]


def test_each_run_has_its_own_token(tmp_path, run_launcher):
    # Note [rendezvous]: the processes of one run share a secret that no other run has.
    script = write(tmp_path, "token.py", "import os; print(os.environ['SPMDC_RUN_TOKEN'])\n")
    tokens = []
    for _ in range(2):
        done, _ = run_launcher("-n", "2", script)
        assert done.returncode == 0, done.stderr
        mine = {lines(done.stdout, f"[p{p}] ")[0] for p in (0, 1)}
        assert len(mine) == 1
        tokens.append(mine.pop())
    assert tokens[0] != tokens[1] and all(len(t) == 32 for t in tokens)
