"""The CUDA lowerings of the linear-algebra primitives, on cuSOLVER's kernels (the CPU
ones, on LAPACK's, stay in linalg.py, linalg_decomp.py and linalg_eig.py). Each
primitive's rule becomes ``by_platform(cpu=<its LAPACK rule>, cuda=<the rule here>)``
(Note [lowering per platform] in stablehlo.py).

Note [cuSOLVER custom calls]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
On CUDA, JAX lowers linear algebra to typed-FFI custom calls of the CUDA plugin's
``_solver`` extension (jax/_src/lax/linalg.py, jaxlib/gpu/solver_kernels_ffi.cc), which
the runtime registers with the plugin (Note [CUDA custom calls] in
runtime/pjrt/custom_calls.py). The kernels take the same column-major batches of matrices
as LAPACK's and loop over the batch themselves; what differs is the names, the
attributes (bools where LAPACK has characters) and, for the SVD, the algorithm:

- cholesky: ``cusolver_potrf_ffi {lower = true}`` -> (factor, info); then the lower
  triangle, NaNs where ``info != 0``, as on the CPU.
- lu: ``cusolver_getrf_ffi`` -> (lu, 1-based pivots, info), exactly as LAPACK's getrf;
  the permutation is computed in StableHLO as on the CPU (JAX calls a CUDA kernel,
  ``cu_lu_pivots_to_permutation``, for it).
- qr: ``cusolver_geqrf_ffi`` -> (raw, taus), ``cusolver_orgqr_ffi(h, taus)`` -> q,
  exactly as LAPACK's pair.
- eigh: ``cusolver_syevd_ffi {algorithm = 0 : ui8, lower}`` -> (v, w, info); algorithm 0
  lets the kernel pick (syevj, Jacobi, for small matrices; syevd otherwise).
- svd: JAX's default choice: up to 1024 x 1024, ``cusolver_gesvdj_ffi {full_matrices,
  compute_uv}`` (Jacobi) -> (a, s, u, v, info), which always computes u and v, of full
  size unless both sides exceed 32 (its economic mode needs that), with ``v`` not
  transposed; larger, ``cusolver_gesvd_ffi {full_matrices, compute_uv, transposed}``
  (QR), which needs m >= n: a wide matrix is passed row-major, i.e. as its transpose,
  with ``transposed = true`` and the two factors swapped. ``algorithm=`` Jacobi / QR
  takes the first / second at every size (Note [svd algorithms]).
- triangular_solve: XLA's own ``stablehlo.triangular_solve`` (cuBLAS underneath), as
  JAX lowers it on GPUs.
- eig: ``cusolver_geev_ffi {left, right}`` -> (a, w, vl, vr, info), the right
  eigenvectors only (JAX uses it when no left ones are asked for, and hybrid
  MAGMA/LAPACK kernels otherwise, which spmdc does not wire up: left eigenvectors on CUDA
  are an error). Like LAPACK's geev, for a real matrix it packs a complex conjugate pair
  of eigenvectors into two real columns (re, im), unpacked here; its ``w`` is complex.

Each kernel is one name for every dtype: complex64 and complex128 matrices call the same
ones as real matrices, with real ``w`` (eigh) and ``s`` (svd) and, after gesvdj, the
conjugate transpose of ``v``, as JAX (tests/cuda_lowering_cases.py has complex cases).
"""
from __future__ import annotations

import numpy as np

from ...errors import LoweringError
from ..builder import lit
from ..ir import TensorType
from ..stablehlo import by_platform, ffi_call, hlo, ir, lower_rules
from .complex_parts import complex_dtype
from .linalg import (
    INT32,
    _lower_func,
    cholesky_p,
    lu_lowering,
    lu_p,
    mH,
    not_ok_to_nan,
    triangular_solve_p,
    tril,
)
from .linalg_decomp import eigh_p, qr_lowering, qr_p, svd_p
from .linalg_eig import eig_p

__all__: list[str] = []


def cusolver_target(routine: str, dtype: np.dtype) -> str:
    return f"cusolver_{routine}_ffi"        # one kernel for every dtype


def _cholesky(ctx, eqn, a):
    t = eqn.inputs[0].type
    info_t = TensorType(t.shape[:-2], INT32)
    factor, info = ffi_call(cusolver_target("potrf", t.dtype), [a], [t], [t, info_t],
                            {"lower": True}, aliases={0: 0})
    (low,) = _lower_func(ctx, lambda b, x: [tril(b, x)], [t], [factor])
    return not_ok_to_nan(ctx, info, info_t, low, t)


