"""The one door to jaxlib's PJRT client: devices, compiling, placing data, executing.

Everything spmdc needs from jaxlib's half-private runtime surface is in this module (see
../shared/notes/pjrt.md; the coordination service and client that runtime/distributed.py
drives too), so a jaxlib upgrade touches this file alone. jaxlib's array type expects
two duck-typed helpers that normally come from the jax package: an *aval* (shape, dtype,
weak_type, ndim) and a single-device *sharding*; they are defined here.
"""
from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from jaxlib import _jax
from jaxlib import xla_client as xc

from .. import env
from . import cache as _cache
from . import cluster

# jaxlib's disassemble_into_single_device_arrays tries to import jax._src.sharding_impls
# once per output shard. Without jax installed, each failed import walks sys.path (tens
# of microseconds, most of a pmap launch's Python overhead); a None entry in sys.modules
# makes the same ModuleNotFoundError immediate.
if importlib.util.find_spec("jax") is None:
    sys.modules.setdefault("jax._src.sharding_impls", None)

__all__ = ["client", "devices", "compile", "put", "execute", "execute_one", "to_numpy", "Device",
           "Buffer", "optimized_hlo", "cost_analysis", "device_count_env", "is_ready",
           "register_node", "register_fields", "dispatcher", "fast_path",
           "is_unsortable_keys_error", "restore_recursion_budget", "main_thread_state", "ROOM",
           "is_unhashable_static_error", "forget", "set_tracing", "set_runtime_checks",
           "group_array", "group_devices", "shards", "copy_to_host_async", "set_x64_state",
           "set_cpu_device_count", "local_devices", "process_index", "process_count",
           "client_exists", "platform_wanted", "set_platform", "platform_name", "join",
           "coordination_service", "distributed_client", "jaxlib_version", "explain"]

Device = Any          # a jaxlib device (CpuDevice(id=0) ...)
Buffer = Any          # a jaxlib single-device array
Executable = Any      # a jaxlib LoadedExecutable


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
    with _init_lock:
        if _client_made and _client_made[0] != n:
            raise RuntimeError(
                f"jax_num_cpu_devices={n} came too late: spmdc's CPU client already exists "
                f"with {_client_made[0]} devices. Set it before the first use of devices "
                "(right after the import), or set SPMDC_CPU_DEVICES in the environment")
        _cpu_devices_set[:] = [n]


# Note [threads]
# ~~~~~~~~~~~~~~
# spmdc may be used from several threads at once (README, "Threads"). What the threads
# share is made safe where it lives:
# - the trace being built is per thread (Note [thread-local trace] in tracing.py);
# - lazily made singletons (the PJRT client, the devices, the shardings that the C++
#   dispatcher compares by identity, the dispatcher's config slots) are made once under a
#   lock (``_once``): two threads making the first call at once used to create two CPU
#   clients and mix their devices, which crashed the process;
# - lowering to StableHLO runs one at a time (Note [one lowering at a time] in
#   compiler/stablehlo.py); XLA compiles and PJRT launches run concurrently, which PJRT
#   supports;
# - the memo tables and compile caches are dicts read with ``get`` and filled with one
#   store of a value held in a local, which the GIL makes atomic: two threads that miss
#   at once both compute, one store wins, and each uses its own (equal) value.
# - jaxlib's C++ dispatcher (Note [C++ dispatch]) keeps its own cache under its own lock
#   and calls ``cache_miss`` on the calling thread; whether a call may take it is decided
#   from that thread's trace state.

_init_lock = threading.RLock()


def _once(fn: Any) -> Any:
    """``functools.cache`` whose first call per argument runs once, under a lock, so
    that every thread gets the same object (Note [threads])."""
    made: dict[Any, Any] = {}

    @functools.wraps(fn)
    def cached(*args: Any) -> Any:
        try:
            return made[args]
        except KeyError:
            pass
        with _init_lock:
            if args not in made:
                made[args] = fn(*args)
            return made[args]
    return cached


# --- several processes (runtime/distributed.py drives these) --------------------------------

_joined: list[Any] = []     # the distributed State once this process has joined


def join(state: Any) -> None:
    """Make the client, when it is made, span the processes of ``state`` (a
    runtime/distributed.py State: ``spec`` and the distributed ``client``)."""
    _joined[:] = [state]


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
    if _joined and ("Gloo" in text or "Connection closed" in text
                    or "Connection reset" in text):
        note = ("spmdc: a collective across processes failed: another process of this "
                "computation died or left (its own output says why); this process cannot "
                "go on")
        if note not in getattr(e, "__notes__", ()):
            e.add_note(note)


@_once
def client() -> Any:
    n = device_count_env()
    joined = _joined[0] if _joined else None
    if platform_wanted() == "cuda":
        made = _cuda_client(joined)
    elif joined is None:
        made = xc.make_cpu_client(num_devices=n)
    else:       # one computation over several processes (runtime/distributed.py)
        host, _ = cluster.split_address(joined.spec.coordinator_address)
        gloo = _jax.make_gloo_tcp_collectives(
            joined.client, hostname="127.0.0.1" if cluster.is_loopback(host) else None)
        made = xc.make_cpu_client(asynchronous=True, distributed_client=joined.client,
                                  node_id=joined.spec.process_id,
                                  num_nodes=joined.spec.num_processes, collectives=gloo,
                                  num_devices=n)
    _client_made.append(n)
    if joined is not None:
        global _several_processes
        _several_processes = True
    return made


