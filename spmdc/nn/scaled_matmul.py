"""Block-scaled (MX format) products: ``scaled_matmul`` on operands already quantized,
``scaled_dot_general`` that quantizes its operands itself (and its cotangent in the
backward pass), and ``get_scaled_dot_general_config`` (JAX's ``jax.nn`` names; JAX 0.10.2
runs them on CUDA/ROCm only, spmdc everywhere: Note [block-scaled matmul] in
compiler/primitives/scaled_matmul.py).

Note [block-scaled quantization]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``scaled_dot_general`` moves each operand to (B, R, K) (batch dimensions, kept ones,
contracted ones; one trailing batch dimension of 1 when there are none) and quantizes
it per block of ``block_size`` elements along K, as JAX's
jax/_src/cudnn/scaled_matmul_stablehlo.py does:

- mxfp8 (block 32, float8_e4m3fn data, float8_e8m0fnu scales): a block's scale is
  ``max|x| / 448`` rounded *up* to a power of two (its float32 exponent, plus one when
  the mantissa is not zero, except at the largest exponent and for the values below
  2**-127 that round to 2**-127); data is ``x / scale`` clipped to +-448.
- nvfp4 (block 16, float4_e2m1fn data, float8_e4m3fn scales, a float32 global scale):
  ``x / global_scale``, then a block's scale is ``max|x| / 6`` clipped to [0, 448] and
  rounded to e4m3fn; data is ``x / scale`` clipped to +-6. The product is in float32,
  times both global scales, then converted.

The backward pass (JAX's custom VJP) quantizes the cotangent with the third config and
each operand again with its own, and takes the two transposed products the same way
(nvfp4: the cotangent products are plain float products, and gradients of operands
beyond ``global_scale * 6 * 448`` are zero).
"""
from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np

from spmdc import lax
from spmdc import numpy as jnp
from spmdc.core import dtypes
from spmdc.lax.block_scaled import block_scaled_matmul
from spmdc.transforms.custom_derivatives import custom_vjp

__all__ = ["BlockScaleConfig", "scaled_matmul", "scaled_dot_general",
           "get_scaled_dot_general_config"]

_F32 = np.dtype(np.float32)


@dataclasses.dataclass(frozen=True)
class BlockScaleConfig:
    """How one operand is quantized (See Note [block-scaled quantization])."""
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any | None
    infer_only: bool

    def __hash__(self) -> int:          # global_scale may be an array: hashed by identity
        return hash((self.mode, self.block_size, np.dtype(self.data_type).name,
                     np.dtype(self.scale_type).name, id(self.global_scale), self.infer_only))

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, BlockScaleConfig) and hash(self) == hash(other)


def get_scaled_dot_general_config(mode: str, global_scale: Any = None) -> BlockScaleConfig:
    """The quantization config of ``mode`` ('mxfp8' or 'nvfp4') for ``scaled_dot_general``;
    nvfp4's ``global_scale`` is a float32 array of shape (1,), ones by default."""
    if mode == "nvfp4":
        return BlockScaleConfig("nvfp4", 16, jnp.float4_e2m1fn.dtype, jnp.float8_e4m3fn.dtype,
                                jnp.ones((1,), _F32) if global_scale is None else global_scale,
                                False)
    if mode == "mxfp8":
        return BlockScaleConfig("mxfp8", 32, jnp.float8_e4m3fn.dtype,
                                jnp.float8_e8m0fnu.dtype, None, False)
    raise ValueError(f"Unsupported mode: {mode}")


def scaled_matmul(lhs: Any, rhs: Any, lhs_scales: Any, rhs_scales: Any,
                  preferred_element_type: Any = np.float32) -> Any:
    """``einsum('BMK,BNK->BMN', lhs * scales, rhs * scales)`` with each scale repeated over
    its block of K (``K // Ks`` elements), computed in float32 and converted to
    ``preferred_element_type`` (See Note [block-scaled matmul])."""
    a, b, a_s, b_s = (jnp.asarray(x) for x in (lhs, rhs, lhs_scales, rhs_scales))
    if not all(x.ndim == 3 for x in (a, b, a_s, b_s)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    (B, M, K), (Bb, N, Kb) = a.shape, b.shape
    if K != Kb or B != Bb:
        raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) "
                         f"and contract (K) dimensions, but got shapes {a.shape} and "
                         f"{b.shape}")
    if a_s.shape[2] != b_s.shape[2] or a_s.shape[0] != b_s.shape[0]:
        raise ValueError("scaled_matmul requires scales to have matching batch (B) and "
                         f"contract (K) dimensions, but got shapes {a_s.shape} and "
                         f"{b_s.shape}")
    if a_s.shape[1] != M or b_s.shape[1] != N:
        raise ValueError("scaled_matmul requires scales to match non-contract dimensions of "
                         f"inputs, but got shapes a: {a.shape}, b: {b.shape}, a_scales: "
                         f"{a_s.shape}, b_scales: {b_s.shape}")
    if a_s.shape[2] == 0 or K % a_s.shape[2]:
        raise ValueError(f"scaled_matmul requires the contract dimension K={K} to be a "
                         f"whole number of scale blocks, but got {a_s.shape[2]} scales")
    return block_scaled_matmul(a, b, a_s, b_s, dtypes.canonicalize(preferred_element_type))