def _triangular_solve(ctx, eqn, a, rhs):
    p = eqn.params
    conjugate_a = p.get("conjugate_a", False)
    if conjugate_a and not p["transpose_a"]:       # as JAX: conjugate, then no transpose
        (a,) = _lower_func(ctx, lambda b, x: [b.conj(x)], [eqn.inputs[0].type], [a])
        conjugate_a = False
    kind = ("ADJOINT" if conjugate_a else "TRANSPOSE") if p["transpose_a"] else "NO_TRANSPOSE"
    transpose = ir.Attribute.parse(f"#stablehlo<transpose {kind}>")
    return hlo.TriangularSolveOp(a, rhs, p["left_side"], p["lower"], p["unit_diagonal"],
                                 transpose).result


def _eigh(ctx, eqn, a):
    t = eqn.inputs[0].type
    if t.shape[-1] == 0:
        return _CPU_RULES[eigh_p](ctx, eqn, a)      # no kernel call
    w_t = eqn.outputs[1].type          # real: float32 for complex64 matrices
    info_t = TensorType(t.shape[:-2], INT32)
    v, w, info = ffi_call(cusolver_target("syevd", t.dtype), [a], [t], [t, w_t, info_t],
                          {"algorithm": 0, "lower": bool(eqn.params["lower"])},
                          aliases={0: 0})
    return [not_ok_to_nan(ctx, info, info_t, v, t), not_ok_to_nan(ctx, info, info_t, w, w_t)]


_JACOBI_LIMIT = 1024      # JAX's: gesvdj up to 1024 x 1024, gesvd beyond
_JACOBI_ECONOMIC = 32     # gesvdj's economic mode needs both sides above this


def _svd(ctx, eqn, a):
    t = eqn.inputs[0].type
    full, compute_uv = eqn.params["full_matrices"], eqn.params["compute_uv"]
    *batch, m, n = t.shape
    if m == 0 or n == 0:
        return _CPU_RULES[svd_p](ctx, eqn, a)       # no kernel call
    algorithm = eqn.params.get("algorithm", "default")      # See Note [svd algorithms]
    if algorithm not in ("default", "QR", "Jacobi"):
        raise NotImplementedError(
            f"svd's algorithm={algorithm!r} has no CUDA lowering in spmdc (NVIDIA GPUs "
            "have no divide-and-conquer SVD, and spmdc does not call cuSOLVER's polar "
            "gesvdp); use SvdAlgorithm.JACOBI, QR or DEFAULT")
    k = min(m, n)
    s_t = TensorType((*batch, k), eqn.outputs[0].type.dtype)   # real for complex matrices
    u_t = TensorType((*batch, m, m if full else k), t.dtype)
    vt_t = TensorType((*batch, n if full else k, n), t.dtype)
    info_t = TensorType(tuple(batch), INT32)
    jacobi = algorithm == "Jacobi" or (
        algorithm == "default" and m <= _JACOBI_LIMIT and n <= _JACOBI_LIMIT)
    if jacobi:
        economic = not full and m > _JACOBI_ECONOMIC and n > _JACOBI_ECONOMIC
        size = k if economic else None
        uj_t = TensorType((*batch, m, size or m), t.dtype)
        v_t = TensorType((*batch, n, size or n), t.dtype)
        _, s, u, v, info = ffi_call(
            cusolver_target("gesvdj", t.dtype), [a], [t], [t, s_t, uj_t, v_t, info_t],
            {"full_matrices": not economic, "compute_uv": compute_uv}, aliases={0: 0})
        if compute_uv:
            def factors(b, u, v):
                vt = mH(b, v)              # gesvdj gives V; conjugated for complex ones
                if not full and not economic:      # the full factors' leading columns
                    zero = (0,) * t.ndim
                    u = b.slice(u, start_indices=zero, limit_indices=u_t.shape, strides=None)
                    vt = b.slice(vt, start_indices=zero, limit_indices=vt_t.shape,
                                 strides=None)
                return [u, vt]
            u, vt = _lower_func(ctx, factors, [uj_t, v_t], [u, v])
    else:
        transposed = m < n
        if not compute_uv:              # the kernel writes no factors: placeholders
            u_t = vt_t = TensorType((), t.dtype)
        first, second = (vt_t, u_t) if transposed else (u_t, vt_t)
        _, s, x, y, info = ffi_call(
            cusolver_target("gesvd", t.dtype), [a], [t], [t, s_t, first, second, info_t],
            {"full_matrices": full, "compute_uv": compute_uv, "transposed": transposed},
            aliases={0: 0}, column_major=[not transposed] * 6)
        u, vt = (y, x) if transposed else (x, y)
    outs = [(s, s_t), (u, u_t), (vt, vt_t)] if compute_uv else [(s, s_t)]
    return [not_ok_to_nan(ctx, info, info_t, x, xt) for x, xt in outs]


