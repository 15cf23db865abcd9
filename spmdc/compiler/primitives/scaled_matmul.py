"""The block-scaled matmul primitive behind ``nn.scaled_matmul`` (MX formats: mxfp8,
nvfp4): its shape rule, NumPy reference, batching, and lowerings (by its definition on
every platform, to cuDNN's custom call on CUDA).

Note [block-scaled matmul]
~~~~~~~~~~~~~~~~~~~~~~~~~~
``scaled_matmul(a, b, a_scales, b_scales)`` takes a (B, M, K), b (B, N, K) in a narrow
type (float8_e4m3fn/e5m2, float4_e2m1fn) and scales (B, M, K/bs), (B, N, K/bs)
(float8_e8m0fnu or float8_e4m3fn), one per block of ``bs`` consecutive elements along K.
Its value is its definition: each element times its block's scale, both exactly
widened to float32, then the batched product contracting K in float32, converted to
``preferred_element_type``. That is what the CPU (and any platform but CUDA) computes.
On CUDA it lowers as JAX 0.10.2 does (jax/_src/cudnn/scaled_matmul_stablehlo.py): the
legacy custom call ``__op$block_scaled_dot`` (api_version 2) on the four operands,
row-major layouts, and the backend config ``{"scaled_dot_backend_config":
{"lhs_batch_dimensions": [0], "rhs_batch_dimensions": [0], "dequantize_type": "F32"}}``
(F16/BF16 for those result types), which XLA's GPU compiler runs with cuDNN's
block-scaled GEMM. JAX's primitive has no derivative (``scaled_dot_general``'s custom
VJP, spmdc/nn/scaled_matmul.py, is where its gradients come from); spmdc's has the
definition's: the product is linear in each of its four operands, so a tangent is the
sum of the primitive applied with one operand replaced by its tangent, and a cotangent is
the float32 product of the output's cotangent with the other side, times the operand's
scales (for the data) or summed over each block against the data (for the scales).
"""
from __future__ import annotations

import json

import numpy as np

from ..ir import TensorType, dtype_kind
from ..passes.autodiff import vjp_rules
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules, batch_to_front
from ..stablehlo import by_platform, hlo, ir, lower_rules, mlir_type
from .core import ShapeError, declare

__all__ = ["scaled_matmul_p", "BLOCK_SCALED_DOT_TARGET", "backend_config"]

BLOCK_SCALED_DOT_TARGET = "__op$block_scaled_dot"
_F32 = np.dtype(np.float32)
_CONFIG_TYPES = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16",
                 np.dtype("bfloat16"): "BF16"}


def _rule(a: TensorType, b: TensorType, a_scales: TensorType, b_scales: TensorType, *,
          preferred_element_type: np.dtype) -> TensorType:
    types = (a, b, a_scales, b_scales)
    if any(t.ndim != 3 for t in types):
        raise ShapeError(f"scaled_matmul takes four rank-3 operands, got "
                         f"{', '.join(map(str, types))}")
    (B, M, K), (Bb, N, Kb) = a.shape, b.shape
    if (B, K) != (Bb, Kb) or a_scales.shape[0::2] != b_scales.shape[0::2] or \
            a_scales.shape[:2] != (B, M) or b_scales.shape[:2] != (B, N):
        raise ShapeError(f"scaled_matmul: operands (B, M, K), (B, N, K) with scales "
                         f"(B, M, Ks), (B, N, Ks); got {', '.join(map(str, types))}")
    blocks = a_scales.shape[2]
    if blocks == 0 or K % blocks:
        raise ShapeError(f"scaled_matmul: K={K} is not a whole number of {blocks} blocks")
    if any(dtype_kind(t.dtype) not in "iuf" for t in types):
        raise ShapeError(f"scaled_matmul takes real operands and scales, got "
                         f"{', '.join(map(str, types))}")
    return TensorType((B, M, N), np.dtype(preferred_element_type))


def _dequantized(x: np.ndarray, scales: np.ndarray) -> np.ndarray:
    block = x.shape[-1] // scales.shape[-1]
    return x.astype(_F32) * np.repeat(scales.astype(_F32), block, axis=-1)


def _impl(a, b, a_scales, b_scales, *, preferred_element_type):
    out = np.einsum("bmk,bnk->bmn", _dequantized(np.asarray(a), np.asarray(a_scales)),
                    _dequantized(np.asarray(b), np.asarray(b_scales)))
    return out.astype(_F32).astype(preferred_element_type)


scaled_matmul_p = declare("scaled_matmul", _rule, _impl)


# --- batching: the vmapped dimension joins the batch dimension B ---------------------------

