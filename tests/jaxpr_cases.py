"""Programs whose jaxpr spmdc must print as JAX 0.10.2 prints it: each case takes the
library (``spmdc`` or ``jax``) and returns ``(f, args, make_jaxpr keyword arguments)``.
`tools/record.py jaxprs` prints them with JAX into tests/data/jaxprs_reference.json, with
the values ``f`` returns; tests/transforms/test_jaxpr_view.py prints them with spmdc and
runs the jaxprs with ``jaxpr_as_fun``."""
from __future__ import annotations

import numpy as np

X3 = np.array([0.5, -1.0, 2.0], np.float32)
M23 = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
M34 = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
CONST = np.array([1.0, 2.0, 3.0], np.float32)


def sin(jax):
    return jax.numpy.sin, (X3,), {}


def add(jax):
    return (lambda x, y: x + y), (X3, X3), {}


def add_literal(jax):
    return (lambda x: x + 1.0), (X3,), {}


def weak_scalar(jax):
    return (lambda x: x * 2), (1.5,), {}


def dot(jax):
    return jax.numpy.dot, (M23, M34), {}


def jit_nested(jax):
    return (lambda x: jax.jit(jax.numpy.sin)(x) + 1), (X3,), {}


def cond(jax):
    return (lambda p, x: jax.lax.cond(p, jax.numpy.sin, jax.numpy.cos, x)), (True, X3), {}


def switch(jax):
    jnp = jax.numpy
    return (lambda i, x: jax.lax.switch(i, [jnp.sin, jnp.cos, jnp.tan], x)), (1, X3), {}


def scan(jax):
    def body(c, x):
        return c + x, c * x
    return (lambda c, xs: jax.lax.scan(body, c, xs)), (np.float32(0.5), X3), {}


def while_loop(jax):
    return (lambda x: jax.lax.while_loop(lambda c: c < 10, lambda c: c + 1, x)), (0,), {}


def reduce_sum(jax):
    return jax.numpy.sum, (M23,), {}


def reduce_max(jax):
    return (lambda x: jax.numpy.max(x, axis=1)), (M23,), {}


def argmax(jax):
    return (lambda x: jax.numpy.argmax(x, axis=1)), (M23,), {}


def broadcast(jax):
    return (lambda x: jax.numpy.broadcast_to(x, (2, 3))), (X3,), {}


def convert(jax):
    return (lambda x: x.astype(jax.numpy.int32)), (X3,), {}


def custom_jvp(jax):
    jnp = jax.numpy

    @jax.custom_jvp
    def g(x):
        return jnp.sin(x)

    def g_jvp(primals, tangents):
        return g(primals[0]), jnp.cos(primals[0]) * tangents[0]
    g.defjvp(g_jvp)
    return g, (X3,), {}


def captured_constant(jax):
    c = jax.numpy.asarray(CONST)
    return (lambda x: x * c + c), (X3,), {}


def several_outputs(jax):
    return (lambda x: (x, jax.numpy.sin(x), 2.0)), (X3,), {}


def many_lines(jax):
    jnp = jax.numpy
    return (lambda x: jnp.tanh(jnp.exp(jnp.sin(x)) * 3) - x), (X3,), {}


def iota(jax):
    return (lambda: jax.lax.iota(np.int32, 4)), (), {}


def select(jax):
    return (lambda x: jax.lax.select(x > 0, x, -x)), (X3,), {}


def transpose_reshape(jax):
    return (lambda x: x.T.reshape(2, 3)), (M23,), {}


def concatenate(jax):
    return (lambda x: jax.numpy.concatenate([x, x])), (M23,), {}


def cumsum_sort(jax):
    return (lambda x: jax.lax.sort(jax.lax.cumsum(x, 0))), (X3,), {}


def clamp(jax):
    return (lambda x: jax.lax.clamp(0.0, x, 1.0)), (X3,), {}


def integer_pow(jax):
    return (lambda x: x ** 3), (X3,), {}


def identity(jax):
    return (lambda x: x), (X3,), {}


