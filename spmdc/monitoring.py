"""spmdc.monitoring (``jax.monitoring``): named events, durations, time spans and scalars,
and the listeners that receive them.

The registry is the runtime's (spmdc/runtime/monitoring.py), where spmdc's compile path
reports JAX's own event names at the same moments (Note [JAX's compile events]), so a
listener that counts JAX's compilations counts spmdc's.
"""
from __future__ import annotations

from .runtime.monitoring import (
    clear_event_listeners,
    record_event,
    record_event_duration_secs,
    record_event_time_span,
    record_scalar,
    register_event_duration_secs_listener,
    register_event_listener,
    register_event_time_span_listener,
    register_scalar_listener,
    unregister_event_duration_listener,
    unregister_event_listener,
    unregister_event_time_span_listener,
    unregister_scalar_listener,
)

__all__ = ["clear_event_listeners", "record_event", "record_event_duration_secs",
           "record_event_time_span", "record_scalar",
           "register_event_duration_secs_listener", "register_event_listener",
           "register_event_time_span_listener", "register_scalar_listener",
           "unregister_event_duration_listener", "unregister_event_listener",
           "unregister_event_time_span_listener", "unregister_scalar_listener"]
