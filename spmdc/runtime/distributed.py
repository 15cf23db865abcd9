"""Several processes, one computation: jaxlib's coordination service, its distributed
client and Gloo's collectives (docs/distributed.md says how to run a program this way).

``initialize`` must run before the first use of the devices: ``pjrt.client()`` then
builds a client that sees every process's devices (``devices()`` global,
``local_devices()`` this process's), and every compiled collective spans all processes.
Until it is called nothing here is used.

Note [failing fast]
~~~~~~~~~~~~~~~~~~~
jaxlib's failure modes are hard on a multi-process job (the recipe's failure table):
its ``connect()`` aborts the whole process (SIGABRT) when a peer never registers; a
client destroyed while its peers are inside a collective holds them there until the
shutdown barrier times out (then every process aborts); a peer that dies is noticed by
the coordination service only after the heartbeat timeout (then every process aborts),
and a collective waiting for it may wait for XLA's 30-minute timeout. So:

- before ``connect()`` the processes meet in a small rendezvous of our own, over TCP on
  the coordinator's port + 1: process 0 waits for every other process to say hello with
  its process id, process count and versions, and only when all have come (and agree)
  does anyone connect. A peer that never starts, two processes with the same id, a
  different process count or a different spmdc/jaxlib version is a ``DistributedError``
  naming the process, after ``initialization_timeout`` at the latest, not an abort;
- the rendezvous connections stay open, and a watchdog thread reads them (``_Watchdog``):
  a process says "bye" before a clean exit and "failed" with its exception from the
  except hook; a closed connection without either means it was killed. Process 0 passes
  the news on, and every other process then raises ``PeerLost`` in its main thread, at
  once, or, when the main thread is held inside a collective that cannot finish, prints
  why and exits with status 1;
- the client is made with ``shutdown_on_destruction=False``, and ``shutdown()`` runs at
  exit only when no exception is propagating, so a failing process leaves at once;
- a collective's own error about a vanished peer (Gloo: "Connection closed by peer")
  gets a note saying what it means (``pjrt.explain``).
"""
from __future__ import annotations

import atexit
import ctypes
import dataclasses
import json
import os
import select
import socket
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from .. import env
from ..errors import DistributedError, PeerLost
from . import cluster, pjrt

__all__ = ["State", "initialize", "shutdown", "state", "is_initialized"]


@dataclasses.dataclass
class State:
    spec: cluster.ClusterSpec
    service: Any            # the coordination service (process 0 only), or None
    client: Any             # the distributed client: key-value store and barriers
    timeouts: dict[str, int]
    watchdog: _Watchdog | None      # None with one process


_state: list[State] = []        # [the State] once initialize has run
_lock = threading.Lock()