def pad_rev(jax):
    return (lambda x: jax.lax.rev(jax.lax.pad(x, 0.0, [(1, 1, 0), (0, 0, 1)]), (0,))), \
        (M23,), {}


def psum(jax):
    return (lambda x: jax.lax.psum(x, "i")), (X3,), {"axis_env": [("i", 4)]}


def collectives(jax):
    lax = jax.lax

    def f(x):
        return (lax.psum_scatter(lax.all_gather(x, "i"), "i"),
                lax.ppermute(x, "i", [(0, 1), (1, 0)]),
                lax.all_to_all(x, "i", 0, 0) + lax.axis_index("i"))
    return f, (np.arange(4, dtype=np.float32),), {"axis_env": [("i", 4)]}


def long_branch(jax):
    def branch(x):
        for _ in range(11):
            x = jax.numpy.sin(x)
        return x
    return (lambda p, x: jax.lax.cond(p, branch, jax.numpy.cos, x)), (False, X3), {}


def fft(jax):
    return (lambda x: jax.lax.fft(x, jax.lax.FftType.IFFT, (3,))), \
        (X3.astype(np.complex64),), {}


# --- the programs of JAX's "Understanding jaxprs" page (docs/jaxpr.md) ---------------------

def docs_func1(jax):
    jnp = jax.numpy

    def func1(first, second):
        temp = first + jnp.sin(second) * 3.
        return jnp.sum(temp)
    return func1, (jnp.zeros(8), jnp.ones(8)), {}


def docs_func4(jax):
    jnp = jax.numpy

    def func4(arg):
        temp = arg[0] + jnp.sin(arg[1]) * 3.
        return jnp.sum(temp)
    return func4, ((jnp.zeros(8), jnp.ones(8)),), {}


def docs_one_of_three(jax):
    def one_of_three(index, arg):
        return jax.lax.switch(index, [lambda x: x + 1., lambda x: x - 2., lambda x: x + 3.],
                              arg)
    return one_of_three, (1, 5.), {}


def docs_func7(jax):
    def func7(arg):
        return jax.lax.cond(arg >= 0., lambda xtrue: xtrue + 3., lambda xfalse: xfalse - 3.,
                            arg)
    return func7, (5.,), {}


def docs_func8(jax):
    jnp = jax.numpy

    def func8(arg1, arg2):
        return jax.lax.cond(arg1 >= 0., lambda xtrue: xtrue[0],
                            lambda xfalse: jnp.array([1]) + xfalse[1], arg2)
    return func8, (5., (jnp.zeros(1), 2.)), {}


def docs_func10(jax):
    jnp = jax.numpy

    def func10(arg, n):
        ones = jnp.ones(arg.shape)
        return jax.lax.fori_loop(0, n, lambda i, carry: carry + ones * 3. + arg, arg + ones)
    return func10, (np.ones(16, np.float32), 5), {}


def docs_func11(jax):
    jnp = jax.numpy

    def func11(arr, extra):
        ones = jnp.ones(arr.shape)

        def body(carry, aelems):
            ae1, ae2 = aelems
            return (carry + ae1 * ae2 + extra, carry)
        return jax.lax.scan(body, 0., (arr, ones))
    return func11, (np.ones(16, np.float32), 5.), {}


def docs_func12(jax):
    jnp = jax.numpy

    def func12(arg):
        @jax.jit
        def inner(x):
            return x + arg * jnp.ones(1)
        return arg + inner(arg - 2.)
    return func12, (1.,), {}


CASES = [sin, add, add_literal, weak_scalar, dot, jit_nested, cond, switch, scan, while_loop,
         reduce_sum, reduce_max, argmax, broadcast, convert, custom_jvp, captured_constant,
         several_outputs, many_lines, iota, select, transpose_reshape, concatenate,
         cumsum_sort, clamp, integer_pow, identity, pad_rev, psum, collectives, long_branch,
         fft, docs_func1, docs_func4, docs_one_of_three, docs_func7, docs_func8, docs_func10,
         docs_func11, docs_func12]
