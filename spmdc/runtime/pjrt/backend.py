"""The PJRT client and its devices: the platform (CPU, or CUDA through jaxlib's plugin),
the virtual CPU device count, and this process's devices."""
from __future__ import annotations

import importlib.util
import os
from typing import Any

from jaxlib import _jax
from jaxlib import xla_client as xc

from ... import env, errors
from .. import cluster
from .custom_calls import register_cuda_targets
from .distributed import joined, process_index, refuse_to_run_alone
from .once import init_lock, once

Device = _jax.Device   # the class of every device (CpuDevice(id=0) ...): jax.Device
Client = _jax.Client   # the class of the client: jax.interpreters.xla.Backend
DeviceList = _jax.DeviceList   # an ordered, hashable tuple of devices (xla_client's)
ifrt_programs = _jax.ifrt_programs   # jaxlib's IFRT program builders: jax.extend's name
errors.adopt_runtime_error(_jax.JaxRuntimeError)   # See Note [jaxlib's runtime error]

_cpu_devices_set: list[int] = []     # config.update('jax_num_cpu_devices', n), if called
_client_made: list[int] = []         # the device count of the CPU client, once made


def device_count_env() -> int:
    """How many virtual CPU devices the CPU client has or will have: the count given to
    ``config.update('jax_num_cpu_devices', n)``, else ``SPMDC_CPU_DEVICES``, else
    ``--xla_force_host_platform_device_count=N`` in ``XLA_FLAGS`` (what JAX programs set
    before importing jax), else 8."""
    if _client_made:
        return _client_made[0]
    if _cpu_devices_set:
        return _cpu_devices_set[0]
    if os.environ.get("SPMDC_CPU_DEVICES", "").strip():
        return env.positive_int("SPMDC_CPU_DEVICES", 8)
    return _xla_flags_device_count() or 8


def _xla_flags_device_count() -> int | None:
    for word in os.environ.get("XLA_FLAGS", "").split():
        name, _, value = word.partition("=")
        if name == "--xla_force_host_platform_device_count":
            if not value.isdigit() or int(value) < 1:
                raise env.EnvironmentVariableError(
                    f"XLA_FLAGS has {word!r}: the device count must be a positive integer")
            return int(value)
    return None


def set_cpu_device_count(n: int) -> None:
    """Create the CPU client with ``n`` devices; only before it exists."""
    with init_lock:
        if _client_made and _client_made[0] != n:
            raise RuntimeError(
                f"jax_num_cpu_devices={n} came too late: spmdc's CPU client already exists "
                f"with {_client_made[0]} devices. Set it before the first use of devices "
                "(right after the import), or set SPMDC_CPU_DEVICES in the environment")
        _cpu_devices_set[:] = [n]


@once
def client() -> Any:
    n = device_count_env()
    state = joined[0] if joined else None
    if state is None:
        refuse_to_run_alone()
    if platform_wanted() == "cuda":
        made = _cuda_client(state)
    elif state is None:
        made = xc.make_cpu_client(num_devices=n)
    else:       # one computation over several processes (runtime/distributed.py)
        host, _ = cluster.split_address(state.spec.coordinator_address)
        gloo = _jax.make_gloo_tcp_collectives(
            state.client, hostname="127.0.0.1" if cluster.is_loopback(host) else None)
        made = xc.make_cpu_client(asynchronous=True, distributed_client=state.client,
                                  node_id=state.spec.process_id,
                                  num_nodes=state.spec.num_processes, collectives=gloo,
                                  num_devices=n)
    _client_made.append(n)
    if state is not None:
        global several_processes
        several_processes = True
    return made


several_processes = False       # whether the client spans several processes

_PLATFORMS = ("cpu", "cuda")
_platform_set: list[str] = []        # config.update('jax_platforms', ...), if called


def platform_wanted() -> str:
    """The platform the client is (or will be) made for: ``config.update('jax_platforms',
    ...)``, else ``SPMDC_PLATFORM``, else the CPU."""
    if _platform_set:
        return _platform_set[0]
    raw = os.environ.get("SPMDC_PLATFORM", "").strip().lower()
    if raw and raw not in _PLATFORMS:
        raise env.EnvironmentVariableError(
            f"SPMDC_PLATFORM={raw!r}: spmdc runs on {' or '.join(_PLATFORMS)}")
    return raw or "cpu"


def set_platform(name: str) -> None:
    """Make the client for platform ``name`` (cpu or cuda); only before it exists."""
    with init_lock:
        if _client_made and platform_wanted() != name:
            raise RuntimeError(
                f"jax_platforms={name!r} came too late: spmdc's {platform_wanted()} client "
                "already exists. Set it before the first use of the devices (right after "
                "the import), or set SPMDC_PLATFORM in the environment")
        _platform_set[:] = [name]


