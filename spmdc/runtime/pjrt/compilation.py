"""Compiling StableHLO modules into executables: the build options (replicated or
partitioned), the persistent compilation cache, custom-call targets registered first, the
compile run off the main thread (Note [Ctrl-C during a compile]), and what an executable
can say about itself (its optimized HLO, costs, memory, output layouts)."""
from __future__ import annotations

import functools
import importlib.metadata
import math
import re
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from jaxlib import _jax, _xla
from jaxlib import xla_client as xc

from .. import cache as _cache
from ..monitoring import record_event, record_event_duration_secs
from .backend import Device, client, platform_wanted
from .custom_calls import check_cuda_targets, register_lapack_targets

Executable = Any      # a jaxlib LoadedExecutable

# Executables (by id) whose launches wait for their effects (Note [host callbacks] in
# compiler/stablehlo.py); ``forget`` drops one when its owner goes.
waiting: set[int] = set()


def forget(exe: Executable) -> None:
    waiting.discard(id(exe))
    _from_cache.discard(id(exe))


def serialize_executable(exe: Executable) -> bytes:
    """The executable's bytes, which ``deserialize_executable`` loads (in this process or
    another with the same jaxlib and platform)."""
    return client().serialize_executable(exe)


def serialize_portable_artifact(module_text: str, target: str) -> bytes:
    """The StableHLO portable artifact (VHLO bytecode) of a module for the StableHLO
    version ``target``, by jaxlib's serializer, which writes CHLO ops as composites with
    their StableHLO decompositions (as JAX's exports hold them)."""
    return _jax.mlir.serialize_portable_artifact(module_text, target)


def register_hlo_transform(name: str, stage: int, callback: Any, platform: str) -> None:
    """Have XLA call ``callback(hlo_module_proto_bytes) -> bytes | None`` at pipeline
    ``stage`` (0 before scheduling, 1 after) of every compile for ``platform`` (the CPU
    in this process, or the CUDA plugin's client)."""
    if platform == "cpu":
        _xla.register_xla_transform(name, stage, callback)
    else:
        _xla.register_xla_transform_c_api(client(), name, stage, callback)


def clear_hlo_transform(name: str, stage: int, platform: str) -> bool:
    """Remove a transformation ``register_hlo_transform`` added; whether there was one."""
    if platform == "cpu":
        return _xla.clear_xla_transform(name, stage)
    return _xla.clear_xla_transform_c_api(client(), name, stage)


def hlo_to_stablehlo(computation: bytes) -> bytes:
    """The StableHLO bytecode of a serialized HloModuleProto (jaxlib's converter)."""
    return _jax.mlir.hlo_to_stablehlo(computation)


def refine_polymorphic_shapes(module: bytes, enable_shape_assertions: bool = True,
                              validate_static_shapes: bool = True,
                              enable_shardy: bool = False) -> bytes:
    """A module's bytecode with its dynamic shapes refined from the static shapes of its
    ``@main`` (jaxlib's StableHLO shape refinement)."""
    return _jax.mlir.refine_polymorphic_shapes(
        module, enable_shape_assertions=enable_shape_assertions,
        validate_static_shapes=validate_static_shapes, enable_shardy=enable_shardy)


def deserialize_executable(payload: bytes, devs: Sequence[Device]) -> Executable:
    """Load an executable ``serialize_executable`` gave, for ``devs`` (trusted input:
    it is machine code this process runs)."""
    if platform_wanted() == "cpu":
        register_lapack_targets()       # the LAPACK kernels it may call, as compile does
    return client().deserialize_executable(payload, _jax.DeviceList(tuple(devs)))


def compile(module: Any, devs: Sequence[Device], host_callbacks: Sequence[Any] = (),
            wait: bool = False, partitioned: bool = False,
            compiler_options: Mapping[str, Any] | None = None) -> Executable:
    """Compile a StableHLO module (its text; with ``host_callbacks``, the parsed module
    object) for ``len(devs)`` replicas, replica k on ``devs[k]``. ``host_callbacks[k]``
    is the Python callable that the module's host-callback custom call with index k runs
    (Note [host callbacks] in compiler/stablehlo.py); the executable keeps them alive.
    With ``wait``, every launch returns only once the program's effects have run.
    ``partitioned``: a module in the partition form (Note [partition form] in
    compiler/stablehlo.py), partition k on ``devs[k]``, split by XLA's SPMD partitioner.
    ``compiler_options``: XLA's options by name (``Lowered.compile(compiler_options=...)``,
    JAX's ``env_option_overrides``); an unknown one fails as jaxlib's JaxRuntimeError."""
    exe = _compile(module, devs, host_callbacks, partitioned, compiler_options)
    if wait:
        waiting.add(id(exe))
    return exe


