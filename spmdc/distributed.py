"""``spmdc.distributed``: run one program over several processes, on one host or many.

Every process runs the same program; ``initialize`` joins them into one computation
before the first use of the devices. Then ``spmdc.devices()`` lists every process's
devices, ``spmdc.local_devices()`` this process's, and a ``pmap`` over them takes, in
each process, arrays whose mapped axis is the process's local device count; its
collectives span every process (README, "Several processes"). Launch the processes with
``python -m spmdc.launch -n N script.py``, ``mpirun`` or ``srun``.
"""
from __future__ import annotations

from collections.abc import Sequence

from .runtime import distributed as _distributed
from .runtime import pjrt as _pjrt
from .runtime.distributed import DistributedError, PeerLost

__all__ = ["initialize", "shutdown", "is_initialized", "DistributedError", "PeerLost"]


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
      [failing fast] in runtime/distributed.py).
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
    if local_device_ids is not None and _pjrt.platform_wanted() == "cpu":
        raise ValueError(
            "spmdc.distributed.initialize: local_device_ids chooses GPUs for the CUDA client "
            "(SPMDC_PLATFORM=cuda); the CPU client's device count is SPMDC_CPU_DEVICES (or "
            "config.update('jax_num_cpu_devices', n)). Leave local_device_ids out on the CPU")
    _distributed.initialize(coordinator_address, num_processes, process_id, local_device_ids,
                            cluster_detection_method, initialization_timeout,
                            heartbeat_timeout_seconds, shutdown_timeout_seconds,
                            coordinator_bind_address, client_exists=_pjrt.client_exists())


def shutdown() -> None:
    """Leave the computation (a barrier with the other processes). Runs at exit by itself
    when the program succeeds; after it, no computation can run in this process."""
    _distributed.shutdown()


def is_initialized() -> bool:
    """Whether ``initialize`` has joined this process to a multi-process computation."""
    return _distributed.state() is not None