_several_processes = False       # whether the client spans several processes

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
    with _init_lock:
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


# Note [CUDA custom calls]
# ~~~~~~~~~~~~~~~~~~~~~~~~
# The kernels a module calls by name on CUDA (the host-callback handler
# ``xla_ffi_python_gpu_callback``, cuSOLVER's ``cusolver_<routine>_ffi``) live in the
# Python extensions of the plugin's companion package (``jax_cuda13_plugin``:
# ``cuda_plugin_extension``, ``_solver``), and the plugin's XLA finds a target only once
# it is registered through the plugin's C API, whose handle ``load_pjrt_plugin_dynamically``
# returns. JAX does it when it initializes the plugin (jax_plugins/cuda/__init__.py, with
# jaxlib/gpu_solver.py for the solver kernels); spmdc does the same right after loading
# the plugin, before any compile: first the FFI types (``ffi_types()``: the transpose-plan
# cache that the callback handler keeps as its state; a handler's state type must be
# known before the handler), then the handlers (``ffi_handlers()``) and the cuSOLVER
# kernels (``_solver.registrations()``), all for the platform "CUDA" as typed-FFI
# targets (api_version 1). None of it needs a GPU. If the plugin was loaded before (JAX
# in the same process), its loader registered them (JAX does). Where the extensions are
# missing, a module calling one of these targets would fail to compile with XLA's "No FFI
# handler registered"; ``_check_cuda_targets`` says instead which package is missing.

_cuda_unregistered: list[str] = []   # why the plugin's targets are not registered, if not


def _register_cuda_targets(c_api: Any, package: str) -> None:
    """Register the plugin's FFI types, handlers and cuSOLVER kernels (Note [CUDA custom
    calls])."""
    try:
        extension = importlib.import_module(f"{package}.cuda_plugin_extension")
        solver = importlib.import_module(f"{package}._solver")
    except ImportError as e:
        _cuda_unregistered[:] = [f"{package} is not installed or does not load ({e})"]
        return
    for name, type_id in extension.ffi_types().items():
        extension.register_custom_type(c_api, name, type_id)
    targets = {**extension.ffi_handlers(), **solver.registrations()}
    for name, handler in targets.items():
        extension.register_custom_call_target(c_api, name, handler, "CUDA", 1)
    _cuda_unregistered.clear()


def _check_cuda_targets(module: Any) -> None:
    """A clear error for a module that calls the plugin's kernels when they could not be
    registered (Note [CUDA custom calls])."""
    if not _cuda_unregistered:
        return
    text = module if isinstance(module, str) else str(module)
    for target, what in (("xla_ffi_python_gpu_callback", "host-callback handler"),
                         ("cusolver_", "cuSOLVER kernels (linear algebra)")):
        if target in text:
            raise RuntimeError(
                f"this program calls the CUDA plugin's {what}, which spmdc registers from "
                f"the plugin's companion package, but {_cuda_unregistered[0]}: pip install "
                "'spmdc[cuda13]' (jax-cuda13-plugin) or 'spmdc[cuda12]'")


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
            _register_cuda_targets(c_api, package)
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


@_once
def devices() -> tuple[Device, ...]:
    """Every device of the computation, grouped by process (process 0's first), as
    replica r of a program runs on ``devices()[r]``."""
    return tuple(sorted(client().devices(), key=lambda d: (d.process_index, d.id)))


@_once
def local_devices() -> tuple[Device, ...]:
    """This process's devices (all of them, in a single-process computation)."""
    me = process_index()
    return tuple(d for d in devices() if d.process_index == me)


def process_index() -> int:
    return _joined[0].spec.process_id if _joined else 0


def process_count() -> int:
    return _joined[0].spec.num_processes if _joined else 1


class _Aval:
    """What jaxlib's array type asks of an abstract value."""
    __slots__ = ("shape", "dtype", "weak_type", "ndim")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype):
        self.shape, self.dtype, self.weak_type, self.ndim = shape, dtype, False, len(shape)


@functools.lru_cache(maxsize=4096)
def _aval(shape: tuple[int, ...], dtype: np.dtype) -> _Aval:
    return _Aval(shape, dtype)


class _OneDevice(_jax.SingleDeviceSharding):
    """A single-device sharding with the extra properties jaxlib's array type reads."""

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return xc.HloSharding.replicate()

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    @property
    def memory_kind(self) -> Any:
        return self._memory_kind

    @property
    def device_set(self) -> set[Device]:
        return {self._device}

    @property
    def is_fully_replicated(self) -> bool:
        return True

    @property
    def is_fully_addressable(self) -> bool:
        return True

    @property
    def num_devices(self) -> int:
        return 1


@_once
def _sharding(device: Device) -> _OneDevice:
    return _OneDevice(device)


