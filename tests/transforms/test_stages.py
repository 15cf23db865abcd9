"""Inspection: jit(f).trace / .lower / .compile / .eval_shape, and named_scope /
named_call names in the IR dump, `spmdc dump` and the StableHLO locations."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import spmdc as jax
import spmdc.numpy as jnp
from spmdc.cli import main
from spmdc.compiler.ir import parse

PROGRAM = f"{Path(__file__).parents[1] / 'data' / 'named_programs.py'}:model"


def f(x, n):
    return jnp.sin(x) * n, {"sum": jnp.sum(x)}


def test_trace_gives_the_jaxpr_avals_and_lowers_without_retracing():
    jitted = jax.jit(f, static_argnums=1)
    traced = jitted.trace(jnp.ones(3), 2)
    assert "= sin " in str(traced.jaxpr) and "= reduce_sum[" in str(traced.jaxpr)
    assert str(traced.jaxpr) == str(jax.make_jaxpr(f, static_argnums=1)(jnp.ones(3), 2))
    assert [(a.shape, a.dtype) for a in traced.in_avals] == [((3,), np.float32)]
    assert [a.shape for a in traced.out_avals] == [(3,), ()]
    info = traced.out_info
    assert info[0].shape == (3,) and info[1]["sum"].shape == ()
    count = jitted.trace_count
    lowered = traced.lower()
    assert jitted.trace_count == count
    assert "stablehlo.sine" in lowered.as_text()
    compiled = lowered.compile()
    assert "sine" in compiled.as_text()
    out = compiled(jnp.arange(3.0))
    np.testing.assert_allclose(np.asarray(out[0]), np.sin(np.arange(3.0)) * 2, rtol=1e-6)
    assert float(out[1]["sum"]) == 3.0
    with pytest.raises(TypeError, match="compiled for"):
        compiled(jnp.ones(4))


def test_lower_as_text_and_compile_match_jit():
    lowered = jax.jit(lambda x: jnp.cos(x) + 1).lower(jnp.ones((2, 2)))
    text = lowered.as_text()
    assert text.startswith("module") and "stablehlo.cosine" in text
    assert lowered.as_text("stablehlo") == text
    with pytest.raises(ValueError, match="dialect"):
        lowered.as_text("hlo")
    np.testing.assert_allclose(np.asarray(lowered.compile()(jnp.zeros((2, 2)))), 2.0)


def test_eval_shape_of_a_jitted_function():
    shapes = jax.jit(f, static_argnums=1).eval_shape(jnp.ones((4, 2)), 3)
    assert shapes[0].shape == (4, 2) and shapes[0].dtype == np.float32
    assert shapes[1]["sum"].shape == ()
    abstract = jax.jit(jnp.matmul).eval_shape(jax.ShapeDtypeStruct((2, 3), jnp.float32),
                                              jax.ShapeDtypeStruct((3, 5), jnp.float32))
    assert abstract.shape == (2, 5)


def _model(x):
    with jax.named_scope("outer"):
        with jax.named_scope("inner"):
            y = jnp.sin(x)
    return jax.named_call(lambda z: z * 2, name="dbl")(y)


def test_named_scope_and_named_call_in_the_ir_and_after_passes():
    text = str(jax.make_ir(_model)(1.0))
    assert "sin(%0)  # outer/inner" in text and "# dbl" in text
    assert str(parse(text)) == str(parse(text))           # comments parse (and drop)
    assert parse(text).eqns[0].prim.name == "sin"
    grad_ir = jax.jit(jax.grad(_model)).lower(1.0).ir()
    assert "cos(%0)  # outer/inner" in grad_ir            # the rule's ops keep the names
    vmapped = str(jax.make_ir(jax.vmap(_model))(jnp.ones(3)))
    assert "# outer/inner" in vmapped
    with pytest.raises(TypeError, match="name must be a str"):
        jax.named_call(_model, name=3)


def test_named_scope_names_are_stablehlo_locations():
    lowered = jax.jit(_model).lower(1.0)
    assert "outer/inner" not in lowered.as_text()
    text = lowered.as_text(debug_info=True)
    assert 'loc("outer/inner/sin"' in text and 'loc("dbl/mul"' in text
    assert "test_stages.py" in text
    assert float(lowered.compile()(0.5)) == pytest.approx(2 * np.sin(0.5))


def test_named_scope_names_in_spmdc_dump(capsys):
    assert main(["dump", PROGRAM, "--arg", "f32[3]", "--stage", "traced"]) == 0
    out = capsys.readouterr().out
    assert "sin(%0)  # encoder/proj" in out
    assert "tanh(%1)  # head" in out


def test_compile_takes_xlas_options_by_name_and_refuses_an_unknown_one():
    # Equinox's AOT path calls lowered.compile(compiler_options=...), as JAX's API allows
    lowered = jax.jit(lambda x, y: 2 * x + y).lower(jnp.array(3), 4)
    for options in (None, {}, {"xla_cpu_enable_fast_math": True},
                    {"xla_gpu_autotune_level": "0"}):
        assert int(lowered.compile(compiler_options=options)(jnp.array(3), 4)) == 10
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option"):
        lowered.compile(compiler_options={"an option that does not make sense": "bad"})


def test_traced_args_info_as_jax():
    traced = jax.jit(lambda a, b, n: a * b["k"][:2], static_argnums=2,
                     donate_argnums=1).trace(jnp.ones(2), {"k": jnp.ones(3)}, 3)
    # JAX 0.10.2 prints exactly this for the same call
    assert repr(traced.args_info) == (
        "((ArgInfo(_aval=ShapedArray(float32[2]), donated=False), {'k': "
        "ArgInfo(_aval=ShapedArray(float32[3]), donated=True)}), {})")
    info = traced.args_info[0][1]["k"]
    assert isinstance(info, jax.stages.ArgInfo) and info.shape == (3,)
    assert info.dtype == np.float32