def _compile(module: Any, devs: Sequence[Device], host_callbacks: Sequence[Any],
             partitioned: bool = False,
             compiler_options: Mapping[str, Any] | None = None) -> Any:
    n = len(devs)
    options = xc.CompileOptions()
    if compiler_options:
        options.env_option_overrides = list(compiler_options.items())
    elif platform_wanted() == "cpu" and isinstance(module, str) and \
            without_float_arithmetic(module):
        # See Note [programs without floating-point arithmetic]
        options.env_option_overrides = [("xla_cpu_use_fusion_emitters", False)]
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
        check_cuda_targets(module)
    elif any(target in (module if isinstance(module, str) else str(module))
             for target in ("lapack_", "tridiagonal_solve_perturbed_ffi")):
        register_lapack_targets()          # jaxlib's CPU kernels, all registered at once
    _report_cache_use(_cache.cache() is not None)
    if host_callbacks:
        return _off_the_main_thread(lambda: client().compile_and_load(
            module, _jax.DeviceList(tuple(devs)), options,
            host_callbacks=list(host_callbacks)))
    store = _cache.cache() if isinstance(module, str) else None
    if store is None:
        return _off_the_main_thread(
            lambda: client().compile_and_load(module, _jax.DeviceList(tuple(devs)), options))
    return _cached_compile(store, module, devs, options, ids)


# Note [programs without floating-point arithmetic]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# XLA:CPU emits each fusion through its MLIR fusion emitters by default. Setting them up
# costs about 10-20 ms of CPU time per compile, a third to a half of what compiling a
# one-operation program (an eager reshape, slice, gather or integer comparison) costs in
# all; XLA's older emitters compile such a program without it. The two emitters' code
# differs in what it computes for floating point (measured: a float64 log; a denormal
# bfloat16 converted to bool), but not in how it moves data, which copies bits, nor in
# integer and boolean arithmetic, which is exact (XLA defines its corner cases: division
# by zero, shifts past the width, the most negative value divided by -1). So a small
# program whose every operation moves or selects data (``DATA_MOVEMENT``; a scatter that
# does more than overwrite has its arithmetic in its body, and is judged by it) or
# computes on integers and booleans alone (``INTEGER_OPERATIONS`` with every type on its
# line an integer) compiles with ``xla_cpu_use_fusion_emitters`` off. Measured bit for
# bit against the default: 98 data-movement programs made by hand on every dtype (NaN,
# infinities, signed zeros, denormals, indices out of range), 182 integer ones on six
# integer types (the extreme values, zero, shifts of 31, 32, 63, 64), and the 1,036 such
# programs six test modules compile (30 -> 19 ms of CPU time each for data movement,
# 57 -> 34 for the others); tests/runtime/test_compile_options.py keeps a check. Only small
# ones (at most ``SMALL_ELEMENTS`` elements in every value), where compiling dominates:
# the older emitters' code for a large transpose runs slower. The module is read line by
# line as lowering prints it, one operation a line; a line of any other shape means the
# program is not one of these. A compile given ``compiler_options`` keeps them as given.

DATA_MOVEMENT = frozenset({
    "broadcast_in_dim", "reshape", "transpose", "slice", "reverse", "concatenate", "pad",
    "select", "gather", "scatter", "dynamic_slice", "dynamic_update_slice"})
INTEGER_OPERATIONS = frozenset({
    "add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "clamp",
    "and", "or", "xor", "not", "negate", "abs", "sign", "compare", "convert", "iota",
    "shift_left", "shift_right_logical", "shift_right_arithmetic"})
SMALL_ELEMENTS = 1 << 16
# a line of the module that holds no operation of its own
_STRUCTURE = ("module", "func.func", "return ", "stablehlo.return ", "}", "^bb")
_OPERATION = re.compile(r'(?:%[^=]*=\s*)?"?stablehlo\.([a-z_]+)')
_TENSOR = re.compile(r"tensor<([0-9x]*)([a-z]*)")


