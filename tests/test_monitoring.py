"""spmdc.monitoring (jax.monitoring): listeners of each kind hear what is recorded, in
order, with metadata; unregistering and clearing act as JAX's; and spmdc's compile path
reports JAX's own event names (Note [JAX's compile events] in spmdc/runtime/monitoring.py).
"""
from __future__ import annotations

import time

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import monitoring
from spmdc.runtime import cache


@pytest.fixture
def heard():
    """Register one listener of each kind; yield what they heard; unregister them."""
    log: list[tuple] = []
    listeners = {
        "event": lambda e, **kw: log.append(("event", e, kw)),
        "duration": lambda e, d, **kw: log.append(("duration", e, d, kw)),
        "span": lambda e, s, t, **kw: log.append(("span", e, s, t, kw)),
        "scalar": lambda e, v, **kw: log.append(("scalar", e, v, kw)),
    }
    monitoring.register_event_listener(listeners["event"])
    monitoring.register_event_duration_secs_listener(listeners["duration"])
    monitoring.register_event_time_span_listener(listeners["span"])
    monitoring.register_scalar_listener(listeners["scalar"])
    yield log
    monitoring.unregister_event_listener(listeners["event"])
    monitoring.unregister_event_duration_listener(listeners["duration"])
    monitoring.unregister_event_time_span_listener(listeners["span"])
    monitoring.unregister_scalar_listener(listeners["scalar"])


def test_each_kind_reaches_its_listeners_with_metadata(heard):
    monitoring.record_event("/app/start", user="ada", attempt=2)
    monitoring.record_event_duration_secs("/app/step", 0.25, step=7)
    monitoring.record_event_time_span("/app/span", 10.0, 12.5)
    monitoring.record_scalar("/app/loss", 0.125, step=7)
    assert heard == [("event", "/app/start", {"user": "ada", "attempt": 2}),
                     ("duration", "/app/step", 0.25, {"step": 7}),
                     ("span", "/app/span", 10.0, 12.5, {}),
                     ("scalar", "/app/loss", 0.125, {"step": 7})]


def test_listeners_run_in_registration_order_and_unregister():
    order: list[str] = []
    first, second = (lambda e, **kw: order.append("first")), \
        (lambda e, **kw: order.append("second"))
    monitoring.register_event_listener(first)
    monitoring.register_event_listener(second)
    monitoring.record_event("/x")
    monitoring.unregister_event_listener(first)
    monitoring.record_event("/x")
    monitoring.unregister_event_listener(second)
    monitoring.record_event("/x")
    assert order == ["first", "second", "second"]
    with pytest.raises(AssertionError, match="not a registered listener"):
        monitoring.unregister_event_listener(first)
    with pytest.raises(TypeError, match="must be callable"):
        monitoring.register_scalar_listener("not a function")


def test_clear_keeps_the_scalar_listeners_as_jax_does():
    # JAX 0.10.2's clear_event_listeners empties the event, duration and time-span
    # lists but not the scalar one.
    got: list[str] = []
    monitoring.register_event_listener(lambda e, **kw: got.append("event"))
    scalar = lambda e, v, **kw: got.append("scalar")   # noqa: E731
    monitoring.register_scalar_listener(scalar)
    monitoring.clear_event_listeners()
    monitoring.record_event("/x")
    monitoring.record_scalar("/x", 1)
    monitoring.unregister_scalar_listener(scalar)
    assert got == ["scalar"]


def test_jit_reports_tracing_lowering_and_compiling(heard):
    def my_kernel(x):
        return jnp.sin(x) * 3.0 + 0.5

    before = time.time()
    out = spmdc.jit(my_kernel)(np.arange(5, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(5)) * 3 + 0.5, rtol=1e-6)
    stages = ["/jax/core/compile/jaxpr_trace_duration",
              "/jax/core/compile/jaxpr_to_mlir_module_duration",
              "/jax/core/compile/backend_compile_duration"]
    # the names JAX 0.10.2 gives (recorded): the function's, then its module's
    names = ["my_kernel", "jit(my_kernel)", "jit(my_kernel)"]
    durations = [r for r in heard if r[0] == "duration" and r[1] in stages]
    assert [r[1] for r in durations] == stages
    assert [r[3] for r in durations] == [{"fun_name": n} for n in names]
    assert all(0 <= r[2] < 60 for r in durations)
    spans = [r for r in heard if r[0] == "span" and r[1] in stages]
    starts = [r for r in heard if r[0] == "scalar" and r[1] in stages]
    assert [r[1] for r in spans] == [r[1] for r in starts] == stages
    for (_, _, start, end, _), (_, _, value, _) in zip(spans, starts, strict=True):
        assert before <= start == value <= end
    heard.clear()
    spmdc.jit(my_kernel)(np.arange(5, dtype=np.float32))     # cached: nothing compiles
    assert not [r for r in heard if r[1] in stages]


def test_only_the_outermost_trace_is_reported(heard):
    def inner_fn(x):
        return x * 2.0 + 1.0

    def outer_fn(x):
        return spmdc.jit(inner_fn)(x) - 3.0

    np.testing.assert_allclose(np.asarray(spmdc.jit(outer_fn)(np.ones(3, np.float32))),
                               np.zeros(3))
    traces = [r[3]["fun_name"] for r in heard
              if r[0] == "duration" and r[1] == "/jax/core/compile/jaxpr_trace_duration"]
    assert traces == ["outer_fn"]                 # JAX 0.10.2 reports the same


def test_the_persistent_cache_reports_requests_hits_and_misses(heard, tmp_path):
    cache.set_directory(str(tmp_path))
    try:
        def cached_program(x):
            return jnp.cos(x) - 0.75

        x = np.arange(3, dtype=np.float32)
        spmdc.jit(cached_program)(x)
        first = [r[1] for r in heard if r[0] == "event"]
        heard.clear()
        spmdc.clear_caches()
        np.testing.assert_allclose(np.asarray(spmdc.jit(cached_program)(x)),
                                   np.cos(x) - 0.75, rtol=1e-6)
        second = [r[1] for r in heard if r[0] == "event"]
        retrieval = [r for r in heard if r[0] == "duration"
                     and r[1] == "/jax/compilation_cache/cache_retrieval_time_sec"]
    finally:
        cache.set_directory(None)
    assert first[-2:] == ["/jax/compilation_cache/compile_requests_use_cache",
                          "/jax/compilation_cache/cache_misses"]
    assert second == ["/jax/compilation_cache/compile_requests_use_cache",
                      "/jax/compilation_cache/cache_hits"]
    assert len(retrieval) == 1 and 0 <= retrieval[0][2] < 60


def test_jax_src_monitoring_gives_copies_of_the_listeners():
    from spmdc._src import monitoring as src_monitoring
    listener = lambda e, d, **kw: None           # noqa: E731
    before = src_monitoring.get_event_duration_listeners()
    monitoring.register_event_duration_secs_listener(listener)
    after = src_monitoring.get_event_duration_listeners()
    after.append(print)                          # a copy: the registry is unchanged
    assert listener not in before and listener in after
    assert print not in src_monitoring.get_event_duration_listeners()
    src_monitoring.unregister_event_duration_listener(listener)
    assert src_monitoring.get_event_duration_listeners() == before
