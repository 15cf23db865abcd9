"""Exports made by JAX 0.10.2 run in spmdc (tests/data/exports_reference.json, recorded
by tools/recorders/exports.py from tests/export_cases.py): each is deserialized and
called, eagerly, under jit and under grad (through its recorded VJP), and gives JAX's
values. The other direction, an spmdc export called by JAX itself, is the slow test at
the end (it needs a Python with JAX: SPMDC_JAX_PYTHON)."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import textwrap

import export_cases as C
import numpy as np
import pytest
from oracle import recorded_cases

import spmdc
import spmdc.numpy as jnp
from spmdc import export, lax

RECORDED = recorded_cases("exports_reference.json")

export.register_namedtuple_serialization(C.Pair, serialized_name=C.PAIR_NAME)


def _jax_export(name: str) -> export.Exported:
    return export.deserialize(base64.b64decode(RECORDED[name]["bytes"]))


def _leaves(tree):
    return spmdc.tree_util.tree_leaves(tree)


@pytest.mark.parametrize("name", sorted(C.CASES))
def test_jax_export_runs_in_spmdc(name: str) -> None:
    _, args, kwargs, platforms, differentiable = C.CASES[name]
    exp = _jax_export(name)
    assert exp.platforms == platforms
    assert exp.has_vjp() == differentiable
    want = [np.asarray(v) for v in RECORDED[name]["outputs"]]
    got = _leaves(spmdc.jit(exp.call)(*args, **kwargs))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-6, atol=1e-6)
    if differentiable:
        def first_sum(a0):
            return _leaves(exp.call(a0, *args[1:], **kwargs))[0].sum()
        np.testing.assert_allclose(np.asarray(spmdc.grad(first_sum)(args[0])),
                                   np.asarray(RECORDED[name]["grad"]), rtol=1e-6, atol=1e-6)


def test_jax_export_fields_and_eager_call() -> None:
    exp = _jax_export("tree")
    assert exp.fun_name == "f"
    assert exp.in_tree == spmdc.tree_util.tree_structure(((C.X, C.Y), {}))
    assert [a.shape for a in exp.out_avals] == [(2, 3), (), (2, 2)]
    assert exp.calling_convention_version == 10 and exp.nr_devices == 1
    out = exp.call(C.X, C.Y)                        # eagerly
    np.testing.assert_allclose(np.asarray(out["t"][1]), C.Y @ C.Y.T, rtol=1e-6)
    assert "stablehlo.sine" in exp.mlir_module()
    vjp = exp.vjp()
    assert [a.shape for a in vjp.in_avals] == [(2, 3), (2, 3), (2, 3), (), (2, 2)]


def test_jax_export_round_trips_through_spmdc_serialization() -> None:
    exp = _jax_export("pair")
    again = export.deserialize(exp.serialize())
    assert again.in_tree == exp.in_tree and again.out_tree == exp.out_tree
    assert again.mlir_module_serialized == exp.mlir_module_serialized
    out = again.call(C.Pair(C.X, C.Y))
    assert isinstance(out, C.Pair)
    np.testing.assert_allclose(np.asarray(out.first), C.Y * 2.0, rtol=1e-6)


def test_jax_export_vmapped_by_one_call_per_element() -> None:
    exp = _jax_export("dense")
    xs = np.stack([C.X, C.X * 2.0])
    got = spmdc.vmap(lambda x: exp.call(C.W, x))(xs)
    want = np.stack([np.tanh(x @ C.W).sum(axis=0) for x in xs])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


def test_bad_calls_raise_jax_errors() -> None:
    exp = _jax_export("dense")
    with pytest.raises(ValueError, match=r"Shape mismatch for args\[1\]\.shape\[0\]"):
        exp.call(C.W, np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError, match=r"Dtype mismatch for args\[0\]"):
        exp.call(C.W.astype(np.float16), C.X)
    with pytest.raises(ValueError, match="same pytree structure"):
        exp.call((C.W, C.X))
    no_vjp = _jax_export("pair")
    with pytest.raises(ValueError, match="No VJP is available"):
        spmdc.grad(lambda x: no_vjp.call(C.Pair(x, C.Y)).first.sum())(C.X)


def _program(name: str):
    program, args, kwargs, platforms, differentiable = C.CASES[name]
    return program(jnp, lax), args, kwargs, platforms, differentiable


@pytest.mark.slow
def test_spmdc_exports_run_in_jax(tmp_path) -> None:
    python = os.environ.get("SPMDC_JAX_PYTHON")
    if not python:
        pytest.skip("set SPMDC_JAX_PYTHON to a Python with JAX 0.10.2 and flatbuffers")
    for name in C.CASES:
        f, args, kwargs, platforms, differentiable = _program(name)
        exp = export.export(spmdc.jit(f), platforms=platforms)(*args, **kwargs)
        (tmp_path / f"{name}.bin").write_bytes(
            exp.serialize(vjp_order=1 if differentiable else 0))
    script = textwrap.dedent(f"""
        import base64, json, sys
        import numpy as np
        import jax
        from jax import export
        sys.path.insert(0, {os.path.dirname(os.path.dirname(__file__))!r})
        import export_cases as C
        export.register_namedtuple_serialization(C.Pair, serialized_name=C.PAIR_NAME)
        out = {{}}
        for name, (_, args, kwargs, platforms, differentiable) in C.CASES.items():
            exp = export.deserialize(bytearray(open({str(tmp_path)!r} + f"/{{name}}.bin",
                                                    "rb").read()))
            case = {{"outputs": [np.asarray(v).tolist() for v in
                                 jax.tree_util.tree_leaves(exp.call(*args, **kwargs))]}}
            if differentiable:
                g = jax.grad(lambda a0: jax.tree_util.tree_leaves(
                    exp.call(a0, *args[1:], **kwargs))[0].sum())(args[0])
                case["grad"] = np.asarray(g).tolist()
            out[name] = case
        print(json.dumps(out))
    """)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([python, "-c", script], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    for name in C.CASES:
        for g, w in zip(got[name]["outputs"], RECORDED[name]["outputs"], strict=True):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
        if "grad" in RECORDED[name]:
            np.testing.assert_allclose(np.asarray(got[name]["grad"]),
                                       np.asarray(RECORDED[name]["grad"]), rtol=1e-5,
                                       atol=1e-6)
