"""The one door to jaxlib's PJRT client: devices, compiling, placing data, launching.

Everything spmdc needs from jaxlib's half-private runtime surface is in this package (the
coordination service and client that runtime/distributed.py drives too), so a jaxlib
upgrade touches these files alone; the rest of spmdc imports them from here. One job per module:

- ``backend``: the client and its devices (the platform, CUDA's plugin, the CPU count);
- ``distributed``: several processes (the coordination service, which process this is);
- ``custom_calls``: the kernels modules call by name (LAPACK, the CUDA plugin's, a
  program's own foreign functions);
- ``buffers``: placing values, copying them back, grouping one buffer per device;
- ``compilation``: compiling modules (the persistent cache, off the main thread);
- ``execution``: running executables;
- ``dispatch``: jaxlib's C++ dispatcher in front of jit and pmap;
- ``profiler``: jaxlib's profiler (spmdc.profiler imports it by name);
- ``recursion``: the recursion budget a failed C++ flatten leaks, given back;
- ``once``: singletons made once under a lock (Note [threads]).
"""
from __future__ import annotations

from .backend import (
    Client,
    Device,
    DeviceList,
    client,
    client_exists,
    device_count_env,
    devices,
    ifrt_programs,
    local_devices,
    platform_name,
    platform_wanted,
    set_cpu_device_count,
    set_platform,
)
from .buffers import (
    Buffer,
    copy_to_host_async,
    group_array,
    group_devices,
    is_ready,
    one_device_handler,
    put,
    result_handler,
    shards,
    to_numpy,
)
from .compilation import (
    Executable,
    HloSharding,
    OpSharding,
    clear_hlo_transform,
    compile,
    compile_options,
    cost_analysis,
    deserialize_executable,
    forget,
    from_cache,
    hlo_computation,
    hlo_cost_analysis,
    hlo_sharding_from_proto,
    hlo_sharding_to_proto,
    hlo_to_stablehlo,
    memory_analysis,
    op_sharding_from_proto,
    optimized_hlo,
    output_tiles,
    refine_polymorphic_shapes,
    register_hlo_transform,
    serialize_executable,
    serialize_portable_artifact,
)
from .custom_calls import (
    ffi_include_dir,
    ffi_targets,
    register_batch_partitionable,
    register_custom_call_partitioner,
    register_ffi_target,
    register_ffi_type,
)
from .dispatch import (
    dispatcher,
    fast_path,
    granting,
    python_path_after,
    pytree_registry,
    register_fields,
    register_node,
    set_mesh_context,
    set_runtime_checks,
    set_tracing,
    set_x64_state,
)
from .distributed import (
    coordination_service,
    distributed_client,
    explain,
    jaxlib_version,
    join,
    process_count,
    process_index,
)
from .execution import addressable, execute, launch, launch_and_split
from .recursion import ROOM, recursion_reserve

__all__ = ["Client", "Device", "DeviceList", "ifrt_programs", "compile_options", "HloSharding",
           "OpSharding",
           "op_sharding_from_proto", "hlo_sharding_from_proto", "hlo_sharding_to_proto",
           "pytree_registry", "Buffer", "Executable", "client", "client_exists", "device_count_env",
           "devices", "local_devices", "platform_name", "platform_wanted",
           "set_cpu_device_count", "set_platform", "copy_to_host_async", "group_array",
           "group_devices", "is_ready", "one_device_handler", "put", "result_handler",
           "shards", "to_numpy", "compile", "cost_analysis", "forget", "from_cache",
           "serialize_executable", "deserialize_executable", "hlo_to_stablehlo",
           "refine_polymorphic_shapes", "serialize_portable_artifact",
           "register_hlo_transform", "clear_hlo_transform",
           "hlo_computation", "hlo_cost_analysis", "memory_analysis", "optimized_hlo",
           "output_tiles",
           "coordination_service",
           "distributed_client", "explain", "jaxlib_version", "join", "process_count",
           "process_index", "dispatcher", "fast_path", "granting", "python_path_after",
           "register_fields", "register_node", "set_runtime_checks", "set_tracing",
           "set_mesh_context",
           "set_x64_state", "addressable", "execute", "launch", "launch_and_split", "ROOM",
           "recursion_reserve", "ffi_include_dir", "ffi_targets",
           "register_batch_partitionable", "register_custom_call_partitioner",
           "register_ffi_target", "register_ffi_type"]