# Note [CUDA client]
# ~~~~~~~~~~~~~~~~~~
# On GPUs spmdc uses the CUDA PJRT plugin that jaxlib's CUDA packages ship
# (``jax-cuda13-pjrt`` / ``jax-cuda12-pjrt``, pinned to jaxlib's version by the extras
# ``spmdc[cuda13]`` / ``spmdc[cuda12]``), without the jax package: the plugin's Python
# package would import jax, so we do what it does by hand. NVIDIA's libraries are loaded
# first from the ``nvidia.*`` wheels (later lookups then find those copies), the plugin's
# shared object is located without running its package's ``__init__``, loaded and
# initialized, and the client made with the plugin's default options, the GPUs this
# process may use (``visible_devices``: ``local_device_ids`` of spmdc.distributed, or
# SPMDC_LOCAL_DEVICE_IDS) and, over several processes, the distributed client, through
# whose key-value store the plugin exchanges the topology and NCCL's ids. Collectives
# then run on NCCL. The plugin's own kernels that modules call by name are registered
# when it is loaded (Note [CUDA custom calls]).

_NVIDIA_LIBRARIES = [       # (module under nvidia., libraries), as the plugin loads them
    ("cu13", ["libcudart.so.13", "libnvrtc.so.13", "libcublas.so.13", "libcublasLt.so.13",
              "libcupti.so.13", "libcusparse.so.12", "libcusolver.so.12", "libcufft.so.12"]),
    ("cuda_runtime", ["libcudart.so.12"]), ("cuda_nvrtc", ["libnvrtc.so.12"]),
    ("cublas", ["libcublas.so.12", "libcublasLt.so.12"]), ("nccl", ["libnccl.so.2"]),
    ("cuda_cupti", ["libcupti.so.12"]), ("cusparse", ["libcusparse.so.12"]),
    ("cusolver", ["libcusolver.so.11"]), ("cufft", ["libcufft.so.11"]),
    ("nvshmem", ["libnvshmem_host.so.3"]), ("cudnn", ["libcudnn.so.9"]),
]


def _load_nvidia_libraries() -> None:
    import ctypes
    import pathlib
    for module, libraries in _NVIDIA_LIBRARIES:
        try:
            spec = importlib.util.find_spec(f"nvidia.{module}")
        except ImportError:
            spec = None
        if spec is None or not spec.submodule_search_locations:
            continue
        folder = pathlib.Path(next(iter(spec.submodule_search_locations))) / "lib"
        for library in libraries:
            if (folder / library).exists():
                try:
                    ctypes.CDLL(str(folder / library))
                except OSError:
                    pass       # the plugin's own error will say what is missing


def _cuda_plugin_path() -> tuple[str, str] | None:
    """The plugin's shared object and the package of its Python extensions."""
    import pathlib
    for cuda in ("cuda13", "cuda12"):
        try:
            spec = importlib.util.find_spec(f"jax_plugins.xla_{cuda}")
        except ImportError:
            spec = None
        if spec is not None and spec.submodule_search_locations:
            so = pathlib.Path(next(iter(spec.submodule_search_locations))) / \
                "xla_cuda_plugin.so"
            if so.exists():
                return str(so), f"jax_{cuda}_plugin"
    return None


def _cuda_client(joined: Any) -> Any:
    """The CUDA PJRT client (Note [CUDA client])."""
    found = _cuda_plugin_path()
    if found is None:
        import jaxlib
        raise RuntimeError(
            "spmdc was asked for the CUDA platform (SPMDC_PLATFORM=cuda or jax_platforms), "
            "but no CUDA PJRT plugin is installed: pip install 'spmdc[cuda13]' (or "
            f"'spmdc[cuda12]'), whose plugin matches jaxlib {jaxlib.__version__}; or "
            "leave SPMDC_PLATFORM unset to run on the CPU")
    path, package = found
    _load_nvidia_libraries()
    try:
        if not xc.pjrt_plugin_loaded("cuda"):
            c_api = xc.load_pjrt_plugin_dynamically("cuda", path)
            register_cuda_targets(c_api, package)
        if not xc.pjrt_plugin_initialized("cuda"):
            xc.initialize_pjrt_plugin("cuda")
        options = dict(xc.generate_pjrt_gpu_plugin_options())
        ids = joined.spec.local_device_ids if joined is not None else _local_ids_env()
        if ids:
            options["visible_devices"] = list(ids)
        if joined is None:
            return xc.make_c_api_client("cuda", options, None)
        options.update(node_id=joined.spec.process_id,
                       num_nodes=joined.spec.num_processes)
        return xc.make_c_api_client("cuda", options, joined.client)
    except Exception as e:         # noqa: BLE001  (jaxlib's own error types)
        raise RuntimeError(
            f"spmdc could not start the CUDA client from {path}: {e}. Is there an NVIDIA "
            "GPU with a working driver (nvidia-smi)? Leave SPMDC_PLATFORM unset to run on "
            "the CPU") from e


def _local_ids_env() -> tuple[int, ...] | None:
    return cluster.local_device_ids_env()


def platform_name() -> str:
    """The backend name JAX gives the client's platform: 'cpu' or 'gpu'."""
    return "gpu" if client().platform in ("cuda", "rocm", "gpu") else str(client().platform)


def client_exists() -> bool:
    return bool(_client_made)


@once
def devices() -> tuple[Device, ...]:
    """Every device of the computation, grouped by process (process 0's first), as
    replica r of a program runs on ``devices()[r]``."""
    return tuple(sorted(client().devices(), key=lambda d: (d.process_index, d.id)))


@once
def local_devices() -> tuple[Device, ...]:
    """This process's devices (all of them, in a single-process computation)."""
    me = process_index()
    return tuple(d for d in devices() if d.process_index == me)
