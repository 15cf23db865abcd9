"""Several processes, one computation: jaxlib's coordination service, its distributed
client and Gloo's collectives (docs/distributed.md says how to run a program this way).

``initialize`` must run before the first use of the devices: ``pjrt.client()`` then
builds a client that sees every process's devices (``devices()`` global,
``local_devices()`` this process's), and every compiled collective spans all processes.
Until it is called nothing here is used.

Note [failing fast]
~~~~~~~~~~~~~~~~~~~
jaxlib's failure modes are hard on a multi-process job (docs/distributed.md): its
``connect()`` aborts the whole process (SIGABRT) when a peer never registers; a client
destroyed while its peers are inside a collective holds them there until the shutdown
barrier times out; a peer that dies is noticed by the coordination service only after
the heartbeat timeout, and a collective waiting for it may wait for XLA's 30-minute
timeout; and every client polls the coordination service for errors from a thread of its
own, which aborts the process (SIGABRT, a C++ check-failure trace) when the service goes
away under it, as it does when process 0's interpreter exits. So:

- before ``connect()`` the processes meet in a small rendezvous of our own, over TCP on
  the coordinator's port + 1 (Note [rendezvous] in runtime/distributed_rendezvous.py):
  a process that never starts, a stranger, two processes with the same id, different
  process counts, versions, platforms or device counts are a ``DistributedError`` naming
  the processes, after ``initialization_timeout`` at the latest, not an abort;
- the rendezvous connections stay open, and a watchdog thread reads them (``watchdog.Watchdog``):
  a process says "bye" (with how many programs it launched across processes) before its
  exit's shutdown barrier and "failed" with its exception from the except hook; a closed
  connection without either means it was killed. Process 0 passes the news on. A failure
  makes every other process raise ``PeerLost`` in its main thread, at once, or, when the
  main thread is held inside a collective that cannot finish, print why and exit with
  status 1. A "bye" from a process that launched fewer programs than this one has (or
  than this one is about to) is a ``PeerLost`` too: the collective it left would never
  finish (Note [launch counts] in runtime/distributed_watchdog.py);
- the client is made with ``shutdown_on_destruction=False``, and the shutdown barrier
  runs at exit only when no exception is propagating and no peer was lost, so a failing
  process leaves at once;
- process 0 leaves last: before its exit stops the coordination service it waits
  (``watchdog.LEAVE_S`` at most) until every other process has gone (its rendezvous
  connection, held open until the process ends, closes). The service runs in a process
  of its own, which outlives process 0 (Note [the service outlives process 0]). Every
  failure thus ends every process with status 1 and its Python message;
- a SIGTERM is a failure like an exception (Note [SIGTERM]);
- a collective's own error about a vanished peer (Gloo: "Connection closed by peer")
  gets a note saying what it means (``pjrt.explain``).

Note [the service outlives process 0]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
Every distributed client polls the coordination service for errors from a thread of its
own, and when the service goes away jaxlib ends the process from that thread: a C++
check failure, SIGABRT, within milliseconds. Nothing in Python can come first: the
client's ``missed_heartbeat_callback`` is called with an ``absl::Status`` that jaxlib's
bindings cannot convert (``std::bad_cast``, then ``std::terminate``: SIGABRT again), and
the rendezvous connection to process 0 closes at the same instant as the service's. Had
process 0 hosted the service, a process 0 killed by a signal (SIGKILL, the OOM killer, a
segfault) would abort every other process.

So process 0 runs the service in a small child process (runtime/pjrt/service_process.py:
jaxlib alone, started before the rendezvous, ready in a fraction of a second). Process
0's ``shutdown`` stops it once every process has left. If process 0 ends any other way,
the child sees its stdin close and serves ``watchdog.LEAVE_S`` seconds more: the other
processes learn of process 0's death through its rendezvous connection, raise
``PeerLost`` naming it (or, held in a collective, print why and exit with status 1) and
are gone before the service is. The child ignores SIGINT and SIGTERM, which process 0
handles. A process still running ``LEAVE_S - GRACE_S`` seconds after process 0 died (one
that caught ``PeerLost`` and went on) is ended by its watchdog with status 1 and a
message, since jaxlib would abort it when the service stops. A ``fork()`` without
``exec`` that keeps a copy of process 0's end of the pipe keeps the service up until
that copy ends, and a run started again at once on the same coordinator port after
process 0 died finds the port taken for those ``LEAVE_S`` seconds (a DistributedError
that says so).

Note [SIGTERM]
~~~~~~~~~~~~~~
A process of several gets a SIGTERM handler (unless the program set its own): a batch
system's or ``spmdc.launch``'s request to stop. The handler runs in the main thread, as
Python's handlers do, and raises ``DistributedError`` ("terminated by SIGTERM") there,
after marking the process as failing and telling the others why, so they raise
``PeerLost`` naming it; it then exits with status 1 and its message, as for any failure.
A main thread held in a collective runs the handler once the collective returns; one
whose collective can never return is ended by the watchdog when a peer leaves. A process
that fails so (or by any uncaught exception) ends with ``os._exit(1)`` at the end of
spmdc's exit handler (after the traceback, the others told, stdout, stderr and logging
flushed): a collective it launched asynchronously before raising would otherwise hold
the interpreter's exit until the others left (10 s when measured), and the exit handlers
registered before ``initialize`` are skipped.
"""
from __future__ import annotations

