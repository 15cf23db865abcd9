"""Host callbacks: debug.print / debug.callback, pure_callback (each vmap_method),
io_callback (ordered), under jit, vmap, pmap, grad and control flow. The printed lines
are those JAX 0.10.2 prints for the same programs (checked side by side when this was
written); pmap lines come from the devices' threads in any order, so they are compared
as sets."""
from __future__ import annotations

import numpy as np
import oracle
import pytest
from callback_programs import PROGRAMS

import spmdc as jax
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.compiler.passes.cleanup import cleanup


def lines(capfd) -> list[str]:
    return capfd.readouterr().out.splitlines()


# --- debug.print --------------------------------------------------------------------------

def test_debug_print_inside_jit_formats_at_run_time(capfd):
    @jax.jit
    def f(x):
        jax.debug.print("x = {}", x)
        y = jnp.sin(x)
        jax.debug.print("y = {y:.3f} and {n}", y=y[1], n=7)
        return y * 2
    out = f(jnp.arange(3.0))
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(np.arange(3.0)), rtol=1e-6)
    assert lines(capfd) == ["x = [0. 1. 2.]", "y = 0.841 and 7"]
    f(jnp.arange(3.0) + 1)                          # every call prints, cached or not
    assert lines(capfd) == ["x = [1. 2. 3.]", "y = 0.909 and 7"]


def test_debug_print_outside_transformations_prints_now(capfd):
    jax.debug.print("now {} {}", 1.5, jnp.arange(2))
    jax.debug.print("no placeholders")
    assert lines(capfd) == ["now 1.5 [0 1]", "no placeholders"]


def test_debug_print_under_vmap_prints_each_batch_element(capfd):
    def f(x, s):
        jax.debug.print("x={} s={}", x, s)
        return x * s
    out = jax.vmap(f, in_axes=(1, None))(jnp.arange(6.0).reshape(3, 2), 2.0)
    np.testing.assert_allclose(np.asarray(out), 2 * np.arange(6.0).reshape(3, 2).T)
    assert lines(capfd) == ["x=[0. 2. 4.] s=2.0", "x=[1. 3. 5.] s=2.0"]


@pytest.mark.devices(4)
def test_debug_print_under_pmap_prints_once_per_device_with_its_values(capfd):
    out = jax.pmap(lambda x: (jax.debug.print("dev {}", x), x + 1)[1])(jnp.arange(4.0))
    np.testing.assert_allclose(np.asarray(out), np.arange(4.0) + 1)
    assert sorted(lines(capfd)) == ["dev 0.0", "dev 1.0", "dev 2.0", "dev 3.0"]


def test_debug_print_in_scan_while_cond_and_unused_loops(capfd):
    def body(c, x):
        jax.debug.print("scan c={} x={}", c, x)
        return c + x, c
    jax.jit(lambda xs: lax.scan(body, 0.0, xs))(jnp.arange(3.0))
    assert lines(capfd) == ["scan c=0.0 x=0.0", "scan c=0.0 x=1.0", "scan c=1.0 x=2.0"]

    def wbody(c):
        jax.debug.print("while {}", c)
        return c + 1
    assert int(jax.jit(lambda c: lax.while_loop(lambda c: c < 2, wbody, c))(0)) == 2
    assert lines(capfd) == ["while 0", "while 1"]

    branch = jax.jit(lambda p, x: lax.cond(
        p, lambda x: (jax.debug.print("true {}", x), x)[1],
        lambda x: (jax.debug.print("false {}", x), -x)[1], x))
    assert float(branch(False, 2.0)) == -2.0
    assert lines(capfd) == ["false 2.0"]

    @jax.jit
    def unused(x):          # the loop's result is dead; its prints are not
        lax.fori_loop(0, 2, lambda i, c: (jax.debug.print("fori {}", i), c)[1], x)
        return x * 2
    assert float(unused(1.0)) == 2.0
    assert lines(capfd) == ["fori 0", "fori 1"]


def test_ordered_prints_keep_program_order_around_a_loop(capfd):
    @jax.jit
    def h(x):
        jax.debug.print("A {}", x, ordered=True)
        y = lax.fori_loop(0, 2, lambda i, c: (jax.debug.print("loop {}", i, ordered=True),
                                              c + 1.0)[1], x)
        jax.debug.print("B {}", y, ordered=True)
        return y
    assert float(h(1.0)) == 3.0
    assert lines(capfd) == ["A 1.0", "loop 0", "loop 1", "B 3.0"]
    assert "stablehlo.token" in h.lower(1.0).as_text()