@_once
def _group_sharding(devs: tuple[Device, ...]) -> Any:
    return _jax.GSPMDSharding(list(devs), xc.HloSharding.replicate())


def put(value: np.ndarray, device: Device) -> Buffer:
    """Copy a host array to ``device``."""
    if _several_processes and device.process_index != process_index():
        # jaxlib would return an array without data (notes/distributed.md, pitfall 5)
        raise ValueError(
            f"{device} belongs to process {device.process_index}; this is process "
            f"{process_index()}, which can place data only on its own devices "
            "(spmdc.local_devices()). Across processes, pass each process's part to pmap, "
            "or lay an array out over a mesh of every process's devices with "
            "device_put(x, NamedSharding(mesh, spec)) or "
            "make_array_from_process_local_data: each process then places its own blocks")
    value = np.asarray(value, order="C")     # (ascontiguousarray would make a 0-d array 1-d)
    return xc.batched_device_put(_aval(value.shape, value.dtype), _sharding(device),
                                 [value], [device], enable_x64=True)


def to_numpy(buffer: Buffer) -> np.ndarray:
    # Not np.asarray(buffer): that goes through the buffer protocol, which has no
    # bfloat16 (nor the other ml_dtypes types) and gave an object array for them.
    # Waiting first turns a failed computation into its Python error: a replica of a
    # multi-device program that fails (e.g. RESOURCE_EXHAUSTED allocating its output)
    # leaves an error buffer, and copying one to the host aborts the process.
    try:
        buffer.block_until_ready()
    except Exception as e:
        explain(e)
        raise
    return buffer._single_device_array_to_np_array_did_copy()[0]


def is_ready(buffer: Buffer) -> bool:
    return buffer.is_ready()


# Executables (by id) whose launches wait for their effects (Note [host callbacks] in
# compiler/stablehlo.py); ``forget`` drops one when its owner goes.
_waiting: set[int] = set()


def forget(exe: Executable) -> None:
    _waiting.discard(id(exe))
    _from_cache.discard(id(exe))


def compile(module: Any, devs: Sequence[Device], host_callbacks: Sequence[Any] = (),
            wait: bool = False, partitioned: bool = False) -> Executable:
    """Compile a StableHLO module (its text; with ``host_callbacks``, the parsed module
    object) for ``len(devs)`` replicas, replica k on ``devs[k]``. ``host_callbacks[k]``
    is the Python callable that the module's host-callback custom call with index k runs
    (Note [host callbacks] in compiler/stablehlo.py); the executable keeps them alive.
    With ``wait``, every launch returns only once the program's effects have run.
    ``partitioned``: a module in the partition form (Note [partition form] in
    compiler/stablehlo.py), partition k on ``devs[k]``, split by XLA's SPMD partitioner."""
    exe = _compile(module, devs, host_callbacks, partitioned)
    if wait:
        _waiting.add(id(exe))
    return exe


def _compile(module: Any, devs: Sequence[Device], host_callbacks: Sequence[Any],
             partitioned: bool = False) -> Any:
    n = len(devs)
    options = xc.CompileOptions()
    build = options.executable_build_options
    ids = np.array([d.id for d in devs], dtype=np.int64)
    if partitioned:
        build.num_replicas, build.num_partitions = 1, n
        build.device_assignment = xc.DeviceAssignment.create(ids.reshape(1, n))
        build.use_spmd_partitioning = True
        build.use_shardy_partitioner = True
    else:
        build.num_replicas, build.num_partitions = n, 1
        build.device_assignment = xc.DeviceAssignment.create(ids.reshape(n, 1))
    if platform_wanted() == "cuda":
        _check_cuda_targets(module)
    elif "lapack_" in (module if isinstance(module, str) else str(module)):
        _register_lapack_targets()
    if host_callbacks:
        return _off_the_main_thread(lambda: client().compile_and_load(
            module, _jax.DeviceList(tuple(devs)), options,
            host_callbacks=list(host_callbacks)))
    store = _cache.cache() if isinstance(module, str) else None
    if store is None:
        return _off_the_main_thread(
            lambda: client().compile_and_load(module, _jax.DeviceList(tuple(devs)), options))
    return _cached_compile(store, module, devs, options, ids)


# (Note [persistent compilation cache] in runtime/cache.py)
_from_cache: set[int] = set()


def _cached_compile(store: Any, module: str, devs: Sequence[Device], options: Any,
                    ids: np.ndarray) -> Any:
    import jaxlib
    c = client()
    key = _cache.key_of([module.encode(), jaxlib.__version__.encode(), c.platform.encode(),
                         c.platform_version.encode(), ids.tobytes(),
                         options.SerializeAsString()])
    payload = store.get(key)
    if payload is not None:
        try:
            exe = c.deserialize_executable(payload, _jax.DeviceList(tuple(devs)), options)
        except Exception:          # noqa: BLE001  (not loadable: compile and replace it)
            store.invalid(key)
        else:
            _from_cache.add(id(exe))
            return exe
    exe = _off_the_main_thread(
        lambda: c.compile_and_load(module, _jax.DeviceList(tuple(devs)), options))
    try:
        store.put(key, c.serialize_executable(exe))
    except Exception:              # noqa: BLE001  (an executable jaxlib cannot serialize)
        pass
    return exe