import atexit
import dataclasses
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from .. import env
from ..errors import DistributedError, PeerLost
from . import cluster, pjrt
from . import distributed_rendezvous as rendezvous
from . import distributed_watchdog as watchdog
from .pjrt.service_process import ServiceProcess

__all__ = ["State", "initialize", "shutdown", "state", "is_initialized"]


@dataclasses.dataclass
class State:
    spec: cluster.ClusterSpec
    service: Any            # the coordination service (process 0 only), or None
    client: Any             # the distributed client: key-value store and barriers
    timeouts: dict[str, int]
    watchdog: watchdog.Watchdog | None      # None with one process


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
      coordinator address on loopback, every interface otherwise); its host is where
      the rendezvous listens (default: the coordinator's host only).

    A stranger cannot join: each process proves that it knows the run's token,
    ``SPMDC_RUN_TOKEN`` (``spmdc.launch`` makes one; with mpirun or srun, export one
    value to every process), Note [rendezvous] in runtime/distributed_rendezvous.py.

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
    _stop_on_sigterm()


def is_initialized() -> bool:
    """Whether ``initialize`` has joined this process to a multi-process computation."""
    return bool(_state)


def _connect(spec: cluster.ClusterSpec, timeouts: dict[str, int],
             bind_address: str | None) -> State:
    host, port = cluster.split_address(spec.coordinator_address)
    deadline = time.monotonic() + timeouts["init"]
    service = None
    bind_host = host if bind_address is None else cluster.split_address(bind_address)[0]
    if spec.process_id == 0:        # See Note [the service outlives process 0]
        bind = bind_address or (f"{host}:{port}" if cluster.is_loopback(host)
                                else f"[::]:{port}")
        service = ServiceProcess(bind, spec.num_processes, timeouts["heartbeat"],
                                 timeouts["shutdown"], watchdog.LEAVE_S)
        problem = service.wait_ready(deadline - time.monotonic())
        if problem is not None:
            raise DistributedError(
                f"process 0 could not start jaxlib's coordination service on {bind}: "
                f"{problem}. Choose another coordinator port, or pass "
                "coordinator_bind_address='host:port' with this machine's address")
    try:
        peers = _rendezvous(spec, host, port + 1, deadline, bind_host)
    except BaseException:
        if service is not None:
            service.stop(5)
        raise
    client = pjrt.distributed_client(spec.coordinator_address, spec.process_id,
                                     max(1, int(deadline - time.monotonic()) + 5),
                                     timeouts["heartbeat"], timeouts["shutdown"])
    client.connect()        # every peer has said hello: all are about to connect
    dog = watchdog.Watchdog(spec.process_id, peers) if peers else None
    if dog is not None:
        dog.start()
    return State(spec, service, client, timeouts, dog)


# --- the rendezvous (Note [rendezvous] in runtime/distributed_rendezvous.py) --------------

def _hello(spec: cluster.ClusterSpec) -> dict[str, Any]:
    platform = pjrt.platform_wanted()
    if platform == "cpu":
        devices = pjrt.device_count_env()
    else:       # the GPUs this process was given; None: every GPU of its host
        devices = None if spec.local_device_ids is None else len(spec.local_device_ids)
    return {"process_id": spec.process_id, "num_processes": spec.num_processes,
            "jaxlib": pjrt.jaxlib_version(), "spmdc": _spmdc_version(), "pid": os.getpid(),
            "host": socket.gethostname(), "platform": platform, "devices": devices}


def _spmdc_version() -> str:
    from importlib import metadata
    try:
        return metadata.version("spmdc")
    except metadata.PackageNotFoundError:
        return "unknown"


def _rendezvous(spec: cluster.ClusterSpec, host: str, port: int, deadline: float,
                bind_host: str) -> dict[int, socket.socket]:
    """Meet every other process; the connections stay open for the watchdog: process
    0's to each peer, a peer's to process 0."""
    if spec.num_processes == 1:
        return {}
    token = rendezvous.run_token()
    if spec.process_id == 0:
        return rendezvous.gather(_hello(spec), bind_host, port, deadline, token,
                                 spec.coordinator_address)
    conn = rendezvous.say_hello(_hello(spec), host, port, deadline, token)
    # Held open until this process ends, whatever closes the socket object: process 0
    # waits for that before its exit tears down the coordination service.
    _held.append(os.dup(conn.fileno()))
    return {0: conn}


_held: list[int] = []       # a peer's duplicate of its connection to process 0


def _watch_for_failure() -> None:
    """On an uncaught exception, tell the other processes why this one stops, and do
    not wait for them in the shutdown barrier at exit."""
    previous = sys.excepthook

    def hook(kind: Any, value: Any, tb: Any) -> None:
        watchdog.failed[0] = True
        joined = state()
        if joined is not None:
            watchdog.announce(joined.watchdog, f"{kind.__name__}: {value}")
        previous(kind, value, tb)
    sys.excepthook = hook


def _stop_on_sigterm() -> None:
    """Make a SIGTERM a failure of this process that the others hear of (Note [SIGTERM]),
    unless the program handles SIGTERM itself."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def terminated(signum: int, frame: Any) -> None:
        joined = state()
        me = joined.spec.process_id if joined is not None else pjrt.process_index()
        message = (f"process {me} was terminated by {signal.Signals(signum).name} (a request "
                   "to stop: from a batch system, spmdc.launch or kill); every process of "
                   "the computation stops with it")
        watchdog.failed[0] = True
        if joined is not None:
            watchdog.announce(joined.watchdog, f"DistributedError: {message}")
        raise DistributedError(message)
    signal.signal(signal.SIGTERM, terminated)


# --- leaving -----------------------------------------------------------------------------

def shutdown() -> None:
    """Leave the computation: once every process has come to leave after as many
    launches as this one (a barrier over the watchdog's connections), jaxlib's client
    leaves, and process 0 waits for the others to close their connections and stops the
    coordination service. Called at exit when the program succeeded."""
    with _lock:
        if not _state:
            return
        s = _state.pop()
    dog = s.watchdog
    if dog is not None:
        _farewell(s, dog)
    s.client.shutdown()
    if dog is not None and s.spec.process_id != 0:
        dog.closed = True                       # process 0 may stop the service now
        for conn in dog.peers.values():
            try:            # at once, though the watchdog's select() still holds it
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()
        while _held:
            os.close(_held.pop())
    if dog is not None and s.spec.process_id == 0:
        dog.wait_gone(s.timeouts["shutdown"])
    if s.service is not None:
        s.service.stop(s.timeouts["shutdown"])


def _farewell(s: State, dog: watchdog.Watchdog) -> None:
    """Say bye with this process's launch count and wait until process 0 lets every
    process go: when all have said bye after as many launches. A process that launched
    fewer is a loss that the one with more reports (Note [launch counts])."""
    me, wait = s.spec.process_id, s.timeouts["shutdown"]
    dog.leaving = True
    with watchdog.launch_lock:
        n = watchdog.launches[0]
        dog.tell({"bye": True, "launches": n, "last": watchdog.last_name()})
    with dog.changed:
        if me == 0:
            done = dog.changed.wait_for(lambda: dog.reported or (
                len(dog.said_bye) == len(dog.peers)
                and all(theirs == n for theirs in dog.said_bye.values())), wait)
        else:
            done = dog.changed.wait_for(lambda: dog.released or dog.reported, wait)
    if dog.reported:        # a loss: its thread ends this process (status 1)
        time.sleep(watchdog.LEAVE_S + 2 * watchdog.GRACE_S)
    elif me == 0 and done:
        dog.tell({"release": True})
    if not done or dog.reported:
        waiting = sorted(set(dog.peers) - set(dog.said_bye)) if me == 0 else [0]
        raise DistributedError(
            f"process {me} waited {wait} s (shutdown_timeout) at exit for process"
            f"{'es' if len(waiting) > 1 else ''} {', '.join(map(str, waiting))} to finish")


def _shutdown_at_exit() -> None:
    s = state()
    if s is None:
        return
    if not (watchdog.failed[0] or watchdog.broken[0]):
        try:
            shutdown()
            return
        except Exception as e:     # noqa: BLE001  (a peer failed: it has said why)
            # This process succeeded, but the computation did not: exit with a failure.
            print(f"spmdc.distributed: the other processes did not finish with this one "
                  f"({e}); exiting with status 1", file=sys.stderr, flush=True)
            watchdog.exit_failed(s.watchdog)
    if s.watchdog is not None:
        s.watchdog.leaving = True
        watchdog.announce(s.watchdog, f"PeerLost: {PeerLost.message}")
        if s.spec.process_id == 0:
            s.watchdog.wait_gone(watchdog.LEAVE_S)
    # The service's process outlives this one (Note [the service outlives process 0]).
    if watchdog.failed[0]:
        # An uncaught exception (status 1), its traceback printed: a collective this
        # process launched before it raised may still be in flight, waiting for the
        # others, and the interpreter's exit would wait for it (Note [SIGTERM]).
        watchdog.exit_failed(None)


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
def before_launch(executable: Any) -> None:
    """Called before each launch once ``initialize`` has run: count it, and refuse it
    when another process has left before it (Note [launch counts] in
    runtime/distributed_watchdog.py); with SPMDC_CHECK_LAUNCHES, compare it with the
    others' (Note [launch fingerprints])."""
    if len(executable.local_devices) == len(executable.devices):
        return                                  # this process's devices only
    n = watchdog.count_launch(_state[0].spec.process_id, executable)
    if env.flag("SPMDC_CHECK_LAUNCHES"):
        check_launch(executable.fingerprint(), n)


def check_launch(fingerprint: str, n: int) -> None:
    """Compare launch ``n`` with every other process's (Note [launch fingerprints])."""
    s = _state[0]
    me = s.spec.process_id
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