def _eig(ctx, eqn, a):
    t = eqn.inputs[0].type
    params = eqn.params
    if params["compute_left"]:
        raise LoweringError(
            "eig with left eigenvectors has no lowering for the cuda platform in spmdc: "
            "cuSOLVER's geev computes right eigenvectors only (JAX uses hybrid MAGMA/LAPACK "
            "kernels for left ones). Ask for the right eigenvectors only, or run on the CPU")
    c = t.dtype if t.dtype.kind == "c" else complex_dtype(t.dtype)
    n = t.shape[-1]
    w_t, v_t = TensorType(t.shape[:-1], c), TensorType(t.shape, c)
    packed_t = TensorType(t.shape, t.dtype)      # real eigenvectors packed in pairs
    info_t = TensorType(t.shape[:-2], INT32)
    right = params["compute_right"]
    _, w, _, vr, info = ffi_call(cusolver_target("geev", t.dtype), [a], [t],
                                 [t, w_t, packed_t, packed_t, info_t],
                                 {"left": False, "right": right})
    outs = [not_ok_to_nan(ctx, info, info_t, w, w_t)]
    if right:
        if t.dtype.kind != "c" and n > 0:
            (vr,) = _lower_func(ctx, _unpack_pairs, [w_t, packed_t], [w, vr])
        elif t.dtype.kind != "c":          # no columns: only the dtype changes
            vr = hlo.ComplexOp(vr, vr).result
        outs.append(not_ok_to_nan(ctx, info, info_t, vr, v_t))
    return outs


def _unpack_pairs(b, w, packed):
    """The complex eigenvectors of a real matrix from geev's packing: a real eigenvalue's
    vector is its column; for a conjugate pair at columns (j, j+1), column j holds the
    real part and j+1 the imaginary part of the first one's vector, the second's being
    its conjugate."""
    nd = packed.type.ndim
    imag_part = b.imag(w)
    is_complex = b.ne(imag_part, lit(0, imag_part.type.dtype))
    # the first of a pair: an odd count of complex eigenvalues up to and including it
    count = b.cumsum(b.convert(is_complex, new_dtype=INT32), axis=nd - 2, reverse=False)
    starts = b.eq(b.rem(count, lit(2, INT32)), lit(1, INT32))
    zero = lit(0, packed.type.dtype)
    edge = ((0, 0, 0),) * (nd - 1)
    next_column = b.pad(packed, zero, padding_config=(*edge, (-1, 1, 0)))
    previous_column = b.pad(packed, zero, padding_config=(*edge, (1, -1, 0)))
    dims = (*range(nd - 2), nd - 1)          # a per-column value, over every row

    def spread(x):
        return b.broadcast_in_dim(x, shape=packed.type.shape, broadcast_dimensions=dims)
    is_complex, starts = spread(is_complex), spread(starts)
    re = b.select(starts, packed, b.select(is_complex, previous_column, packed))
    im = b.select(starts, next_column, b.select(is_complex, b.neg(packed), zero))
    return [b.complex(re, im)]


_CPU_RULES = {p: lower_rules[p] for p in
              (cholesky_p, triangular_solve_p, lu_p, qr_p, eigh_p, svd_p, eig_p)}
_CUDA_RULES = {cholesky_p: _cholesky, triangular_solve_p: _triangular_solve,
               lu_p: lu_lowering(cusolver_target), qr_p: qr_lowering(cusolver_target),
               eigh_p: _eigh, svd_p: _svd, eig_p: _eig}
lower_rules.update({p: by_platform(cpu=_CPU_RULES[p], cuda=rule)
                    for p, rule in _CUDA_RULES.items()})
