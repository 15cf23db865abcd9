"""``jax._src.profiler``: JAX's private profiler module, which holds besides the public
``jax.profiler`` names ``stop_and_get_fdo_profile`` (JAX's own profiler tests call it);
all are spmdc.profiler's."""
from __future__ import annotations

from ..profiler import (
    ProfileData,
    ProfileEvent,
    ProfileOptions,
    ProfilePlane,
    StepTraceAnnotation,
    TraceAnnotation,
    annotate_function,
    device_memory_profile,
    register_subprocess,
    save_device_memory_profile,
    start_server,
    start_trace,
    stop_and_get_fdo_profile,
    stop_server,
    stop_trace,
    trace,
)

__all__ = ["ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane",
           "StepTraceAnnotation", "TraceAnnotation", "annotate_function",
           "device_memory_profile", "register_subprocess", "save_device_memory_profile",
           "start_server", "start_trace", "stop_and_get_fdo_profile", "stop_server",
           "stop_trace", "trace"]