def _batch(b, axis, args, dims, *, preferred_element_type):
    n = axis.size
    merged = []
    for x, d in zip(args, dims, strict=True):
        x = batch_to_front(b, x, d, axis.size)
        shape = x.type.shape
        merged.append(b.reshape(x, new_sizes=(shape[0] * shape[1], *shape[2:])))
    out = b.bind(scaled_matmul_p, *merged, preferred_element_type=preferred_element_type)
    return [b.reshape(out, new_sizes=(n, out.type.shape[0] // n, *out.type.shape[1:]))], [0]


batch_rules[scaled_matmul_p] = _batch


# --- derivatives: the definition's (see the module's Note) --------------------------------

def _jvp(b, primals, tangents, *, preferred_element_type):
    out = b.bind(scaled_matmul_p, *primals, preferred_element_type=preferred_element_type)
    terms = [b.bind(scaled_matmul_p, *primals[:i], t, *primals[i + 1:],
                    preferred_element_type=preferred_element_type)
             for i, t in enumerate(tangents) if t is not None]
    total = terms[0]
    for term in terms[1:]:
        total = b.add(total, term)
    return [out], [total]


def _repeated(b, scales, shape):
    """float32 ``scales`` (B, R, Ks) repeated over their blocks to ``shape`` (B, R, K)."""
    B, R, K = shape
    blocks = scales.type.shape[2]
    wide = b.convert(scales, new_dtype=_F32)
    wide = b.broadcast_in_dim(wide, shape=(B, R, blocks, K // blocks),
                              broadcast_dimensions=(0, 1, 2))
    return b.reshape(wide, new_sizes=shape)


def _operand_cotangents(b, d_scaled, x, scales):
    """The cotangents of data ``x`` and its ``scales`` from that of their product."""
    B, R, K = x.type.shape
    blocks = scales.type.shape[2]
    d_x = b.convert(b.mul(d_scaled, _repeated(b, scales, x.type.shape)), new_dtype=x.type.dtype)
    per_block = b.reshape(b.mul(d_scaled, b.convert(x, new_dtype=_F32)),
                          new_sizes=(B, R, blocks, K // blocks))
    d_scales = b.convert(b.reduce_sum(per_block, axes=(3,)), new_dtype=scales.type.dtype)
    return d_x, d_scales


def _vjp(b, ct, x, y, x_scales, y_scales, *, preferred_element_type):
    ct = b.convert(ct, new_dtype=_F32)
    x_wide = b.mul(b.convert(x, new_dtype=_F32), _repeated(b, x_scales, x.type.shape))
    y_wide = b.mul(b.convert(y, new_dtype=_F32), _repeated(b, y_scales, y.type.shape))
    d_x = b.dot_general(ct, y_wide, contract=((2,), (1,)), batch=((0,), (0,)))   # (B, M, K)
    d_y = b.dot_general(ct, x_wide, contract=((1,), (1,)), batch=((0,), (0,)))   # (B, N, K)
    (d_xq, d_xs), (d_yq, d_ys) = (_operand_cotangents(b, d_x, x, x_scales),
                                  _operand_cotangents(b, d_y, y, y_scales))
    return [d_xq, d_yq, d_xs, d_ys]


jvp_rules[scaled_matmul_p] = _jvp
vjp_rules[scaled_matmul_p] = _vjp


# --- lowering ----------------------------------------------------------------------------

def backend_config(out_dtype: np.dtype) -> str:
    """JAX's backend config of the CUDA custom call, as its ``json.dumps`` writes it."""
    try:
        dequantize = _CONFIG_TYPES[np.dtype(out_dtype)]
    except KeyError:
        raise ShapeError(f"scaled_matmul on CUDA returns float32, float16 or bfloat16, got "
                         f"{np.dtype(out_dtype)}") from None
    return json.dumps({"scaled_dot_backend_config": {
        "lhs_batch_dimensions": [0], "rhs_batch_dimensions": [0],
        "dequantize_type": dequantize}})


def _row_major(t: TensorType) -> ir.Attribute:
    return ir.DenseIntElementsAttr.get(np.arange(t.ndim - 1, -1, -1, dtype=np.int64),
                                       type=ir.IndexType.get())


def _cuda(ctx, eqn, *operands):
    in_types = [x.type for x in eqn.inputs]
    out_t = eqn.outputs[0].type
    i32 = ir.IntegerType.get_signless(32)
    op = hlo.CustomCallOp(
        [mlir_type(out_t)], list(operands), BLOCK_SCALED_DOT_TARGET,
        backend_config=ir.StringAttr.get(backend_config(out_t.dtype)),
        api_version=ir.IntegerAttr.get(i32, 2),
        operand_layouts=ir.ArrayAttr.get([_row_major(t) for t in in_types]),
        result_layouts=ir.ArrayAttr.get([_row_major(out_t)]))
    return op.results[0]


def _widened(x: ir.Value, t: TensorType, scales: ir.Value, s_t: TensorType) -> ir.Value:
    """``x`` times its blocks' scales, in float32 (See Note [block-scaled matmul])."""
    B, R, K = t.shape
    blocks = s_t.shape[2]
    wide = hlo.ConvertOp(mlir_type(TensorType(t.shape, _F32)), x).result
    s = hlo.ConvertOp(mlir_type(TensorType(s_t.shape, _F32)), scales).result
    per_block = TensorType((B, R, blocks, K // blocks), _F32)
    s = hlo.BroadcastInDimOp(mlir_type(per_block), s, ir.DenseI64ArrayAttr.get([0, 1, 2])).result
    s = hlo.ReshapeOp(mlir_type(TensorType(t.shape, _F32)), s).result
    return hlo.MulOp(wide, s).result


def _by_definition(ctx, eqn, a, b, a_scales, b_scales):
    a_t, b_t, as_t, bs_t = (x.type for x in eqn.inputs)
    out_t = eqn.outputs[0].type
    lhs, rhs = _widened(a, a_t, a_scales, as_t), _widened(b, b_t, b_scales, bs_t)
    dims = hlo.DotDimensionNumbers.get(lhs_batching_dimensions=[0], rhs_batching_dimensions=[0],
                                       lhs_contracting_dimensions=[2],
                                       rhs_contracting_dimensions=[2])
    highest = ir.ArrayAttr.get([hlo.PrecisionAttr.get("HIGHEST")] * 2)
    wide_t = TensorType(out_t.shape, _F32)
    out = hlo.DotGeneralOp(mlir_type(wide_t), lhs, rhs, dims, precision_config=highest).result
    if out_t.dtype == _F32:
        return out
    return hlo.ConvertOp(mlir_type(out_t), out).result


lower_rules[scaled_matmul_p] = by_platform(cpu=_by_definition, cuda=_cuda)
