"""The coordination service's own process (runtime/pjrt/service_process.py, Note [the
service outlives process 0] in runtime/distributed.py): it says ready, stops when told,
outlives a process 0 that ends without telling it by its linger time only, ignores
SIGINT and SIGTERM, and says why when it cannot listen."""
from __future__ import annotations

import signal
import socket
import time

from spmdc.runtime.pjrt.service_process import ServiceProcess


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_service_stops_when_told_and_lingers_when_left():
    service = ServiceProcess(f"127.0.0.1:{_free_port()}", 2, 10, 10, 0.5)
    assert service.wait_ready(60) is None
    service.process.send_signal(signal.SIGINT)        # a Ctrl-C meant for process 0
    service.process.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    assert service.process.poll() is None
    service.stop(30)
    assert service.process.returncode == 0

    left = ServiceProcess(f"127.0.0.1:{_free_port()}", 2, 10, 10, 1.0)
    assert left.wait_ready(60) is None
    assert left.process.stdin is not None
    start = time.monotonic()
    left.process.stdin.close()                         # process 0 ended: no "stop"
    time.sleep(0.5)
    assert left.process.poll() is None                 # still serving the others
    assert left.process.wait(30) == 0
    assert 1.0 <= time.monotonic() - start < 20


def test_a_service_that_cannot_listen_says_why():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        service = ServiceProcess(f"127.0.0.1:{port}", 2, 10, 10, 0.5)
        problem = service.wait_ready(60)
    assert problem is not None and service.process.returncode is not None
    # jaxlib raises, or logs the failure and then crashes (SIGSEGV, about one run in
    # two): its log line is then the reason given
    assert "Failed to start RPC server" in problem or (
        "Failed to add port to server: No address added out of total 1 resolved for "
        f"'127.0.0.1:{port}'" in problem), problem
