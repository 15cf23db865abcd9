"""The watchdog of a multi-process computation (Note [failing fast] in
runtime/distributed.py): a thread that reads the rendezvous connections for news of the
other processes (a failure, a death, a departure), what this process does when one is
lost, and the launch counts that tell a departure too early (Note [launch counts])."""
from __future__ import annotations

import ctypes
import json
import logging
import os
import select
import socket
import sys
import threading
from typing import Any

from ..errors import PeerLost
from . import distributed_rendezvous as rendezvous
from .executable import fingerprint


class Watchdog(threading.Thread):
    """Reads the rendezvous connections (process 0: one per peer; a peer: the one to
    process 0) until each closes. A peer says "bye" (with its launch count) before its
    exit's shutdown barrier and "failed" with its exception; one that closes its
    connection without either was killed. Process 0 passes the news on. The first loss
    is handed to ``lost`` on a thread of its own, while this one goes on reading, so
    that process 0 sees every other process go (``wait_gone``)."""

    def __init__(self, me: int, peers: dict[int, socket.socket]):
        super().__init__(name="spmdc-distributed-watchdog", daemon=True)
        self.me, self.peers = me, peers
        self.leaving = False
        self.closed = False
        self.said_bye: dict[int, Any] = {}      # process -> its launch count
        self.released = False                   # process 0 let every process leave
        self.gone: set[int] = set()
        self.changed = threading.Condition()
        self.reported = False                   # a loss was reported
        self.announced = False                  # this process said it fails
        self._send_lock = threading.Lock()

    def tell(self, message: dict[str, Any], skip: int | None = None) -> None:
        with self._send_lock:
            for k, conn in list(self.peers.items()):
                if k != skip and k not in self.gone:
                    try:
                        rendezvous.send(conn, message)
                    except OSError:
                        pass

    def wait_gone(self, timeout: float) -> bool:
        """Process 0: wait until every other process has gone; whether all have."""
        with self.changed:
            return self.changed.wait_for(lambda: len(self.gone) == len(self.peers), timeout)

    def run(self) -> None:
        watched = dict(self.peers)
        while watched and not self.closed:
            try:
                ready, _, _ = select.select(list(watched.values()), [], [], 0.5)
            except (OSError, ValueError):       # closed by shutdown()
                return
            for k, conn in list(watched.items()):
                if conn not in ready:
                    continue
                try:
                    line = rendezvous.read_line(conn)
                    message = json.loads(line) if line.strip() else None
                except (OSError, ValueError):
                    message = None
                if isinstance(message, dict):
                    self._read(k, message)
                    continue
                del watched[k]
                with self.changed:
                    self.gone.add(k)
                    self.changed.notify_all()
                if k not in self.said_bye and not self.closed:
                    self.report(k, "it exited without saying why: killed, or crashed")
                    if k == 0 and self.me != 0:
                        _end_before_the_service(self)

    def _read(self, k: int, message: dict[str, Any]) -> None:
        if message.get("bye"):                      # k is about to leave
            with self.changed:
                self.said_bye[k] = message.get("launches")
                self.changed.notify_all()
            if self.me == 0:
                self.tell({"done": k, "launches": message.get("launches"),
                           "last": message.get("last")}, skip=k)
            peer_left(self.me, k, message.get("launches"), message.get("last"), self)
        elif "done" in message:                     # from process 0: another left
            peer_left(self.me, message["done"], message.get("launches"),
                      message.get("last"), self)
        elif message.get("release"):                # from process 0: every one leaves
            with self.changed:
                self.released = True
                self.changed.notify_all()
        elif "died" in message:                     # from process 0: another failed
            self.report(message["died"], message.get("why", "?"))
        elif "failed" in message:
            self.report(k, message["failed"])

    def report(self, who: int, why: str) -> None:
        """The first loss of a process: relayed by process 0, then ``lost`` (unless this
        process is failing already: it has said why, and is leaving)."""
        with self.changed:
            if self.reported:
                return
            self.reported = True
            self.changed.notify_all()
        if self.me == 0:
            self.tell({"died": who, "why": why}, skip=who)
        if failed[0]:
            return
        threading.Thread(target=lost, args=(self, who, why, self.leaving),
                         name="spmdc-distributed-lost", daemon=True).start()