def test_identical_prints_are_neither_dropped_nor_merged(capfd):
    @jax.jit
    def f(x):
        for _ in range(3):
            jax.debug.print("same {}", x)
        return x
    f(1)
    assert lines(capfd) == ["same 1"] * 3
    ir = jax.make_ir(f)(1)
    assert len(cleanup(ir).eqns) == 3


def test_debug_print_under_grad_prints_the_primal(capfd):
    g = jax.grad(lambda x: (jax.debug.print("primal {}", x), x ** 2)[1])(3.0)
    assert float(g) == 6.0
    assert lines(capfd) == ["primal 3.0"]
    t = jax.jvp(lambda x: (jax.debug.print("jvp {}", x), x * 3)[1], (2.0,), (1.0,))
    assert float(t[1]) == 3.0
    assert lines(capfd) == ["jvp 2.0"]


def test_debug_print_format_errors_at_trace_time():
    with pytest.raises(ValueError, match="f-string"):
        jax.jit(lambda x: jax.debug.print("x", y=x))(1.0)
    with pytest.raises(ValueError, match="Unused positional"):
        jax.debug.print("{}", 1, 2)


def test_debug_callback_gets_each_calls_values_as_arrays_it_may_keep():
    seen = []
    @jax.jit
    def f(x):
        jax.debug.callback(lambda a, tag: seen.append((tag, a)), x * 2, tag="t", ordered=True)
        jax.debug.callback(ordered=True)(lambda a: seen.append(("o", a)), x)
        return x
    f(jnp.arange(3.0))
    f(jnp.ones(3))
    assert [t for t, _ in seen] == ["t", "o", "t", "o"]
    np.testing.assert_array_equal(seen[0][1], [0.0, 2.0, 4.0])     # copies, still valid
    np.testing.assert_array_equal(seen[2][1], [2.0, 2.0, 2.0])
    with pytest.raises(TypeError, match="must be callable"):
        jax.debug.callback(3)


# --- pure_callback ------------------------------------------------------------------------

def _sin_cb(x):
    return np.sin(x)


def test_pure_callback_under_jit_and_outside():
    spec = jax.ShapeDtypeStruct((3,), jnp.float32)
    out = jax.jit(lambda x: jax.pure_callback(_sin_cb, spec, x) * 2)(jnp.arange(3.0))
    np.testing.assert_allclose(np.asarray(out), 2 * np.sin(np.arange(3.0)), rtol=1e-6)
    eager = jax.pure_callback(_sin_cb, spec, np.arange(3.0, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(eager), np.sin(np.arange(3.0)), rtol=1e-6)


def test_pure_callback_pytrees_and_float64_results_canonicalised():
    spec = {"s": jax.ShapeDtypeStruct((), jnp.float32),
            "n": jax.ShapeDtypeStruct((2,), jnp.int32)}
    out = jax.jit(lambda x: jax.pure_callback(
        lambda v: {"s": np.sum(v, dtype=np.float64), "n": np.array([1, 2])}, spec, x))(
        jnp.ones(4))
    assert float(out["s"]) == 4.0 and out["n"].dtype == np.int32


def test_pure_callback_unused_is_dropped():
    calls = []
    f = jax.jit(lambda x: (jax.pure_callback(lambda v: calls.append(1) or v,
                                             jax.ShapeDtypeStruct((), jnp.float32), x), x)[1])
    assert float(f(2.0)) == 2.0 and calls == []


@pytest.mark.parametrize("method,shapes,calls", [
    ("sequential", ((3,), (3,)), 4),
    ("sequential_unrolled", ((3,), (3,)), 4),
    ("expand_dims", ((4, 3), (1, 3)), 1),
    ("broadcast_all", ((4, 3), (4, 3)), 1),
    ("legacy_vectorized", ((4, 3), (3,)), 1),
])
def test_pure_callback_vmap_methods(method, shapes, calls):
    seen = []

    def cb(x, y):
        seen.append((x.shape, y.shape))
        return (x + y).astype(np.float32)

    def f(x, y):
        return jax.pure_callback(cb, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y,
                                 vmap_method=method)
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)      # mapped along axis 1
    y = np.arange(3.0, dtype=np.float32)
    out = jax.jit(jax.vmap(f, in_axes=(1, None)))(x, y)
    np.testing.assert_allclose(np.asarray(out), x.T + y)
    assert seen == [shapes] * calls
    program = str(jax.make_jaxpr(jax.vmap(f, in_axes=(1, None)))(x, y))
    assert program.count("= pure_callback[") == (4 if method == "sequential_unrolled" else 1)
    assert ("= scan[" in program) == (method == "sequential")   # a loop, as lax.map


