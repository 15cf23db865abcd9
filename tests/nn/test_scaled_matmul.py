"""``nn.scaled_matmul``, ``nn.scaled_dot_general`` and ``get_scaled_dot_general_config``
(Notes [block-scaled matmul] and [block-scaled quantization]): the product by its
definition (JAX's tests/scaled_matmul_stablehlo_test.py reference), the quantization bit
for bit against JAX 0.10.2's (recorded on the CPU, where JAX's quantizer runs), the
gradients of JAX's custom VJP, vmap, the CUDA lowering's custom call against JAX's text,
and the errors."""
from __future__ import annotations

import re

import numpy as np
import pytest
from oracle import interpreted

import spmdc
import spmdc.numpy as jnp
from spmdc.nn.scaled_matmul import _quantize

_RNG = np.random.default_rng(1)


def _dequantized(x, scales):
    block = x.shape[-1] // scales.shape[-1]
    return np.asarray(x).astype(np.float32) * np.repeat(np.asarray(scales).astype(np.float32),
                                                        block, axis=-1)


def _operands():
    a = _RNG.standard_normal((2, 3, 64)).astype(np.float32)
    b = _RNG.standard_normal((2, 5, 64)).astype(np.float32)
    sa = (2.0 ** _RNG.integers(-3, 3, (2, 3, 2))).astype(np.float32)
    sb = (2.0 ** _RNG.integers(-3, 3, (2, 5, 2))).astype(np.float32)
    convert = spmdc.jit(lambda a, b, sa, sb: (
        a.astype(jnp.float8_e4m3fn), b.astype(jnp.float8_e5m2),
        sa.astype(jnp.float8_e8m0fnu), sb.astype(jnp.float8_e8m0fnu)))
    return convert(a, b, sa, sb)


def test_scaled_matmul_is_its_definition_on_the_cpu_and_in_the_reference():
    a, b, sa, sb = _operands()
    want = np.einsum("bmk,bnk->bmn", _dequantized(a, sa), _dequantized(b, sb))
    stacked = [x[:, None] for x in (a, b, sa, sb)]           # vmap over a leading axis
    every = spmdc.jit(lambda x, y: (
        spmdc.nn.scaled_matmul(*x),
        spmdc.nn.scaled_matmul(*x, preferred_element_type=jnp.bfloat16),
        spmdc.vmap(spmdc.nn.scaled_matmul)(*y)))
    got, got_bf16, mapped = every((a, b, sa, sb), stacked)
    assert got.dtype == np.float32 and got_bf16.dtype == jnp.bfloat16
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(got_bf16), want.astype(jnp.bfloat16))
    np.testing.assert_allclose(interpreted(spmdc.nn.scaled_matmul, a, b, sa, sb)[0], want,
                               rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(np.asarray(mapped)[:, 0], want, rtol=1e-6, atol=1e-5)


# JAX 0.10.2: jax._src.cudnn.scaled_matmul_stablehlo.quantize of _quantize_input() with
# get_scaled_dot_general_config('mxfp8') and ('nvfp4', [0.5]): (data bits, scale bits).
_JAX_QUANTIZED = {
    "mxfp8": ("50d0624de17e6a67e3eae243f1d6eae4e1da5d68d06be35b664ce4e7df56e8d5da695e63ead86d74"
              "f274736d60e27478767363f2b16bf265666bf1ebe6f176e863e075736af94e6b70ea77f3eb6f4d78"
              "5ceae4f1f26a6a73ec76e175e6ec60705beaf3f36870dbf16ef2ec6af965ea56d25d6bec746c6e72"
              "6d6e52f4d9edf460", "79786e6e"),
    "nvfp4": ("0008010009070202090a09000c080a090c0b040609070d0306010d0e0c020e0a090301020c090506"
              "0e060605020a06070706020e08040e0303040e0c0b0e070b070f0707070f0707070f070f0f070707"
              "070f0f0f0f0707070f070f070f0f0707070f0f0f07070f0f070f0f070f070f070f07070f07070707"
              "0707070f0f0f0f07", "412f323200000000"),
}


def _quantize_input():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((1, 2, 64)) * np.array([1, 1e-3])[None, :, None]).astype(
        np.float32)
    x[0, 0, 5] = 7.0
    return x


