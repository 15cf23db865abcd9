"""``spmdc.distributed``: run one program over several processes, on one host or many.

Every process runs the same program; ``initialize`` joins them into one computation
before the first use of the devices. Then ``spmdc.devices()`` lists every process's
devices, ``spmdc.local_devices()`` this process's, and a ``pmap`` over them takes, in
each process, arrays whose mapped axis is the process's local device count; its
collectives span every process (README, "Several processes, GPUs"). Launch the
processes with ``python -m spmdc.launch -n N script.py``, ``mpirun`` or ``srun``. The
implementation is runtime/distributed.py.
"""
from __future__ import annotations

from .errors import DistributedError, PeerLost
from .runtime.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "shutdown", "is_initialized", "DistributedError", "PeerLost"]
