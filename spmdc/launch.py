"""Run a program as N local processes of one multi-process spmdc program.

    python -m spmdc.launch -n 2 [--devices-per-process 4] [--gpus-per-process K]
                           [--port P] [--timeout S] script.py args...
    python -m spmdc.launch -n 2 -m package.module args...

Process p gets SPMDC_COORDINATOR_ADDRESS=127.0.0.1:<port>, SPMDC_NUM_PROCESSES=N,
SPMDC_PROCESS_ID=p, SPMDC_RUN_TOKEN (a fresh secret for this run, so that no one else can
join it: Note [rendezvous] in runtime/distributed_rendezvous.py), PYTHONUNBUFFERED=1, and
SPMDC_CPU_DEVICES / SPMDC_LOCAL_DEVICE_IDS (GPUs p*K .. p*K+K-1) when asked;
``spmdc.runtime.cluster.detect`` reads them. Each line a
process writes comes out prefixed ``[p<id>] ``, on our stdout or stderr as it was written;
Gloo's per-device connection messages are dropped (``--gloo-logs`` keeps them).

The launcher exits with the first failing process's exit status (128+signal for a death
by signal, as shells report it) once it has stopped the others: SIGTERM, then SIGKILL
after a grace period, so no peer is left waiting for the dead one. ``--timeout`` stops
everything after S seconds and exits 124. Ctrl-C (SIGINT) and SIGTERM are passed on to
the processes; a second Ctrl-C kills them.
"""
from __future__ import annotations

import argparse
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time

__all__ = ["launch", "main"]

GRACE_S = 3.0      # between SIGTERM and SIGKILL when stopping the processes
POLL_S = 0.02

_print_lock = threading.Lock()


def _integer(low: int, high: int | None = None):
    """An argparse type: an integer in [low, high]."""
    def parse(text: str) -> int:
        if not text.isdigit() or int(text) < low or (high is not None and int(text) > high):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not an integer from {low} to {high or 'any'}")
        return int(text)
    return parse


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m spmdc.launch", description="Run a program as N local processes of "
        "one multi-process spmdc program.", epilog="e.g. python -m spmdc.launch -n 2 "
        "--devices-per-process 4 train.py --steps 10")
    parser.add_argument("-n", "--num-processes", type=_integer(1), required=True, metavar="N",
                        help="how many processes to start")
    parser.add_argument("--devices-per-process", type=_integer(1), metavar="D",
                        help="CPU devices each process creates (sets SPMDC_CPU_DEVICES)")
    parser.add_argument("--gpus-per-process", type=_integer(1), metavar="K",
                        help="process p uses GPUs p*K .. p*K+K-1 (sets SPMDC_LOCAL_DEVICE_IDS)")
    parser.add_argument("--port", type=_integer(1, 65535),
                        help="the coordinator's port on 127.0.0.1; the next port is used "
                             "too (default: a free pair)")
    parser.add_argument("--gloo-logs", action="store_true",
                        help="keep Gloo's per-device connection lines (dropped by default)")
    parser.add_argument("--timeout", type=float, metavar="S",
                        help="stop every process after S seconds and exit 124")
    parser.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE ...",
                        help="run a module with its arguments, as python -m does")
    parser.add_argument("program", nargs=argparse.REMAINDER, metavar="script.py args...")
    return parser


def _free_port() -> int:
    """A free port whose successor is free too: spmdc.distributed.initialize gathers the
    processes on the coordinator's port + 1 before they connect."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port < 65535:
            try:
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                    sock.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
            return port
    raise RuntimeError("spmdc.launch: found no two free consecutive ports; pass --port")


# Gloo prints one line per device when a program's first collective connects its ranks
# ("[Gloo] Rank 3 is connected to 7 peer ranks. ..."); jaxlib offers no switch for it.
# It writes the line in pieces from another thread, so the program's own output can cut
# it anywhere: a line may end with its head or begin with its tail.
_GLOO_WHOLE = re.compile(r"\[Gloo\] Rank \d+ is connected to \d+ peer ranks\. Expected "
                         r"number of connected peer ranks is : \d+")
_GLOO_HEAD = re.compile(r"\[Gloo\] Rank.*$")
_GLOO_TAIL = re.compile(r"^.*peer ranks is : \d*")


def _without_gloo(line: str) -> str:
    """``line`` without Gloo's connection messages or pieces of them; "" if nothing of
    the program's own output is left."""
    body = _GLOO_WHOLE.sub("", line.rstrip("\n"))
    if "peer ranks is : " in body:
        body = _GLOO_TAIL.sub("", body)
    if "[Gloo] Rank" in body:
        body = _GLOO_HEAD.sub("", body)
    return body + "\n" if body.strip() else ""