def test_quantization_matches_jax_bit_for_bit():
    x = _quantize_input()
    configs = {"mxfp8": spmdc.nn.get_scaled_dot_general_config("mxfp8"),
               "nvfp4": spmdc.nn.get_scaled_dot_general_config(
                   "nvfp4", jnp.array([0.5], jnp.float32))}
    got = spmdc.jit(lambda x: {m: _quantize(x, c) for m, c in configs.items()})(x)
    for mode, (data_bits, scale_bits) in _JAX_QUANTIZED.items():
        data, scales = got[mode]
        assert data.dtype == configs[mode].data_type and scales.dtype == configs[mode].scale_type
        assert np.asarray(data).view(np.uint8).tobytes().hex() == data_bits, mode
        assert np.asarray(scales).view(np.uint8).tobytes().hex() == scale_bits, mode


def test_configs_are_jax_ones():
    mx = spmdc.nn.get_scaled_dot_general_config("mxfp8")
    assert (mx.mode, mx.block_size, mx.data_type, mx.scale_type, mx.global_scale) == (
        "mxfp8", 32, jnp.float8_e4m3fn, jnp.float8_e8m0fnu, None)
    nv = spmdc.nn.get_scaled_dot_general_config("nvfp4")
    assert (nv.block_size, nv.data_type, nv.scale_type) == (16, jnp.float4_e2m1fn,
                                                            jnp.float8_e4m3fn)
    assert np.asarray(nv.global_scale).tolist() == [1.0]
    with pytest.raises(ValueError, match="Unsupported mode: int8"):
        spmdc.nn.get_scaled_dot_general_config("int8")


def _scaled_dot(configs):
    return lambda a, b: spmdc.nn.scaled_dot_general(a, b, (((1,), (1,)), ((), ())),
                                                    configs=configs)


