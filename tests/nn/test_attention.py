"""``nn.dot_product_attention`` ('xla' and None): values and gradients against JAX 0.10.2's
(recorded by tests/nn/record_attention.py from tests/nn/attention_cases.py), one compiled
program per case; JAX's errors for bad input; vmap, pmap and shard_map."""
from __future__ import annotations

import importlib.util
import pathlib
from types import SimpleNamespace

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.sharding import Mesh, PartitionSpec

HERE = pathlib.Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("attention_cases", HERE / "attention_cases.py")
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)

LIB = SimpleNamespace(nn=spmdc.nn, numpy=jnp, jit=spmdc.jit, grad=spmdc.grad,
                      value_and_grad=spmdc.value_and_grad)
REFERENCE = np.load(HERE / "data" / "attention_reference.npz")
attention = spmdc.nn.dot_product_attention


def _close(got, want, dtype):
    tol = 2e-2 if np.dtype(dtype) != np.float32 else 2e-5
    np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("group", [
    "every_option", pytest.param("more", marks=pytest.mark.slow)])
def test_values_and_gradients_match_jax(group):
    jitted, args = cases.group_program(LIB, cases.GROUPS[group])
    results = jitted(args)
    for name, ((_, (out, residual)), grads) in results.items():
        case = cases.CASES[name]
        q = args[name][0]
        dtype = case.get("dtype", "float32")
        assert out.dtype == np.dtype(dtype) and out.shape == q.shape, name
        _close(out, REFERENCE[f"{name}/out"], dtype)
        if residual is not None:
            assert residual.shape == q.shape[:-1]
            _close(residual, REFERENCE[f"{name}/residual"], dtype)
        inputs = cases.arrays(case)
        for wrt, g in zip(cases.differentiated(case), grads, strict=True):
            assert g.shape == inputs[wrt].shape, (name, wrt)
            _close(g, REFERENCE[f"{name}/d_{wrt}"], dtype)


def _qkv(seed=0, b=2, t=4, s=6, n=4, k=2, h=8, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=shape).astype(dtype)
            for shape in ((b, t, n, h), (b, s, k, h), (b, s, k, h))]


def test_none_is_xla_and_jvp_matches_vjp_and_vmap_matches_the_batch():
    q, k, v = _qkv(b=3)
    lengths = np.array([2, 6, 4], np.int32)
    f = lambda q: attention(q, k, v, is_causal=True)       # noqa: E731
    tangent = np.ones_like(q)
    ct = np.random.default_rng(1).normal(size=q.shape).astype(np.float32)

    def one(q, k, v, n):            # one example, a batch of one
        return attention(q[None], k[None], v[None], key_value_seq_lengths=n[None],
                         is_causal=True)[0]

    @spmdc.jit
    def program(q, tangent, ct):
        _, jvp_out = spmdc.jvp(f, (q,), (tangent,))
        _, pullback = spmdc.vjp(f, q)
        xla = attention(q, k, v, is_causal=True, implementation="xla")
        batched = attention(q, k, v, key_value_seq_lengths=lengths, is_causal=True)
        # <J t, ct> == <t, J^T ct>
        return (f(q), xla, jnp.sum(jvp_out * ct), jnp.sum(pullback(ct)[0] * tangent),
                spmdc.vmap(one)(q, k, v, lengths), batched)
    default, xla, forward, reverse, mapped, batched = program(q, tangent, ct)
    np.testing.assert_array_equal(np.asarray(default), np.asarray(xla))
    np.testing.assert_allclose(float(forward), float(reverse), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(mapped), np.asarray(batched), rtol=1e-6, atol=1e-6)


@pytest.mark.devices(2)
def test_pmap_and_shard_map_match_the_whole_batch():
    q, k, v = _qkv()
    whole = np.asarray(attention(q, k, v, is_causal=True))
    f = lambda q, k, v: attention(q, k, v, is_causal=True)      # noqa: E731
    split = [x.reshape(2, 1, *x.shape[1:]) for x in (q, k, v)]
    np.testing.assert_allclose(np.asarray(spmdc.pmap(f)(*split)).reshape(whole.shape), whole,
                               rtol=1e-6, atol=1e-6)
    mesh = Mesh(np.array(spmdc.devices()[:2]), ("b",))
    spec = PartitionSpec("b")
    sharded = spmdc.shard_map(f, mesh=mesh, in_specs=(spec,) * 3, out_specs=spec)
    np.testing.assert_allclose(np.asarray(spmdc.jit(sharded)(q, k, v)), whole,
                               rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("call, error, fragment", [
    (lambda q, k, v: attention(q, k, v[..., :4]), ValueError, "value shape should be"),
    (lambda q, k, v: attention(q, k.astype(np.float16), v), ValueError, "value dtype"),
    (lambda q, k, v: attention(q[..., :4], k, v), ValueError, "query shape should be"),
    (lambda q, k, v: attention(q[:, :, :3], k, v), ValueError,
     "multiple of key/value heads, but got 3 vs 2"),
    (lambda q, k, v: attention(q, k, v, mask=np.ones((2, 4, 4, 6), np.int32)), ValueError,
     "mask dtype should be bool"),
    (lambda q, k, v: attention(q, k, v, bias=np.ones((1, 2, 3, 4, 6), np.float32)),
     ValueError, "bias ndim should be 4"),
    (lambda q, k, v: attention(q, k, v, query_seq_lengths=np.array([1, 2, 3], np.int32)),
     ValueError, "query_seq_lengths shape"),
    (lambda q, k, v: attention(q, k, v, key_value_seq_lengths=np.array([1., 2.])),
     ValueError, "key_value_seq_lengths dtype should be int32"),
    (lambda q, k, v: attention(q, k, v, implementation="flash"), ValueError,
     "Unsupported implementation option"),
    (lambda q, k, v: attention(q, k, v, implementation="cudnn"), NotImplementedError,
     "cuDNN takes float16 or bfloat16"),
    (lambda q, k, v: attention(*(x.astype(jnp.bfloat16) for x in (q, k, v)),
                               local_window_size=(1, 1), implementation="cudnn"),
     ValueError, "cuDNN doesn't support right window: 1"),
])
def test_bad_input_gets_jax_errors(call, error, fragment):
    q, k, v = _qkv()
    with pytest.raises(error, match=fragment):
        call(q, k, v)


def test_float16_takes_the_default_precision_where_the_cpu_refuses_f16_f16_f32():
    # Note [attention logits precision]: JAX's dot refuses F16_F16_F32 on the CPU and its
    # attention falls back to the default precision; spmdc raised the dot's error.
    q = np.random.default_rng(0).standard_normal((1, 2, 2, 3)).astype(np.float16)
    k = np.random.default_rng(1).standard_normal((1, 3, 1, 3)).astype(np.float16)
    want = [[[[-0.475341796875, 0.767578125, 0.378662109375],     # JAX 0.10.2, eager
              [-0.471923828125, 0.76318359375, 0.3779296875]],
             [[-0.1553955078125, 0.77392578125, 0.3583984375],
              [-0.79052734375, 0.78564453125, 0.401123046875]]]]
    for got in (attention(q, k, k), spmdc.jit(attention)(q, k, k)):
        assert got.dtype == np.float16
        np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=2e-3, atol=2e-3)
    with pytest.raises(ValueError, match="F16_F16_F32"):
        jnp.einsum("ij,kj->ik", q[0, 0], k[0, :, 0],
                   precision=spmdc.lax.DotAlgorithmPreset.F16_F16_F32)
