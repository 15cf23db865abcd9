"""Programs whose printed output spmdc must reproduce exactly: each takes the library
(``spmdc`` or ``jax``) and prints with debug.print, debug.callback or from inside host
callbacks. `tools/record.py callbacks` runs them on JAX and stores the lines in
tests/data/callbacks_reference.json; tests/test_callbacks.py runs them on spmdc.
Programs named ``*_any_order`` print from several devices at once: their lines are
compared as sorted lists."""
from __future__ import annotations

import numpy as np


def jit_formats(jax):
    jnp = jax.numpy

    @jax.jit
    def f(x, n):
        jax.debug.print("x = {}", x)
        jax.debug.print("{a:.3f} {b} {c!r}", a=jnp.sin(x)[1], b=n, c=x[0])
        jax.debug.print("tree {}", {"k": x[:2], "i": n})
        return x
    f(jnp.arange(3.0), 2)
    f(jnp.arange(3.0) + 1, 5)


def dtypes(jax):
    jnp = jax.numpy
    jax.jit(lambda a, b, c, d: jax.debug.print("{} {} {} {}", a, b, c, d))(
        jnp.arange(3, dtype=jnp.int32), jnp.array([True, False]),
        jnp.array([1.5, -2.0], dtype=jnp.bfloat16), jnp.array([1 + 2j], dtype=jnp.complex64))
    jax.debug.print("eager {} {}", 1.5, jnp.arange(2))


def vmap_each_element(jax):
    jnp = jax.numpy

    def f(x, s):
        jax.debug.print("x={} s={}", x, s)
        return x * s
    jax.vmap(f, in_axes=(1, None))(jnp.arange(6.0).reshape(3, 2), 2.0)
    jax.vmap(jax.vmap(lambda x: jax.debug.print("inner {}", x)))(jnp.arange(4).reshape(2, 2))


def pmap_any_order(jax):
    jnp = jax.numpy
    jax.pmap(lambda x: jax.debug.print("dev {}", x))(jnp.arange(4.0))
    jax.pmap(lambda x: jax.debug.print("sum {}", jax.lax.psum(x, "i")), axis_name="i")(
        jnp.arange(2.0))


def control_flow(jax):
    jnp, lax = jax.numpy, jax.lax

    def body(c, x):
        jax.debug.print("scan c={} x={}", c, x)
        return c + x, c
    jax.jit(lambda xs: lax.scan(body, 0.0, xs))(jnp.arange(3.0))
    jax.jit(lambda c: lax.while_loop(lambda c: c < 2, lambda c: (
        jax.debug.print("while {}", c), c + 1)[1], c))(0)
    jax.jit(lambda p, x: lax.cond(p, lambda x: (jax.debug.print("true {}", x), x)[1],
                                  lambda x: (jax.debug.print("false {}", x), -x)[1], x))(
        False, 2.0)
    jax.jit(lambda x: lax.fori_loop(0, 2, lambda i, c: (
        jax.debug.print("fori {} {}", i, c, ordered=True), c * 2)[1], x))(1.0)


def under_grad(jax):
    jnp, lax = jax.numpy, jax.lax

    def body(c, x):
        jax.debug.print("step c={}", c)
        return c * x, c
    print(jax.grad(lambda x: lax.scan(body, x, jnp.arange(1.0, 4.0))[0])(2.0))
    print(jax.grad(lambda x: lax.fori_loop(0, 2, lambda i, c: (
        jax.debug.print("fori {}", c), c * 2)[1], x))(1.0))
    print(jax.jit(jax.grad(lambda x: lax.cond(x > 0, lambda x: (
        jax.debug.print("pos {}", x), x * x)[1], lambda x: x, x)))(3.0))

    @jax.custom_jvp
    def f(x):
        jax.debug.print("custom {}", x)
        return jnp.sin(x)
    f.defjvp(lambda p, t: (f(p[0]), jnp.cos(p[0]) * t[0]))
    print(jax.grad(f)(1.0))
    print([float(v) for v in jax.jvp(lambda x: (jax.debug.print("jvp {}", x), x * 3)[1],
                                     (2.0,), (1.0,))])
    print(jax.vmap(jax.grad(lambda x: (jax.debug.print("v {}", x), x * x)[1]))(
        jnp.arange(2.0)))


def pure_callback_methods(jax):
    jnp = jax.numpy

    for method in ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                   "legacy_vectorized"]:
        def cb(x, y):
            print(method, x.shape, y.shape, x.dtype)
            return (np.asarray(x) + np.asarray(y)).astype(np.float32)

        def f(x, y):
            return jax.pure_callback(cb, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y,
                                     vmap_method=method)
        print(jax.jit(jax.vmap(f, in_axes=(1, None)))(
            jnp.arange(6.0).reshape(3, 2), jnp.arange(3.0)))


def io_callbacks(jax):
    jnp = jax.numpy
    io_callback = jax.experimental.io_callback

    def record(x):
        print("io", x)
        return np.int32(x * 2)
    spec = jax.ShapeDtypeStruct((), jnp.int32)

    @jax.jit
    def f(x):
        a = io_callback(record, spec, x, ordered=True)
        b = io_callback(record, spec, x + 1, ordered=True)
        io_callback(record, spec, x + 2, ordered=True)
        return a + b
    print(f(3))
    print(jax.vmap(lambda x: io_callback(record, spec, x))(jnp.arange(3)))


PROGRAMS = [jit_formats, dtypes, vmap_each_element, pmap_any_order, control_flow,
            under_grad, pure_callback_methods, io_callbacks]