def from_cache(exe: Executable) -> bool:
    """Whether ``exe`` was loaded from the persistent compilation cache."""
    return id(exe) in _from_cache


# Note [LAPACK custom calls]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Linear algebra lowers to jaxlib's own LAPACK kernels: custom calls to targets named
# ``lapack_<s|d><routine>_ffi`` (XLA's typed FFI, api_version 4). jaxlib ships the
# handlers in ``jaxlib.cpu._lapack`` but XLA only finds a target that was registered with
# it: ``_lapack.initialize()`` fills the kernels' function pointers from SciPy's
# cython_lapack, and each handler is then registered for the CPU platform. It is done
# once, on the first compile of a module that calls one, so programs without linear
# algebra never import SciPy's LAPACK.

@_once
def _register_lapack_targets() -> None:
    from jaxlib.cpu import _lapack
    _lapack.initialize()
    for name, handler in _lapack.registrations().items():
        _jax.register_custom_call_target(name, handler, "cpu", 1)


# Note [Ctrl-C during a compile]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# jaxlib's compile, called on the main thread, polls for signals: Ctrl-C makes it return
# with KeyboardInterrupt while XLA goes on compiling in the background, and when the
# process then exits with that compile still running, it crashes (a segfault after the
# user's program handled the KeyboardInterrupt and finished). So the compile runs on a
# worker thread, where jaxlib sees no signals and runs it to the end; the main thread
# waits for it, and Ctrl-C interrupts that wait at once. The worker is not a daemon
# thread, so an interpreter that is exiting waits for the compile to finish first.

