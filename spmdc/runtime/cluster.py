"""Which process am I: the process count, this process's id and the coordinator's address,
read from the environment a launcher left us.

Every process of a multi-process program must agree on the coordinator ``host:port``
(process 0 serves the coordination service there) and the process count, and each needs
its own id. ``detect`` finds them, looking in this order (JAX 0.10.2's order in
``jax._src.clusters``, explicit variables first):

1. ``SPMDC_COORDINATOR_ADDRESS``, ``SPMDC_NUM_PROCESSES`` and ``SPMDC_PROCESS_ID``, all
   three (what ``python -m spmdc.launch`` sets). No cluster is consulted then, so a
   launcher run inside a SLURM allocation is not mistaken for SLURM's tasks.
2. Open MPI's ``mpirun``: ``OMPI_COMM_WORLD_RANK`` / ``OMPI_COMM_WORLD_SIZE``; the
   coordinator is the launcher's IP in ``OMPI_MCA_orte_hnp_uri`` (Open MPI 4; Open MPI 5
   sets no such variable, so there ``SPMDC_COORDINATOR_ADDRESS`` must say it). Checked
   before SLURM because ``mpirun`` inside a SLURM job sees SLURM's variables too, and
   only the ``OMPI_*`` ones are per process.
3. SLURM's ``srun``: ``SLURM_PROCID`` / ``SLURM_NTASKS``; the coordinator is the first
   host of ``SLURM_STEP_NODELIST``.

Both clusters derive the port from the job id as JAX does (see Note [coordinator port]),
unless ``SPMDC_COORDINATOR_PORT`` gives it; ``SPMDC_COORDINATOR_ADDRESS`` overrides the
derived address whole. The GPUs a process should use come from ``SPMDC_LOCAL_DEVICE_IDS``
(``"0,1"``), else from the cluster's local rank (``SLURM_LOCALID``,
``OMPI_COMM_WORLD_LOCAL_RANK``: one GPU per process, as JAX does), else None (all).
An empty SPMDC_* variable counts as unset, as everywhere in ``spmdc.env``.

``fill`` is what ``spmdc.distributed.initialize(...)`` uses: its arguments win, the
environment supplies the rest. Nothing here touches the network.
"""
from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, Sequence

from spmdc.env import EnvironmentVariableError

__all__ = ["ClusterSpec", "detect", "fill"]

EXPLICIT = ("SPMDC_COORDINATOR_ADDRESS", "SPMDC_NUM_PROCESSES", "SPMDC_PROCESS_ID")
SLURM = ("SLURM_JOB_ID", "SLURM_STEP_NODELIST", "SLURM_NTASKS", "SLURM_PROCID")
OPENMPI = ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE")

# For each field: the variables that can give it, for error messages.
_SOURCES = {
    "coordinator_address": "SPMDC_COORDINATOR_ADDRESS=host:port (or SLURM's "
                           "SLURM_STEP_NODELIST, or Open MPI 4's OMPI_MCA_orte_hnp_uri)",
    "num_processes": "SPMDC_NUM_PROCESSES (or SLURM_NTASKS, or OMPI_COMM_WORLD_SIZE)",
    "process_id": "SPMDC_PROCESS_ID (or SLURM_PROCID, or OMPI_COMM_WORLD_RANK)",
}


@dataclasses.dataclass(frozen=True)
class ClusterSpec:
    """One process's place in a multi-process program."""
    coordinator_address: str                 # "host:port" of process 0's coordination service
    num_processes: int
    process_id: int                          # in [0, num_processes)
    local_device_ids: tuple[int, ...] | None  # the GPUs this process uses; None: all
    source: str                              # "SPMDC_*", "slurm", "openmpi" or "arguments"


