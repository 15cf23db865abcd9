"""cuDNN's fused (flash) attention: the forward and backward primitives that
``nn.dot_product_attention(..., implementation='cudnn')`` binds through
``spmdc/lax/cudnn_attention.py``, and their CUDA lowering to the custom calls that XLA's
GPU compiler runs as cuDNN kernels. They have no CPU lowering: there the rule raises the
clear error JAX gives (cuDNN exists on CUDA GPUs only).

Note [cuDNN fused attention]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
JAX lowers cuDNN attention (jax/_src/cudnn/fused_attention_stablehlo.py) to legacy custom
calls (api_version 2) whose targets XLA's GPU compiler itself recognises and rewrites into
cuDNN graph fusions, so no plugin registration is involved (unlike the typed-FFI
targets of Note [CUDA custom calls] in runtime/pjrt/custom_calls.py):

- forward: ``__cudnn$fmhaSoftmax`` (``__cudnn$fmhaScaleBiasSoftmax`` with a bias), operands
  (q, k, v, bias?, q_seqlen?, kv_seqlen?) in the user's BTNH layout, results (out,
  stats?, workspace): ``out`` has the logical shape BNTH with the physical layout
  ``{3, 1, 2, 0}`` (i.e. BTNH in memory) and is transposed back to BTNH; ``stats``
  (B, N, T) float32, the log-sum-exp of each row of logits, only when training (it is the
  backward's residual); the workspace is ``tensor<0xui8>``.
- backward: ``__cudnn$fmhaSoftmaxBackward`` (``...ScaleBiasSoftmaxBackward``), operands
  (q, k, v, stats, d_out, bias?, out, q_seqlen?, kv_seqlen?), results (dq, dk, dv,
  dbias?, workspace), the gradients BNTH-shaped with the layout ``{3, 1, 2, 0}``.
- operand layouts are row-major; ``backend_config`` is the JSON text JAX writes with
  Python's ``json.dumps``: the algorithm block, ``fmha_scale``, the BNTS intermediate
  shape, ``mask_type`` (NO_MASK, PADDING, CAUSAL, PADDING_CAUSAL), the two forward (or
  four backward) dot dimension numbers for BTNH, then ``dropout_rate`` 0.0, ``seed`` 42,
  ``sliding_window_length`` (0 for none), ``max_seg_per_batch`` 1 and
  ``is_paged_attention`` false. The JSON is built here key for key in JAX's order, so the
  text matches JAX's lowering (tests/nn/test_attention_cudnn.py compares them).

The kernel supports float16 and bfloat16 only, grouped-query heads (N a multiple of K)
natively, and a bias broadcast over batch and heads. spmdc binds no dropout, packed
segments or paged caches (``jax.nn.dot_product_attention`` passes none of them either).
The forward primitive's VJP rule binds the backward one (Note [one cuDNN forward when
differentiated]).
"""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np

from ...errors import LoweringError
from ..ir import TensorType, dtype_name
from ..passes.autodiff import forward_rules, vjp_rules
from ..passes.cleanup import dce_rules
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules, batch_to_front
from ..stablehlo import by_platform, hlo, ir, lower_rules, mlir_type
from .core import ShapeError, declare

__all__ = ["cudnn_attention_fwd_p", "cudnn_attention_bwd_p", "MASK_TYPES", "backend_config"]

MASK_TYPES = ("NO_MASK", "PADDING", "CAUSAL", "PADDING_CAUSAL")
_KERNEL_DTYPES = {np.dtype(np.float16): "F16", np.dtype("bfloat16"): "BF16"}
_F32 = np.dtype(np.float32)
_I32 = np.dtype(np.int32)


def has_padding(mask_type: str) -> bool:
    return mask_type in ("PADDING", "PADDING_CAUSAL")


def _operand_count(base: int, has_bias: bool, mask_type: str) -> int:
    return base + int(has_bias) + 2 * int(has_padding(mask_type))


# --- shape rules ---------------------------------------------------------------------------