def without_float_arithmetic(module_text: str) -> bool:
    """Whether the StableHLO module ``module_text`` only moves data and computes on
    integers and booleans, in values of at most ``SMALL_ELEMENTS`` elements (Note
    [programs without floating-point arithmetic])."""
    computes = False
    for line in module_text.splitlines():
        line = line.strip()
        if not line or line.startswith(_STRUCTURE):
            continue
        op = _OPERATION.match(line)
        if op is None:
            return False            # a line not known here
        if op[1] in DATA_MOVEMENT:
            computes = True
        elif op[1] in INTEGER_OPERATIONS:
            types = _TENSOR.findall(line)
            if not types or any(kind[:1] not in ("i", "u") for _, kind in types):
                return False
            computes = True
        elif op[1] != "constant":
            return False
    return computes and all(math.prod(int(d) for d in dims.split("x")[:-1]) <= SMALL_ELEMENTS
                            for dims, _ in _TENSOR.findall(module_text))


# (Note [persistent compilation cache] in runtime/cache.py)
_from_cache: set[int] = set()


def _cached_compile(store: Any, module: str, devs: Sequence[Device], options: Any,
                    ids: np.ndarray) -> Any:
    import jaxlib
    c = client()
    key = _cache.key_of([module.encode(), jaxlib.__version__.encode(), c.platform.encode(),
                         c.platform_version.encode(), ids.tobytes(),
                         options.SerializeAsString()])
    context = _cache_context(jaxlib.__version__, c, devs)
    record_event("/jax/compilation_cache/compile_requests_use_cache")
    asked = time.monotonic()
    payload = store.get(key, context)
    if payload is not None:
        try:
            exe = c.deserialize_executable(payload, _jax.DeviceList(tuple(devs)), options)
        except Exception as e:     # noqa: BLE001  (not loadable: compile and replace it)
            store.invalid(key, f"{type(e).__name__}: {e}")
        else:
            _from_cache.add(id(exe))
            record_event("/jax/compilation_cache/cache_hits")
            record_event_duration_secs("/jax/compilation_cache/cache_retrieval_time_sec",
                                       time.monotonic() - asked)
            return exe
    exe = _off_the_main_thread(
        lambda: c.compile_and_load(module, _jax.DeviceList(tuple(devs)), options))
    try:
        store.put(key, context, c.serialize_executable(exe))
    except Exception:              # noqa: BLE001  (an executable jaxlib cannot serialize)
        pass
    else:
        record_event("/jax/compilation_cache/cache_misses")
    return exe


_cache_use_reported: list[bool] = []


def _report_cache_use(enabled: bool) -> None:
    """Once per process, whether compiles use the persistent cache (Note [JAX's compile
    events] in runtime/monitoring.py)."""
    if not _cache_use_reported:
        _cache_use_reported.append(enabled)
        record_event("/jax/compilation_cache/tasks_using_cache" if enabled
                     else "/jax/compilation_cache/task_disabled_cache")


def _cache_context(jaxlib_version: str, c: Any, devs: Sequence[Device]) -> bytes:
    """What a cache entry's checksum covers besides its bytes: the versions of jaxlib
    and spmdc, the platform and the kinds of the devices (Note [persistent compilation
    cache] in runtime/cache.py)."""
    kinds = sorted({d.device_kind for d in devs})
    return (f"jaxlib {jaxlib_version}; spmdc {_spmdc_release()}; {c.platform} "
            f"{c.platform_version}; {', '.join(kinds)}").encode()


@functools.cache
def _spmdc_release() -> str:
    """spmdc's installed release (spmdc/version.py is above this floor)."""
    try:
        return importlib.metadata.version("spmdc")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def from_cache(exe: Executable) -> bool:
    """Whether ``exe`` was loaded from the persistent compilation cache."""
    return id(exe) in _from_cache


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


def output_tiles(exe: Executable) -> list[tuple[list[int], list[int], bool] | None] | None:
    """How the SPMD partitioner laid out each output of a partitioned executable: the
    tile counts per dimension (a last, extra count of copies when replicated there), the
    partition id of each tile in row-major order, and whether that extra count is there;
    None for a layout other than tiles (e.g. manual). None in place of the list for a
    program on one device, which XLA does not partition (every output is whole there)."""
    protos = exe.get_output_shardings()
    if protos is None:
        return None
    out = []
    for proto in protos:
        s = xc.HloSharding.from_proto(proto)
        if s.is_replicated():
            out.append(([], [], False))
        elif s.is_tiled() and not s.subgroup_types():
            out.append((list(s.tile_assignment_dimensions()),
                        list(s.tile_assignment_devices()), s.replicate_on_last_tile_dim()))
        else:
            out.append(None)
    return out


