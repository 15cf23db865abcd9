"""jaxlib's side of a computation over several processes: the coordination service and
distributed client that runtime/distributed.py drives, which process this is, and what a
collective's failure across processes means."""
from __future__ import annotations

import os
from typing import Any

from jaxlib import _jax

from ...errors import DistributedError

joined: list[Any] = []     # the distributed State once this process has joined


def join(state: Any) -> None:
    """Make the client, when it is made, span the processes of ``state`` (a
    runtime/distributed.py State: ``spec`` and the distributed ``client``)."""
    joined[:] = [state]


def refuse_to_run_alone() -> None:
    """Called as the client is made without ``spmdc.distributed.initialize()``: refuse
    when ``SPMDC_NUM_PROCESSES`` says this process is one of several (``spmdc.launch``
    sets it). Each would otherwise run the whole program alone, its collectives over its
    own devices only, and the run would seem to succeed."""
    raw = os.environ.get("SPMDC_NUM_PROCESSES", "").strip()
    if raw.isdigit() and int(raw) > 1:
        me = os.environ.get("SPMDC_PROCESS_ID", "?").strip()
        raise DistributedError(
            f"this process was started as process {me} of {raw} (SPMDC_NUM_PROCESSES={raw}, "
            "as python -m spmdc.launch sets it), but it uses the devices without having "
            "called spmdc.distributed.initialize(): each process would run the program "
            "alone. Call spmdc.distributed.initialize() right after `import spmdc`, or run "
            "the program without spmdc.launch (unset SPMDC_NUM_PROCESSES)")


def coordination_service(bind: str, num_processes: int, heartbeat_s: int,
                         shutdown_s: int) -> Any:
    """jaxlib's coordination service, listening on ``bind`` (process 0 runs it)."""
    return _jax.get_distributed_runtime_service(bind, num_processes,
                                                heartbeat_timeout=heartbeat_s,
                                                shutdown_timeout=shutdown_s)


def distributed_client(address: str, process_id: int, init_s: int, heartbeat_s: int,
                       shutdown_s: int) -> Any:
    """jaxlib's distributed client (key-value store, barriers, topology exchange). Not
    shut down when destroyed: see Note [failing fast] in runtime/distributed.py."""
    return _jax.get_distributed_runtime_client(
        address, process_id, init_timeout=init_s, heartbeat_timeout=heartbeat_s,
        shutdown_timeout=shutdown_s, shutdown_on_destruction=False, use_compression=True)


def jaxlib_version() -> str:
    import jaxlib
    return jaxlib.__version__


def explain(e: BaseException) -> None:
    """Add a note to ``e`` saying what a collective's failure across processes means."""
    text = str(e)
    if joined and ("Gloo" in text or "Connection closed" in text
                   or "Connection reset" in text):
        note = ("spmdc: a collective across processes failed: another process of this "
                "computation died or left (its own output says why); this process cannot "
                "go on")
        if note not in getattr(e, "__notes__", ()):
            e.add_note(note)


def process_index() -> int:
    return joined[0].spec.process_id if joined else 0


def process_count() -> int:
    return joined[0].spec.num_processes if joined else 1