def _check_operands(name, q, k, v, bias, lengths, mask_type):
    if mask_type not in MASK_TYPES:
        raise ShapeError(f"{name}: mask_type must be one of {MASK_TYPES}, got {mask_type!r}")
    for what, t in (("query", q), ("key", k), ("value", v)):
        if t.ndim != 4:
            raise ShapeError(f"{name}: {what} must have rank 4 (B, T, N, H), got {t}")
    if q.dtype not in _KERNEL_DTYPES or not q.dtype == k.dtype == v.dtype:
        raise ShapeError(f"{name}: cuDNN attention takes float16 or bfloat16 query, key and "
                         f"value of one dtype, got {dtype_name(q.dtype)}, "
                         f"{dtype_name(k.dtype)}, {dtype_name(v.dtype)}")
    (B, T, N, H), (kB, S, K, kH) = q.shape, k.shape
    if not (B == kB == v.shape[0]) or kH != H or v.shape[1:3] != (S, K) or N % K:
        raise ShapeError(f"{name}: query {q.shape}, key {k.shape} and value {v.shape} do not "
                         "form (B, T, N, H), (B, S, K, H), (B, S, K, H') with N a multiple "
                         "of K")
    if bias is not None:
        bB, bN, bT, bS = bias.shape if bias.ndim == 4 else (None,) * 4
        if bB not in (1, B) or bN not in (1, N) or (bT, bS) != (T, S) or bias.dtype != q.dtype:
            raise ShapeError(f"{name}: the bias must be ({B} or 1, {N} or 1, {T}, {S}) of "
                             f"the query's dtype, got {bias}")
    for t in lengths:
        if t.shape != (B,) or t.dtype != _I32:
            raise ShapeError(f"{name}: sequence lengths must be int32 of shape ({B},), got {t}")


def _split_fwd(args, has_bias, mask_type):
    q, k, v, *rest = args
    bias = rest.pop(0) if has_bias else None
    return q, k, v, bias, rest


def _fwd_rule(*args, scale, mask_type, sliding_window, is_training, has_bias):
    if len(args) != _operand_count(3, has_bias, mask_type):
        raise ShapeError(f"cudnn_attention_fwd: {len(args)} operands do not fit "
                         f"has_bias={has_bias}, mask_type={mask_type!r}")
    q, k, v, bias, lengths = _split_fwd(args, has_bias, mask_type)
    _check_operands("cudnn_attention_fwd", q, k, v, bias, lengths, mask_type)
    B, T, N, _ = q.shape
    out = TensorType((B, T, N, v.shape[3]), q.dtype)
    return (out, TensorType((B, N, T), _F32)) if is_training else (out,)


def _split_bwd(args, has_bias):
    q, k, v, stats, d_out, *rest = args
    bias = rest.pop(0) if has_bias else None
    out, *lengths = rest
    return q, k, v, stats, d_out, bias, out, lengths


def _bwd_rule(*args, scale, mask_type, sliding_window, has_bias):
    if len(args) != _operand_count(6, has_bias, mask_type):
        raise ShapeError(f"cudnn_attention_bwd: {len(args)} operands do not fit "
                         f"has_bias={has_bias}, mask_type={mask_type!r}")
    q, k, v, stats, d_out, bias, out, lengths = _split_bwd(args, has_bias)
    _check_operands("cudnn_attention_bwd", q, k, v, bias, lengths, mask_type)
    B, T, N, _ = q.shape
    o_t = TensorType((B, T, N, v.shape[3]), q.dtype)
    if stats != TensorType((B, N, T), _F32) or d_out != o_t or out != o_t:
        raise ShapeError(f"cudnn_attention_bwd: stats {stats}, d_out {d_out} and out {out} "
                         f"must be (B, N, T) float32 and {o_t}")
    return (q, k, v, bias) if has_bias else (q, k, v)


# --- the NumPy reference (the interpreter's oracle) ----------------------------------------

