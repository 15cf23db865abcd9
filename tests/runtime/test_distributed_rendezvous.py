"""The rendezvous of runtime/distributed_rendezvous.py (Note [rendezvous]) in one
process: process 0's ``gather`` and the others' ``say_hello`` on threads, on 127.0.0.1,
with strangers beside them (a silent client, a line that is not a hello, a hello with
another run's token, a fake process 0). No jaxlib, each test well under a second."""
from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time

import pytest

from spmdc.errors import DistributedError
from spmdc.runtime import distributed_rendezvous as rendezvous

TOKEN = "secret-of-this-run"


def _hello(p: int, n: int = 2, devices: int | None = 4, **changes: object) -> dict:
    hello = {"process_id": p, "num_processes": n, "jaxlib": "0.10.2", "spmdc": "1",
             "pid": 1000 + p, "host": "here", "platform": "cpu", "devices": devices}
    hello.update(changes)
    return hello


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Run:
    """Process 0's gather on a thread; ``result`` is its peers or its exception."""

    def __init__(self, port: int, n: int = 2, timeout: float = 5.0, token: str = TOKEN,
                 devices: int | None = 4, host: str = "127.0.0.1"):
        self.result: object = None
        self.port = port

        def gather() -> None:
            try:
                self.result = rendezvous.gather(
                    _hello(0, n, devices), host, port, time.monotonic() + timeout,
                    token, f"{host}:{port - 1}")
            except Exception as e:       # noqa: BLE001  (checked by the test)
                self.result = e
        self.thread = threading.Thread(target=gather, daemon=True)
        self.thread.start()
        _wait_listening(port, host)

    def done(self) -> object:
        self.thread.join(10)
        assert not self.thread.is_alive()
        return self.result


def _wait_listening(port: int, host: str = "127.0.0.1") -> None:
    for _ in range(200):
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.01)


def _say(p: int, port: int, token: str = TOKEN, n: int = 2, host: str = "127.0.0.1",
         **changes: object) -> object:
    try:
        return rendezvous.say_hello(_hello(p, n, **changes), host, port,
                                    time.monotonic() + 5, token)
    except DistributedError as e:
        return e