def _off_the_main_thread(fn: Any) -> Any:
    """``fn()``, run on a worker thread when called on the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return fn()         # signals are delivered to the main thread only
    outcome: list[Any] = []
    done = threading.Event()

    def work() -> None:
        try:
            outcome.append((True, fn()))
        except BaseException as e:      # handed to the waiting thread
            outcome.append((False, e))
        finally:
            done.set()
    threading.Thread(target=work, name="spmdc-compile").start()
    # KeyboardInterrupt arrives in this wait, and the compile goes on. (Not Thread.join:
    # an interrupted join marks the thread finished, and the exiting interpreter would
    # then not wait for it.)
    done.wait()
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def addressable(exe: Executable, devs: Sequence[Device]) -> tuple[Device, ...]:
    """The devices of ``devs`` (an executable's, in replica order) that this process
    feeds: all of them in a single-process computation. They must be the order in which
    the executable takes its buffers, or replicas would get each other's data."""
    if process_count() == 1:
        return tuple(devs)
    me = process_index()
    mine = tuple(d for d in devs if d.process_index == me)
    if list(exe.local_devices()) != list(mine):
        raise AssertionError(f"spmdc: the executable runs on {exe.local_devices()} in this "
                             f"process, not on {mine}")
    return mine


def execute(exe: Executable, args: Sequence[Sequence[Buffer]],
            devs: tuple[Device, ...],
            in_types: Sequence[tuple[tuple[int, ...], np.dtype]] = ()) -> list[list[Buffer]]:
    """Run ``exe``; ``args[i][r]`` is argument i on replica r, of (shape, dtype)
    ``in_types[i]`` (needed with several replicas). Returns ``outs[k][r]``."""
    if len(devs) == 1:
        packed = [a[0] for a in args]
    else:
        sharding = _group_sharding(devs)
        packed = [_jax.ArrayImpl(_aval(*t), sharding, list(a), True, True)
                  for a, t in zip(args, in_types, strict=True)]
    return _launch(exe, packed)


def launch_and_split(exe: Executable, args: list[Buffer]) -> list[list[Buffer]]:
    """Run ``exe`` on ``group_array`` arguments; per output, its per-device buffers."""
    return _launch(exe, args)


def _launch(exe: Executable, args: list[Buffer]) -> Any:
    if _waiting and id(exe) in _waiting:
        results = exe.execute_sharded(args, with_tokens=True)
        results.consume_token().block_until_ready()     # its effects have run
        return results.disassemble_into_single_device_arrays()
    return exe.execute_sharded(args).disassemble_into_single_device_arrays()


def execute_grouped(exe: Executable, args: list[Buffer], handlers: list[Any]) -> list[Buffer]:
    """Run ``exe`` on ``group_array`` arguments; one ``group_array`` per output, made by
    ``handlers`` (``result_handler``), without taking the per-device buffers apart: that
    costs as much as the launch itself on 8 devices, and happens later if at all."""
    if _waiting and id(exe) in _waiting:
        results = exe.execute_sharded(args, with_tokens=True)
        results.consume_token().block_until_ready()     # its effects have run
        return results.consume_with_handlers(handlers)
    return exe.execute_sharded(args).consume_with_handlers(handlers)


@functools.lru_cache(maxsize=4096)
def result_handler(shape: tuple[int, ...], dtype: np.dtype, devs: tuple[Device, ...]) -> Any:
    """What turns an output's per-device buffers (each of ``shape``) into a group_array."""
    return _array_result_handler(_aval(shape, np.dtype(dtype)), _group_sharding(devs))


def execute_one(exe: Executable, args: list[Buffer], handlers: list[Any]) -> list[Buffer]:
    """Run a single-replica ``exe`` on one buffer per argument; one buffer per output,
    made by ``handlers`` (``one_device_handler``): placed as ``put`` places values, so
    that a result passed to the next call is an argument the C++ dispatcher accepts
    (Note [C++ dispatch]), whatever produced it."""
    if _waiting and id(exe) in _waiting:
        results = exe.execute_sharded(args, with_tokens=True)
        results.consume_token().block_until_ready()     # its effects have run
        return results.consume_with_handlers(handlers)
    return exe.execute_sharded(args).consume_with_handlers(handlers)


@functools.lru_cache(maxsize=4096)
def one_device_handler(shape: tuple[int, ...], dtype: np.dtype, device: Device) -> Any:
    """What makes a single-device result buffer, with ``put``'s sharding."""
    return _array_result_handler(_aval(shape, np.dtype(dtype)), _sharding(device))


def _array_result_handler(aval: _Aval, sharding: Any) -> Any:
    # jaxlib 0.10 checks the sharding against the aval unless told not to; 0.11 has no
    # such check (nor the argument).
    try:
        return _jax.array_result_handler(aval, sharding, committed=True, _skip_checks=True)
    except TypeError:
        return _jax.array_result_handler(aval, sharding, committed=True)


def output_tiles(exe: Executable) -> list[tuple[list[int], list[int], bool] | None]:
    """How the SPMD partitioner laid out each output of a partitioned executable: the
    tile counts per dimension (a last, extra count of copies when replicated there), the
    partition id of each tile in row-major order, and whether that extra count is there;
    None for a layout other than tiles (e.g. manual)."""
    out = []
    for proto in exe.get_output_shardings():
        s = xc.HloSharding.from_proto(proto)
        if s.is_replicated():
            out.append(([], [], False))
        elif s.is_tiled() and not s.subgroup_types():
            out.append((list(s.tile_assignment_dimensions()),
                        list(s.tile_assignment_devices()), s.replicate_on_last_tile_dim()))
        else:
            out.append(None)
    return out


def optimized_hlo(exe: Executable) -> str:
    return "\n\n".join(m.to_string() for m in exe.hlo_modules())


def cost_analysis(exe: Executable) -> dict[str, float]:
    return dict(exe.cost_analysis())


def memory_analysis(exe: Executable) -> Any:
    """XLA's buffer sizes for the compiled program (``peak_memory_in_bytes``,
    ``temp_size_in_bytes``, ``argument_size_in_bytes``, ...)."""
    return exe.get_compiled_memory_stats()


# --- jaxlib's C++ dispatch -------------------------------------------------------------------

# Note [C++ dispatch]
# ~~~~~~~~~~~~~~~~~~~
# PJRT's Python-level launch (execute_sharded, then disassembling the results) costs about
# 7 us per call, more than a whole jitted call should. jaxlib also has a C++ dispatcher
# (``_jax.pjit``): a callable that flattens its arguments with a C++ pytree registry,
# computes their signature (structure, and per array shape, dtype, weak type and
# sharding), finds a cached executable and launches it, building the output arrays and
# the output pytree in C++. On a signature it has not seen it calls ``cache_miss(*args,
# **kwargs)``, which must return ``(outputs, fast_path_or_None, False)``; with ``None``
# the C++ side simply calls ``cache_miss`` again next time.
#
# spmdc puts one in front of every jit and pmap (transforms/jit.py, transforms/pmap.py):
# ``cache_miss`` is the ordinary Python path, and ``fast_path`` grants the C++ launch
# only when that is exactly what the Python path would have done: every argument leaf is
# a buffer spmdc placed, of the program's parameter type, on the program's devices
# (spmdc.Array is a registered node whose child is its buffer, or for a replicated
# program its group_array; NumPy arrays, Python scalars and Arrays elsewhere keep the
# Python path), and every output leaf is a buffer the C++ side can rebuild. Captured
# constants go with the grant (``const_args``); jaxlib passes them before the arguments,
# so jit compiles its programs with the constants first. (pmap does not grant programs
# with constants.)
# Static arguments are part of the C++ signature by value. The dispatcher needs three
# process-wide config slots (disable_jit, enable_x64, post_hook) that the jax package
# sets when it is imported; without jax spmdc sets them to constant defaults, with jax
# it leaves jax's in place (so jax.disable_jit() would then reach spmdc's dispatchers
# too; spmdc has no disable_jit of its own).

def _new_registry() -> Any:
    return _jax.pytree.PyTreeRegistry(enable_none=True, enable_tuple=True,
                                      enable_namedtuple=True, enable_list=True,
                                      enable_dict=True)


# One registry per kind of launch, because an spmdc.Array flattens differently for each:
# to its one buffer for a single-device program, to one multi-device array holding a
# buffer per replica (group_array) for a replicated one. A single-device launch's
# arguments and results have a registry each ("one", "one results"): the arguments'
# registry reads an Array's children from its attributes in C++, with no Python call
# (register_fields), but rebuilds a node only by calling its type, which would run
# Array.__init__ for every result; the results' registry rebuilds them with a Python
# function (Note [leaves read in C++] in runtime/array.py).
_registries = {"one": _new_registry(), "one results": _new_registry(),
               "replicated": _new_registry()}
_results = {"one": "one results", "partitioned": "one results", "replicated": "replicated"}


def register_node(nodetype: type, flatten: Any, unflatten: Any,
                  kind: str | None = None) -> None:
    """Teach the C++ dispatchers' pytree registries a node type (the protocol of
    spmdc.tree); ``kind`` names one registry ("one", "one results" or "replicated"),
    None all of them."""
    for k, registry in _registries.items():
        if kind is None or k == kind:
            registry.register_node(nodetype, flatten, unflatten)


def register_fields(nodetype: type, children: str, aux: str, kind: str) -> None:
    """Teach registry ``kind`` to flatten a ``nodetype`` in C++: its children are the
    pytree in attribute ``children``, its aux data that in ``aux`` (both read with no
    Python call where they are slots). Unflattening calls ``nodetype(**fields)``, so
    it is for a registry that flattens only (see _registries)."""
    _registries[kind].register_dataclass_node(nodetype, [children], [aux])


def group_array(buffers: Sequence[Buffer], devs: tuple[Device, ...],
                shape: tuple[int, ...], dtype: np.dtype) -> Buffer:
    """One jaxlib array over ``devs`` whose shard r is ``buffers[r]`` (each of ``shape``):
    the form in which a replicated program takes an argument and returns a result."""
    return _jax.ArrayImpl(_aval(shape, dtype), _group_sharding(devs), list(buffers),
                          True, True)


def copy_to_host_async(buffer: Buffer) -> None:
    """Start the device-to-host copy of a single-device buffer."""
    buffer._copy_single_device_array_to_host_async()


def group_devices(group: Buffer) -> tuple[Device, ...]:
    return tuple(group._sharding._devices)


def shards(group: Buffer) -> list[Buffer]:
    """The per-replica buffers of a ``group_array``, in replica order."""
    return group._arrays


class FastPath(NamedTuple):
    """What jaxlib's C++ dispatcher reads to launch a cached executable."""
    xla_executable: Executable
    out_pytree_def: Any
    in_shardings: list[Any]
    out_shardings: list[Any]
    out_avals: list[_Aval]
    out_committed: list[bool]
    kept_var_bitvec: list[bool]
    in_device_local_layouts: list[None]
    const_args: list[Any]


@_once
def _dispatch_state() -> None:
    if "jax._src.config" in sys.modules:       # jax has set (and owns) the slots
        return
    config = _jax.config.Config
    _jax.jax_jit.set_disable_jit_state(config("spmdc_disable_jit", False))
    _x64_slot.append(config("spmdc_enable_x64", _x64_state[0], include_in_jit_key=True))
    _jax.jax_jit.set_enable_x64_state(_x64_slot[0])
    _jax.jax_jit.set_post_hook_state(config("spmdc_post_hook", None))


# The x64 setting is part of the C++ dispatcher's signature: a program traced with x64
# on must not be launched for the same call with it off.
_x64_state = [False]
_x64_slot: list[Any] = []


def set_x64_state(enabled: bool) -> None:
    """Tell the C++ dispatchers whether 64-bit types are on (spmdc.core.dtypes calls it
    on every change). With jax imported, jax's slot is in place and stays as jax sets it."""
    _x64_state[0] = enabled
    if _x64_slot:
        _x64_slot[0].set_global(enabled)


# Note [Python-path state in the jit key]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A call made while this thread traces (where a jit is inlined into the trace) or while a
# runtime check is on (Note [config on the hot path] in core/config.py) must take the
# Python path even when its arguments match a granted launch. Rather than test both in
# Python before every call, spmdc keeps them in two config slots that are part of every
# C++ dispatcher's key, as JAX keeps its trace state: while either is on, no granted
# launch matches, the dispatcher calls ``cache_miss``, and the Python path grants nothing
# then. ``tracing`` is per thread (as the current trace is), ``runtime checks`` global.
_tracing_slot = _jax.config.Config("spmdc_tracing", False, include_in_jit_key=True)
_checks_slot = _jax.config.Config("spmdc_runtime_checks", False, include_in_jit_key=True)


def set_tracing(on: bool) -> None:
    """Tell the C++ dispatchers whether this thread has a current trace."""
    _tracing_slot.set_local(on)


def set_runtime_checks(on: bool) -> None:
    """Tell the C++ dispatchers whether a runtime check is on."""
    _checks_slot.set_global(on)


# Note [recursion budget after a failed flatten]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# jaxlib's C++ pytree registry guards each level of its recursion with
# Py_EnterRecursiveCall, but an error thrown from a deeper level (a dict whose keys do
# not compare, a node's flatten that raises) unwinds the levels above it without their
# Py_LeaveRecursiveCall, and the thread keeps that much less of its recursion limit:
# - Python 3.11 (jaxlib 0.10.2), where Python frames and C recursion share one counter:
#   a dict with keys 1 and "a" inside a list leaks a level per call, and after ~1000
#   calls every call in that thread raises RecursionError; arguments that contain
#   themselves recurse to the limit, and when the limit is reached while comparing a
#   dict's keys (which depends on how deep the caller was) the whole budget leaks at once.
# - Python 3.12 (jaxlib 0.11.2) counts C recursion on its own (1500 levels): the nested
#   keys stopped C-level recursion in the thread after 1483 calls.
#
# So the error path of a dispatcher call (Jitted.__call__, Pmapped.__call__) repairs the
# counter. After a whole leak on 3.11 the handler has no level left for even one call (a
# threading.local's attribute, a comparison, all count), so its first statement adds
# ROOM levels with no call at all: ``main_thread_state`` is a ctypes view of the main
# thread's PyThreadState (its layout checked when spmdc is imported: the counter must
# drop one C call deeper), and reading or setting a field of it calls nothing. Then
# ``restore_recursion_budget()`` estimates the leak (``_leaked``) and gives it back when
# it is more than _LEAK_SEEN levels, else takes the ROOM levels back; a leak of a few
# levels is so repaired once ~_LEAK_SEEN have gathered. On 3.11 the estimate is the
# counter less the Python frames on the stack and the C calls it can tell (each call
# through an object's ``__call__``, and the script's entry); on 3.12 it is the C levels
# in use beyond those in use when spmdc was imported. Either may be off by a C call or
# two, which leaves the limit a level or two from where it was, where a leak left alone
# stops the thread. In another thread the handler's ROOM went to the main thread and is
# taken back there; that thread is repaired through a view of its own, made for the
# repair, when the handler still has a few levels, so a whole leak at once is repaired in
# the main thread only. Other Python versions' layouts are not known: nothing is done
# (tests/test_tree.py checks the leaks).
ROOM = 100
_LEAK_SEEN = 100


class _Head311(ctypes.Structure):
    # The head of CPython 3.11's PyThreadState (Include/cpython/pystate.h): ``remaining``
    # is recursion_remaining, which Python frames and C recursion share.
    _fields_ = [("prev", ctypes.c_void_p), ("next", ctypes.c_void_p),
                ("interp", ctypes.c_void_p), ("_initialized", ctypes.c_int),
                ("_static", ctypes.c_int), ("remaining", ctypes.c_int),
                ("limit", ctypes.c_int), ("headroom", ctypes.c_int)]


class _Head312(ctypes.Structure):
    # 3.12's: ``remaining`` is c_recursion_remaining, C recursion's own counter.
    _fields_ = [("prev", ctypes.c_void_p), ("next", ctypes.c_void_p),
                ("interp", ctypes.c_void_p), ("_status", ctypes.c_int),
                ("py_remaining", ctypes.c_int), ("limit", ctypes.c_int),
                ("remaining", ctypes.c_int), ("headroom", ctypes.c_int)]


_VERSION = sys.version_info[:2]
_ThreadState = _Head312 if _VERSION == (3, 12) else _Head311


class _InRepr:
    """Reads a thread state's ``remaining`` from inside repr(), one C call deeper."""
    def __init__(self, ts: Any) -> None:
        self.ts, self.seen = ts, 0

    def __repr__(self) -> str:
        self.seen = self.ts.remaining
        return ""


def _view_of_this_thread() -> Any:
    """A view of this thread's PyThreadState where its layout is known and checks out (a
    C call deeper, the counter the leak hits is lower), else a dummy (``limit`` 0)."""
    if _VERSION in ((3, 11), (3, 12)):
        get = ctypes.pythonapi.PyThreadState_Get
        get.restype = ctypes.c_void_p
        ts = _ThreadState.from_address(get())
        before, probe = ts.remaining, _InRepr(ts)
        repr(probe)
        if ts.limit == sys.getrecursionlimit() and 0 < probe.seen < before:
            return ts
    return _ThreadState()


# (a view of a thread that ends would point at freed memory: the main thread's only)
main_thread_state = (_view_of_this_thread()
                     if threading.current_thread() is threading.main_thread()
                     else _ThreadState())
_main_at_import = main_thread_state.remaining       # 3.12: C recursion free at import
if _VERSION == (3, 12) and not main_thread_state.limit:          # (imported by a thread)
    _main_at_import = _view_of_this_thread().remaining


def _leaked(ts: Any) -> int:
    """How many more levels ``ts`` has in use than the stack accounts for (an estimate)."""
    if _VERSION == (3, 12):
        return _main_at_import - ts.remaining
    frames, calls, frame = 0, 1, sys._getframe()
    while frame is not None:
        frames += 1
        calls += frame.f_code.co_name == "__call__"
        frame = frame.f_back
    return ts.limit - ts.remaining - frames - calls


def restore_recursion_budget() -> None:
    """Give back the recursion levels a failed C++ flatten leaked; the caller has just
    added ROOM to ``main_thread_state.remaining`` (Note [recursion budget after a failed
    flatten])."""
    ts, given = main_thread_state, ROOM
    if threading.current_thread() is not threading.main_thread():
        main_thread_state.remaining -= ROOM                 # (not this thread's)
        ts, given = _view_of_this_thread(), 0
    if ts.limit == 0:                                       # a dummy
        return
    leaked = _leaked(ts)
    if leaked + given > _LEAK_SEEN:
        ts.remaining += leaked
    else:
        ts.remaining -= given


def is_unsortable_keys_error(e: Exception) -> bool:
    """Whether the C++ registry refused a dict whose keys do not sort."""
    return str(e).startswith("Comparator raised exception while sorting pytree dictionary")


def is_unhashable_static_error(e: Exception) -> bool:
    """Whether the C++ dispatcher refused a static argument it cannot hash."""
    return str(e).startswith("Non-hashable static arguments are not supported")


_granting = threading.local()


def granting() -> bool:
    """Whether ``fast_path`` is flattening a call's arguments after the call (when a
    donated argument is already deleted, and no launch follows)."""
    return getattr(_granting, "on", False)


def is_deleted_buffer_error(e: Exception) -> bool:
    """Whether a launch failed on an argument whose buffer was deleted or donated."""
    return "has been deleted or donated" in str(e)


def is_double_donation_error(e: Exception) -> bool:
    """Whether a launch refused a donated buffer that was also another argument."""
    return "previously donated in the same call" in str(e)


def _no_fallback(x: Any, *rest: Any) -> Any:
    # Only called for an argument whose sharding differs from the program's, which
    # fast_path never grants.
    raise AssertionError(f"spmdc: the C++ dispatcher asked to move {type(x).__name__}")


def dispatcher(name: str, cache_miss: Any, static_argnums: Sequence[int] = (),
               static_argnames: Sequence[str] = (), kind: str = "one") -> Any:
    """A C++ callable that runs granted signatures itself and the rest via ``cache_miss``;
    the static arguments (non-negative positions, keyword names) are part of the
    signature by value; ``kind``: "one" for single-device programs, "replicated" for
    multi-replica ones."""
    _dispatch_state()
    return _jax.pjit(name, None, cache_miss, list(static_argnums), list(static_argnames),
                     (), _registries[kind], _no_fallback)


def _same_objects(xs: Sequence[Any], ys: Sequence[Any]) -> bool:
    return len(xs) == len(ys) and all(x is y for x, y in zip(xs, ys, strict=True))


def fast_path(exe: Executable, devs: tuple[Device, ...],
              in_types: Sequence[tuple[tuple[int, ...], Any]],
              out_types: Sequence[tuple[tuple[int, ...], Any]], args: Any,
              in_buffers: Sequence[Buffer], outs: Any, out_buffers: Sequence[Buffer],
              const_buffers: Sequence[Buffer] = (),
              const_types: Sequence[tuple[tuple[int, ...], Any]] = (),
              kind: str = "one") -> FastPath | None:
    """The C++ launch of ``exe`` (one replica per device of ``devs``) for calls like
    ``args``, or None where it could differ from the Python path. The Python path
    flattened ``args`` to ``in_buffers`` (of per-replica ``in_types``, as (shape, dtype);
    with several replicas each a ``group_array`` over ``devs``) and built ``outs`` from
    ``out_buffers`` (of ``out_types``); the C++ registry must find the same buffers in
    the same order on both sides, and each argument must be a buffer placed by spmdc
    (``put``, ``group_array`` or a fast path) on ``devs``, with that type.
    ``const_buffers`` (of ``const_types``) are the captured constants, which ``exe``
    takes before the arguments. ``kind`` is that of the dispatcher (see ``dispatcher``),
    or "partitioned" for a partitioned program behind a "one" dispatcher, whose arguments
    and results are each one group_array (an Array laid out on a mesh flattens to it)."""
    if id(exe) in _waiting:         # the C++ launch would not wait for the effects
        return None
    sharding = _sharding(devs[0]) if kind == "one" else _group_sharding(devs)
    registry = _registries["one" if kind == "partitioned" else kind]
    _granting.on = True        # the call has run: a donated argument is gone by now
    try:
        leaves, _ = registry.flatten(args)
    finally:
        _granting.on = False
    if not _same_objects(leaves, in_buffers):
        return None
    for x, (shape, dtype) in zip([*leaves, *const_buffers], [*in_types, *const_types],
                                 strict=True):
        if (type(x) is not _jax.ArrayImpl or x._sharding is not sharding
                or x.aval is None or x.aval.shape != shape or x.aval.dtype != dtype):
            return None
    out_leaves, out_tree = _registries[_results[kind]].flatten(outs)
    if not _same_objects(out_leaves, out_buffers):
        return None
    n, m = len(leaves) + len(const_buffers), len(out_leaves)
    return FastPath(exe, out_tree, [sharding] * n, [sharding] * m,
                    [_aval(shape, dtype) for shape, dtype in out_types],
                    [True] * m, [True] * n, [None] * n, list(const_buffers))