def state() -> State | None:
    """The distributed state, or None for a single-process computation."""
    return _state[0] if _state else None


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None,
               local_device_ids: int | Sequence[int] | None = None,
               cluster_detection_method: str | None = None,
               initialization_timeout: int = 300, heartbeat_timeout_seconds: int = 100,
               shutdown_timeout_seconds: int = 300,
               coordinator_bind_address: str | None = None) -> None:
    """Join this process to a computation over ``num_processes`` processes.

    Call it once, before any computation. Arguments left as None come from the
    environment: ``SPMDC_COORDINATOR_ADDRESS``, ``SPMDC_NUM_PROCESSES``,
    ``SPMDC_PROCESS_ID`` (and ``SPMDC_LOCAL_DEVICE_IDS``), else SLURM's or Open MPI's
    variables (``cluster_detection_method='deactivate'`` uses the arguments only).

    - ``coordinator_address``: ``"host:port"`` of process 0, which runs the coordination
      service there; spmdc also uses the next port to gather the processes (Note
      [failing fast]).
    - ``local_device_ids``: the GPUs this process uses (with the CUDA client); the CPU
      client's device count is ``SPMDC_CPU_DEVICES`` / ``jax_num_cpu_devices``.
    - ``initialization_timeout``: seconds to wait for every process to start; then a
      ``DistributedError`` names the missing ones.
    - ``heartbeat_timeout_seconds``: a process silent that long is declared dead, and the
      others are stopped.
    - ``shutdown_timeout_seconds``: how long the exit waits for the other processes.
    - ``coordinator_bind_address``: where process 0's service listens (default: the
      coordinator address on loopback, every interface otherwise).

    At exit, a process that succeeded waits for the others (``shutdown``); one that
    fails leaves at once, and the others' pending collectives raise."""
    if local_device_ids is not None and pjrt.platform_wanted() == "cpu":
        raise ValueError(
            "spmdc.distributed.initialize: local_device_ids chooses GPUs for the CUDA client "
            "(SPMDC_PLATFORM=cuda); the CPU client's device count is SPMDC_CPU_DEVICES (or "
            "config.update('jax_num_cpu_devices', n)). Leave local_device_ids out on the CPU")
    with _lock:
        if _state:
            raise DistributedError(
                "spmdc.distributed.initialize was already called in this process; call it "
                "once, before the first computation")
        if pjrt.client_exists():
            raise DistributedError(
                "spmdc.distributed.initialize must be called before any computation or use "
                "of the devices: spmdc's single-process client already exists. Move the "
                "call to the top of the program, right after `import spmdc`")
        for name, value in (("initialization_timeout", initialization_timeout),
                            ("heartbeat_timeout_seconds", heartbeat_timeout_seconds),
                            ("shutdown_timeout_seconds", shutdown_timeout_seconds)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise TypeError(f"spmdc.distributed.initialize: {name} must be a positive "
                                f"number of seconds (an int), got {value!r}")
        if cluster_detection_method not in (None, "deactivate"):
            raise ValueError(
                "spmdc.distributed.initialize: cluster_detection_method must be None "
                "(detect SPMDC_* variables, SLURM or Open MPI) or 'deactivate' (use the "
                f"arguments only), got {cluster_detection_method!r}")
        if isinstance(local_device_ids, int):
            local_device_ids = [local_device_ids]
        spec = cluster.fill(coordinator_address, num_processes, process_id,
                            None if local_device_ids is None else tuple(local_device_ids),
                            environ={} if cluster_detection_method == "deactivate" else None)
        timeouts = {"init": initialization_timeout, "heartbeat": heartbeat_timeout_seconds,
                    "shutdown": shutdown_timeout_seconds}
        _state.append(_connect(spec, timeouts, coordinator_bind_address))
        pjrt.join(_state[0])
    atexit.register(_shutdown_at_exit)
    _watch_for_failure()


def is_initialized() -> bool:
    """Whether ``initialize`` has joined this process to a multi-process computation."""
    return bool(_state)


def _connect(spec: cluster.ClusterSpec, timeouts: dict[str, int],
             bind_address: str | None) -> State:
    host, port = cluster.split_address(spec.coordinator_address)
    deadline = time.monotonic() + timeouts["init"]
    service = None
    if spec.process_id == 0:
        bind = bind_address or (f"{host}:{port}" if cluster.is_loopback(host)
                                else f"[::]:{port}")
        service = pjrt.coordination_service(bind, spec.num_processes, timeouts["heartbeat"],
                                            timeouts["shutdown"])
    peers = _rendezvous(spec, host, port + 1, deadline)
    client = pjrt.distributed_client(spec.coordinator_address, spec.process_id,
                                     max(1, int(deadline - time.monotonic()) + 5),
                                     timeouts["heartbeat"], timeouts["shutdown"])
    client.connect()        # every peer has said hello: all are about to connect
    watchdog = _Watchdog(spec.process_id, peers) if peers else None
    if watchdog is not None:
        watchdog.start()
    return State(spec, service, client, timeouts, watchdog)


# --- the rendezvous (Note [failing fast]) ----------------------------------------------------

def _hello(spec: cluster.ClusterSpec) -> dict[str, Any]:
    return {"process_id": spec.process_id, "num_processes": spec.num_processes,
            "jaxlib": pjrt.jaxlib_version(), "spmdc": _spmdc_version(), "pid": os.getpid(),
            "host": socket.gethostname()}


def _spmdc_version() -> str:
    from importlib import metadata
    try:
        return metadata.version("spmdc")
    except metadata.PackageNotFoundError:
        return "unknown"


def _rendezvous(spec: cluster.ClusterSpec, host: str, port: int,
               deadline: float) -> dict[int, socket.socket]:
    """Meet every other process; the connections stay open for the watchdog: process
    0's to each peer, a peer's to process 0."""
    if spec.num_processes == 1:
        return {}
    if spec.process_id == 0:
        return _gather_hellos(spec, host, port, deadline)
    return {0: _say_hello(spec, host, port, deadline)}


def _gather_hellos(spec: cluster.ClusterSpec, host: str, port: int,
                   deadline: float) -> dict[int, socket.socket]:
    mine = _hello(spec)
    try:
        server = socket.create_server((host if cluster.is_loopback(host) else "", port))
    except OSError as e:
        raise DistributedError(
            f"process 0 could not listen on port {port} (the coordinator's port + 1, which "
            f"spmdc uses to gather the processes before they connect): {e}. Choose another "
            "coordinator port") from None
    peers: dict[int, socket.socket] = {}
    try:
        while len(peers) < spec.num_processes - 1:
            left = deadline - time.monotonic()
            if left <= 0:
                missing = sorted(set(range(1, spec.num_processes)) - set(peers))
                raise DistributedError(
                    f"process{'es' if len(missing) > 1 else ''} "
                    f"{', '.join(map(str, missing))} of {spec.num_processes} did not start "
                    f"within initialization_timeout: process 0 (the coordinator, "
                    f"{spec.coordinator_address}) waited for them. Start every process with "
                    "the same coordinator address and process count, each with its own "
                    "process id (python -m spmdc.launch does this)")
            server.settimeout(left)
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            conn.settimeout(max(1.0, deadline - time.monotonic()))
            try:
                theirs = json.loads(_read_line(conn))
            except (OSError, ValueError):
                conn.close()
                continue
            problem = _disagreement(mine, theirs, peers)
            if problem is not None:
                _send(conn, {"error": problem})
                conn.close()
                raise DistributedError(problem)
            peers[theirs["process_id"]] = conn
        for conn in peers.values():
            _send(conn, {"ok": True})
            conn.settimeout(None)
    except BaseException:
        for conn in peers.values():
            conn.close()
        raise
    finally:
        server.close()
    return peers


def _disagreement(mine: dict[str, Any], theirs: Any, peers: dict[int, Any]) -> str | None:
    if not isinstance(theirs, dict) or "process_id" not in theirs:
        return "a program that is not spmdc connected to the coordinator's port + 1"
    who = f"process {theirs['process_id']} (pid {theirs.get('pid')} on {theirs.get('host')})"
    if theirs["num_processes"] != mine["num_processes"]:
        return (f"{who} was started for {theirs['num_processes']} processes, process 0 for "
                f"{mine['num_processes']}: give every process the same process count")
    if theirs["process_id"] in peers or theirs["process_id"] == 0:
        return (f"two processes have process id {theirs['process_id']}: give each process "
                "its own id in 0..num_processes-1")
    for what in ("jaxlib", "spmdc"):
        if theirs[what] != mine[what]:
            return (f"{who} runs {what} {theirs[what]}, process 0 runs {mine[what]}: every "
                    "process must run the same versions")
    return None


def _say_hello(spec: cluster.ClusterSpec, host: str, port: int,
               deadline: float) -> socket.socket:
    conn = None
    while conn is None:
        try:
            conn = socket.create_connection((host, port), timeout=1.0)
        except OSError:
            if time.monotonic() > deadline:
                raise DistributedError(
                    f"process {spec.process_id} could not reach process 0 (the coordinator) "
                    f"at {host}:{port - 1} within initialization_timeout: is process 0 "
                    "running, with the same coordinator address?") from None
            time.sleep(0.05)
    try:
        _send(conn, _hello(spec))
        conn.settimeout(max(1.0, deadline - time.monotonic() + 5))
        try:
            reply = json.loads(_read_line(conn) or "null")
        except (OSError, ValueError):
            reply = None
    except BaseException:
        conn.close()
        raise
    if not isinstance(reply, dict) or "error" in reply:
        conn.close()
        if isinstance(reply, dict):
            raise DistributedError(f"process {spec.process_id}: {reply['error']}")
        raise DistributedError(
            f"process {spec.process_id}: process 0 (the coordinator, "
            f"{spec.coordinator_address}) gave up before every process had started; its "
            "output says why (a process that never started, or two with the same id)")
    conn.settimeout(None)
    return conn


def _read_line(conn: socket.socket) -> str:
    """One line from ``conn`` (empty at the end of the stream), read a byte at a time so
    that nothing after it is consumed."""
    data = bytearray()
    while not data.endswith(b"\n"):
        byte = conn.recv(1)
        if not byte:
            break
        data += byte
    return data.decode()


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall((json.dumps(message) + "\n").encode())


# --- watching the others, leaving (Note [failing fast]) ------------------------------------

class _Watchdog(threading.Thread):
    """Reads the rendezvous connections (process 0: one per peer; a peer: the one to
    process 0) until the end. A peer says "bye" before a clean exit and "failed" with
    its exception; one that closes its connection without either was killed. Process 0
    passes the news on; the loss of a peer is then an exception in this process's main
    thread (``PeerLost``), or, if the main thread is held inside a collective that will
    never finish, a message and exit status 1."""

    def __init__(self, me: int, peers: dict[int, socket.socket]):
        super().__init__(name="spmdc-distributed-watchdog", daemon=True)
        self.me, self.peers = me, peers
        self.leaving = False
        self._send_lock = threading.Lock()

    def tell(self, message: dict[str, Any], skip: int | None = None) -> None:
        with self._send_lock:
            for k, conn in list(self.peers.items()):
                if k != skip:
                    try:
                        _send(conn, message)
                    except OSError:
                        pass

    def run(self) -> None:
        watched = dict(self.peers)
        while watched:
            ready, _, _ = select.select(list(watched.values()), [], [])
            for k, conn in list(watched.items()):
                if conn not in ready:
                    continue
                try:
                    line = _read_line(conn)
                    message = json.loads(line) if line.strip() else None
                except (OSError, ValueError):
                    message = None
                del watched[k]
                if isinstance(message, dict) and message.get("bye"):
                    continue
                if isinstance(message, dict) and "died" in message:     # from process 0
                    who, why = message["died"], message["why"]
                elif isinstance(message, dict) and "failed" in message:
                    who, why = k, message["failed"]
                else:
                    who, why = k, "it exited without saying why: killed, or crashed"
                if self.me == 0:
                    self.tell({"died": who, "why": why}, skip=who)
                _lost(self.me, who, why, self.leaving)
                return


def _lost(me: int, who: int, why: str, leaving: bool) -> None:
    PeerLost.message = (f"process {who} of this computation stopped ({why}); process {me} "
                        "cannot go on, since every collective needs every process")
    if not leaving:
        main = threading.main_thread().ident
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(main),
                                                   ctypes.py_object(PeerLost))
        if PeerLost.delivered.wait(_GRACE_S):
            return
    # The main thread is held in a collective (or in the exit's barrier): no exception
    # can reach it.
    print(f"spmdc.distributed: {PeerLost.message}; exiting", file=sys.stderr, flush=True)
    os._exit(1)


