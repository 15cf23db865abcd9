"""``nn.dot_product_attention``: scaled dot-product attention with JAX 0.10.2's signature
and semantics (jax/_src/nn/functions.py), in its two implementations:

- ``'xla'`` (and ``None``, which JAX 0.10.2 maps to ``'xla'``): the computation written
  with ``jnp``, the same steps as JAX's so that values and gradients agree: the logits in
  ``promote_types(dtype, float32)`` (bfloat16 and float16 operands multiply with an f32
  accumulator), scaled, biased, masked with ``-0.7 * finfo.max`` (capped at float32's),
  a float32 softmax, the probabilities cast back to the key's dtype, grouped-query heads
  as a ``vmap`` over the G query heads that share one key/value head.
- ``'cudnn'``: cuDNN's fused flash attention (Note [cuDNN fused attention] in
  compiler/primitives/attention_cudnn.py), whose gradient is cuDNN's backward kernel, as
  JAX's (Note [one cuDNN forward when differentiated] there). Reverse mode only, as in
  JAX. Only CUDA lowers it; on the CPU the lowering is a clear error.

Note [where the cuDNN checks run]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
JAX checks a cuDNN case when the function is traced: first whether cuDNN is installed
(``RuntimeError: cuDNN is not detected.`` on a machine without the CUDA plugin), then the
dtype (float16/bfloat16) and the head dimension (a multiple of 8, at most 256 on Hopper
and later GPUs, 128 otherwise or when no CUDA device is present). spmdc checks the dtype,
the head dimension and the shapes at trace time too, with JAX's exception types, but not
the platform: a program with cuDNN attention can be traced anywhere and lowered for CUDA
(``lower(lowering_platforms=('cuda',))``) on a machine without a GPU; lowering it for the
CPU is the error (a ``LoweringError``, a ``RuntimeError`` as JAX's).

Note [attention logits precision]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
The logits of bfloat16 and float16 operands are asked of the dot with the algorithm
BF16_BF16_F32 or F16_F16_F32 (an f32 accumulator, JAX's fix for inconsistent types in the
backward pass). Where the dot refuses the algorithm (F16_F16_F32 on the CPU, in JAX as in
spmdc: core/precision.py), JAX catches the error and computes the logits again with the
default precision; spmdc asks ``preset_supported`` first and uses the default precision
directly, so float16 attention gives JAX's eager values on the CPU. (Under ``jit`` JAX's
fallback does not run, since its dot is refused only when the program is lowered, and
JAX fails; spmdc gives the same values as eagerly.)
"""
from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.devices import local_devices
from spmdc.core.precision import preset_supported
from spmdc.lax.cudnn_attention import cudnn_attention_fwd
from spmdc.nn.functions import softmax
from spmdc.numpy.reductions import logsumexp
from spmdc.transforms.vmap import vmap

__all__ = ["dot_product_attention"]

_IMPLEMENTATIONS = (None, "xla", "cudnn")


def _ensure_4d(t: Any) -> Any:
    t = jnp.asarray(t)
    return jnp.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def _check(t: Any, shape: list[int], dtype: Any, name: str) -> None:
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"dot_product_attention: {name} ndim should be {len(shape)}, but got "
                         f"{t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"dot_product_attention: {name} dtype should be {np.dtype(dtype)}, "
                         f"but got {t.dtype}")
    if any(want != -1 and got != want for got, want in zip(t.shape, shape, strict=True)):
        raise ValueError(f"dot_product_attention: {name} shape should be {shape}: but got "
                         f"{t.shape} (-1: any size)")


# --- 'xla' ---------------------------------------------------------------------------------

def _large_negative(dtype: Any) -> Any:
    top = min(float(jnp.finfo(dtype).max), float(np.finfo(np.float32).max))
    return jnp.asarray(-0.7 * top, dtype=dtype)


def _keep_mask(T: int, S: int, mask, is_causal, q_len, kv_len, window) -> Any | None:
    """The (B|1, 1, T, S) positions that take part, or None when every one does."""
    keep = mask
    t, s = jnp.arange(T)[:, None], jnp.arange(S)[None, :]

    def both(a, b):
        return b if a is None else jnp.logical_and(a, b)
    if is_causal:
        keep = both(keep, jnp.tril(jnp.ones((T, S), dtype=bool))[None, None])
    if window is not None:
        left, right = window
        keep = both(keep, jnp.logical_and(t >= s - right, t <= s + left)[None, None])
    if q_len is not None or kv_len is not None:
        pad = True
        if q_len is not None:
            pad = jnp.arange(T)[None, :, None] < q_len[:, None, None]
        if kv_len is not None:
            pad = jnp.logical_and(pad, jnp.arange(S)[None, None, :] < kv_len[:, None, None])
        keep = both(keep, pad[:, None])
    return keep


