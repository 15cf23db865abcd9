"""``eig``: eigenvalues and (left and/or right) eigenvectors of general square matrices,
on LAPACK's ``geev`` (jaxlib's ``lapack_{s,d,c,z}geev_ffi``), batched over leading
dimensions. The results are complex (complex64 for float32 and complex64 operands,
complex128 for the 64-bit ones); matrices LAPACK fails on come back as NaNs, as JAX's.
The eigenvectors are normalised to unit length with the largest component real (LAPACK's
convention, and NumPy's).

The derivative rule is JAX's (Note [eig derivatives]); the VJP is its transpose
(Note [complex linear algebra derivatives] in linalg.py).

Note [eig derivatives]
~~~~~~~~~~~~~~~~~~~~~~
With ``A V = V diag(w)`` (right eigenvectors in the columns of ``V``) and
``P = V^-1 dA V``: ``dw = diag(P)`` (first-order perturbation theory). The eigenvectors'
derivative is nondegenerate perturbation theory, ``U = V (F o P)`` with
``F[i, j] = 1 / (w_j - w_i)`` off the diagonal, plus ``c_j v_j`` for the scale that the
eigenvalue equation leaves free, fixed as LAPACK normalises (unit 2-norm, largest-
magnitude component real): ``c_j = -re(v_j^H u_j) - i im(u_kj) / re(v_kj)`` with
``k = argmax_i |v_ij|``. Left eigenvectors are those of ``A^H`` (eigenvalues ``conj(w)``,
tangent ``dA^H``). As in JAX, the eigenvector derivatives hold only for distinct
eigenvalues without ties in the largest component, so they are refused unless the
program opts in with ``enable_eigvec_derivs=True`` (a parameter bound only when true,
so plain programs are unchanged); the eigenvalues alone are always differentiable.
"""
from __future__ import annotations

import numpy as np

from ..builder import Builder, lit
from ..ir import TensorType, dtype_name
from ..passes.autodiff import vjp_rules
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules
from ..stablehlo import ffi_call, hlo, lower_rules
from .complex_parts import complex_dtype
from .core import ShapeError, declare
from .linalg import (
    INT32,
    _diagonal,
    _permutation_matrix,
    matmul,
    matrix_batch_rule,
    mH,
    not_ok_to_nan,
    vjp_by_transposing,
)
from .linalg_decomp import _cols, _reciprocal_gaps, _rows

__all__ = ["eig_p"]

_KINDS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
          np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def _out_dtype(t: TensorType) -> np.dtype:
    return t.dtype if t.dtype.kind == "c" else complex_dtype(t.dtype)


def _eig_rule(a: TensorType, *, compute_left: bool, compute_right: bool,
              enable_eigvec_derivs: bool = False):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"eig needs square matrices (or a batch of them); got {a}")
    if a.dtype not in _KINDS:
        raise ShapeError(f"eig: LAPACK on CPU has no kernel for {dtype_name(a.dtype)}; "
                         "convert to float32, float64, complex64 or complex128")
    c = _out_dtype(a)
    outs = [TensorType(a.shape[:-1], c)]
    outs += [TensorType(a.shape, c)] * (int(compute_left) + int(compute_right))
    return tuple(outs)


def _eig_impl(a, *, compute_left, compute_right, enable_eigvec_derivs=False):
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


def _solve(b: Builder, a, rhs):
    """``a^-1 rhs`` for square ``a`` by partial-pivoting LU."""
    lu, _, perm = b.lu(a)
    x = matmul(b, _permutation_matrix(b, perm, a.type.dtype), rhs)
    x = b.triangular_solve(lu, x, left_side=True, lower=True, transpose_a=False,
                           unit_diagonal=True)
    return b.triangular_solve(lu, x, left_side=True, lower=False, transpose_a=False,
                              unit_diagonal=False)


def _along_columns(b: Builder, x, like):
    """``x[..., j]`` at every ``[..., i, j]``."""
    return _rows(b, x, like.type.shape)


def _eigenvector_jvp(b: Builder, w, v, da):
    # See Note [eig derivatives].
    shape = v.type.shape
    f = _reciprocal_gaps(b, b.sub(_rows(b, w, shape), _cols(b, w, shape)))
    p = matmul(b, _solve(b, v, da), v)
    dw = _diagonal(b, p)
    u = matmul(b, v, b.mul(f, p))
    nd = v.type.ndim
    k = b.argmax(b.abs(v), axis=nd - 2, index_dtype=INT32)
    rows = b.iota(dtype=INT32, shape=shape, dimension=nd - 2)
    at_k = b.eq(rows, b.broadcast_in_dim(k, shape=shape,
                                         broadcast_dimensions=(*range(nd - 2), nd - 1)))
    zero = lit(0, v.type.dtype)

    def column_sum(x):
        return b.reduce_sum(x, axes=(nd - 2,))
    u_k, v_k = column_sum(b.select(at_k, u, zero)), column_sum(b.select(at_k, v, zero))
    c = b.complex(b.neg(b.real(column_sum(b.mul(b.conj(v), u)))),
                  b.neg(b.div(b.imag(u_k), b.real(v_k))))
    return dw, b.add(u, b.mul(v, _along_columns(b, c, v)))


def _eig_jvp(b, primals, tangents, *, compute_left, compute_right,
             enable_eigvec_derivs=False):
    (a,), (da,) = primals, tangents
    if (compute_left or compute_right) and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
            "the input that cannot be checked (distinct eigenvalues, no ties in an "
            "eigenvector's largest component). Pass enable_eigvec_derivs=True to "
            "spmdc.lax.linalg.eig to opt in, or differentiate the eigenvalues alone "
            "(jnp.linalg.eigvals); see Note [eig derivatives]")
    flag = {"enable_eigvec_derivs": True} if enable_eigvec_derivs else {}
    outs = b.bind(eig_p, a, compute_left=compute_left, compute_right=True, **flag)
    w, vr = outs[0], outs[-1]
    c = w.type.dtype
    if da.type.dtype != c:
        da = b.convert(da, new_dtype=c)
    if not (compute_left or compute_right):
        return [w], [_diagonal(b, matmul(b, _solve(b, vr, da), vr))]
    dw, dvr = _eigenvector_jvp(b, w, vr, da)
    primal, tangent = [w], [dw]
    if compute_left:
        _, dvl = _eigenvector_jvp(b, b.conj(w), outs[1], mH(b, da))
        primal.append(outs[1])
        tangent.append(dvl)
    if compute_right:
        primal.append(vr)
        tangent.append(dvr)
    return primal, tangent


eig_p = declare("eig", _eig_rule, _eig_impl, multiple_results=True)
batch_rules[eig_p] = matrix_batch_rule(eig_p)
lower_rules[eig_p] = _eig_lowering
jvp_rules[eig_p] = _eig_jvp
vjp_rules[eig_p] = vjp_by_transposing(_eig_jvp, True, None)