def test_the_processes_meet_and_keep_their_connections() -> None:
    port = _free_port()
    run = _Run(port, n=3)
    conns = [None, None]
    threads = [threading.Thread(target=lambda p=p: conns.__setitem__(p - 1, _say(p, port, n=3)))
               for p in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    peers = run.done()
    assert sorted(peers) == [1, 2]
    assert all(isinstance(c, socket.socket) for c in conns)
    rendezvous.send(peers[2], {"bye": True})          # the watchdog's channel works
    assert json.loads(rendezvous.read_line(conns[1], time.monotonic() + 2)) == {"bye": True}


def test_a_silent_client_does_not_hold_up_the_start(caplog) -> None:
    port = _free_port()
    run = _Run(port)
    stranger = socket.create_connection(("127.0.0.1", port))       # says nothing
    start = time.monotonic()
    conn = _say(1, port)
    assert isinstance(conn, socket.socket), conn
    assert time.monotonic() - start < rendezvous.HELLO_S         # not after its deadline
    assert sorted(run.done()) == [1]
    stranger.close()


def test_many_silent_clients_do_not_hold_up_the_start(caplog) -> None:
    port = _free_port()
    run = _Run(port)
    with caplog.at_level(logging.WARNING, logger="spmdc.distributed"):
        strangers = [socket.create_connection(("127.0.0.1", port))
                     for _ in range(rendezvous._MAX_GREETING + 20)]
        conn = _say(1, port)
        assert isinstance(conn, socket.socket), conn
        assert sorted(run.done()) == [1]
    assert "the oldest of 256 yet to say hello" in caplog.text
    for stranger in strangers:
        stranger.close()


def test_what_is_not_a_hello_is_logged_and_ignored(caplog) -> None:
    port = _free_port()
    run = _Run(port)
    with caplog.at_level(logging.WARNING, logger="spmdc.distributed"):
        for line in (b'{"process_id": 1}\n', b"GET / HTTP/1.0\r\n\r\n", b"\xff\xfe\n"):
            with socket.create_connection(("127.0.0.1", port)) as stranger:
                stranger.sendall(line)
                assert b'"challenge"' in stranger.recv(1000)
                try:                          # then process 0 hangs up
                    assert stranger.recv(1000) == b""
                except ConnectionResetError:  # with some of the request unread
                    pass
        conn = _say(1, port)
        assert isinstance(conn, socket.socket), conn
        assert sorted(run.done()) == [1]
    for what in ("""('{"process_id": 1}\\n')""", "('GET / HTTP/1.0\\r\\n')", "('\ufffd\ufffd\\n')"):
        assert f"that did not say hello {what}" in caplog.text, caplog.text
    assert "spmdc.distributed: ignored a connection from ('127.0.0.1', " in caplog.text


def test_a_hello_with_another_token_is_refused_and_the_run_goes_on(caplog) -> None:
    port = _free_port()
    run = _Run(port)
    with caplog.at_level(logging.WARNING, logger="spmdc.distributed"):
        refused = _say(1, port, token="guessed")
        assert isinstance(refused, DistributedError)
        assert "process 1 was refused by process 0: its SPMDC_RUN_TOKEN differs from " \
            "process 0's" in str(refused)
        assert isinstance(_say(1, port), socket.socket)
    assert sorted(run.done()) == [1]
    assert "refused process 1 (pid 1001 on here, from ('127.0.0.1'," in caplog.text


def test_a_process_checks_that_process_0_knows_the_token() -> None:
    port = _free_port()
    with socket.create_server(("127.0.0.1", port)) as fake:
        def answer() -> None:
            conn, _ = fake.accept()
            rendezvous.send(conn, {"challenge": "c"})
            rendezvous.read_line(conn, time.monotonic() + 5)
            conn.sendall(b'0000 {"ok": true}\n')           # not signed with the token
            conn.close()
        threading.Thread(target=answer, daemon=True).start()
        result = _say(1, port)
    assert isinstance(result, DistributedError)
    assert "is not signed with this run's token" in str(result)


def test_different_devices_name_the_processes() -> None:
    port = _free_port()
    run = _Run(port, n=3)
    results = [None, None]
    threads = [threading.Thread(target=lambda p=p, d=d, pl=pl: results.__setitem__(
        p - 1, _say(p, port, n=3, devices=d, platform=pl))) for p, d, pl in
        ((1, 2, "cpu"), (2, None, "cuda"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    error = run.done()
    assert isinstance(error, DistributedError)
    assert str(error).startswith(
        "the processes have different local devices (process 0: 4 cpu devices; process 1: "
        "2 cpu devices; process 2: all its cuda devices). Every process must run on the "
        "same platform with the same number of devices")
    assert all(isinstance(r, DistributedError) for r in results), results
    assert str(results[0]).startswith("process 1: the processes have different local")


@pytest.mark.parametrize("changes, message", [
    ({"num_processes": 3}, "process 1 (pid 1001 on here) was started for 3 processes, "
                           "process 0 for 2"),
    ({"spmdc": "2"}, "process 1 (pid 1001 on here) runs spmdc 2, process 0 runs 1"),
    ({"process_id": 0}, "two processes have process id 0"),
])
def test_a_disagreeing_process_stops_the_start(changes: dict, message: str) -> None:
    port = _free_port()
    run = _Run(port)
    hello = _hello(1, **changes)
    try:
        result: object = rendezvous.say_hello(hello, "127.0.0.1", port,
                                              time.monotonic() + 5, TOKEN)
    except DistributedError as e:
        result = e
    assert message in str(result)
    assert message in str(run.done())


def test_a_missing_process_is_named_after_the_timeout() -> None:
    run = _Run(_free_port(), n=3, timeout=0.5)
    assert _say(1, run.port, n=3) is not None
    error = run.done()
    assert isinstance(error, DistributedError)
    assert str(error).startswith("process 2 of 3 did not start within initialization_timeout")


def _outward_address() -> str | None:
    """This machine's address on its network (not loopback), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))         # sends nothing: picks the route only
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


@pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="reads Linux's socket table")
@pytest.mark.parametrize("where", ["loopback", "network"])
def test_process_0_listens_on_the_coordinators_interface_only(where: str) -> None:
    host = "127.0.0.1" if where == "loopback" else _outward_address()
    if host is None:
        pytest.skip("this machine has no address besides loopback")
    port = _free_port()
    run = _Run(port, host=host)
    listening = [line.split() for line in open("/proc/net/tcp").read().splitlines()[1:]]
    mine = [fields[1] for fields in listening if fields[3] == "0A"           # LISTEN
            and int(fields[1].split(":")[1], 16) == port]
    packed = socket.inet_aton(host)[::-1].hex().upper()       # as /proc/net/tcp shows it
    assert mine == [f"{packed}:{port:04X}"], mine             # not 00000000: every interface
    assert _say(1, port, host=host) is not None
    run.done()