def lost(dog: Watchdog, who: int, why: str, leaving: bool) -> None:
    me = dog.me
    broken[0] = True
    PeerLost.message = (f"process {who} of this computation stopped ({why}); process {me} "
                        "cannot go on, since every collective needs every process")
    if not (leaving or dog.leaving):
        main = threading.main_thread().ident
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(main),
                                                   ctypes.py_object(PeerLost))
        if PeerLost.delivered.wait(GRACE_S):
            return
    # The main thread is held in a collective (or in the exit's barrier): no exception
    # can reach it.
    print(f"spmdc.distributed: {PeerLost.message}; exiting", file=sys.stderr, flush=True)
    announce(dog, f"PeerLost: {PeerLost.message}")
    exit_failed(dog)


def announce(dog: Watchdog | None, why: str) -> None:
    """Tell the others that this process fails, and why (once): a process waiting for
    it at exit then leaves too, with status 1."""
    if dog is not None and not dog.announced:
        dog.announced = True
        dog.tell({"failed": why[:600]})


def exit_failed(dog: Watchdog | None) -> None:
    """Leave at once with status 1, process 0 after the others (Note [failing fast])."""
    if dog is not None and dog.me == 0:
        dog.wait_gone(LEAVE_S)
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


def _end_before_the_service(dog: Watchdog) -> None:
    """Process 0 died: its coordination service stops ``LEAVE_S`` seconds later, and
    jaxlib then aborts every process still running (Note [the service outlives process 0]
    in runtime/distributed.py). A process that caught PeerLost and went on is ended here
    first, with status 1 and a message, rather than by jaxlib's SIGABRT."""
    def end() -> None:
        print("spmdc.distributed: process 0 of this computation died, and its coordination "
              "service stops now, which would make jaxlib abort this process: exiting",
              file=sys.stderr, flush=True)
        exit_failed(dog)
    timer = threading.Timer(LEAVE_S - GRACE_S, end)
    timer.daemon = True
    timer.start()


GRACE_S = 2.0          # how long an exception may take to reach the main thread
LEAVE_S = 10.0         # how long process 0's exit waits for the others to go

failed = [False]       # this process raised an uncaught exception
broken = [False]       # another process was lost


# Note [launch counts]
# ~~~~~~~~~~~~~~~~~~~~
# Without SPMDC_CHECK_LAUNCHES (Note [launch fingerprints] in runtime/distributed.py),
# the count alone is kept: every launch of a program over several
# processes' devices adds one, and a process's "bye" carries its count and last program.
# A process that learns that another left after n launches while it has launched more,
# or when it is about to launch its (n+1)-th, raises PeerLost naming the one that left
# and its last launch, at once, instead of waiting in a collective that will never
# finish. Programs over this process's own devices are not counted: they need no one.

launches = [0]                 # launches of programs over several processes' devices
last: list[Any] = [None]       # the last one's (name, module text)
finished: dict[int, tuple[int, str]] = {}     # process -> its launches, its last
launch_lock = threading.Lock()


def last_name() -> str:
    if last[0] is None:
        return ""
    return fingerprint(*last[0])


def describe(n: int, program: str) -> str:
    return f"its launch {n} ({program})" if n else "launching no program across processes"


def peer_left(me: int, who: int, theirs: Any, their_last: Any, dog: Watchdog) -> None:
    """Process ``who`` left after ``theirs`` launches (Note [launch counts])."""
    if not isinstance(theirs, int):
        return
    with launch_lock:
        finished[who] = (theirs, str(their_last))
        mine = launches[0]
        mine_last = last_name()
    if mine > theirs:
        dog.report(who, f"it finished after {describe(theirs, str(their_last))}, but "
                        f"process {me} went on to launch {mine} ({mine_last})")


def count_launch(me: int, executable: Any) -> int:
    """Count a launch of ``executable`` over several processes' devices, refused with
    PeerLost when another process has left before it (Note [launch counts]) or was
    lost; its number."""
    if broken[0]:       # a collective would wait for a process that is gone
        raise PeerLost(PeerLost.message)
    with launch_lock:
        n = launches[0] + 1
        for who, (theirs, their_last) in sorted(finished.items()):
            if theirs < n:
                broken[0] = True
                raise PeerLost(
                    f"process {who} of this computation stopped (it finished after "
                    f"{describe(theirs, their_last)}); process {me} cannot run its launch {n} "
                    f"({fingerprint(executable.func.name, executable.module_text)}), since "
                    "every collective needs every process. Every process must launch the "
                    "same programs, the same number of times")
        launches[0] = n
        last[0] = (executable.func.name, executable.module_text)
    return n
