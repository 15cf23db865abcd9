"""make_jaxpr: the traced program as JAX's ClosedJaxpr, with its constants and abstract
values (the jaxpr objects themselves are tested in test_jaxpr_view.py)."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.core.abstract import ShapedArray, ShapeDtypeStruct


def test_closed_jaxpr_parts():
    c = jnp.arange(3.0)

    def f(x, y):
        return jnp.sin(x) * y + c, x

    closed = spmdc.make_jaxpr(f)(jnp.ones(3), 2.0)
    # printed in JAX's syntax (the IR itself is make_ir's), constants in the first group
    assert str(closed) == (
        "{ lambda a:f32[3]; b:f32[3] c:f32[]. let\n"
        "    d:f32[3] = sin b\n"
        "    e:f32[3] = mul d c\n"
        "    f:f32[3] = add e a\n"
        "  in (f, b) }")
    assert str(closed.jaxpr) == str(closed) == closed.pretty_print()
    assert "func @f" in str(spmdc.make_ir(f)(jnp.ones(3), 2.0))
    assert [e.primitive for e in closed.eqns] == [spmdc.lax.sin_p, spmdc.lax.mul_p,
                                                  spmdc.lax.add_p]
    assert len(closed.consts) == 1 and closed.literals is closed.consts
    np.testing.assert_array_equal(np.asarray(closed.consts[0]), np.arange(3.0))
    # as JAX 0.10.2: the traced arguments only, the Python scalar weakly typed
    assert closed.in_avals == [ShapedArray((3,), np.float32),
                               ShapedArray((), np.float32, weak_type=True)]
    assert closed.out_avals == [ShapedArray((3,), np.float32)] * 2
    assert closed.effects == set()


def test_return_shape():
    def f(x):
        return {"a": x.sum(), "b": (x * 2, 1.0)}

    closed, shape = spmdc.make_jaxpr(f, return_shape=True)(np.ones((2, 3), np.int32))
    assert shape == {"a": ShapeDtypeStruct((), np.int32),
                     "b": (ShapeDtypeStruct((2, 3), np.int32),
                           ShapeDtypeStruct((), np.float32, weak_type=True))}
    assert [a.shape for a in closed.out_avals] == [(), (2, 3), ()]


def test_axis_env_lets_collectives_trace():
    def f(x):
        return spmdc.lax.psum(x, "i")

    closed = spmdc.make_jaxpr(f, axis_env=[("i", 4)])(1.0)
    assert str(closed) == ("{ lambda ; a:f32[]. let\n"
                           "    b:f32[] = psum[axes=('i',) axis_index_groups=None] a\n"
                           "  in (b,) }")
    with pytest.raises(NameError, match="unbound axis name 'i'"):
        spmdc.make_jaxpr(f)(1.0)


def test_axis_env_must_be_pairs():
    with pytest.raises(TypeError, match="axis_env"):
        spmdc.make_jaxpr(lambda x: x, axis_env=[("i",)])
    with pytest.raises(TypeError, match="axis_env"):
        spmdc.make_jaxpr(lambda x: x, axis_env=[("i", 0)])


def test_static_argnums_and_abstract_arguments():
    closed = spmdc.make_jaxpr(lambda x, n: x * n, static_argnums=1)(1.0, 3)
    assert str(closed) == "{ lambda ; a:f32[]. let b:f32[] = mul a 3.0:f32[] in (b,) }"
    assert len(closed.in_avals) == 1
    closed = spmdc.make_jaxpr(lambda x: x + 1)(ShapeDtypeStruct((2,), np.int32))
    assert closed.in_avals == [ShapedArray((2,), np.int32)]
    assert closed.out_avals == [ShapedArray((2,), np.int32)]


def test_the_function_is_named_and_the_docstring_example_prints_as_in_jax():
    def f(x):
        return jnp.sin(jnp.cos(x))
    made = spmdc.make_jaxpr(f)
    assert made.__name__ == "make_jaxpr(f)" and made.__wrapped__ is f
    assert made.__qualname__.startswith("make_jaxpr(") and made.__qualname__.endswith(".f)")
    # JAX 0.10.2's make_jaxpr docstring
    assert str(made(3.0)) == "{ lambda ; a:f32[]. let b:f32[] = cos a; c:f32[] = sin b in (c,) }"


def test_static_arguments_are_literals():
    # JAX's test_make_jaxpr_static_argnums_order (issue 28065)
    def f(a, b, c):
        return (a + c) - b * c
    for static_argnums in [(1, 0), (0, 1)]:
        closed = spmdc.make_jaxpr(f, static_argnums=static_argnums)(1, 2, 3)
        assert closed.eqns[0].invars[0].val == 1 and closed.eqns[1].invars[0].val == 2


def test_debug_info_names_arguments_and_results_as_jax():
    # the values JAX 0.10.2 gives for these calls (func_src_info's file aside)
    def f(x, y, *, z=1):
        return {"a": x, "b": (y, x)}
    info = spmdc.make_jaxpr(f)((np.ones(2), 1.0), np.ones(3), z=np.ones(1)).jaxpr.debug_info
    assert info.traced_for == "jit" and info.func_name == "f"
    assert info.func_src_info.startswith("f at ") and "test_make_jaxpr.py:" in info.func_src_info
    assert info.arg_names == ("x[0]", "x[1]", "y", "z")
    assert info.result_paths == ("result['a'][0]", "result['a'][1]", "result['b'][0]",
                                 "result['b'][1][0]", "result['b'][1][1]")
    info = spmdc.make_jaxpr(f, static_argnums=1)(1.0, 2).debug_info
    assert info.arg_names == ("x",)
    assert info.result_paths == ("result['a']", "result['b'][0]", "result['b'][1]")

    def h(a, *rest, **kw):
        return a
    info = spmdc.make_jaxpr(h)(1.0, 2.0, 3.0, b=4.0, c=(5.0,)).jaxpr.debug_info
    assert info.arg_names == ("a", "rest[0]", "rest[1]", "kw['b']", "kw['c'][0]")
    assert info.result_paths == ("result",)
    # a jaxpr whose arguments changed no longer knows their names
    closed = spmdc.make_jaxpr(lambda x: x)(1.0)
    assert closed.jaxpr.replace(invars=[]).debug_info.arg_names is None