# --- quantization (See Note [block-scaled quantization]) ---------------------------------

def _e8m0_rounding_up(x: Any) -> Any:
    bits = lax.bitcast_convert_type(x.astype(_F32), np.uint32)
    exponent, mantissa = bits >> 23, bits & 0x7FFFFF
    up = (mantissa > 0) & (exponent != 0xFE) & ~((exponent == 0) & (mantissa <= 0x400000))
    return jnp.where(up, exponent + 1, exponent).astype(np.uint8)


def _e8m0_as(x: Any, dtype: Any) -> Any:
    value = lax.bitcast_convert_type(x.astype(np.uint32) << 23, _F32)
    tiny = 2.0**-15 if np.dtype(dtype) == np.float16 else 2.0**-127
    return jnp.where(value == 0, np.float32(tiny), value).astype(dtype)


def _quantize(x: Any, config: BlockScaleConfig) -> tuple[Any, Any]:
    shape = x.shape
    block = config.block_size
    if shape[-1] < block or shape[-1] % block:
        raise ValueError(f"scaled_dot_general: the contracted size {shape[-1]} is not a "
                         f"multiple of the {config.mode} block size {block}")
    x = x.reshape(shape[:-1] + (shape[-1] // block, block))
    top = jnp.finfo(config.data_type).max.astype(x.dtype)
    amax = jnp.max(jnp.abs(x), axis=-1, keepdims=True) / top
    if config.mode == "mxfp8":
        scales = _e8m0_rounding_up(amax)
        scaled = x / _e8m0_as(scales, x.dtype)
    elif config.mode == "nvfp4":
        scale_top = jnp.finfo(config.scale_type).max.astype(x.dtype)
        x = x / config.global_scale
        amax = jnp.max(jnp.abs(x), axis=-1, keepdims=True) / top
        scales = lax.optimization_barrier(
            jnp.clip(amax, 0, scale_top).astype(config.scale_type))
        scaled = x / scales.astype(_F32)
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    data = jnp.clip(scaled, -top, top).astype(config.data_type).reshape(shape)
    scales = scales.reshape(scales.shape[:-1])
    if scales.dtype != np.dtype(config.scale_type):
        scales = lax.bitcast_convert_type(scales, config.scale_type)
    return data, scales


def _to_3d(x: Any, contract: Sequence[int], batch: Sequence[int]) -> Any:
    """``x`` as (batch, kept, contracted), each group in its axes' order."""
    kept = [d for d in range(x.ndim) if d not in contract and d not in batch]
    order = [d for d in range(x.ndim) if d in batch] + kept + \
        [d for d in range(x.ndim) if d in contract]
    sizes = [int(np.prod([x.shape[d] for d in group], dtype=int))
             for group in ([d for d in order if d in batch], kept,
                           [d for d in order if d in contract])]
    return jnp.transpose(x, order).reshape(sizes)


def _out_shape(lhs_shape, rhs_shape, lhs_dn, rhs_dn) -> tuple[int, ...]:
    (l_contract, l_batch), (r_contract, r_batch) = lhs_dn, rhs_dn
    return (*(d for i, d in enumerate(lhs_shape) if i in l_batch),
            *(d for i, d in enumerate(lhs_shape) if i not in l_contract and i not in l_batch),
            *(d for i, d in enumerate(rhs_shape) if i not in r_contract and i not in r_batch))


def _scaled_product(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    (l_contract, r_contract), (l_batch, r_batch) = dimension_numbers
    lhs_q, lhs_s = _quantize(_to_3d(lhs, l_contract, l_batch), configs[0])
    rhs_q, rhs_s = _quantize(_to_3d(rhs, r_contract, r_batch), configs[1])
    nvfp4 = configs[0].mode == "nvfp4"
    out = block_scaled_matmul(lhs_q, rhs_q, lhs_s, rhs_s,
                              _F32 if nvfp4 else preferred_element_type)
    if nvfp4:
        out = (out * (configs[0].global_scale * configs[1].global_scale)).astype(
            preferred_element_type)
    return out.reshape(_out_shape(lhs.shape, rhs.shape, (l_contract, l_batch),
                                  (r_contract, r_batch)))


def _transposed_lhs(g, x, y, dimension_numbers, preferred_element_type, configs,
                    swap_ans=False):
    """The cotangent of ``x`` in ``dot_general(x, y)`` from ``g``, as a scaled product."""
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_kept = [d for d in range(x.ndim) if d not in x_contract and d not in x_batch]
    y_kept = [d for d in range(y.ndim) if d not in y_contract and d not in y_batch]
    nb = len(x_batch)
    if swap_ans:
        ans_y = range(nb, nb + len(y_kept))
    else:
        ans_y = range(nb + len(x_kept), nb + len(x_kept) + len(y_kept))
    ans_batch = range(nb)
    x_contract_by_y = list(np.take(x_contract, np.argsort(y_contract)))
    out_axes = np.argsort(list(x_batch) + x_kept + x_contract_by_y)
    y_dn, g_dn = (y_kept, y_batch), (tuple(ans_y), tuple(ans_batch))
    y_3d, g_3d = _to_3d(y, *y_dn), _to_3d(g, *g_dn)
    if configs[0].mode != "nvfp4":
        g_q, g_s = _quantize(g_3d, configs[0])
        y_q, y_s = _quantize(y_3d, configs[1])
        out = block_scaled_matmul(g_q, y_q, g_s, y_s, preferred_element_type)
    else:
        out = jnp.matmul(g_3d, jnp.transpose(y_3d, (0, 2, 1)),
                         preferred_element_type=preferred_element_type)
    out = out.reshape(_out_shape(g.shape, y.shape, g_dn, y_dn))
    return lax.transpose(out, tuple(int(a) for a in out_axes))


@partial(custom_vjp, nondiff_argnums=(2, 3, 4))
def _scaled_dot(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    return _scaled_product(lhs, rhs, dimension_numbers, preferred_element_type, configs)


def _scaled_dot_fwd(lhs, rhs, dimension_numbers, preferred_element_type, configs):
    return _scaled_product(lhs, rhs, dimension_numbers, preferred_element_type,
                           configs), (lhs, rhs)


def _scaled_dot_bwd(dimension_numbers, preferred_element_type, configs, res, g):
    lhs, rhs = res
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    grad_lhs = _transposed_lhs(g, lhs, rhs, dimension_numbers, preferred_element_type,
                               [configs[2], configs[1]])
    grad_rhs = _transposed_lhs(g, rhs, lhs, ((y_contract, x_contract), (y_batch, x_batch)),
                               preferred_element_type, [configs[2], configs[0]],
                               swap_ans=True)
    if configs[2].mode == "nvfp4":
        top = jnp.finfo(configs[0].data_type).max.astype(lhs.dtype)
        scale_top = jnp.finfo(configs[0].scale_type).max.astype(lhs.dtype)
        grad_lhs = jnp.where(jnp.abs(lhs) <= configs[0].global_scale * top * scale_top,
                             grad_lhs, 0)
        grad_rhs = jnp.where(jnp.abs(rhs) <= configs[1].global_scale * top * scale_top,
                             grad_rhs, 0)
    return grad_lhs, grad_rhs


_scaled_dot.defvjp(_scaled_dot_fwd, _scaled_dot_bwd)


def scaled_dot_general(lhs: Any, rhs: Any, dimension_numbers: Any,
                       preferred_element_type: Any = np.float32,
                       configs: Sequence[BlockScaleConfig] | None = None,
                       implementation: str | None = None) -> Any:
    """``lax.dot_general`` with ``lhs`` and ``rhs`` quantized per block by ``configs``
    (lhs, rhs, and the cotangent's, from ``get_scaled_dot_general_config``), then a
    ``scaled_matmul``; differentiable (See Note [block-scaled quantization]). Without
    ``configs`` it is ``lax.dot_general``. ``implementation`` is JAX's deprecated backend
    selector: it warns, and spmdc chooses, as JAX does."""
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning, stacklevel=2)
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers,
                               preferred_element_type=preferred_element_type)
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    preferred = dtypes.canonicalize(preferred_element_type)
    if preferred not in (np.dtype(np.float32), np.dtype("bfloat16"), np.dtype(np.float16)):
        raise TypeError("Only support preferred_element_type in (f32, bf16, f16), but got "
                        f"{preferred}")
    (l_contract, r_contract), (l_batch, r_batch) = dimension_numbers
    dn = ((tuple(l_contract), tuple(r_contract)), (tuple(l_batch), tuple(r_batch)))
    squeeze = False
    if not dn[1][0] and not dn[1][1]:     # a trailing batch dimension of 1, dropped after
        lhs, rhs = jnp.expand_dims(lhs, lhs.ndim), jnp.expand_dims(rhs, rhs.ndim)
        dn, squeeze = (dn[0], ((lhs.ndim - 1,), (rhs.ndim - 1,))), True
    out = _scaled_dot(lhs, rhs, dn, preferred, tuple(configs))
    return jnp.squeeze(out, axis=0) if squeeze else out
