"""How traced values print (spmdc/core/tracer_text.py, Note [tracer text]): each case's
text was recorded from JAX 0.10.2 running the same function."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax


def _seen(run):
    """What the function ``run`` passes to ``show`` prints, as repr, str and f-string."""
    texts: list[str] = []

    def show(*xs):
        texts.extend(f"{repr(x)} | {x} | {x!s}" if not isinstance(x, str) else x for x in xs)

    run(show)
    return texts


def _both(text: str) -> str:
    return f"{text} | {text} | {text}"


def test_jit_tracers():
    def run(show):
        spmdc.jit(lambda x, y: show(x, y) or x)(jnp.ones((3, 4)), 2.0)
        spmdc.jit(lambda x: show(x) or x)(jnp.ones((2,), jnp.bfloat16))
        spmdc.jit(lambda x: show(x) or x)(np.int32(1))
        spmdc.jit(lambda x: show(x) or x)(1)
        spmdc.make_jaxpr(lambda x: show(x > 0, x.astype(jnp.int8)) or x)(jnp.ones(2))
        spmdc.eval_shape(lambda x: show(x) or x, jnp.ones(3))
        spmdc.jit(lambda x: lax.scan(lambda c, a: (show(c, a) or c, a), x,
                                     jnp.ones((3, 2))))(1.0)
        spmdc.jit(lambda x: show(f"{x} {x!r}") or x)(jnp.ones(2, jnp.int32))
    assert _seen(run) == [_both(t) for t in [
        "JitTracer(float32[3,4])", "JitTracer(~float32[])", "JitTracer(bfloat16[2])",
        "JitTracer(int32[])", "JitTracer(~int32[])", "JitTracer(bool[2])",
        "JitTracer(int8[2])", "JitTracer(float32[3])", "JitTracer(~float32[])",
        "JitTracer(float32[2])"]] + ["JitTracer(int32[2]) JitTracer(int32[2])"]


def test_vmap_tracers():
    def run(show):
        spmdc.vmap(lambda x: show(x, x * 2, x.sum(), x.T, x[0]) or x, in_axes=1)(
            jnp.ones((2, 3, 4)))
        spmdc.jit(spmdc.vmap(lambda x, y: show(x, y, y * 2) or x, in_axes=(0, None)))(
            jnp.ones((2, 3)), 1.0)
        spmdc.vmap(lambda k: show(k) or k)(spmdc.random.split(spmdc.random.key(1), 2))
    assert _seen(run) == [_both(t) for t in [
        "VmapTracer(aval=float32[2,4], batched=float32[2,3,4])",
        "VmapTracer(aval=float32[2,4], batched=float32[2,3,4])",
        "VmapTracer(aval=float32[], batched=float32[3])",
        "VmapTracer(aval=float32[4,2], batched=float32[3,4,2])",
        "VmapTracer(aval=float32[4], batched=float32[3,4])",
        "VmapTracer(aval=float32[3], batched=float32[2,3])",
        "JitTracer(~float32[])", "JitTracer(~float32[])",
        "VmapTracer(aval=key<fry>[], batched=key<fry>[2])"]]


def test_a_value_vmap_does_not_touch_prints_as_an_array():
    texts = _seen(lambda show: spmdc.vmap(lambda x: show(jnp.ones(2) * 2) or x)(jnp.ones(3)))
    assert texts == ["Array([2., 2.], dtype=float32) | [2. 2.] | [2. 2.]"]


def test_grad_tracers():
    def run(show):
        spmdc.grad(lambda x: show(x) or x)(1.0)
        spmdc.value_and_grad(lambda x, y: show(x, y, x * y) or (x * y).sum())(
            jnp.ones(2), jnp.arange(2.0))
        spmdc.vjp(lambda x: show(x, x * 2) or x, jnp.arange(3.0))
        spmdc.jit(spmdc.grad(lambda x, y: show(x, y, x * y) or x * y))(2.0, 3.0)
        spmdc.grad(spmdc.jit(lambda x: show(x) or x))(2.0)
        spmdc.linearize(lambda x: show(x) or x, jnp.ones(3))
    texts = _seen(run)
    assert texts == [
        _both("GradTracer(primal=1.0, typeof(tangent)=f32[])"),
        _both("GradTracer(primal=[1. 1.], typeof(tangent)=f32[2])"),
        "Array([0., 1.], dtype=float32) | [0. 1.] | [0. 1.]",
        _both("GradTracer(primal=[0. 1.], typeof(tangent)=f32[2])"),
        _both("GradTracer(primal=[0. 1. 2.], typeof(tangent)=f32[3])"),
        _both("GradTracer(primal=[0. 2. 4.], typeof(tangent)=f32[3])"),
        _both("GradTracer(primal=JitTracer(~float32[]), typeof(tangent)=f32[])"),
        _both("JitTracer(~float32[])"),
        _both("GradTracer(primal=JitTracer(~float32[]), typeof(tangent)=f32[])"),
        _both("JitTracer(~float32[])"),
        _both("GradTracer(primal=[1. 1. 1.], typeof(tangent)=f32[3])"),
    ]


@pytest.mark.parametrize("dtype, text", [
    (jnp.bool_, "bool[2]"), (jnp.uint8, "uint8[2]"), (jnp.complex64, "complex64[2]"),
    (jnp.float16, "float16[2]"), (jnp.int16, "int16[2]")])
def test_dtype_names(dtype, text):
    assert _seen(lambda show: spmdc.jit(lambda x: show(x) or x)(jnp.ones(2, dtype))) == [
        _both(f"JitTracer({text})")]


def test_jvp_tracers():
    # JAX 0.10.2's JVPTracer: the primal and the tangent, as values when known (eager), as
    # the enclosing trace's tracers otherwise.
    x = jnp.arange(3.0)

    def run(show):
        spmdc.jvp(lambda x: show(x) or x, (x,), (jnp.ones(3),))
        spmdc.jvp(lambda x: show(jnp.sin(x)) or x, (x,), (jnp.ones(3),))
        spmdc.jvp(lambda x: show(x) or x, (1.0,), (1.0,))
        spmdc.jit(lambda x: spmdc.jvp(lambda y: show(y) or y, (jnp.sin(x),), (x,)))(x)
        spmdc.jvp(spmdc.jit(lambda x: show(x) or x), (x,), (x,))
    assert _seen(run) == [_both(t) for t in [
        "JVPTracer(primal=[0. 1. 2.], tangent=[1. 1. 1.])",
        "JVPTracer(primal=[0.         0.84147096 0.9092974 ], "
        "tangent=[ 1.          0.5403023  -0.41614684])",
        "JVPTracer(primal=1.0, tangent=1.0)",
        "JVPTracer(primal=JitTracer(float32[3]), tangent=JitTracer(float32[3]))",
        "JitTracer(float32[3])"]]


def test_nested_transformations_show_the_enclosing_tracer():
    # Recorded from JAX 0.10.2: the innermost transformation's tracer, its primal (and
    # tangent) as the next one out holds it; an abstract trace (jit) starts afresh.
    batch = jnp.ones((2, 3))

    def run(show):
        def seen(x):
            show(x)
            return x
        spmdc.vmap(spmdc.grad(lambda x: seen(x).sum()))(batch)
        spmdc.vmap(lambda x: spmdc.jvp(seen, (x,), (x,)))(batch)
        spmdc.vmap(spmdc.grad(spmdc.jit(lambda x: seen(x).sum())))(batch)
        spmdc.grad(lambda x: spmdc.vmap(seen)(x).sum())(batch)
        spmdc.vmap(spmdc.vmap(seen))(batch)
        spmdc.jit(spmdc.grad(lambda x: seen(x).sum()))(jnp.ones(3))
    vmapped = "VmapTracer(aval=float32[3], batched=float32[2,3])"
    assert _seen(run) == [_both(t) for t in [
        f"GradTracer(primal={vmapped}, typeof(tangent)=f32[3])",
        f"JVPTracer(primal={vmapped}, tangent={vmapped})",
        "JitTracer(float32[3])", vmapped,
        "VmapTracer(aval=float32[], batched=float32[3])",
        "GradTracer(primal=JitTracer(float32[3]), typeof(tangent)=f32[3])"]]


def test_pmap_tracers_are_jit_tracers():
    # JAX 0.10.2's pmap traces its body abstractly: JitTracer of one device's value
    texts = _seen(lambda show: spmdc.pmap(lambda x: show(x) or x)(jnp.ones((2, 3))))
    assert texts == [_both("JitTracer(float32[3])")]