# What XLA's compile options say of an AutoFDO profile that is not to be looked for.
NO_PROFILE = -1


def compile_options(num_replicas: int, num_partitions: int, device_assignment: Any = None,
                    env_options_overrides: Mapping[str, Any] | None = None,
                    fdo_profile: bytes | None = None, detailed_logging: bool = True
                    ) -> Any:
    """jaxlib's CompileOptions as JAX's ``get_compile_options`` makes them: SPMD
    partitioning with Shardy, ``device_assignment`` (an array of devices or ids,
    ``num_replicas`` x ``num_partitions``; 1-D when one partition) checked against the
    counts, XLA's options by name (``optimization_level`` and the efforts set on the
    build options), an AutoFDO profile, XLA's detailed logging."""
    options = xc.CompileOptions()
    options.num_replicas, options.num_partitions = num_replicas, num_partitions
    build = options.executable_build_options
    build.use_spmd_partitioning = True
    build.use_shardy_partitioner = True
    if fdo_profile is not None:
        build.fdo_profile = fdo_profile
    if device_assignment is not None:
        grid = np.array(device_assignment)
        if grid.ndim == 1 and num_partitions == 1:
            grid = grid[:, None]
        if grid.ndim != 2 or grid.shape[0] != num_replicas:
            raise ValueError(f"device_assignment does not match num_replicas: {grid} vs "
                             f"{num_replicas}.")
        if grid.shape[1] != num_partitions:
            raise ValueError(f"device_assignment does not match num_partitions: {grid} vs "
                             f"{num_partitions}.")
        if grid.dtype == object:
            grid = np.vectorize(lambda d: d.id, otypes=[np.int64])(grid)
        options.device_assignment = xc.DeviceAssignment.create(grid.astype(np.int64))
    if env_options_overrides is not None:
        overrides = dict(env_options_overrides)
        for name in ("exec_time_optimization_effort", "memory_fitting_effort",
                     "optimization_level", "memory_fitting_level"):
            if name in overrides:
                setattr(build, name, overrides.pop(name))
        options.env_option_overrides = list(overrides.items())
    options.profile_version = NO_PROFILE
    build.debug_options.xla_detailed_logging = bool(detailed_logging)
    return options


def op_sharding_from_proto(serialized: bytes) -> Any:
    """jaxlib's OpSharding parsed from its serialized proto."""
    proto = xc.OpSharding()
    proto.ParseFromString(serialized)
    return proto


def hlo_sharding_from_proto(serialized: bytes) -> Any:
    """jaxlib's HloSharding of a serialized OpSharding proto."""
    return xc.HloSharding.from_proto(op_sharding_from_proto(serialized))


def hlo_sharding_to_proto(sharding: Any) -> bytes:
    """The serialized OpSharding proto of jaxlib's HloSharding ``sharding``."""
    if not isinstance(sharding, xc.HloSharding):
        raise TypeError(f"expected an xla_client.HloSharding, got {type(sharding).__name__}")
    return sharding.to_proto().SerializeToString()


HloSharding = xc.HloSharding
OpSharding = xc.OpSharding


def hlo_computation(stablehlo_text: str) -> Any:
    """The StableHLO module ``stablehlo_text`` converted to XLA's HLO (an XlaComputation:
    ``as_hlo_text()``, ``as_serialized_hlo_module_proto()``), before XLA optimises it."""
    return _jax.mlir.mlir_module_to_xla_computation(stablehlo_text, use_tuple_args=False,
                                                    return_tuple=False)


def hlo_cost_analysis(stablehlo_text: str) -> dict[str, float]:
    """XLA's cost estimates (``flops``, ``bytes accessed``, ...) of the StableHLO module
    ``stablehlo_text`` before XLA optimises it, as JAX's ``Lowered.cost_analysis``."""
    module = hlo_computation(stablehlo_text).as_hlo_module()
    return dict(_jax.hlo_module_cost_analysis(client(), module))


def optimized_hlo(exe: Executable) -> str:
    return "\n\n".join(m.to_string() for m in exe.hlo_modules())


def cost_analysis(exe: Executable) -> dict[str, float]:
    return dict(exe.cost_analysis())


def memory_analysis(exe: Executable) -> Any:
    """XLA's buffer sizes for the compiled program (``peak_memory_in_bytes``,
    ``temp_size_in_bytes``, ``argument_size_in_bytes``, ...)."""
    return exe.get_compiled_memory_stats()
