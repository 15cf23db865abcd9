"""jaxlib's coordination service in a process of its own, which process 0 of a
multi-process computation starts, so that the service outlives process 0 (Note [the
service outlives process 0] in runtime/distributed.py).

Run as a script, ``python service_process.py BIND N HEARTBEAT_S SHUTDOWN_S LINGER_S``, it
imports jaxlib alone (a script's directory is no package: spmdc is not imported, and the
process starts in a fifth of a second), says ``ready`` on stdout (or ``error <why>``),
and serves until process 0 writes ``stop`` on its stdin. When its stdin closes without
that line, process 0 has ended some other way (killed, or leaving after a failure while
its own client still polls the service): it serves ``LINGER_S`` seconds more, so that
the other processes leave with their own message before the service goes, then stops.
It ignores SIGINT and SIGTERM: a Ctrl-C or a SIGTERM sent to process 0's process group
reaches process 0, which decides; the service must not vanish under the others.
``ServiceProcess`` is process 0's side.
"""
from __future__ import annotations

import sys

if __name__ == "__main__":
    # This directory is not a package: none of its modules may shadow what jaxlib imports.
    del sys.path[0]

import os  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

__all__ = ["ServiceProcess"]


class ServiceProcess:
    """Process 0's handle on the service's process."""

    def __init__(self, bind: str, num_processes: int, heartbeat_s: int, shutdown_s: int,
                 linger_s: float):
        self.bind = bind
        # jaxlib's log, read back only when the service fails (it is small: the service
        # logs its start and its errors)
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), bind, str(num_processes),
             str(heartbeat_s), str(shutdown_s), str(linger_s)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log)

    def wait_ready(self, timeout: float) -> str | None:
        """None once the service listens; else why it does not (it failed, or did not
        answer within ``timeout`` seconds)."""
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], max(timeout, 0.0))
        line = self.process.stdout.readline().decode(errors="replace").strip() if ready \
            else ""
        if line == "ready":
            return None
        self.process.kill()
        self.process.wait()
        if line.startswith("error "):
            return line[len("error "):]
        self.log.seek(0)
        errors = [text.split("] ", 1)[-1] for text in
                  self.log.read().decode(errors="replace").splitlines() if text[:1] in "EF"]
        return ("its process did not start in time" if not ready else
                f"its process ended with status {self.process.returncode}") + \
            "".join(f"; {text}" for text in errors[-3:])

    def stop(self, timeout: float) -> None:
        """Stop the service (every process has left) and wait for its process to end."""
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(b"stop\n")
            self.process.stdin.close()
            self.process.wait(timeout)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()


def _serve(bind: str, num_processes: int, heartbeat_s: int, shutdown_s: int,
           linger_s: float) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    from jaxlib import _jax
    try:
        service = _jax.get_distributed_runtime_service(
            bind, num_processes, heartbeat_timeout=heartbeat_s, shutdown_timeout=shutdown_s)
    except Exception as e:     # noqa: BLE001  (the port is taken, the address wrong ...)
        print(f"error {type(e).__name__}: {e}".replace("\n", " "), flush=True)
        return
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "stop":
        time.sleep(linger_s)
    service.shutdown()


if __name__ == "__main__":
    _bind, _n, _heartbeat, _shutdown, _linger = sys.argv[1:]
    _serve(_bind, int(_n), int(_heartbeat), int(_shutdown), float(_linger))
    sys.stdout.flush()
    os._exit(0)