def test_pure_callback_vmap_without_method_and_bad_method():
    f = lambda x: jax.pure_callback(_sin_cb, jax.ShapeDtypeStruct((), jnp.float32), x)  # noqa: E731
    with pytest.raises(NotImplementedError, match="vmap_method"):
        jax.vmap(f)(jnp.ones(3))
    with pytest.raises(ValueError, match="vmap_method must be one of"):
        jax.pure_callback(_sin_cb, jax.ShapeDtypeStruct((), jnp.float32), 1.0,
                          vmap_method="loop")


def test_pure_callback_has_no_derivative():
    f = lambda x: jax.pure_callback(_sin_cb, jax.ShapeDtypeStruct((), jnp.float32), x)  # noqa: E731
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP.*custom_jvp"):
        jax.grad(f)(1.0)
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        jax.jvp(f, (1.0,), (1.0,))

    def unused(x):      # as JAX: an error even when the result does not reach the output
        jax.debug.print("y {}", f(x))
        return x * x
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        jax.grad(unused)(1.0)
    assert float(jax.grad(lambda x: x * f(2.0))(1.0)) == pytest.approx(np.sin(2.0))


def test_an_exception_in_a_callback_run_eagerly_is_a_runtime_error():
    # JAX runs a pure or io callback in a compiled program even outside jit, so what the
    # function raises comes out as a JaxRuntimeError (Equinox's filter_pure_callback
    # tests expect a RuntimeError); debug.callback's exception passes unchanged
    def boom(*_):
        raise ValueError("boom")
    spec = jax.ShapeDtypeStruct((), jnp.float32)
    for call in (jax.pure_callback, jax.experimental.io_callback):
        with pytest.raises(jax.errors.JaxRuntimeError, match="raised ValueError: boom") as e:
            call(boom, spec, jnp.float32(1))
        assert isinstance(e.value, RuntimeError) and isinstance(e.value.__cause__, ValueError)
        with pytest.raises(jax.errors.JaxRuntimeError):
            jax.jit(lambda x, call=call: call(boom, spec, x))(jnp.float32(1))
    with pytest.raises(ValueError, match="boom"):
        jax.debug.callback(boom, jnp.float32(1))


def test_pure_callback_wrong_result_is_a_clear_error():
    with pytest.raises(Exception, match="result 0 has shape"):
        out = jax.jit(lambda x: jax.pure_callback(
            lambda v: np.zeros(2, np.float32), jax.ShapeDtypeStruct((3,), jnp.float32), x))(
            jnp.ones(3))
        np.asarray(out)
    with pytest.raises(ValueError, match="64-bit"):
        jax.pure_callback(_sin_cb, np.zeros((), np.float64), 1.0)   # a spec with .shape, .dtype


# --- io_callback ----------------------------------------------------------------------------

def test_io_callback_ordered_runs_in_order_and_is_kept():
    log = []

    def record(x):
        log.append(int(x))
        return np.int32(x * 2)
    spec = jax.ShapeDtypeStruct((), jnp.int32)

    @jax.jit
    def f(x):
        a = jax.experimental.io_callback(record, spec, x, ordered=True)
        b = jax.experimental.io_callback(record, spec, x + 1, ordered=True)
        jax.experimental.io_callback(record, spec, x + 2, ordered=True)    # unused: kept
        return a + b
    assert int(f(3)) == 6 + 8
    assert log == [3, 4, 5]


def test_io_callback_under_vmap_and_grad():
    log = []
    spec = jax.ShapeDtypeStruct((), jnp.float32)
    out = jax.vmap(lambda x: jax.experimental.io_callback(
        lambda v: log.append(float(v)) or v * 2, spec, x))(jnp.arange(3.0))
    np.testing.assert_allclose(np.asarray(out), [0.0, 2.0, 4.0])
    assert log == [0.0, 1.0, 2.0]
    ordered = lambda x: jax.experimental.io_callback(lambda v: v, spec, x, ordered=True)  # noqa: E731
    with pytest.raises(ValueError, match="ordered io_callback"):
        jax.vmap(ordered)(jnp.arange(3.0))
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        jax.grad(ordered)(1.0)


def test_the_numpy_reference_runs_callbacks_too(capfd):
    from spmdc.compiler.interpreter import evaluate
    seen = []

    def f(x):
        jax.debug.print("unused {}", x)       # kept by the reference as well
        return jax.pure_callback(lambda v: seen.append(v.dtype) or np.cos(v),
                                 jax.ShapeDtypeStruct((2,), jnp.float32), x)
    func = jax.make_ir(f)(np.zeros(2, np.float32))
    out, = evaluate(func, np.array([0.0, 1.0]), real=True)      # float64 values
    np.testing.assert_allclose(out, np.cos([0.0, 1.0]))
    assert len(seen) == 1
    assert lines(capfd) == ["unused [0. 1.]"]


