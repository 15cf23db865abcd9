"""The decompositions JAX's ``jax.lax.linalg`` computes with one LAPACK kernel each on
the CPU, on jaxlib's kernels of the same names: ``schur`` (``gees``), ``hessenberg``
(``gehrd``), ``tridiagonal`` (``sytrd``/``hetrd``), ``geqrf`` (``geqrf``),
``householder_product``
(``orgqr``/``ungqr``), ``ormqr`` (``ormqr``/``unmqr``) and ``tridiagonal_solve``
(``gtsv``, or jaxlib's ``tridiagonal_solve_perturbed`` kernel). Each takes float32,
float64, complex64 and complex128 matrices, batched over leading dimensions; a matrix
LAPACK fails on comes back as NaNs, as in JAX. The NumPy references call SciPy's LAPACK.
They lower on the CPU only: on CUDA, a program using one is a LoweringError that says so
(JAX has cuSOLVER kernels for all but schur and hessenberg; spmdc does not wire them up).

As in JAX, only ``tridiagonal_solve`` has derivatives (it is linear in ``b``, and its
derivative in the diagonals is a product with the solution); the others have none.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..builder import lit
from ..ir import TensorType, dtype_name
from ..passes.autodiff import vjp_rules
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules
from ..stablehlo import by_platform, ffi_call, lower_rules
from .core import ShapeError, declare
from .linalg import INT32, matrix_batch_rule, not_ok_to_nan

__all__ = ["geqrf_p", "hessenberg_p", "householder_product_p", "ormqr_p", "schur_p",
           "tridiagonal_p", "tridiagonal_solve_p"]

_KINDS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
          np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}


def _target(routine: str, dtype: np.dtype) -> str:
    """jaxlib's kernel: ``orgqr`` is ``ungqr`` for complex types (``sytrd`` ``hetrd``)."""
    if dtype.kind == "c":
        routine = {"orgqr": "ungqr", "ormqr": "unmqr", "sytrd": "hetrd"}.get(routine, routine)
    return f"lapack_{_KINDS[dtype]}{routine}_ffi"


def _lapack(routine: str, dtype: np.dtype) -> Any:
    from scipy.linalg import lapack
    if dtype.kind == "c":
        routine = {"orgqr": "ungqr", "ormqr": "unmqr", "sytrd": "hetrd"}.get(routine, routine)
    return getattr(lapack, _KINDS[dtype] + routine)


def _check(name: str, t: TensorType, rank: int = 2, square: bool = False) -> None:
    if t.ndim < rank:
        what = "a matrix (or a batch of them, [..., m, n])" if rank == 2 else \
            "a vector (or a batch of them, [..., m])"
        raise ShapeError(f"{name} needs {what}; got {t}")
    if square and t.shape[-1] != t.shape[-2]:
        raise ShapeError(f"{name} needs square matrices ([..., n, n]); got {t}")
    if t.dtype not in _KINDS:
        raise ShapeError(f"{name}: LAPACK on CPU has no kernel for {dtype_name(t.dtype)}; "
                         "convert to float32, float64, complex64 or complex128")