def detect(environ: Mapping[str, str] | None = None) -> ClusterSpec | None:
    """This process's ClusterSpec from ``environ`` (default ``os.environ``); None when
    nothing there says the program runs as several processes.

    Raises EnvironmentVariableError for a partial set of the SPMDC_* variables, an
    unparseable value, or Open MPI 5 without SPMDC_COORDINATOR_ADDRESS.
    """
    environ = _without_empty(os.environ if environ is None else environ)
    found = _read(environ)
    if found["source"] is None:
        return None
    given = [name for name in EXPLICIT if name in environ]
    overrides_address = given == ["SPMDC_COORDINATOR_ADDRESS"] and found["source"] != "SPMDC_*"
    if 0 < len(given) < len(EXPLICIT) and not overrides_address:
        missing = [name for name in EXPLICIT if name not in environ]
        raise EnvironmentVariableError(
            f"{' and '.join(given)} {'is' if len(given) == 1 else 'are'} set but "
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not: a "
            f"multi-process run needs all of {', '.join(EXPLICIT)} (or none of them, to "
            "detect SLURM or Open MPI)")
    if found["coordinator_address"] is None:       # Open MPI 5: see _openmpi
        raise EnvironmentVariableError(
            "Open MPI sets OMPI_COMM_WORLD_RANK but not OMPI_MCA_orte_hnp_uri (Open MPI 5 "
            "does not), so the coordinator's address is unknown: set "
            "SPMDC_COORDINATOR_ADDRESS=host:port, with the host of rank 0 and a free port")
    return _validated(ClusterSpec(**found))


def fill(coordinator_address: str | None = None, num_processes: int | None = None,
         process_id: int | None = None, local_device_ids: int | Sequence[int] | None = None,
         environ: Mapping[str, str] | None = None) -> ClusterSpec:
    """The ClusterSpec for ``initialize(...)``: each argument given wins; the missing ones
    come from the environment as ``detect`` reads it (a partial SPMDC_* set is fine here,
    the arguments may complete it). Raises ValueError when one is still missing or the
    values are inconsistent.
    """
    environ = _without_empty(os.environ if environ is None else environ)
    if isinstance(local_device_ids, int):                   # one GPU, as JAX allows
        local_device_ids = (local_device_ids,)
    arguments = {"coordinator_address": coordinator_address, "num_processes": num_processes,
                 "process_id": process_id,
                 "local_device_ids": None if local_device_ids is None
                 else tuple(local_device_ids)}
    found = _read(environ)
    fields = {name: found[name] if value is None else value
              for name, value in arguments.items()}
    missing = [name for name in _SOURCES if fields[name] is None]
    if missing:
        raise ValueError(
            "spmdc.distributed.initialize: " + "; ".join(
                f"{name} is missing: pass {name}=... or set {_SOURCES[name]}"
                for name in missing))
    source = "arguments" if all(arguments[name] is not None for name in _SOURCES) \
        else found["source"]
    return _validated(ClusterSpec(**fields, source=source))


# --- reading the environment ------------------------------------------------------------------

