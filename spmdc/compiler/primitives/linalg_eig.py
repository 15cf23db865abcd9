"""``eig``: eigenvalues and (left and/or right) eigenvectors of general square matrices,
on LAPACK's ``geev`` (jaxlib's ``lapack_{s,d,c,z}geev_ffi``), batched over leading
dimensions. The results are complex (complex64 for float32 and complex64 operands,
complex128 for the 64-bit ones); matrices LAPACK fails on come back as NaNs, as JAX's.
The eigenvectors are normalised to unit length with the largest component real (LAPACK's
convention, and NumPy's).

Derivatives are not provided: JAX differentiates the eigenvalues with a complex linear
solve against the eigenvectors, and spmdc's LU is real-only so far; differentiating
``eig`` is a clear error rather than a wrong (zero) derivative.
"""
from __future__ import annotations

import numpy as np

from ..ir import TensorType, dtype_name
from ..passes.autodiff import vjp_rules
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules
from ..stablehlo import ffi_call, hlo, lower_rules
from .complex_parts import complex_dtype
from .core import ShapeError, declare
from .linalg import INT32, matrix_batch_rule, not_ok_to_nan

__all__ = ["eig_p"]

_KINDS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
          np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def _out_dtype(t: TensorType) -> np.dtype:
    return t.dtype if t.dtype.kind == "c" else complex_dtype(t.dtype)


def _eig_rule(a: TensorType, *, compute_left: bool, compute_right: bool):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"eig needs square matrices (or a batch of them); got {a}")
    if a.dtype not in _KINDS:
        raise ShapeError(f"eig: LAPACK on CPU has no kernel for {dtype_name(a.dtype)}; "
                         "convert to float32, float64, complex64 or complex128")
    c = _out_dtype(a)
    outs = [TensorType(a.shape[:-1], c)]
    outs += [TensorType(a.shape, c)] * (int(compute_left) + int(compute_right))
    return tuple(outs)


def _eig_impl(a, *, compute_left, compute_right):
    a = np.asarray(a)
    c = complex_dtype(a.dtype) if a.dtype.kind != "c" else a.dtype
    w, vr = np.linalg.eig(a)
    outs = [w.astype(c)]
    if compute_left:
        _, vl = np.linalg.eig(np.conj(np.swapaxes(a, -1, -2)))
        outs.append(vl.astype(c))
    if compute_right:
        outs.append(vr.astype(c))
    return tuple(outs)


def _eig_lowering(ctx, eqn, a):
    t = eqn.inputs[0].type
    c = _out_dtype(t)
    w_t, v_t = TensorType(t.shape[:-1], c), TensorType(t.shape, c)
    info_t = TensorType(t.shape[:-2], INT32)
    params = eqn.params
    mode = {"compute_left": ord("V") if params["compute_left"] else ord("N"),
            "compute_right": ord("V") if params["compute_right"] else ord("N")}
    target = f"lapack_{_KINDS[t.dtype]}geev_ffi"
    if t.dtype.kind == "c":
        w, vl, vr, info = ffi_call(target, [a], [t], [w_t, v_t, v_t, info_t], mode)
    else:
        part_t = TensorType(t.shape[:-1], t.dtype)
        wr, wi, vl, vr, info = ffi_call(target, [a], [t], [part_t, part_t, v_t, v_t, info_t],
                                        mode)
        w = hlo.ComplexOp(wr, wi).result
    outs = [not_ok_to_nan(ctx, info, info_t, w, w_t)]
    if params["compute_left"]:
        outs.append(not_ok_to_nan(ctx, info, info_t, vl, v_t))
    if params["compute_right"]:
        outs.append(not_ok_to_nan(ctx, info, info_t, vr, v_t))
    return outs


def _no_derivative(*args, **params):
    raise ShapeError("derivatives of eig (a general, non-symmetric eigendecomposition) are "
                     "not supported by spmdc yet; for a symmetric matrix use eigh, whose "
                     "derivatives are")


eig_p = declare("eig", _eig_rule, _eig_impl, multiple_results=True)
batch_rules[eig_p] = matrix_batch_rule(eig_p)
lower_rules[eig_p] = _eig_lowering
jvp_rules[eig_p] = _no_derivative
vjp_rules[eig_p] = _no_derivative