def _probabilities(q, k, bias, lengths, scale, mask_type, sliding_window):
    """The masked softmax of the logits (float32, BNTS) and its log-sum-exp (BNT)."""
    B, T, N, _ = q.shape
    S, K = k.shape[1:3]
    keys = np.repeat(k.astype(_F32), N // K, axis=2)        # query head n reads kv head n//G
    logits = np.einsum("btnh,bsnh->bnts", q.astype(_F32), keys) * np.float32(scale)
    if bias is not None:
        logits = logits + bias.astype(_F32)
    t, s = np.arange(T)[:, None], np.arange(S)[None, :]
    keep = np.ones((B, 1, T, S), bool)
    if mask_type in ("CAUSAL", "PADDING_CAUSAL"):
        keep = keep & (s <= t)
    if sliding_window:
        keep = keep & (s <= t) & (t - s < sliding_window)
    if has_padding(mask_type):
        q_len, kv_len = (np.asarray(x)[:, None, None, None] for x in lengths)
        keep = keep & (t < q_len) & (s < kv_len)
    logits = np.where(keep, logits, np.float32(-0.7 * np.finfo(_F32).max))
    top = logits.max(-1, keepdims=True)
    e = np.exp(logits - top)
    total = e.sum(-1, keepdims=True)
    return e / total, (top + np.log(total))[..., 0], keep


def _fwd_impl(*args, scale, mask_type, sliding_window, is_training, has_bias):
    q, k, v, bias, lengths = _split_fwd(args, has_bias, mask_type)
    p, lse, keep = _probabilities(q, k, bias, lengths, scale, mask_type, sliding_window)
    N, K = q.shape[2], k.shape[2]
    values = np.repeat(v.astype(_F32), N // K, axis=2)
    out = np.einsum("bnts,bsnh->btnh", p, values)
    if has_padding(mask_type):
        out = out * keep.any(-1).transpose(0, 2, 1)[..., None]
    out = out.astype(q.dtype)
    return (out, lse.astype(_F32)) if is_training else (out,)


def _bwd_impl(*args, scale, mask_type, sliding_window, has_bias):
    q, k, v, stats, d_out, bias, out, lengths = _split_bwd(args, has_bias)
    p, _, _ = _probabilities(q, k, bias, lengths, scale, mask_type, sliding_window)
    N, K = q.shape[2], k.shape[2]
    G = N // K
    keys = np.repeat(k.astype(_F32), G, axis=2)
    values = np.repeat(v.astype(_F32), G, axis=2)
    d_o = d_out.astype(_F32)
    d_v = np.einsum("bnts,btnh->bsnh", p, d_o)
    d_p = np.einsum("btnh,bsnh->bnts", d_o, values)
    d_s = p * (d_p - np.einsum("btnh,btnh->bnt", d_o, out.astype(_F32))[..., None])
    d_q = np.einsum("bnts,bsnh->btnh", d_s, keys) * np.float32(scale)
    d_k = np.einsum("bnts,btnh->bsnh", d_s, q.astype(_F32)) * np.float32(scale)

    def grouped(g, like):          # the G query heads of one kv head add up
        B, S, _, H = g.shape
        return g.reshape(B, S, K, G, H).sum(3).astype(like.dtype)
    grads = [d_q.astype(q.dtype), grouped(d_k, k), grouped(d_v, v)]
    if has_bias:
        axes = tuple(a for a in (0, 1) if bias.shape[a] == 1)
        grads.append(d_s.sum(axes, keepdims=True).astype(bias.dtype))
    return tuple(grads)


cudnn_attention_fwd_p = declare("cudnn_attention_fwd", _fwd_rule, _fwd_impl,
                                multiple_results=True)
cudnn_attention_bwd_p = declare("cudnn_attention_bwd", _bwd_rule, _bwd_impl,
                                multiple_results=True)


# --- batching: the vmapped dimension joins the batch dimension B ---------------------------

def _merge_front(b, x, dim, size):
    """``x`` with the vmapped dimension (of ``size``) merged into its leading one."""
    x = batch_to_front(b, x, dim, size)
    shape = x.type.shape
    return b.reshape(x, new_sizes=(shape[0] * shape[1], *shape[2:]))


def _split_front(b, x, size):
    shape = x.type.shape
    return b.reshape(x, new_sizes=(size, shape[0] // size, *shape[1:]))


def _batched_bias(b, bias, dim, size, batch):
    """The bias with the vmapped dimension merged into B, broadcast to B if it had 1."""
    x = batch_to_front(b, bias, dim, size)
    _, bB, *rest = x.type.shape
    if bB != batch:
        x = b.broadcast_in_dim(x, shape=(size, batch, *rest), broadcast_dimensions=(0, 1, 2, 3, 4))
    return b.reshape(x, new_sizes=(size * batch, *rest))


def _example_shape(x, dim):
    """The shape of one example of ``x``: without its vmapped dimension."""
    return tuple(s for i, s in enumerate(x.type.shape) if i != dim)


def _fwd_batch(b, axis, args, dims, *, has_bias, **params):
    n = axis.size
    batch = _example_shape(args[0], dims[0])[0]
    moved = []
    for i, (x, d) in enumerate(zip(args, dims, strict=True)):
        is_bias = has_bias and i == 3
        if is_bias and d is None and x.type.shape[0] == 1:
            moved.append(x)                                   # shared by every example
        elif is_bias:
            moved.append(_batched_bias(b, x, d, n, batch))
        else:
            moved.append(_merge_front(b, x, d, n))
    outs = b.bind(cudnn_attention_fwd_p, *moved, has_bias=has_bias, **params)
    return [_split_front(b, o, n) for o in outs], [0] * len(outs)


def _bwd_batch(b, axis, args, dims, *, has_bias, **params):
    n = axis.size
    batch = _example_shape(args[0], dims[0])[0]
    moved = [_batched_bias(b, x, d, n, batch) if has_bias and i == 5 else
             _merge_front(b, x, d, n)
             for i, (x, d) in enumerate(zip(args, dims, strict=True))]
    outs = [_split_front(b, o, n)
            for o in b.bind(cudnn_attention_bwd_p, *moved, has_bias=has_bias, **params)]
    if has_bias and _example_shape(args[5], dims[5])[0] == 1 and batch != 1:
        wide = b.convert(outs[3], new_dtype=_F32)       # the bias was broadcast over B
        d_bias = b.convert(b.reduce_sum(wide, axes=(1,)), new_dtype=outs[3].type.dtype)
        outs[3] = b.reshape(d_bias, new_sizes=(n, 1, *d_bias.type.shape[1:]))
    return outs, [0] * len(outs)


batch_rules[cudnn_attention_fwd_p] = _fwd_batch
batch_rules[cudnn_attention_bwd_p] = _bwd_batch


# --- derivatives: the backward kernel (Note [one cuDNN forward when differentiated]) ------

# Note [one cuDNN forward when differentiated]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX differentiates cuDNN attention with a custom VJP whose forward is the training
# kernel (out and stats) and whose backward is the backward kernel. Here the same comes
# from the rule tables, so that a step runs the forward kernel once, also when it needs
# the output's value besides the gradient (any loss does; a ``custom_vjp`` would keep the
# function's primal call beside its forward rule, and run the kernel twice). The wrapper
# binds the forward primitive with ``is_training=True`` (out and stats); when nothing uses
# the stats, ``dce_rules`` narrows the equation to ``is_training=False`` with the output
# alone, the inference kernel, as JAX lowers it. Reverse mode's forward sweep replaces
# the equation by the training kernel (``forward_rules``), whose output serves as the
# primal value and, with the stats, as the VJP rule's residuals; the rule binds the
# backward primitive on them. Forward mode has no rule, as JAX's custom VJP has none.

def _fwd_forward(b, active, needed, *operands, is_training, **params):
    """The forward sweep: the training kernel, whose output and stats the VJP rule uses."""
    out, stats = b.bind(cudnn_attention_fwd_p, *operands, is_training=True, **params)
    return ([out, stats] if is_training else [out]), (out, stats)


def _fwd_vjp(b, ct, *operands, scale, mask_type, sliding_window, is_training, has_bias,
             residuals=None):
    d_out = ct[0]                      # the stats carry no gradient (JAX's stop_gradient)
    if d_out is None:
        return [None] * len(operands)
    q, k, v, bias, lengths = _split_fwd(operands, has_bias, mask_type)
    T, S = q.type.shape[1], k.type.shape[1]
    if has_bias and (T % 2 or S % 2):
        raise NotImplementedError(
            f"dot_product_attention(implementation='cudnn'): with a bias, the gradient needs "
            f"even sequence lengths, got Q {T}, KV {S}")
    params = dict(scale=scale, mask_type=mask_type, sliding_window=sliding_window)
    out, stats = residuals or b.bind(cudnn_attention_fwd_p, *operands, is_training=True,
                                     has_bias=has_bias, **params)
    grads = b.bind(cudnn_attention_bwd_p, q, k, v, stats, d_out,
                   *([bias] if has_bias else []), out, *lengths, has_bias=has_bias, **params)
    return [*grads, *([None] * len(lengths))]


def _fwd_dce(eqn, live):
    """The inference kernel when the stats are unused (Note [one cuDNN forward when
    differentiated])."""
    if not eqn.params["is_training"] or live[1]:
        return None
    return replace(eqn, params={**eqn.params, "is_training": False}, outputs=eqn.outputs[:1])


def _no_forward_mode(*args, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to cuDNN attention "
                    "(nn.dot_product_attention(..., implementation='cudnn')): like JAX's, it "
                    "is differentiable in reverse mode only; use grad or vjp, or "
                    "implementation='xla' for jvp")


def _bwd_no_derivative(*args, **params):
    raise TypeError("cuDNN attention's backward kernel has no derivative (a second derivative "
                    "of nn.dot_product_attention(..., implementation='cudnn')); use "
                    "implementation='xla'")


forward_rules[cudnn_attention_fwd_p] = _fwd_forward
vjp_rules[cudnn_attention_fwd_p] = _fwd_vjp
dce_rules[cudnn_attention_fwd_p] = _fwd_dce
jvp_rules[cudnn_attention_fwd_p] = _no_forward_mode
vjp_rules[cudnn_attention_bwd_p] = _bwd_no_derivative
jvp_rules[cudnn_attention_bwd_p] = _bwd_no_derivative


# --- the CUDA lowering (Note [cuDNN fused attention]) --------------------------------------

_BTNH_DOTS = {      # (lhs contracting, rhs contracting, lhs batch, rhs batch), JAX's order
    "bmm1_dot_dimension_numbers": (3, 3, (0, 2), (0, 2)),              # BTNH,BSNH->BNTS
    "bmm2_dot_dimension_numbers": (3, 1, (0, 1), (0, 2)),              # BNTS,BSNH->BTNH
    "bmm1_grad_gemm1_dot_dimension_numbers": (2, 1, (0, 1), (0, 2)),   # BNTS,BTNH->BSNH
    "bmm1_grad_gemm2_dot_dimension_numbers": (3, 1, (0, 1), (0, 2)),   # BNTS,BSNH->BTNH
    "bmm2_grad_gemm1_dot_dimension_numbers": (2, 1, (0, 1), (0, 2)),   # BNTS,BTNH->BSNH
    "bmm2_grad_gemm2_dot_dimension_numbers": (3, 3, (0, 2), (0, 2)),   # BTNH,BSNH->BNTS
}


def backend_config(batch: int, heads: int, seq_q: int, seq_kv: int, dtype: np.dtype,
                   scale: float, mask_type: str, sliding_window: int, is_bwd: bool) -> str:
    """The custom call's ``backend_config``, JAX's JSON key for key (Note [cuDNN fused
    attention])."""
    layout = {"dim_level_types": [], "dim_unique": [], "dim_ordered": [],
              "minor_to_major": ["3", "2", "1", "0"], "tiles": [],
              "element_size_in_bits": "0", "memory_space": "0",
              "index_primitive_type": "PRIMITIVE_TYPE_INVALID",
              "pointer_primitive_type": "PRIMITIVE_TYPE_INVALID",
              "dynamic_shape_metadata_prefix_bytes": "0"}
    config = {
        "algorithm": {"algo_id": "0", "math_type": "TENSOR_OP_MATH",
                      "tuning_knobs": {"17": "1", "24": "0"}, "is_cudnn_frontend": True,
                      "workspace_size": "0"},
        "fmha_scale": float(scale),
        "intermediate_tensor_shape": {
            "element_type": _KERNEL_DTYPES[np.dtype(dtype)],
            "dimensions": [str(batch), str(heads), str(seq_q), str(seq_kv)],
            "tuple_shapes": [], "layout": layout,
            "is_dynamic_dimension": [False] * 4},
        "is_flash_attention": True,
        "mask_type": mask_type,
    }
    names = list(_BTNH_DOTS)[2:] if is_bwd else list(_BTNH_DOTS)[:2]
    for name in names:
        lc, rc, lb, rb = _BTNH_DOTS[name]
        config[name] = {"lhs_contracting_dimensions": [str(lc)],
                        "rhs_contracting_dimensions": [str(rc)],
                        "lhs_batch_dimensions": [str(i) for i in lb],
                        "rhs_batch_dimensions": [str(i) for i in rb]}
    config.update(dropout_rate=0.0, seed=42, sliding_window_length=int(sliding_window),
                  max_seg_per_batch=1, is_paged_attention=False)
    return json.dumps({"operation_queue_id": "0", "cudnn_fmha_backend_config": config})


def _layout(dims) -> ir.Attribute:
    return ir.DenseIntElementsAttr.get(np.asarray(dims, np.int64), type=ir.IndexType.get())


def _row_major(t: TensorType) -> ir.Attribute:
    return _layout(range(t.ndim - 1, -1, -1))


_BNTH_AS_BTNH = (3, 1, 2, 0)      # a BNTH-shaped result laid out as BTNH in memory
_WORKSPACE = TensorType((0,), np.dtype(np.uint8))


def _custom_call(target, operands, in_types, out_types, out_layouts, config):
    i32 = ir.IntegerType.get_signless(32)
    op = hlo.CustomCallOp(
        [mlir_type(t) for t in out_types], list(operands), target,
        backend_config=ir.StringAttr.get(config), api_version=ir.IntegerAttr.get(i32, 2),
        operand_layouts=ir.ArrayAttr.get([_row_major(t) for t in in_types]),
        result_layouts=ir.ArrayAttr.get(out_layouts))
    return list(op.results)


def _to_btnh(x) -> ir.Value:
    return hlo.TransposeOp(x, ir.DenseI64ArrayAttr.get([0, 2, 1, 3])).result


def _bnth(t: TensorType) -> TensorType:
    B, T, N, H = t.shape
    return TensorType((B, N, T, H), t.dtype)


def _fwd_cuda(ctx, eqn, *operands):
    p = eqn.params
    in_types = [x.type for x in eqn.inputs]
    q_t, k_t = in_types[0], in_types[1]
    (B, T, N, _), S = q_t.shape, k_t.shape[1]
    out_t = eqn.outputs[0].type
    out_types = [_bnth(out_t)]
    layouts = [_layout(_BNTH_AS_BTNH)]
    if p["is_training"]:
        out_types.append(eqn.outputs[1].type)
        layouts.append(_row_major(eqn.outputs[1].type))
    out_types.append(_WORKSPACE)
    layouts.append(_row_major(_WORKSPACE))
    target = "__cudnn$fmhaScaleBiasSoftmax" if p["has_bias"] else "__cudnn$fmhaSoftmax"
    config = backend_config(B, N, T, S, q_t.dtype, p["scale"], p["mask_type"],
                            p["sliding_window"], is_bwd=False)
    results = _custom_call(target, operands, in_types, out_types, layouts, config)
    return [_to_btnh(results[0]), *results[1:-1]]


def _bwd_cuda(ctx, eqn, *operands):
    p = eqn.params
    in_types = [x.type for x in eqn.inputs]
    q_t, k_t, v_t = in_types[:3]
    (B, T, N, _), S = q_t.shape, k_t.shape[1]
    out_types = [_bnth(q_t), _bnth(k_t), _bnth(v_t)]
    layouts = [_layout(_BNTH_AS_BTNH)] * 3
    if p["has_bias"]:
        out_types.append(in_types[5])
        layouts.append(_row_major(in_types[5]))
    out_types.append(_WORKSPACE)
    layouts.append(_row_major(_WORKSPACE))
    target = ("__cudnn$fmhaScaleBiasSoftmaxBackward" if p["has_bias"]
              else "__cudnn$fmhaSoftmaxBackward")
    config = backend_config(B, N, T, S, q_t.dtype, p["scale"], p["mask_type"],
                            p["sliding_window"], is_bwd=True)
    results = _custom_call(target, operands, in_types, out_types, layouts, config)
    return [*(_to_btnh(g) for g in results[:3]), *results[3:-1]]


def _cpu(ctx, eqn, *operands):
    raise LoweringError("implementation='cudnn' runs cuDNN's fused attention, which exists "
                        f"on CUDA GPUs only; this program is lowered for {ctx.platform}: use "
                        "implementation='xla' (or None) there")


lower_rules[cudnn_attention_fwd_p] = by_platform(cpu=_cpu, cuda=_fwd_cuda)
lower_rules[cudnn_attention_bwd_p] = by_platform(cpu=_cpu, cuda=_bwd_cuda)