def _without_empty(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` less its empty SPMDC_* variables: empty means unset, as in spmdc.env."""
    return {name: value for name, value in environ.items()
            if value.strip() or not name.startswith("SPMDC_")}


def _read(environ: Mapping[str, str]) -> dict:
    """ClusterSpec's fields from ``environ``, each None where nothing gives it; the source
    is None when no variable says multi-process. SPMDC_* values win field by field."""
    explicit = [name for name in EXPLICIT if name in environ]
    found = None if len(explicit) == len(EXPLICIT) else _openmpi(environ) or _slurm(environ)
    if found is None:
        found = {"coordinator_address": None, "num_processes": None, "process_id": None,
                 "local_device_ids": None, "source": "SPMDC_*" if explicit else None}
    if "SPMDC_COORDINATOR_ADDRESS" in environ:
        found["coordinator_address"] = environ["SPMDC_COORDINATOR_ADDRESS"].strip()
    if "SPMDC_NUM_PROCESSES" in environ:
        found["num_processes"] = _integer(environ, "SPMDC_NUM_PROCESSES", minimum=1)
    if "SPMDC_PROCESS_ID" in environ:
        found["process_id"] = _integer(environ, "SPMDC_PROCESS_ID")
    if "SPMDC_LOCAL_DEVICE_IDS" in environ:
        found["local_device_ids"] = _device_ids(environ, "SPMDC_LOCAL_DEVICE_IDS")
    return found


def _slurm(environ: Mapping[str, str]) -> dict | None:
    """``srun``'s task: SLURM_PROCID of SLURM_NTASKS, coordinator on the step's first node."""
    if not all(name in environ for name in SLURM):
        return None
    port = _port(environ, _integer(environ, "SLURM_JOB_ID"))
    host = first_slurm_host(environ["SLURM_STEP_NODELIST"])
    local = _integer(environ, "SLURM_LOCALID") if "SLURM_LOCALID" in environ else None
    return {"coordinator_address": f"{host}:{port}",
            "num_processes": _integer(environ, "SLURM_NTASKS", minimum=1),
            "process_id": _integer(environ, "SLURM_PROCID"),
            "local_device_ids": None if local is None else (local,), "source": "slurm"}


def _openmpi(environ: Mapping[str, str]) -> dict | None:
    """``mpirun``'s rank; the coordinator is the launcher's host (Open MPI 4 only)."""
    if not all(name in environ for name in OPENMPI):
        return None
    address = None
    uri = environ.get("OMPI_MCA_orte_hnp_uri")      # absent under Open MPI 5 (PRRTE)
    if uri is not None:
        # e.g. "1531576320.0;tcp://10.96.0.1,10.148.0.1:34911" or
        #      "1314521088.0;tcp6://[fe80::b9b:ac5d:9cf0:b858,2620:10d:c083:150e::3000:2]:43370"
        match = re.fullmatch(r"(\d+)\.\d+;(?:tcp://([^,:]+)|tcp6://\[([^,\]]+)).*", uri)
        if match is None:
            raise EnvironmentVariableError(
                f"environment variable OMPI_MCA_orte_hnp_uri={uri!r} does not look like "
                "Open MPI's 'JOBID.VPID;tcp://IP...:PORT': set SPMDC_COORDINATOR_ADDRESS="
                "host:port to give the coordinator yourself")
        job_id, ipv4, ipv6 = match.groups()
        # The job id is a multiple of 2**12; drop those bits (JAX does the same).
        port = _port(environ, int(job_id) // 2**12)
        address = f"{ipv4}:{port}" if ipv4 else f"[{ipv6}]:{port}"
    local = (_integer(environ, "OMPI_COMM_WORLD_LOCAL_RANK")
             if "OMPI_COMM_WORLD_LOCAL_RANK" in environ else None)
    return {"coordinator_address": address,
            "num_processes": _integer(environ, "OMPI_COMM_WORLD_SIZE", minimum=1),
            "process_id": _integer(environ, "OMPI_COMM_WORLD_RANK"),
            "local_device_ids": None if local is None else (local,), "source": "openmpi"}


# Note [coordinator port]
# ~~~~~~~~~~~~~~~~~~~~~~~
# Under SLURM and Open MPI no one hands the processes a port, yet all of them must name the
# same one without talking to each other. Like JAX, we derive it from the job id, in the
# top 4096 ports ([61440, 65535]), so that two jobs on one node rarely collide. The port is
# not checked for being free; SPMDC_COORDINATOR_PORT picks another one when it is taken.

def _port(environ: Mapping[str, str], job_id: int) -> int:
    """SPMDC_COORDINATOR_PORT, else a port derived from the job id (Note [coordinator port])."""
    if "SPMDC_COORDINATOR_PORT" in environ:
        port = _integer(environ, "SPMDC_COORDINATOR_PORT", minimum=1)
        if port > 65535:
            raise EnvironmentVariableError(
                f"environment variable SPMDC_COORDINATOR_PORT={port} is not a TCP port: "
                "use one in 1..65535")
        return port
    return job_id % 2**12 + (65536 - 2**12)


def first_slurm_host(node_list: str) -> str:
    """The first host of a SLURM node list: ``node[003-006,9],x`` -> ``node003``,
    ``a-1,b`` -> ``a-1``, ``rack[2-3]n[07-08]`` -> ``rack2n07``."""
    first = re.match(r"(?:[^,\[\]]+|\[[^\[\]]*\])*", node_list).group()
    if not first or (first != node_list and node_list[len(first)] != ","):
        raise EnvironmentVariableError(
            f"environment variable SLURM_STEP_NODELIST={node_list!r} is not a SLURM node "
            "list such as 'node[001-004],login1': set SPMDC_COORDINATOR_ADDRESS=host:port")
    return re.sub(r"\[([^,\-\]]*)[^\]]*\]", r"\1", first)    # each range -> its first value


def _integer(environ: Mapping[str, str], name: str, minimum: int = 0) -> int:
    """The integer variable ``name`` (>= minimum), or an error naming it."""
    raw = environ[name]
    text = raw.strip()
    if not text.isdigit() or int(text) < minimum:
        kind = "a positive integer" if minimum == 1 else "a non-negative integer"
        raise EnvironmentVariableError(
            f"environment variable {name}={raw!r} must be {kind} (e.g. {name}={minimum})")
    return int(text)


def local_device_ids_env(environ: Mapping[str, str] | None = None) -> tuple[int, ...] | None:
    """The GPUs ``SPMDC_LOCAL_DEVICE_IDS`` gives this process (single-process runs
    too), or None (every GPU)."""
    environ = os.environ if environ is None else environ
    if not environ.get("SPMDC_LOCAL_DEVICE_IDS", "").strip():
        return None
    return _device_ids(environ, "SPMDC_LOCAL_DEVICE_IDS")


def _device_ids(environ: Mapping[str, str], name: str) -> tuple[int, ...]:
    """A comma-separated list of device ids such as ``0,1``."""
    raw = environ[name]
    items = [item.strip() for item in raw.split(",")]
    if not all(item.isdigit() for item in items):
        raise EnvironmentVariableError(
            f"environment variable {name}={raw!r} must list device ids separated by "
            f"commas, e.g. {name}=0,1")
    return tuple(int(item) for item in items)


# --- checking ---------------------------------------------------------------------------------

def _validated(spec: ClusterSpec) -> ClusterSpec:
    """``spec``, after checking that its values make sense together."""
    where = f" (from {spec.source})"
    if isinstance(spec.num_processes, bool) or not isinstance(spec.num_processes, int) \
            or spec.num_processes < 1:
        raise ValueError(f"num_processes={spec.num_processes!r}{where} must be an integer >= 1")
    if isinstance(spec.process_id, bool) or not isinstance(spec.process_id, int) \
            or not 0 <= spec.process_id < spec.num_processes:
        raise ValueError(
            f"process_id={spec.process_id!r}{where} must be an integer in "
            f"[0, {spec.num_processes}), as num_processes={spec.num_processes}; process ids "
            "count from 0")
    ids = spec.local_device_ids
    if ids is not None and not all(isinstance(i, int) and i >= 0 for i in ids):
        raise ValueError(f"local_device_ids={ids!r}{where} must be non-negative integers, "
                         "e.g. (0, 1), or None for every device")
    split_address(spec.coordinator_address, where)
    return spec


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback interface."""
    return host in ("localhost", "::1") or host.startswith("127.")


def split_address(address: str, where: str = "") -> tuple[str, int]:
    """``"host:port"`` (IPv6 hosts in brackets: ``"[::1]:1234"``) as (host, port)."""
    host, _, port = str(address).rpartition(":")
    bracketed = host.startswith("[") and host.endswith("]")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535 \
            or (":" in host and not bracketed):
        raise ValueError(
            f"coordinator_address={address!r}{where} must be 'host:port' with a port in "
            "1..65535, e.g. '10.0.0.1:1234' or, for IPv6, '[fe80::1]:1234'")
    return host[1:-1] if bracketed else host, int(port)