def test_scaled_dot_general_and_its_gradients_are_scaled_products():
    mx = [spmdc.nn.get_scaled_dot_general_config("mxfp8")] * 3
    a = _RNG.standard_normal((32, 64)).astype(np.float32)
    b = _RNG.standard_normal((32, 64)).astype(np.float32)
    f = _scaled_dot(mx)
    g = a[:, :32]

    def program(a, b):
        value = spmdc.value_and_grad(lambda a, b: jnp.sum(f(a, b) * a[:, :32]),
                                     argnums=(0, 1))(a, b)
        quantized = [_quantize(x[None], mx[0]) for x in (a, b, g, b.T, g.T, a.T)]
        plain = spmdc.nn.scaled_dot_general(a, b, (((1,), (1,)), ((), ())))  # no configs
        return value, quantized, f(a, b), plain
    (out, (da, db)), quantized, scaled, plain = spmdc.jit(program)(a, b)
    # The forward is quantize-then-product (the quantizer is checked against JAX above);
    # the gradients are JAX's custom VJP's: the cotangent and the other operand quantized.
    dq = [_dequantized(q, s)[0] for q, s in quantized]

    def product(i, j):
        return dq[i] @ dq[j].T
    want_out = np.sum(product(0, 1) * g)
    want_da = product(2, 3) + np.pad(product(0, 1), ((0, 0), (0, 32)))
    want_db = product(4, 5)
    np.testing.assert_allclose(float(out), want_out, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(da), want_da, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(np.asarray(db), want_db, rtol=1e-5, atol=1e-4)
    # within the format's error of the float product
    np.testing.assert_allclose(np.asarray(scaled), a @ b.T, atol=1.5)
    np.testing.assert_allclose(np.asarray(plain), a @ b.T, rtol=1e-5, atol=1e-4)


def test_cuda_lowering_is_jax_custom_call():
    mx = [spmdc.nn.get_scaled_dot_general_config("mxfp8")] * 3
    text = spmdc.jit(_scaled_dot(mx)).trace(
        spmdc.ShapeDtypeStruct((4, 64), jnp.float32),
        spmdc.ShapeDtypeStruct((8, 64), jnp.float32)).lower(
            lowering_platforms=("cuda",)).as_text()
    calls = [re.sub(r"%[\w#]+", "%", line).strip() for line in text.splitlines()
             if "block_scaled_dot" in line]
    # JAX 0.10.2's lowering of the same program for cuda (SSA names elided)
    assert calls == [
        '% = stablehlo.custom_call @__op$block_scaled_dot(%, %, %, %) {api_version = 2 : i32, '
        'backend_config = "{\\22scaled_dot_backend_config\\22: {\\22lhs_batch_dimensions\\22: '
        '[0], \\22rhs_batch_dimensions\\22: [0], \\22dequantize_type\\22: \\22F32\\22}}", '
        'operand_layouts = [dense<[2, 1, 0]> : tensor<3xindex>, dense<[2, 1, 0]> : '
        'tensor<3xindex>, dense<[2, 1, 0]> : tensor<3xindex>, dense<[2, 1, 0]> : '
        'tensor<3xindex>], result_layouts = [dense<[2, 1, 0]> : tensor<3xindex>]} : '
        '(tensor<1x4x64xf8E4M3FN>, tensor<1x8x64xf8E4M3FN>, tensor<1x4x2xf8E8M0FNU>, '
        'tensor<1x8x2xf8E8M0FNU>) -> tensor<1x4x8xf32>']


def test_bad_input_gets_jax_errors():
    a = np.zeros((1, 2, 64), np.float32)
    with pytest.raises(ValueError, match="requires all inputs to be 3-dimensional"):
        spmdc.nn.scaled_matmul(a[0], a, a, a)
    with pytest.raises(ValueError, match="matching batch \\(B\\) and contract \\(K\\) "
                                         "dimensions, but got shapes \\(1, 2, 64\\) and"):
        spmdc.nn.scaled_matmul(a, np.zeros((1, 2, 32), np.float32), a[..., :2], a[..., :2])
    with pytest.raises(TypeError, match="Only support preferred_element_type in"):
        spmdc.nn.scaled_dot_general(a[0], a[0], (((1,), (1,)), ((), ())),
                                    preferred_element_type=jnp.int32,
                                    configs=[spmdc.nn.get_scaled_dot_general_config("mxfp8")] * 3)


def test_scaled_matmul_differentiates_as_its_definition():
    # JAX's primitive has no derivative; spmdc's is the definition's (its module's Note).
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 8), np.float32), rng.standard_normal((2, 4, 8), np.float32)
    sa, sb = rng.random((2, 3, 2), np.float32) + 0.5, rng.random((2, 4, 2), np.float32) + 0.5
    w = rng.standard_normal((2, 3, 4)).astype(np.float32)

    def loss(a, b, sa, sb):
        return jnp.sum(spmdc.nn.scaled_matmul(a, b, sa, sb) * w)

    def definition(a, b, sa, sb):
        return jnp.sum(jnp.einsum("bmk,bnk->bmn", a * jnp.repeat(sa, 4, -1),
                                  b * jnp.repeat(sb, 4, -1)) * w)
    args = (a, b, sa, sb)
    got, want, tangents = spmdc.jit(lambda *x: (
        spmdc.grad(loss, argnums=(0, 1, 2, 3))(*x),
        spmdc.grad(definition, argnums=(0, 1, 2, 3))(*x),
        (spmdc.jvp(loss, x, x)[1], spmdc.jvp(definition, x, x)[1])))(*args)
    for g, r in zip(got, want, strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(float(tangents[0]), float(tangents[1]), rtol=1e-5)
