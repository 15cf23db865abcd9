"""``nn.dot_product_attention(..., implementation='cudnn')`` without a GPU: the CUDA
lowering's cuDNN custom calls (targets, operand and result types and layouts, backend
config) against JAX 0.10.2's own lowering of the same programs (recorded by
tests/nn/record_attention.py), the kernels' NumPy references (run by the reference
interpreter) against the 'xla' implementation, batching, and the errors: on the CPU, for
cases cuDNN does not support, for forward mode (Note [cuDNN fused attention] in
compiler/primitives/attention_cudnn.py)."""
from __future__ import annotations

import importlib.util
import json
import pathlib
from types import SimpleNamespace

import numpy as np
import pytest
from oracle import interpreted

import spmdc
import spmdc.numpy as jnp
from spmdc.errors import LoweringError

HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("attention_cases", HERE / "attention_cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

LIB = SimpleNamespace(nn=spmdc.nn, numpy=jnp, jit=spmdc.jit, grad=spmdc.grad,
                      value_and_grad=spmdc.value_and_grad)
RECORDED = json.loads((HERE / "data" / "attention_cudnn.json").read_text())["cases"]
attention = spmdc.nn.dot_product_attention
bf16 = jnp.bfloat16


def _cuda_text(jitted, args) -> str:
    return jitted.trace(*args).lower(lowering_platforms=("cuda",)).as_text()


def test_cuda_lowering_emits_jaxs_custom_calls():
    assert set(RECORDED) == set(cases.CUDNN_CASES)
    for name, case in cases.CUDNN_CASES.items():
        case = cases.cudnn_case(case)
        jitted, args = cases.jit_program(LIB, case, cases.arrays(case))
        calls = cases.custom_calls(_cuda_text(jitted, args))
        assert len(calls) == len(RECORDED[name]), name
        for got, want in zip(calls, RECORDED[name], strict=True):
            assert got == want, f"{name}:\n{got}\n!=\n{want}"


def _qkv(seed=0, b=2, t=4, s=6, n=4, k=2, h=8, dtype=bf16):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(dtype)
            for shape in ((b, t, n, h), (b, s, k, h), (b, s, k, h))]


def _loss(implementation, with_value=True, **options):
    def f(q, k, v, bias):
        out = attention(q, k, v, bias, implementation=implementation, **options)
        return jnp.sum(out.astype(np.float32) ** 2)
    return (spmdc.value_and_grad if with_value else spmdc.grad)(f, argnums=(0, 1, 2, 3))


def _close(got, want):
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-2 * float(np.abs(want).max()))


@pytest.mark.parametrize("options", [
    {"is_causal": True, "key_value_seq_lengths": np.array([6, 3], np.int32)},
    pytest.param({"local_window_size": (1, 0), "query_seq_lengths": np.array([2, 4], np.int32)},
                 marks=pytest.mark.slow),
])
def test_kernel_references_match_the_xla_implementation(options):
    q, k, v = _qkv()
    bias = np.random.default_rng(1).normal(size=(1, 4, 4, 6)).astype(bf16)
    got = interpreted(_loss("cudnn", **options), q, k, v, bias)
    want = spmdc.tree_util.tree_leaves(spmdc.jit(_loss("xla", **options))(q, k, v, bias))
    for g, w in zip(got, want, strict=True):
        _close(g, w)


def test_vmap_merges_the_mapped_axis_into_the_batch():
    q, k, v = _qkv(b=2)
    bias = np.random.default_rng(1).normal(size=(1, 4, 4, 6)).astype(bf16)
    mapped = spmdc.vmap(_loss("cudnn", is_causal=True), in_axes=(0, 0, 0, None))
    stacked = [np.stack([x, x[::-1]]) for x in (q, k, v)]
    got = interpreted(mapped, *stacked, bias)
    for i in range(2):
        one = interpreted(_loss("cudnn", is_causal=True), *(x[i] for x in stacked), bias)
        for g, w in zip(got, one, strict=True):     # the shared bias's gradient is summed
            _close(g[i], w)                            # over the batch in another order
    gradients = spmdc.vmap(_loss("cudnn", with_value=False, is_causal=True),
                           in_axes=(0, 0, 0, None))
    text = _cuda_text(spmdc.jit(gradients), (*stacked, bias))
    calls = cases.custom_calls(text)
    assert [c.split("(")[0] for c in calls] == ["@__cudnn$fmhaScaleBiasSoftmax",
                                                "@__cudnn$fmhaScaleBiasSoftmaxBackward"]
    assert "-> (tensor<4x4x4x8xbf16>, tensor<4x4x4xf32>, tensor<0xui8>)" in calls[0]
    assert "tensor<4x4x4x6xbf16>, tensor<0xui8>)" in calls[1]    # the bias's gradient