def _real(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dtype in (np.float32, np.complex64) else \
        np.dtype(np.float64)


def _info_type(t: TensorType, rank: int = 2) -> TensorType:
    return TensorType(t.shape[:t.ndim - rank], INT32)


# --- schur -------------------------------------------------------------------------------------

def _schur_rule(a: TensorType, *, compute_schur_vectors: bool):
    _check("schur", a, square=True)
    return (a, a) if compute_schur_vectors else (a,)


def _schur_impl(a, *, compute_schur_vectors):
    from scipy.linalg import schur
    a = np.asarray(a)
    t, z = np.empty_like(a), np.empty_like(a)
    for i in np.ndindex(a.shape[:-2]):
        t[i], z[i] = schur(a[i], output="complex" if a.dtype.kind == "c" else "real")
    return (t, z) if compute_schur_vectors else (t,)


def _schur_lowering(ctx, eqn, a):
    t = eqn.inputs[0].type
    info_t = _info_type(t)
    w_t = TensorType(t.shape[:-1], t.dtype)
    mode = {"mode": ord("V") if eqn.params["compute_schur_vectors"] else ord("N"),
            "sort": ord("N")}
    eigenvalues = [w_t] if t.dtype.kind == "c" else [w_t, w_t]
    form, vectors, *_, info = ffi_call(_target("gees", t.dtype), [a], [t],
                                       [t, t, *eigenvalues, info_t, info_t], mode,
                                       aliases={0: 0})
    outs = [not_ok_to_nan(ctx, info, info_t, form, t)]
    if eqn.params["compute_schur_vectors"]:
        outs.append(not_ok_to_nan(ctx, info, info_t, vectors, t))
    return outs


schur_p = declare("schur", _schur_rule, _schur_impl, multiple_results=True)
batch_rules[schur_p] = matrix_batch_rule(schur_p)
lower_rules[schur_p] = by_platform(cpu=_schur_lowering)


# --- hessenberg --------------------------------------------------------------------------------

def _hessenberg_rule(a: TensorType):
    _check("hessenberg", a, square=True)
    n = a.shape[-1]
    return a, TensorType((*a.shape[:-2], max(n - 1, 0)), a.dtype)


def _hessenberg_impl(a):
    a = np.asarray(a)
    n = a.shape[-1]
    out = np.empty_like(a)
    taus = np.zeros((*a.shape[:-2], max(n - 1, 0)), a.dtype)
    gehrd = _lapack("gehrd", a.dtype)
    for i in np.ndindex(a.shape[:-2]):
        out[i], tau, _ = gehrd(a[i])
        taus[i] = tau[:n - 1]
    return out, taus


def _hessenberg_lowering(ctx, eqn, a):
    t = eqn.inputs[0].type
    taus_t = eqn.outputs[1].type
    info_t = _info_type(t)
    n = t.shape[-1]
    out, taus, info = ffi_call(_target("gehrd", t.dtype), [a], [t], [t, taus_t, info_t],
                               {"low": np.int32(1), "high": np.int32(n)}, aliases={0: 0})
    return [not_ok_to_nan(ctx, info, info_t, out, t),
            not_ok_to_nan(ctx, info, info_t, taus, taus_t)]


hessenberg_p = declare("hessenberg", _hessenberg_rule, _hessenberg_impl,
                       multiple_results=True)
batch_rules[hessenberg_p] = matrix_batch_rule(hessenberg_p)
lower_rules[hessenberg_p] = by_platform(cpu=_hessenberg_lowering)


# --- tridiagonal -------------------------------------------------------------------------------

def _tridiagonal_rule(a: TensorType, *, lower: bool):
    _check("tridiagonal", a, square=True)
    n = a.shape[-1]
    if n == 0:
        raise ShapeError(f"tridiagonal needs a non-empty square matrix; got {a}")
    batch, real = a.shape[:-2], _real(a.dtype)
    return (a, TensorType((*batch, n), real), TensorType((*batch, n - 1), real),
            TensorType((*batch, n - 1), a.dtype))


def _tridiagonal_impl(a, *, lower):
    a = np.asarray(a)
    n = a.shape[-1]
    batch = a.shape[:-2]
    out, real = np.empty_like(a), _real(a.dtype)
    d, e = np.zeros((*batch, n), real), np.zeros((*batch, n - 1), real)
    taus = np.zeros((*batch, n - 1), a.dtype)
    sytrd = _lapack("sytrd", a.dtype)
    for i in np.ndindex(batch):
        out[i], d[i], e[i], taus[i], _ = sytrd(a[i], lower=int(lower))
    return out, d, e, taus


def _tridiagonal_lowering(ctx, eqn, a):
    t = eqn.inputs[0].type
    out_types = [v.type for v in eqn.outputs]
    info_t = _info_type(t)
    results = ffi_call(_target("sytrd", t.dtype), [a], [t], [*out_types, info_t],
                       {"uplo": ord("L") if eqn.params["lower"] else ord("U")},
                       aliases={0: 0})
    *outs, info = results
    return [not_ok_to_nan(ctx, info, info_t, x, xt)
            for x, xt in zip(outs, out_types, strict=True)]


tridiagonal_p = declare("tridiagonal", _tridiagonal_rule, _tridiagonal_impl,
                        multiple_results=True)
batch_rules[tridiagonal_p] = matrix_batch_rule(tridiagonal_p)
lower_rules[tridiagonal_p] = by_platform(cpu=_tridiagonal_lowering)


# --- geqrf ------------------------------------------------------------------------------------

def _geqrf_rule(a: TensorType):
    _check("geqrf", a)
    *batch, m, n = a.shape
    return a, TensorType((*batch, min(m, n)), a.dtype)


def _geqrf_impl(a):
    a = np.asarray(a)
    out = np.empty_like(a)
    taus = np.empty((*a.shape[:-2], min(a.shape[-2:])), a.dtype)
    geqrf = _lapack("geqrf", a.dtype)
    for i in np.ndindex(a.shape[:-2]):
        out[i], taus[i], _, _ = geqrf(a[i])
    return out, taus


def _geqrf_lowering(ctx, eqn, a):
    at = eqn.inputs[0].type
    return ffi_call(_target("geqrf", at.dtype), [a], [at], [v.type for v in eqn.outputs],
                    aliases={0: 0})


geqrf_p = declare("geqrf", _geqrf_rule, _geqrf_impl, multiple_results=True)
batch_rules[geqrf_p] = matrix_batch_rule(geqrf_p)
lower_rules[geqrf_p] = by_platform(cpu=_geqrf_lowering)


# --- householder_product and ormqr -------------------------------------------------------------

def _householder_product_rule(a: TensorType, taus: TensorType):
    _check("householder_product", a)
    m, n = a.shape[-2:]
    if m < n:
        raise ShapeError("The first argument to householder_product must have at least as "
                         f"many rows as columns, got shape {a.shape}")
    if taus.dtype != a.dtype or taus.shape[:-1] != a.shape[:-2] or taus.ndim < 1:
        raise ShapeError(f"householder_product needs taus of shape [..., k] and dtype "
                         f"{dtype_name(a.dtype)} matching a's batch; got {a} and {taus}")
    if taus.shape[-1] > min(m, n):
        raise ShapeError("The second argument to householder_product must not have more "
                         "rows than the minimum of the first argument's rows and columns.")
    return a


def _householder_product_impl(a, taus):
    a, taus = np.asarray(a), np.asarray(taus)
    out = np.empty_like(a)
    orgqr = _lapack("orgqr", a.dtype)
    for i in np.ndindex(a.shape[:-2]):
        k = taus.shape[-1]
        padded = np.zeros(a.shape[-1], a.dtype)
        padded[:k] = taus[i]                   # reflectors beyond k are the identity
        out[i], _, _ = orgqr(a[i], padded)
    return out


def _householder_product_lowering(ctx, eqn, a, taus):
    at, tt = (v.type for v in eqn.inputs)
    (q,) = ffi_call(_target("orgqr", at.dtype), [a, taus], [at, tt], [at], aliases={0: 0})
    return [q]


householder_product_p = declare("householder_product", _householder_product_rule,
                                _householder_product_impl)
batch_rules[householder_product_p] = matrix_batch_rule(householder_product_p)
lower_rules[householder_product_p] = by_platform(cpu=_householder_product_lowering)


def _ormqr_rule(a: TensorType, taus: TensorType, c: TensorType, *, left: bool,
                transpose: bool):
    _check("ormqr", a)
    _check("ormqr", c)
    if len({a.dtype, taus.dtype, c.dtype}) != 1:
        raise ShapeError(f"ormqr needs operands of one dtype; got {a}, {taus} and {c}")
    if taus.ndim < 1 or taus.shape[:-1] != a.shape[:-2] or c.shape[:-2] != a.shape[:-2]:
        raise ShapeError(f"ormqr: a, taus and c need the same batch dimensions; got {a}, "
                         f"{taus} and {c}")
    m = a.shape[-2]
    side = c.shape[-2] if left else c.shape[-1]
    if side != m:
        raise ShapeError(f"ormqr: c's {'rows' if left else 'columns'} ({side}) must match "
                         f"a's rows ({m})")
    if taus.shape[-1] > min(a.shape[-2:]):
        raise ShapeError(f"ormqr: taus has more reflectors ({taus.shape[-1]}) than "
                         f"min(a.shape[-2:]) = {min(a.shape[-2:])}")
    return c


def _ormqr_impl(a, taus, c, *, left, transpose):
    a, taus, c = np.asarray(a), np.asarray(taus), np.asarray(c)
    out = np.empty_like(c)
    ormqr = _lapack("ormqr", a.dtype)
    trans = ("C" if a.dtype.kind == "c" else "T") if transpose else "N"
    k = taus.shape[-1]
    for i in np.ndindex(a.shape[:-2]):
        work = max(1, c.shape[-1] if left else c.shape[-2]) * 64
        out[i], _ = ormqr("L" if left else "R", trans, a[i][:, :k], taus[i], c[i], work)
    return out


def _ormqr_lowering(ctx, eqn, a, taus, c):
    at, tt, ct = (v.type for v in eqn.inputs)
    (out,) = ffi_call(_target("ormqr", at.dtype), [a, taus, c], [at, tt, ct], [ct],
                      {"left": bool(eqn.params["left"]),
                       "transpose": bool(eqn.params["transpose"])},
                      aliases={0: 2}, column_major=[True, False, True, True])
    return [out]


ormqr_p = declare("ormqr", _ormqr_rule, _ormqr_impl)
batch_rules[ormqr_p] = matrix_batch_rule(ormqr_p)
lower_rules[ormqr_p] = by_platform(cpu=_ormqr_lowering)


# --- tridiagonal_solve -------------------------------------------------------------------------

def _tridiagonal_solve_rule(dl: TensorType, d: TensorType, du: TensorType, b: TensorType, *,
                            perturb_singular: bool):
    _check("tridiagonal_solve", b)
    if dl.shape != d.shape or dl.shape != du.shape:
        raise ShapeError("tridiagonal_solve requires that all diagonal arguments have the "
                         f"same shape; got {dl}, {d} and {du}")
    if dl.shape != b.shape[:-1]:
        raise ShapeError("tridiagonal_solve requires that the leading ndim-1 dimensions of "
                         f"b equal the dimensions of the diagonal arguments; got {b} for "
                         f"diagonals {d}")
    if len({dl.dtype, d.dtype, du.dtype, b.dtype}) != 1:
        raise ShapeError(f"tridiagonal_solve needs operands of one dtype; got {dl}, {d}, "
                         f"{du} and {b}")
    return b


def _tridiagonal_solve_impl(dl, d, du, b, *, perturb_singular):
    from scipy.linalg import solve_banded
    dl, d, du, b = (np.asarray(x) for x in (dl, d, du, b))
    out = np.empty_like(b)
    for i in np.ndindex(b.shape[:-2]):
        m = d[i].shape[0]
        bands = np.zeros((3, m), b.dtype)
        bands[0, 1:], bands[1], bands[2, :-1] = du[i][:-1], d[i], dl[i][1:]
        out[i] = solve_banded((1, 1), bands, b[i])
    return out


def _tridiagonal_solve_lowering(ctx, eqn, dl, d, du, b):
    types = [v.type for v in eqn.inputs]
    bt = types[3]
    if eqn.params["perturb_singular"]:
        (x,) = ffi_call("tridiagonal_solve_perturbed_ffi", [dl, d, du, b], types, [bt])
        return [x]
    info_t = _info_type(bt)
    *_, x, info = ffi_call(_target("gtsv", bt.dtype), [dl, d, du, b], types,
                           [*types, info_t], aliases={0: 0, 1: 1, 2: 2, 3: 3})
    return [not_ok_to_nan(ctx, info, info_t, x, bt)]


tridiagonal_solve_p = declare("tridiagonal_solve", _tridiagonal_solve_rule,
                              _tridiagonal_solve_impl)
batch_rules[tridiagonal_solve_p] = matrix_batch_rule(tridiagonal_solve_p)
lower_rules[tridiagonal_solve_p] = by_platform(cpu=_tridiagonal_solve_lowering)


def _shift(b, x: Any, down: bool) -> Any:
    """x moved one place along its last axis, a zero coming in (down: x[i-1] at i)."""
    t = x.type
    start, limit = [0] * t.ndim, list(t.shape)
    if down:
        limit[-1] -= 1
    else:
        start[-1] = 1
    kept = b.slice(x, start_indices=tuple(start), limit_indices=tuple(limit), strides=None)
    pad = ((0, 0, 0),) * (t.ndim - 1) + (((1, 0, 0) if down else (0, 1, 0)),)
    return b.pad(kept, lit(0, t.dtype), padding_config=pad)


def _zeros_like(b, x: Any) -> Any:
    t = x.type
    return b.broadcast_in_dim(lit(0, t.dtype), shape=t.shape, broadcast_dimensions=())


def _tridiagonal_product(b, dl: Any, d: Any, du: Any, x: Any) -> Any:
    """A x for the tridiagonal A (dl, d, du): row i is dl[i] x[i-1] + d[i] x[i] +
    du[i] x[i+1]."""
    x_up = _shift_rows(b, x, down=True)       # x[i-1] at row i
    x_down = _shift_rows(b, x, down=False)    # x[i+1] at row i
    out = b.mul(_column(b, d, x), x)
    out = b.add(out, b.mul(_column(b, dl, x), x_up))
    return b.add(out, b.mul(_column(b, du, x), x_down))


def _column(b, v: Any, like: Any) -> Any:
    """The diagonal v ([..., m]) broadcast along like's columns ([..., m, k])."""
    t = like.type
    return b.broadcast_in_dim(v, shape=t.shape, broadcast_dimensions=tuple(range(t.ndim - 1)))


def _shift_rows(b, x: Any, down: bool) -> Any:
    t = x.type
    m = t.shape[-2]
    nd = t.ndim
    start, limit = [0] * nd, list(t.shape)
    if down:
        limit[-2] = m - 1
    else:
        start[-2] = 1
    kept = b.slice(x, start_indices=tuple(start), limit_indices=tuple(limit), strides=None)
    pad = [(0, 0, 0)] * nd
    pad[-2] = (1, 0, 0) if down else (0, 1, 0)
    return b.pad(kept, lit(0, t.dtype), padding_config=tuple(pad))


def _transposed_diagonals(b, dl: Any, du: Any) -> tuple[Any, Any]:
    """The lower and upper diagonals of A^T: A^T's dl[i] is du[i-1], its du[i] dl[i+1]."""
    return _shift(b, du, down=True), _shift(b, dl, down=False)


def _row_sums(b, x: Any, y: Any) -> Any:
    """sum_k x[..., i, k] y[..., i, k]: one value per row."""
    t = x.type
    return b.reduce_sum(b.mul(x, y), axes=(t.ndim - 1,))


def _tridiagonal_solve_jvp(b, primals, tangents, *, perturb_singular):
    dl, d, du, rhs = primals
    ddl, dd, ddu, drhs = tangents
    x = b.tridiagonal_solve(dl, d, du, rhs, perturb_singular=perturb_singular)
    if all(t is None for t in (ddl, dd, ddu, drhs)):
        return [x], [None]
    # d(A^-1 B) = A^-1 (dB - dA X)
    rhs_dot = drhs
    if any(t is not None for t in (ddl, dd, ddu)):
        zero = [t if t is not None else _zeros_like(b, p)
                for t, p in zip((ddl, dd, ddu), (dl, d, du), strict=True)]
        product = _tridiagonal_product(b, *zero, x)
        rhs_dot = b.neg(product) if rhs_dot is None else b.sub(rhs_dot, product)
    return [x], [b.tridiagonal_solve(dl, d, du, rhs_dot, perturb_singular=perturb_singular)]


def _tridiagonal_solve_vjp(b, ct, dl, d, du, rhs, *, perturb_singular):
    x = b.tridiagonal_solve(dl, d, du, rhs, perturb_singular=perturb_singular)
    dl_t, du_t = _transposed_diagonals(b, dl, du)
    rhs_bar = b.tridiagonal_solve(dl_t, d, du_t, ct, perturb_singular=perturb_singular)
    # A_bar = -rhs_bar X^T, kept on the three diagonals.
    d_bar = b.neg(_row_sums(b, rhs_bar, x))
    dl_bar = b.neg(_row_sums(b, rhs_bar, _shift_rows(b, x, down=True)))
    du_bar = b.neg(_row_sums(b, rhs_bar, _shift_rows(b, x, down=False)))
    return [dl_bar, d_bar, du_bar, rhs_bar]


jvp_rules[tridiagonal_solve_p] = _tridiagonal_solve_jvp
vjp_rules[tridiagonal_solve_p] = _tridiagonal_solve_vjp


# --- no derivatives (as in JAX) ----------------------------------------------------------------

def _no_derivative(prim: Any) -> Any:
    def rule(*args: Any, **params: Any) -> Any:
        raise NotImplementedError(
            f"Differentiation rule for '{prim.name}' not implemented (JAX defines none "
            "either); differentiate a decomposition that has one (eigh, qr, svd) or stop "
            "the gradient with lax.stop_gradient")
    return rule


for _prim in (schur_p, hessenberg_p, tridiagonal_p, geqrf_p, householder_product_p, ormqr_p):
    jvp_rules[_prim] = _no_derivative(_prim)
    vjp_rules[_prim] = _no_derivative(_prim)