_GRACE_S = 2.0          # how long an exception may take to reach the main thread

_failed = [False]


def _watch_for_failure() -> None:
    """On an uncaught exception, tell the other processes why this one stops, and do
    not wait for them in the shutdown barrier at exit."""
    previous = sys.excepthook

    def hook(kind: Any, value: Any, tb: Any) -> None:
        _failed[0] = True
        joined = state()
        if joined is not None and joined.watchdog is not None:
            joined.watchdog.tell({"failed": f"{kind.__name__}: {str(value)[:300]}"})
        previous(kind, value, tb)
    sys.excepthook = hook


def shutdown() -> None:
    """Leave the computation: a barrier with every other process, then process 0 stops
    the coordination service. Called at exit when the program succeeded."""
    with _lock:
        if not _state:
            return
        s = _state.pop()
    if s.watchdog is not None:
        s.watchdog.leaving = True
        s.watchdog.tell({"bye": True})
    s.client.shutdown()
    if s.watchdog is not None:
        # A peer that failed may have said so just before the barrier let us through:
        # let the watchdog read what is left (it ends once every peer has left).
        s.watchdog.join(_GRACE_S)
    if s.service is not None:
        s.service.shutdown()


def _shutdown_at_exit() -> None:
    if _failed[0] or not _state:
        return
    try:
        shutdown()
    except Exception as e:     # noqa: BLE001  (a peer failed: it has said why)
        # This process succeeded, but the computation did not: exit with a failure.
        print(f"spmdc.distributed: the other processes did not finish with this one "
              f"({e}); exiting with status 1", file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(1)


# Note [launch fingerprints]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# Every process must launch the same multi-process programs in the same order: a process
# that launches another program, or one more, leaves the others waiting inside a
# collective for XLA's 30-minute timeout. With SPMDC_CHECK_LAUNCHES=1 (a debugging aid:
# it costs a round trip to the coordination service per launch), each launch first
# publishes its program's fingerprint under its sequence number in the key-value store
# and reads every other process's: a different program is a DistributedError naming both
# processes and programs, and a process that does not reach the same launch within
# initialization_timeout is one naming it.

_launches = [0]


def checking_launches() -> bool:
    return bool(_state) and env.flag("SPMDC_CHECK_LAUNCHES")


def check_launch(fingerprint: str) -> None:
    """Compare this launch's program with every other process's (Note [launch
    fingerprints])."""
    s = _state[0]
    _launches[0] += 1
    n, me = _launches[0], s.spec.process_id
    s.client.key_value_set(f"spmdc/launch/{n}/{me}", fingerprint)
    for p in range(s.spec.num_processes):
        if p == me:
            continue
        try:
            theirs = s.client.blocking_key_value_get(f"spmdc/launch/{n}/{p}",
                                                     s.timeouts["init"] * 1000)
        except Exception:     # noqa: BLE001  (jaxlib's DEADLINE_EXCEEDED)
            raise DistributedError(
                f"process {me}'s launch {n} ({fingerprint}): process {p} did not launch a "
                f"program {n}-th within {s.timeouts['init']} s, or has stopped (its output "
                "says why). Every process must launch the same programs in the same order "
                "(SPMDC_CHECK_LAUNCHES)") from None
        if theirs != fingerprint:
            raise DistributedError(
                f"launch {n}: process {me} runs {fingerprint}, process {p} runs {theirs}. "
                "Every process must launch the same programs in the same order "
                "(SPMDC_CHECK_LAUNCHES)")
    if n > 2:
        s.client.key_value_delete(f"spmdc/launch/{n - 2}/{me}")