def _attention_core(query, bias, mask, key, value, *, is_causal, scale, q_len, kv_len,
                    window, return_residual):
    """One group's attention: query BTNH, key and value BSNH, bias and mask BNTS."""
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    # See Note [attention logits precision]
    precision = {np.dtype("bfloat16"): lax.DotAlgorithmPreset.BF16_BF16_F32,
                 np.dtype(np.float16): lax.DotAlgorithmPreset.F16_F16_F32}.get(query.dtype)
    if precision is not None and not preset_supported(precision):
        precision = None
    logits = jnp.einsum("BTNH,BSNH->BNTS", query, key, precision=precision,
                        preferred_element_type=logits_dtype)
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    keep = _keep_mask(logits.shape[2], logits.shape[3], mask, is_causal, q_len, kv_len,
                      window)
    if keep is not None:
        logits = jnp.where(keep, logits, _large_negative(logits.dtype))
    logits = logits.astype(np.float32)        # the softmax is always float32
    probs = softmax(logits, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
    if q_len is not None:
        rows = jnp.arange(encoded.shape[1])[None, :] < q_len[:, None]
        encoded = encoded * rows[:, :, None, None].astype(encoded.dtype)
    if return_residual:
        lse = jnp.transpose(logsumexp(logits, axis=-1).astype(key.dtype), (0, 2, 1))
        return encoded, lax.stop_gradient(lse)
    return encoded


def _attention_xla(query, key, value, bias, mask, *, is_causal, scale, q_len, kv_len,
                   window, return_residual):
    B, T, N, H = query.shape
    K = key.shape[2]
    G = N // K
    query = jnp.reshape(query, (B, T, K, G, H))

    def grouped(t, name):       # (B|1, N|1, T, S) -> (B|1, K|1, G, T, S)
        if t is None:
            return None
        tB, tN, tT, tS = t.shape
        if tN == 1:
            return jnp.broadcast_to(t[:, :, None], (tB, 1, G, tT, tS))
        if tN != N:
            raise ValueError(f"dot_product_attention: the {name}'s head dimension (axis 1 of "
                             f"{t.shape}) must be 1 or the number of query heads {N}")
        return jnp.reshape(t, (tB, K, G, tT, tS))
    core = partial(_attention_core, key=key, value=value, is_causal=is_causal, scale=scale,
                   q_len=q_len, kv_len=kv_len, window=window,
                   return_residual=return_residual)
    bias, mask = grouped(bias, "bias"), grouped(mask, "mask")
    out = vmap(core, in_axes=(3, None if bias is None else 2, None if mask is None else 2),
               out_axes=3)(query, bias, mask)
    if return_residual:
        encoded, lse = out
        return jnp.reshape(encoded, (B, T, N, -1)), jnp.reshape(lse, (B, T, N))
    return jnp.reshape(out, (B, T, N, -1))


# --- 'cudnn' -------------------------------------------------------------------------------

def _cudnn_head_limit() -> int:
    """256 on Hopper or later GPUs, else 128 (JAX's rule; Note [where the cuDNN checks
    run])."""
    capability = getattr(local_devices()[0], "compute_capability", None)
    if capability is None:
        return 128
    return 256 if tuple(int(x) for x in str(capability).split(".")) >= (9, 0) else 128


def _cudnn_checks(query, key, value, bias) -> None:
    for name, t in (("query", query), ("key", key), ("value", value)):
        if t.dtype not in (np.dtype(np.float16), np.dtype("bfloat16")):
            raise NotImplementedError(
                f"dot_product_attention(implementation='cudnn'): cuDNN takes float16 or "
                f"bfloat16, but the {name} is {t.dtype}: cast the inputs, or use "
                "implementation='xla'")
    T, H, S = query.shape[1], query.shape[3], key.shape[1]
    limit = _cudnn_head_limit()
    if H > limit or H % 8:
        raise NotImplementedError(
            f"dot_product_attention(implementation='cudnn'): the head dim must be <= {limit} "
            f"and a multiple of 8, but got {H}")
    if bias is not None and bias.shape[2:] != (T, S):
        raise ValueError(f"dot_product_attention(implementation='cudnn'): the bias must have "
                         f"the sequence lengths of QKV ({T}, {S}), got {bias.shape[2]} and "
                         f"{bias.shape[3]}")
    if bias is not None and bias.dtype != query.dtype:
        raise ValueError(f"dot_product_attention(implementation='cudnn'): cuDNN adds a bias of "
                         f"the query's dtype {query.dtype}, got {bias.dtype}: cast the bias")


def _bias_and_mask(bias, mask, dtype):
    """The additive bias cuDNN takes: the mask as 0 / a large negative number, added."""
    if mask is not None:
        negative = -2 << 40 if np.dtype(dtype) == np.dtype("bfloat16") else -2 << 14
        mask = jnp.where(mask, jnp.asarray(0, dtype), jnp.asarray(negative, dtype))
    if bias is None or mask is None:
        return bias if mask is None else mask
    return bias + mask


def _attention_cudnn(query, key, value, bias, mask, *, is_causal, scale, q_len, kv_len,
                     window, return_residual):
    B, T = query.shape[:2]
    S = key.shape[1]
    padded = q_len is not None or kv_len is not None
    if padded:
        q_len = jnp.full((B,), T, dtype=np.int32) if q_len is None else q_len
        kv_len = jnp.full((B,), S, dtype=np.int32) if kv_len is None else kv_len
    mask_type = {(False, False): "NO_MASK", (True, False): "PADDING",
                 (False, True): "CAUSAL", (True, True): "PADDING_CAUSAL"}[padded, is_causal]
    sliding = 0
    if window is not None:
        left, right = window
        if right != 0 and mask_type != "CAUSAL":
            raise ValueError(f"dot_product_attention: cuDNN doesn't support right window: "
                             f"{right} when causal mask is not used.")
        sliding = left + 1
        if sliding <= 0:
            raise ValueError(f"dot_product_attention: cuDNN requires a left window >= 0, got "
                             f"{left}")
    bias = _bias_and_mask(bias, mask, query.dtype)
    _cudnn_checks(query, key, value, bias)
    out, stats = cudnn_attention_fwd(query, key, value, bias,
                                     (q_len, kv_len) if padded else None, scale=scale,
                                     mask_type=mask_type, sliding_window=sliding)
    if return_residual:     # cuDNN's statistics are (B, N, T) float32
        return out, jnp.transpose(lax.stop_gradient(stats), (0, 2, 1)).astype(out.dtype)
    return out


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None,
                          mask: Any = None, *, scale: float | None = None,
                          is_causal: bool = False, query_seq_lengths: Any = None,
                          key_value_seq_lengths: Any = None,
                          local_window_size: int | tuple[int, int] | None = None,
                          implementation: str | None = None,
                          return_residual: bool = False) -> Any:
    """``softmax(Q K^T * scale + bias) V`` for each head, as ``jax.nn.dot_product_attention``.

    ``query`` is (B, T, N, H) or (T, N, H); ``key`` and ``value`` (B, S, K, H) or (S, K, H)
    with N a multiple of K (grouped-query attention; K == 1 is multi-query). ``bias`` and
    the boolean ``mask`` (True: take part) broadcast to (B, N, T, S). ``scale`` defaults to
    ``1/sqrt(H)``. ``is_causal``, ``query_seq_lengths``/``key_value_seq_lengths`` (int32,
    (B,)) and ``local_window_size`` ((left, right), or one int for both) mask further.
    ``implementation``: None or 'xla' (jnp), 'cudnn' (cuDNN's fused kernel, CUDA only,
    float16/bfloat16). With ``return_residual``, also the log-sum-exp of each row of
    logits, (B, T, N). See the module's docstring.
    """
    if implementation not in _IMPLEMENTATIONS:
        raise ValueError(f"Unsupported implementation option: {implementation!r} (use None, "
                         "'xla' or 'cudnn')")
    output_shape = jnp.asarray(query).shape
    query_arr, key_arr, value_arr = _ensure_4d(query), _ensure_4d(key), _ensure_4d(value)
    bias = None if bias is None else _ensure_4d(bias)
    mask = None if mask is None else _ensure_4d(mask)
    q_len = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_len = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    window = local_window_size
    if isinstance(window, int):
        window = (window, window)
    B, S, K, H = key_arr.shape
    _check(value_arr, [B, S, K, H], key_arr.dtype, "value")
    _check(query_arr, [B, -1, -1, H], key_arr.dtype, "query")
    _check(mask, [-1] * 4, np.dtype(bool), "mask")
    _check(bias, [-1] * 4, None, "bias")
    _check(q_len, [B], np.dtype(np.int32), "query_seq_lengths")
    _check(kv_len, [B], np.dtype(np.int32), "key_value_seq_lengths")
    if query_arr.shape[-2] % K != 0:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, "
                         f"but got {query_arr.shape[-2]} vs {K}")
    scale_value = 1.0 / np.sqrt(H) if scale is None else scale
    attention = _attention_cudnn if implementation == "cudnn" else _attention_xla
    out = attention(query_arr, key_arr, value_arr, bias, mask, is_causal=bool(is_causal),
                    scale=scale_value, q_len=q_len, kv_len=kv_len, window=window,
                    return_residual=return_residual)
    if return_residual:
        out, residual = out
        return jnp.reshape(out, output_shape), jnp.reshape(residual, output_shape[:-1])
    return jnp.reshape(out, output_shape)
