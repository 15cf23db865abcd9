"""``jax._src.monitoring``: JAX's private monitoring module, whose listener getters
(``get_event_listeners``, ``get_event_duration_listeners`` ...) programs and JAX's own
tests read besides the public ``jax.monitoring`` names; all are spmdc's registry's
(spmdc/runtime/monitoring.py)."""
from __future__ import annotations

from ..runtime.monitoring import (
    clear_event_listeners,
    get_event_duration_listeners,
    get_event_listeners,
    get_event_time_span_listeners,
    get_scalar_listeners,
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

__all__ = ["clear_event_listeners", "get_event_duration_listeners", "get_event_listeners",
           "get_event_time_span_listeners", "get_scalar_listeners", "record_event",
           "record_event_duration_secs", "record_event_time_span", "record_scalar",
           "register_event_duration_secs_listener", "register_event_listener",
           "register_event_time_span_listener", "register_scalar_listener",
           "unregister_event_duration_listener", "unregister_event_listener",
           "unregister_event_time_span_listener", "unregister_scalar_listener"]