def test_effects_run_once_under_grad_of_control_flow_and_custom_rules(capfd):
    # The backward sweep's recomputations (scan and cond VJPs, custom rules) do not print
    # again: JAX prints the primal values once.
    def body(c, x):
        jax.debug.print("step c={}", c)
        return c * x, c
    assert float(jax.grad(lambda x: lax.scan(body, x, jnp.arange(1.0, 4.0))[0])(2.0)) == 6.0
    assert lines(capfd) == ["step c=2.0", "step c=2.0", "step c=4.0"]

    loop = lambda x: lax.fori_loop(0, 2, lambda i, c: (jax.debug.print("fori {}", c),  # noqa: E731
                                                       c * 2)[1], x)
    assert float(jax.grad(loop)(1.0)) == 4.0
    assert lines(capfd) == ["fori 1.0", "fori 2.0"]

    branch = lambda x: lax.cond(x > 0, lambda x: (jax.debug.print("pos {}", x), x * x)[1],  # noqa: E731
                                lambda x: x, x)
    assert float(jax.jit(jax.grad(branch))(3.0)) == 6.0
    assert lines(capfd) == ["pos 3.0"]

    @jax.custom_jvp
    def cj(x):
        jax.debug.print("cj {}", x)
        return jnp.sin(x)
    cj.defjvp(lambda p, t: (cj(p[0]), jnp.cos(p[0]) * t[0]))
    assert float(jax.grad(cj)(1.0)) == pytest.approx(np.cos(1.0))
    assert lines(capfd) == ["cj 1.0"]


def test_debug_print_and_array_ops_under_disable_jit(capfd):
    # Regression: any eager op inside disable_jit() recursed until RecursionError.
    with jax.disable_jit():
        out = jax.jit(lambda x: (jax.debug.print("nojit {}", x), jnp.sin(x) + 1)[1])(
            jnp.ones(2))
    np.testing.assert_allclose(np.asarray(out), np.sin(1.0) + 1, rtol=1e-6)
    assert lines(capfd) == ["nojit [1. 1.]"]


def test_an_effect_without_outputs_prints_and_parses():
    from spmdc.compiler.ir import parse
    text = str(jax.make_ir(lambda x: (jax.debug.print("v={}", x), x + 1)[1])(1.0))
    line = next(ln for ln in text.splitlines() if "io_callback" in ln)
    assert line.lstrip().startswith("io_callback(%0)") and "kind='debug'" in line
    assert str(parse(text)) == text


# --- against JAX's recorded output ------------------------------------------------------------

_REFERENCE = oracle.recorded("callbacks_reference.json")["programs"]


@pytest.mark.parametrize("program", [
    pytest.param(p, marks=pytest.mark.devices(4)) if p.__name__.startswith("pmap") else p
    for p in PROGRAMS], ids=lambda p: p.__name__)
def test_prints_what_jax_prints(program, capfd):
    program(jax)
    got, want = lines(capfd), _REFERENCE[program.__name__]
    if program.__name__.endswith("_any_order"):
        got, want = sorted(got), sorted(want)
    assert got == want


@pytest.mark.devices(4)
def test_a_launch_with_effects_returns_after_they_ran():
    # pmap replicas run on their own threads; a program whose effects have no outputs
    # used to return before they had run.
    import time
    seen = []

    def slow(x):
        time.sleep(0.05)
        seen.append(float(x))
    jax.pmap(lambda x: jax.debug.callback(slow, x))(jnp.arange(4.0))
    assert sorted(seen) == [0.0, 1.0, 2.0, 3.0]
    jax.effects_barrier()


@pytest.mark.devices(4)
def test_callbacks_in_partitioned_programs_and_shard_map(capfd):
    # jit over a sharded array: the callback runs once with the whole value (JAX's
    # maximal sharding); inside shard_map: once per device with its block.
    from spmdc.sharding import NamedSharding
    from spmdc.sharding import PartitionSpec as P
    mesh = jax.make_mesh((4,), ("x",))
    x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
    out = jax.jit(lambda x: (jax.debug.print("x={}", x), jax.pure_callback(
        lambda v: np.asarray(v) + 1, jax.ShapeDtypeStruct((8,), jnp.float32), x) * 2)[1])(x)
    np.testing.assert_allclose(np.asarray(out), (np.arange(8.0) + 1) * 2)
    assert lines(capfd) == ["x=[0. 1. 2. 3. 4. 5. 6. 7.]"]

    def body(b):
        jax.debug.print("block {}", b)
        return b * 2
    sm = jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    np.testing.assert_allclose(np.asarray(jax.jit(sm)(x)), np.arange(8.0) * 2)
    assert sorted(lines(capfd)) == ["block [0. 1.]", "block [2. 3.]", "block [4. 5.]",
                                    "block [6. 7.]"]