def test_a_training_step_runs_the_forward_kernel_once():
    # the loss squares the output, so the step needs its value as well as the gradient;
    # one training forward serves both, and without a gradient the inference kernel runs
    # (Note [one cuDNN forward when differentiated])
    q, k, v = _qkv()
    bias = np.zeros((1, 4, 4, 6), bf16)
    calls = cases.custom_calls(_cuda_text(spmdc.jit(_loss("cudnn", is_causal=True)),
                                          (q, k, v, bias)))
    assert [c.split("(")[0] for c in calls] == ["@__cudnn$fmhaScaleBiasSoftmax",
                                                "@__cudnn$fmhaScaleBiasSoftmaxBackward"]
    assert "tensor<2x4x4xf32>, tensor<0xui8>)" in calls[0]          # the stats
    forward = spmdc.jit(lambda q: attention(q, k, v, bias, implementation="cudnn"))
    (call,) = cases.custom_calls(_cuda_text(forward, (q,)))
    assert call.endswith("-> (tensor<2x4x4x8xbf16>, tensor<0xui8>)")   # no stats


@pytest.mark.cpu_platform
def test_cudnn_on_the_cpu_is_a_clear_error():
    q, k, v = _qkv()
    with pytest.raises(LoweringError, match="CUDA GPUs only.*implementation='xla'"):
        spmdc.jit(lambda q, k, v: attention(q, k, v, implementation="cudnn"))(q, k, v)
    assert issubclass(LoweringError, RuntimeError)      # JAX raises a RuntimeError


@pytest.mark.parametrize("shapes, dtype, options, error, fragment", [
    ({"h": 12}, bf16, {}, NotImplementedError, "multiple of 8, but got 12"),
    ({"h": 264}, bf16, {}, NotImplementedError, "must be <= (128|256)"),   # 256: Hopper
    ({}, np.float32, {}, NotImplementedError, "float16 or bfloat16"),
    ({}, bf16, {"local_window_size": (0, 2)}, ValueError, "right window: 2"),
    ({}, bf16, {"local_window_size": (-1, 0), "is_causal": True}, ValueError, "left window"),
    ({}, bf16, {"bias": np.zeros((1, 1, 4, 6), np.float32)}, ValueError, "cast the bias"),
    ({}, bf16, {"bias": np.zeros((1, 1, 1, 6), bf16)}, ValueError, "sequence lengths of QKV"),
])
def test_unsupported_cases_are_jax_errors(shapes, dtype, options, error, fragment):
    q, k, v = _qkv(dtype=dtype, **shapes)
    f = spmdc.jit(lambda q, k, v: attention(q, k, v, implementation="cudnn", **options))
    with pytest.raises(error, match=fragment):
        f.trace(q, k, v)


def test_gradient_needs_even_lengths_with_a_bias_and_forward_mode_is_an_error():
    q, k, v = _qkv(t=3)
    bias = np.zeros((1, 1, 3, 6), bf16)
    f = lambda q: attention(q, k, v, bias, implementation="cudnn")     # noqa: E731
    spmdc.jit(f).trace(q)                         # the forward alone is supported
    with pytest.raises(NotImplementedError, match="even sequence lengths, got Q 3"):
        spmdc.jit(spmdc.grad(lambda q: f(q).astype(np.float32).sum())).trace(q)
    q, k, v = _qkv()
    forward_mode = spmdc.jit(lambda q: spmdc.jvp(
        lambda q: attention(q, k, v, implementation="cudnn"), (q,), (q,)))
    with pytest.raises(TypeError, match=r"forward-mode autodiff \(jvp\) to cuDNN attention"):
        _cuda_text(forward_mode, (q,))


def test_on_a_cuda_gpu_cudnn_matches_xla():
    """tools/gpu_check.sh runs this on a GPU (SPMDC_PLATFORM=cuda): cuDNN's kernels against
    the 'xla' implementation, values and gradients, with a bias, a mask, sequence lengths
    and grouped-query heads."""
    if spmdc.default_backend() == "cpu":
        pytest.skip("needs a CUDA GPU (cuDNN)")
    q, k, v = _qkv(b=2, t=128, s=128, n=8, k=2, h=64)
    bias = np.random.default_rng(1).normal(size=(1, 8, 128, 128)).astype(bf16)
    for options in ({"is_causal": True},
                    {"key_value_seq_lengths": np.array([128, 77], np.int32), "is_causal": True},
                    {"mask": np.tril(np.ones((128, 128), bool))[None, None]}):
        got = spmdc.jit(_loss("cudnn", **options))(q, k, v, bias)
        want = spmdc.jit(_loss("xla", **options))(q, k, v, bias)
        for g, w in zip(spmdc.tree_util.tree_leaves(got), spmdc.tree_util.tree_leaves(want),
                        strict=True):
            _close(g, w)
