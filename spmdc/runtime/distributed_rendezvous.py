"""The meeting of the processes before jaxlib's ``connect()`` (Note [failing fast] in
runtime/distributed.py): process 0 gathers every other process's hello on the
coordinator's port + 1, checks that each belongs to this run and agrees with it, and
answers all of them at once; the connections stay open for the watchdog.

Note [rendezvous]
~~~~~~~~~~~~~~~~~
The port is open to whoever can reach it, so process 0 trusts nothing that arrives on it:

- it listens on the coordinator's interface only (the host of ``coordinator_address``,
  or of ``coordinator_bind_address`` when given), not on every interface;
- each connection is served by a thread of its own, which gives it ``HELLO_S`` seconds
  to say hello: a client that connects and says nothing (a port scanner, a health check)
  holds only its own thread (beyond _MAX_GREETING such connections, the oldest is
  dropped: a real process says hello at once), and what is not a hello is logged (logger
  ``spmdc.distributed``) and dropped, while the real processes are served beside it;
- a hello proves that its sender knows the run's token, ``SPMDC_RUN_TOKEN``
  (``spmdc.launch`` makes a fresh one for each run; with mpirun or srun, export one
  value to every process): process 0 opens each connection with a fresh challenge, the
  hello carries HMAC-SHA256(token, challenge + hello), and process 0's answer carries
  one over the challenge the hello brought, so the peer knows it is answered by process
  0 of its own run. The token never crosses the network. A hello with another token is
  refused and logged; it does not stop the run. Without a token (none set) anyone who can
  reach the port may join, as with JAX;
- a hello of this run that disagrees with process 0 (the process count, a duplicate id,
  the spmdc or jaxlib version, the platform or the local device count) stops the start:
  every process raises a DistributedError that names the processes that differ.

jaxlib's own coordination service (on the coordinator's port) authenticates no one;
every process has been vouched for here before any connects to it.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import queue
import secrets
import socket
import threading
import time
from typing import Any

from ..errors import DistributedError

__all__ = ["gather", "say_hello", "HELLO_S"]

HELLO_S = 5.0            # how long a connection may take to say hello
_MAX_LINE = 1 << 16      # the longest line read from a connection
_MAX_GREETING = 256      # connections served at once that have not said hello yet
_log = logging.getLogger("spmdc.distributed")


# --- the wire: one JSON object a line, signed where it matters -------------------------------

def send(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall((json.dumps(message) + "\n").encode())


def read_line(conn: socket.socket, deadline: float | None = None) -> str:
    """One line from ``conn`` ("" at the end of the stream), read a byte at a time so that
    nothing after it is consumed; TimeoutError past ``deadline`` (None: no deadline),
    ValueError for a line longer than _MAX_LINE."""
    data = bytearray()
    while not data.endswith(b"\n"):
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no complete line in time")
            conn.settimeout(left)
        byte = conn.recv(1)
        if not byte:
            break
        data += byte
        if len(data) > _MAX_LINE:
            raise ValueError("line too long")
    return data.decode(errors="replace")


def _mac(token: str, challenge: str, body: str) -> str:
    return hmac.new(token.encode(), (challenge + "\n" + body).encode(),
                    hashlib.sha256).hexdigest()


def _send_signed(conn: socket.socket, token: str, challenge: str,
                 message: dict[str, Any]) -> None:
    body = json.dumps(message)
    conn.sendall(f"{_mac(token, challenge, body)} {body}\n".encode())


def _read_signed(line: str, token: str, challenge: str) -> tuple[Any, bool]:
    """The message of a signed ``line`` (None if it is not one) and whether its
    signature is right."""
    mac, _, body = line.strip().partition(" ")
    try:
        message = json.loads(body)
    except ValueError:
        return None, False
    return message, hmac.compare_digest(mac, _mac(token, challenge, body))


# --- process 0 -------------------------------------------------------------------------------

def _listen(host: str, port: int) -> socket.socket:
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        return socket.create_server((host, port), family=family)
    except OSError as e:
        raise DistributedError(
            f"process 0 could not listen on {host}:{port} (the coordinator's port + 1, "
            f"which spmdc uses to gather the processes before they connect): {e}. Choose "
            "another coordinator port, or pass coordinator_bind_address='host:port' with "
            "this machine's address on the network the processes share") from None


def _greet(conn: socket.socket, address: Any, token: str, arrived: queue.Queue,
           closing: threading.Event) -> None:
    """Serve one connection: a challenge, then HELLO_S seconds for a signed hello."""
    challenge = secrets.token_hex(16)
    try:
        send(conn, {"challenge": challenge})
        line = read_line(conn, time.monotonic() + HELLO_S)
        message, signed = _read_signed(line, token, challenge)
        hello = message.get("hello") if isinstance(message, dict) else None
        if not isinstance(hello, dict) or not isinstance(hello.get("process_id"), int):
            _log.warning("spmdc.distributed: ignored a connection from %s to the "
                         "rendezvous port that did not say hello (%r)", address, line[:80])
            conn.close()
            return
        if not signed:
            _log.warning("spmdc.distributed: refused process %s (pid %s on %s, from %s): "
                         "its run token differs from process 0's", hello.get("process_id"),
                         hello.get("pid"), hello.get("host"), address)
            send(conn, {"refused": "its SPMDC_RUN_TOKEN differs from process 0's"})
            conn.close()
            return
    except (OSError, ValueError, UnicodeError) as e:
        _log.warning("spmdc.distributed: ignored a connection from %s to the rendezvous "
                     "port: %s", address, e or type(e).__name__)
        conn.close()
        return
    if closing.is_set():
        conn.close()
    else:
        arrived.put((conn, hello))


def _accept(server: socket.socket, token: str, arrived: queue.Queue,
            closing: threading.Event) -> None:
    server.settimeout(0.1)
    greeting: dict[socket.socket, Any] = {}     # connections yet to say hello, oldest first
    lock = threading.Lock()
    while not closing.is_set():
        try:
            conn, address = server.accept()
        except TimeoutError:
            continue
        except OSError:
            return
        with lock:
            if len(greeting) >= _MAX_GREETING:  # a real process says hello at once
                oldest, where = next(iter(greeting.items()))
                del greeting[oldest]
                _log.warning("spmdc.distributed: dropped the connection from %s to the "
                             "rendezvous port, the oldest of %d yet to say hello", where,
                             _MAX_GREETING)
                try:
                    oldest.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            greeting[conn] = address

        def greet(conn: socket.socket = conn, address: Any = address) -> None:
            try:
                _greet(conn, address, token, arrived, closing)
            finally:
                with lock:
                    greeting.pop(conn, None)
        threading.Thread(target=greet, name="spmdc-rendezvous-hello", daemon=True).start()


def gather(mine: dict[str, Any], host: str, port: int, deadline: float, token: str,
           coordinator: str) -> dict[int, socket.socket]:
    """Process 0: every other process's connection, once all have said hello and agree
    (Note [rendezvous])."""
    n = mine["num_processes"]
    server = _listen(host, port)
    arrived: queue.Queue = queue.Queue()
    closing = threading.Event()
    threading.Thread(target=_accept, args=(server, token, arrived, closing),
                     name="spmdc-rendezvous", daemon=True).start()
    peers: dict[int, tuple[socket.socket, dict[str, Any]]] = {}
    problem = None
    try:
        while len(peers) < n - 1 and problem is None:
            try:
                conn, hello = arrived.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                problem = _missing(n, peers, coordinator)
                break
            problem = _disagreement(mine, hello, peers)
            peers.setdefault(hello["process_id"], (conn, hello))
            if problem is not None and peers[hello["process_id"]][0] is not conn:
                _answer(conn, token, hello, {"error": problem})
        if problem is None:
            problem = _devices_differ(mine, [hello for _, hello in peers.values()])
        for conn, hello in peers.values():
            _answer(conn, token, hello, {"ok": True} if problem is None else
                    {"error": problem})
    except BaseException:
        for conn, _ in peers.values():
            conn.close()
        raise
    finally:
        closing.set()
        server.close()
    if problem is not None:
        for conn, _ in peers.values():
            conn.close()
        raise DistributedError(problem)
    for conn, _ in peers.values():
        conn.settimeout(None)
    return {k: conn for k, (conn, _) in peers.items()}


def _answer(conn: socket.socket, token: str, hello: dict[str, Any],
            message: dict[str, Any]) -> None:
    try:
        _send_signed(conn, token, str(hello.get("challenge")), message)
    except OSError:
        pass
    if "error" in message:
        conn.close()


def _who(hello: dict[str, Any]) -> str:
    return f"process {hello['process_id']} (pid {hello.get('pid')} on {hello.get('host')})"


def _missing(n: int, peers: dict[int, Any], coordinator: str) -> str:
    missing = sorted(set(range(1, n)) - set(peers))
    return (f"process{'es' if len(missing) > 1 else ''} {', '.join(map(str, missing))} of "
            f"{n} did not start within initialization_timeout: process 0 (the coordinator, "
            f"{coordinator}) waited for them. Start every process with the same coordinator "
            "address, process count and SPMDC_RUN_TOKEN, each with its own process id "
            "(python -m spmdc.launch does this)")


def _disagreement(mine: dict[str, Any], theirs: dict[str, Any],
                  peers: dict[int, Any]) -> str | None:
    who = _who(theirs)
    if theirs.get("num_processes") != mine["num_processes"]:
        return (f"{who} was started for {theirs.get('num_processes')} processes, process 0 "
                f"for {mine['num_processes']}: give every process the same process count")
    if theirs["process_id"] in peers or theirs["process_id"] == 0:
        return (f"two processes have process id {theirs['process_id']}: give each process "
                "its own id in 0..num_processes-1")
    for what in ("jaxlib", "spmdc"):
        if theirs.get(what) != mine[what]:
            return (f"{who} runs {what} {theirs.get(what)}, process 0 runs {mine[what]}: "
                    "every process must run the same versions")
    return None


def _devices(hello: dict[str, Any]) -> str:
    count = hello.get("devices")
    plural = "" if count == 1 else "s"
    return f"{'all its' if count is None else count} {hello.get('platform')} device{plural}"


def _devices_differ(mine: dict[str, Any], theirs: list[dict[str, Any]]) -> str | None:
    """Whether the processes have different platforms or local device counts, naming
    each group of processes."""
    groups: dict[str, list[int]] = {}
    for hello in sorted([mine, *theirs], key=lambda h: h["process_id"]):
        groups.setdefault(_devices(hello), []).append(hello["process_id"])
    if len(groups) == 1:
        return None
    listed = "; ".join(f"process{'es' if len(ids) > 1 else ''} {', '.join(map(str, ids))}: "
                       f"{devices}" for devices, ids in groups.items())
    return ("the processes have different local devices (" + listed + "). Every process "
            "must run on the same platform with the same number of devices: set "
            "SPMDC_CPU_DEVICES (python -m spmdc.launch --devices-per-process) or "
            "local_device_ids alike in every process")


# --- every other process ---------------------------------------------------------------------

def say_hello(hello: dict[str, Any], host: str, port: int, deadline: float,
              token: str) -> socket.socket:
    """Process ``hello['process_id']``: say hello to process 0 and wait for its answer,
    which comes once every process has said hello; the connection stays open. A
    connection that process 0 drops before its challenge (it is busy with strangers) is
    tried again until ``deadline``."""
    me = hello["process_id"]
    while True:
        try:
            conn = socket.create_connection((host, port), timeout=1.0)
        except OSError:
            conn = None
        if conn is not None:
            try:
                opening = read_line(conn, time.monotonic() + HELLO_S)
            except (OSError, ValueError):
                opening = ""
            if opening:
                try:
                    return _hello_on(conn, opening, hello, deadline, token)
                except BaseException:
                    conn.close()
                    raise
            conn.close()
        if time.monotonic() > deadline:
            raise DistributedError(
                f"process {me} could not reach process 0 (the coordinator) at "
                f"{host}:{port - 1} within initialization_timeout: is process 0 running, "
                "with the same coordinator address?")
        time.sleep(0.05)


def _hello_on(conn: socket.socket, line: str, hello: dict[str, Any], deadline: float,
              token: str) -> socket.socket:
    """Say hello on ``conn``, whose first ``line`` came from process 0."""
    me = hello["process_id"]
    try:
        opening = json.loads(line)
    except ValueError:
        opening = None
    if not isinstance(opening, dict) or not isinstance(opening.get("challenge"), str):
        raise DistributedError(
            f"process {me}: what answers on {conn.getpeername()} (the coordinator's port + "
            "1) is not spmdc's process 0: check the coordinator address and port")
    mine = dict(hello, challenge=secrets.token_hex(16))
    _send_signed(conn, token, opening["challenge"], {"hello": mine})
    try:
        line = read_line(conn, max(deadline, time.monotonic()) + 5)
    except (OSError, ValueError):
        line = ""
    reply, signed = _read_signed(line, token, mine["challenge"])
    if isinstance(reply, dict) and reply.get("ok") and signed:
        conn.settimeout(None)
        return conn
    if not line.strip():
        raise DistributedError(
            f"process {me}: process 0 (the coordinator) gave up before every process had "
            "started; its output says why (a process that never started, or two with the "
            "same id)")
    if not isinstance(reply, dict) and line.startswith("{"):
        reply, signed = json.loads(line), False
    if isinstance(reply, dict) and "refused" in reply:
        raise DistributedError(
            f"process {me} was refused by process 0: {reply['refused']}. Give every process "
            "the same SPMDC_RUN_TOKEN (python -m spmdc.launch sets one), or none")
    if isinstance(reply, dict) and "error" in reply and signed:
        raise DistributedError(f"process {me}: {reply['error']}")
    raise DistributedError(
        f"process {me}: the answer from {conn.getpeername()} is not signed with this run's "
        "token: another program answers on the coordinator's port + 1, or the "
        "SPMDC_RUN_TOKEN differs")


def run_token() -> str:
    """This run's token (Note [rendezvous]): SPMDC_RUN_TOKEN, or "" when none is set."""
    return os.environ.get("SPMDC_RUN_TOKEN", "").strip()