def _forward(pipe, out, prefix: str, quiet: bool = True) -> None:
    """Copy ``pipe`` to ``out`` line by line, each line after ``prefix``; ``quiet``
    drops Gloo's connection lines."""
    for line in pipe:
        if quiet and ("[Gloo]" in line or "peer ranks is : " in line):
            line = _without_gloo(line)
            if not line:
                continue
        with _print_lock:
            out.write(prefix + line if line.endswith("\n") else prefix + line + "\n")
            out.flush()
    pipe.close()


def _say(message: str) -> None:
    with _print_lock:
        print(f"spmdc.launch: {message}", file=sys.stderr, flush=True)


def _signal_all(processes: list[subprocess.Popen], signum: int) -> None:
    """Send ``signum`` to each process still running, and to the processes it started."""
    for process in processes:
        if process.poll() is None:
            try:
                os.killpg(process.pid, signum)      # its own group: see start_new_session
            except ProcessLookupError:
                pass


def _stop(processes: list[subprocess.Popen]) -> None:
    """SIGTERM every process, then SIGKILL whatever is left after GRACE_S."""
    _signal_all(processes, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and any(p.poll() is None for p in processes):
        time.sleep(POLL_S)
    _signal_all(processes, signal.SIGKILL)
    for process in processes:
        process.wait()


def _status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode     # killed by signal -r


def launch(argv: list[str]) -> int:
    """Run ``argv`` (the command line after ``python -m spmdc.launch``); return the exit
    status. Usage errors exit with status 2, as argparse does."""
    parser = _parser()
    args = parser.parse_args(argv)
    program = args.program[1:] if args.program[:1] == ["--"] else args.program
    if args.module is not None:
        if not args.module:
            parser.error("-m needs a module name, e.g. -m package.module")
        command = [sys.executable, "-m", *args.module]
    elif program:
        command = [sys.executable, *program]
    else:
        parser.error("give the program to run: script.py args... or -m module args...")
    port = args.port or _free_port()
    token = secrets.token_hex(16)

    processes: list[subprocess.Popen] = []
    threads: list[threading.Thread] = []
    interrupts = []

    def pass_on(signum, frame):             # a second Ctrl-C kills
        interrupts.append(signum)
        _signal_all(processes, signal.SIGKILL if len(interrupts) > 1 else signum)

    in_main_thread = threading.current_thread() is threading.main_thread()
    if in_main_thread:
        previous = {s: signal.signal(s, pass_on) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for p in range(args.num_processes):     # process 0, the coordinator, starts first
            # A session of its own: the terminal's Ctrl-C reaches only us, and we pass it
            # on (once); stopping a process also stops whatever it started.
            processes.append(subprocess.Popen(
                command, env=_environ(args, port, p, token), stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                start_new_session=True))
            for pipe, out in ((processes[p].stdout, sys.stdout),
                              (processes[p].stderr, sys.stderr)):
                threads.append(threading.Thread(target=_forward, args=(pipe, out, f"[p{p}] ",
                                                                          not args.gloo_logs),
                                                daemon=True))
                threads[-1].start()
        status = _supervise(processes, args.timeout)
    except BaseException:                   # never leave a process behind
        _stop(processes)
        raise
    finally:
        if in_main_thread:
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    for thread in threads:
        thread.join(timeout=GRACE_S)        # the last lines of output
    return status


def _environ(args: argparse.Namespace, port: int, p: int, token: str) -> dict[str, str]:
    """Process ``p``'s environment: ours, plus who it is (see spmdc.runtime.cluster) and
    the run's token."""
    environ = dict(os.environ, SPMDC_COORDINATOR_ADDRESS=f"127.0.0.1:{port}",
                   SPMDC_NUM_PROCESSES=str(args.num_processes), SPMDC_PROCESS_ID=str(p),
                   SPMDC_RUN_TOKEN=token, PYTHONUNBUFFERED="1")
    if args.devices_per_process:
        environ["SPMDC_CPU_DEVICES"] = str(args.devices_per_process)
    if args.gpus_per_process:
        k = args.gpus_per_process
        environ["SPMDC_LOCAL_DEVICE_IDS"] = ",".join(str(p * k + i) for i in range(k))
    return environ


def _supervise(processes: list[subprocess.Popen], timeout: float | None) -> int:
    """Wait for every process to succeed, or for the first failure or the timeout."""
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        returncodes = [process.poll() for process in processes]
        failed = [(p, returncode) for p, returncode in enumerate(returncodes)
                  if returncode not in (None, 0)]
        if failed:
            p, returncode = failed[0]
            running = None in returncodes
            _say(f"process {p} exited with status {_status(returncode)}"
                 + ("; stopping the others" if running else ""))
            _stop(processes)
            return _status(returncode)
        if None not in returncodes:
            return 0
        if deadline is not None and time.monotonic() > deadline:
            _say(f"timed out after {timeout:g} s; stopping every process")
            _stop(processes)
            return 124
        time.sleep(POLL_S)


def main() -> None:
    sys.exit(launch(sys.argv[1:]))


if __name__ == "__main__":
    main()
