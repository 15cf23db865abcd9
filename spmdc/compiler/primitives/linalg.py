"""Linear algebra on jaxlib's LAPACK kernels: cholesky, triangular_solve, lu (this file);
qr, eigh, svd (linalg_decomp.py).

Every primitive works on a batch of matrices ``[..., m, n]`` (the kernels loop over the
leading dimensions themselves) of float32, float64, complex64 or complex128, and lowers
to a custom call of the ``lapack_<s|d|c|z><routine>_ffi`` family that jaxlib registers
for its CPU client (Note [LAPACK custom calls] in runtime/pjrt/custom_calls.py); on CUDA,
to cuSOLVER's (linalg_cuda.py). A factorisation that fails (a matrix that is not positive
definite for cholesky, LAPACK's ``info != 0``) gives NaNs, as in JAX. The derivative
rules are JAX's published formulas; the VJP rules are their transposes, written out for
real matrices and derived from the JVP rule for complex ones (Note [complex linear
algebra derivatives]).

- ``cholesky(a) -> l``: the lower Cholesky factor of the symmetric (Hermitian) matrix
  whose lower triangle is ``a``'s (the upper triangle is not read); ``l``'s upper triangle is zero.
  Its derivative rules assume a symmetric tangent, as JAX's do (see Note [symmetric
  inputs]).
- ``triangular_solve(a, b, left_side, lower, transpose_a, unit_diagonal[, conjugate_a])
  -> x``: ``op(a) x = b`` (``x op(a) = b`` when not ``left_side``), ``op`` the transpose
  or not, conjugated with ``conjugate_a`` (complex matrices; the parameter is bound only
  when true, so real programs are unchanged), reading only ``a``'s ``lower`` (or upper)
  triangle, its diagonal taken as ones with ``unit_diagonal``.
- ``lu(a) -> (lu, pivots, permutation)``: partial-pivoting LU, ``p a = l u``; ``lu`` holds
  ``l`` below the diagonal (unit diagonal implied) and ``u`` on and above; ``pivots``
  (int32, ``[..., min(m, n)]``) are LAPACK's row swaps (0-based), ``permutation`` (int32,
  ``[..., m]``) the rows of ``a`` in the order of ``p a``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..builder import Builder, lit
from ..ir import TensorType, dtype_name
from ..passes.autodiff import vjp_rules
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules, batch_to_front, move_axis
from ..stablehlo import ffi_call, hlo, lower_body, lower_rules
from .core import ShapeError, declare
from .reductions import compare

__all__ = ["cholesky_p", "triangular_solve_p", "lu_p", "check_matrix", "lapack_target",
           "matrix_batch_rule", "mT", "mH", "matmul", "tril", "eye_mask", "not_ok_to_nan",
           "lu_lowering", "vjp_by_transposing", "LAPACK_KINDS"]

INT32 = np.dtype(np.int32)
LAPACK_KINDS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d",
                np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"}
"""The letter of LAPACK's routines for each dtype it has kernels for."""

# Note [complex linear algebra derivatives]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# The JVP rules are JAX's, written once for real and complex matrices: where JAX's rule
# takes a conjugate transpose (``_H``), ours does (``mH``, the plain transpose on real
# matrices). JAX differentiates in reverse by transposing the JVP's linear part under
# the pairing ``<x, y> = re(sum(x * y))`` (no conjugation: ``M x`` transposes to
# ``M^T ct``, ``conj(x)`` to ``conj(ct)``). For real matrices the VJP rules are those
# transposes written out; for complex ones ``vjp_by_transposing`` builds the JVP rule's
# linear part as a program of its own and runs spmdc's reverse pass over it, which
# transposes every primitive by that pairing, so the derivatives of complex inputs are
# JAX's exactly, conjugates included. The holomorphic rules (triangular_solve, lu) are
# the same formula for both and keep one written-out VJP.

# Note [symmetric inputs]
# ~~~~~~~~~~~~~~~~~~~~~~~
# cholesky and eigh read one triangle of their operand; their derivative rules (JAX's)
# are those of the factorisation of a symmetric matrix, so they are exact for symmetric
# tangents, which is what programs give them: jnp.linalg.cholesky and jnp.linalg.eigh
# symmetrize their input first, as JAX's do, and then the gradient flows through that
# symmetrization. Finite-difference checks of these primitives therefore perturb
# symmetric matrices (tests/numpy/test_linalg.py).


# --- shared pieces -----------------------------------------------------------------------------

def check_matrix(name: str, t: TensorType, square: bool = False) -> None:
    """A shape-rule check: a (batch of) float32/float64/complex64/complex128 matrices."""
    if t.ndim < 2:
        raise ShapeError(f"{name} needs a matrix (or a batch of matrices, [..., m, n]); "
                         f"got {t}")
    if square and t.shape[-1] != t.shape[-2]:
        raise ShapeError(f"{name} needs square matrices; got {t}")
    if t.dtype not in LAPACK_KINDS:
        raise ShapeError(f"{name}: LAPACK on CPU has no kernel for {dtype_name(t.dtype)} here; "
                         "convert to float32, float64, complex64 or complex128")


_COMPLEX_NAMES = {"orgqr": "ungqr", "syevd": "heevd", "sytrd": "hetrd"}


def lapack_target(routine: str, dtype: np.dtype) -> str:
    """jaxlib's kernel for ``routine`` (its real name: ``orgqr``, ``syevd``) on ``dtype``;
    the complex ones are LAPACK's unitary/Hermitian names (``ungqr``, ``heevd``)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        routine = _COMPLEX_NAMES.get(routine, routine)
    return f"lapack_{LAPACK_KINDS[dtype]}{routine}_ffi"


def matrix_batch_rule(prim: Any):
    """Batching for primitives over batches of matrices: the vmapped dimension becomes one
    more leading batch dimension of every operand."""
    def rule(b, axis, args, dims, **params):
        moved = [batch_to_front(b, x, d, axis.size) for x, d in zip(args, dims, strict=True)]
        out = b.bind(prim, *moved, **params)
        outs = list(out) if prim.multiple_results else [out]
        return outs, [0] * len(outs)
    return rule


def mT(b: Builder, x: Any) -> Any:
    """The matrix transpose of the last two dimensions."""
    n = x.type.ndim
    return b.transpose(x, permutation=(*range(n - 2), n - 1, n - 2))


def mH(b: Builder, x: Any) -> Any:
    """The conjugate transpose of the last two dimensions (the transpose of real ones)."""
    return b.conj(mT(b, x)) if x.type.dtype.kind == "c" else mT(b, x)


def vjp_by_transposing(jvp_rule: Callable[..., Any], multiple_results: bool,
                       real_vjp: Callable[..., Any] | None) -> Callable[..., Any]:
    """A VJP rule: ``real_vjp`` (if given) when every operand is real, else the transpose
    of ``jvp_rule``'s linear part, built as a program and run through the reverse pass.
    See Note [complex linear algebra derivatives]."""
    from ..passes.autodiff import is_float, vjp_func, zeros

    def rule(b, ct, *inputs, **params):
        if real_vjp is not None and all(a.type.dtype.kind != "c" for a in inputs):
            return real_vjp(b, ct, *inputs, **params)
        cts = list(ct) if multiple_results else [ct]
        g = Builder("linear_part")
        primals = [g.input(a.type) for a in inputs]
        tangents = [g.input(a.type) if is_float(a.type) else None for a in inputs]
        _, touts = jvp_rule(g, primals, tangents, **params)
        seeded = [k for k, (t, c) in enumerate(zip(touts, cts, strict=True))
                  if t is not None and c is not None]
        if not seeded:
            return [None] * len(inputs)
        given = [t for t in tangents if t is not None]
        linear = g.build([touts[k] for k in seeded])
        transposed = vjp_func(linear, [False] * len(primals) + [True] * len(given))
        dummies = [zeros(b, t.type) for t in given]     # dead: the program is linear in them
        outs = b.inline(transposed, [*inputs, *dummies, *[cts[k] for k in seeded]])
        grads = iter(outs[len(seeded):])
        return [next(grads) if t is not None else None for t in tangents]
    return rule


def matmul(b: Builder, x: Any, y: Any) -> Any:
    """Batched matrix product of two operands of one rank."""
    n = x.type.ndim
    batch = tuple(range(n - 2))
    return b.dot_general(x, y, contract=((n - 1,), (n - 2,)), batch=(batch, batch))


def _positions(b: Builder, shape: tuple[int, ...]) -> tuple[Any, Any]:
    n = len(shape)
    return (b.iota(dtype=INT32, shape=shape, dimension=n - 2),
            b.iota(dtype=INT32, shape=shape, dimension=n - 1))


def tril(b: Builder, x: Any, k: int = 0, lower: bool = True) -> Any:
    """The lower triangle (on and below diagonal ``k``) of ``x``, zeros elsewhere; with
    ``lower=False`` the upper triangle (on and above diagonal ``k``)."""
    rows, cols = _positions(b, x.type.shape)
    d = b.sub(cols, rows)
    keep = b.le(d, lit(k, INT32)) if lower else b.ge(d, lit(k, INT32))
    return b.select(keep, x, lit(0, x.type.dtype))


def eye_mask(b: Builder, shape: tuple[int, ...]) -> Any:
    rows, cols = _positions(b, shape)
    return b.eq(rows, cols)


def _diagonal(b: Builder, x: Any) -> Any:
    """The diagonal of a batch of square matrices, ``[..., n]``."""
    masked = b.select(eye_mask(b, x.type.shape), x, lit(0, x.type.dtype))
    return b.reduce_sum(masked, axes=(x.type.ndim - 1,))


def _ones_on_diagonal(b: Builder, x: Any) -> Any:
    return b.select(eye_mask(b, x.type.shape), lit(1, x.type.dtype), x)


def not_ok_to_nan(ctx, info: Any, info_t: TensorType, x: Any, t: TensorType) -> Any:
    """``x`` with the matrices whose LAPACK ``info`` is not 0 replaced by NaNs (lowering)."""
    ok = compare(info, ctx.constant(0, info_t), "EQ", INT32)
    ok = ctx.broadcast(ok, TensorType(info_t.shape, np.dtype(np.bool_)),
                       TensorType(t.shape, np.dtype(np.bool_)), range(info_t.ndim))
    return hlo.SelectOp(ok, x, ctx.constant(np.nan, t)).result


def _lower_func(ctx, build: Any, in_types: list[TensorType], operands: list[Any]) -> list[Any]:
    """Lower a small program written with a Builder (``build(b, *inputs) -> outputs``) at
    the current insertion point: the post-processing of a custom call's results."""
    b = Builder("post")
    ins = [b.input(t) for t in in_types]
    return lower_body(ctx, b.build(list(build(b, *ins))), operands)


# --- cholesky --------------------------------------------------------------------------------

def _cholesky_rule(a: TensorType) -> TensorType:
    check_matrix("cholesky", a, square=True)
    return a


def _cholesky_impl(a):
    a = np.asarray(a)
    out = np.full_like(a, np.nan)
    for i in np.ndindex(a.shape[:-2]):
        low = np.tril(a[i])
        try:
            out[i] = np.linalg.cholesky(low + np.tril(low, -1).T.conj())
        except np.linalg.LinAlgError:
            pass
    return out


def _cholesky_lowering(ctx, eqn, a):
    t = eqn.inputs[0].type
    info_t = TensorType(t.shape[:-2], INT32)
    factor, info = ffi_call(lapack_target("potrf", t.dtype), [a], [t], [t, info_t],
                            {"uplo": ord("L")}, aliases={0: 0})
    (low,) = _lower_func(ctx, lambda b, x: [tril(b, x)], [t], [factor])
    return not_ok_to_nan(ctx, info, info_t, low, t)


def _phi(b: Builder, x: Any) -> Any:
    """The lower triangle of ``x`` with its diagonal halved."""
    low = tril(b, x, -1)
    half = b.mul(b.select(eye_mask(b, x.type.shape), x, lit(0, x.type.dtype)),
                 lit(0.5, x.type.dtype))
    return b.add(low, half)


def _solve_lower(b, low, rhs, *, left_side, transpose_a, **conjugate_a):
    return b.triangular_solve(low, rhs, left_side=left_side, lower=True,
                              transpose_a=transpose_a, unit_diagonal=False, **conjugate_a)


def _conjugated(t: TensorType) -> dict[str, bool]:
    """triangular_solve's ``conjugate_a=True`` for complex matrices (bound only then)."""
    return {"conjugate_a": True} if t.dtype.kind == "c" else {}


def _cholesky_jvp(b, primals, tangents):
    # dL = L phi(L^-1 dA L^-H)   (Murray 2016, as JAX)
    (a,), (da,) = primals, tangents
    low = b.cholesky(a)
    tmp = _solve_lower(b, low, da, left_side=False, transpose_a=True,
                       **_conjugated(a.type))                              # dA L^-H
    tmp = _solve_lower(b, low, tmp, left_side=True, transpose_a=False)    # L^-1 dA L^-T
    return [low], [matmul(b, low, _phi(b, tmp))]


def _cholesky_vjp(b, ct, a):
    # The transpose of the JVP: abar = L^-T phi(L^T lbar) L^-1.
    low = b.cholesky(a)
    p = _phi(b, matmul(b, mT(b, low), ct))
    tmp = _solve_lower(b, low, p, left_side=True, transpose_a=True)       # L^-T P
    return [_solve_lower(b, low, tmp, left_side=False, transpose_a=False)]  # (.) L^-1


cholesky_p = declare("cholesky", _cholesky_rule, _cholesky_impl)
batch_rules[cholesky_p] = matrix_batch_rule(cholesky_p)
jvp_rules[cholesky_p] = _cholesky_jvp
vjp_rules[cholesky_p] = vjp_by_transposing(_cholesky_jvp, False, _cholesky_vjp)
lower_rules[cholesky_p] = _cholesky_lowering


# --- triangular_solve ------------------------------------------------------------------------

def _triangular_solve_rule(a: TensorType, rhs: TensorType, *, left_side: bool, lower: bool,
                           transpose_a: bool, unit_diagonal: bool,
                           conjugate_a: bool = False) -> TensorType:
    check_matrix("triangular_solve", a, square=True)
    check_matrix("triangular_solve", rhs)
    if a.dtype != rhs.dtype:
        raise ShapeError(f"triangular_solve needs operands of one dtype, got {a} and {rhs}")
    if a.shape[:-2] != rhs.shape[:-2]:
        raise ShapeError(f"triangular_solve: the batch dimensions of {a} and {rhs} differ")
    common = rhs.shape[-2] if left_side else rhs.shape[-1]
    if a.shape[-1] != common:
        raise ShapeError(f"triangular_solve: incompatible shapes {a} and {rhs} "
                         f"(left_side={left_side})")
    return rhs


def _triangle(a, lower, unit_diagonal):
    t = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        n = a.shape[-1]
        t = t.copy()
        t[..., np.arange(n), np.arange(n)] = 1
    return t


def _triangular_solve_impl(a, rhs, *, left_side, lower, transpose_a, unit_diagonal,
                           conjugate_a=False):
    op = _triangle(np.asarray(a), lower, unit_diagonal)
    if conjugate_a:
        op = np.conj(op)
    if transpose_a:
        op = np.swapaxes(op, -1, -2)
    if left_side:
        return np.linalg.solve(op, rhs).astype(rhs.dtype)
    # x op = rhs  <=>  op^T x^T = rhs^T
    return np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(rhs, -1, -2)),
                       -1, -2).astype(rhs.dtype)


def _triangular_solve_lowering(ctx, eqn, a, rhs):
    at, bt = (x.type for x in eqn.inputs)
    p = eqn.params
    left_side, lower, transpose_a = p["left_side"], p["lower"], p["transpose_a"]
    unit_diagonal = p["unit_diagonal"]
    conjugate_a = p.get("conjugate_a", False)
    if conjugate_a and not transpose_a:          # LAPACK conjugates only with a transpose
        (a,) = _lower_func(ctx, lambda b, x: [b.conj(x)], [at], [a])
        conjugate_a = False
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
    attrs = {"side": ord("L" if left_side else "R"), "uplo": ord("L" if lower else "U"),
             "trans_x": ord(trans), "diag": ord("U" if unit_diagonal else "N")}
    return ffi_call(lapack_target("trsm", at.dtype), [a, rhs], [at, bt], [bt], attrs,
                    aliases={0: 1}, column_major=[True, True, True])


def _triangle_of(b, a, lower, unit_diagonal):
    """The part of ``a`` a solve reads (its tangent): zero elsewhere."""
    k = (-1 if lower else 1) if unit_diagonal else 0
    return tril(b, a, k, lower=lower)


def _triangular_solve_jvp(b, primals, tangents, **params):
    (a, rhs), (da, drhs) = primals, tangents
    x = b.triangular_solve(a, rhs, **params)
    out = None if drhs is None else b.triangular_solve(a, drhs, **params)
    if da is not None:
        # d(op(A)^-1 B) = -op(A)^-1 op(dA) X   (left side; mirrored on the right)
        op_da = _triangle_of(b, da, params["lower"], params["unit_diagonal"])
        if params.get("conjugate_a", False):
            op_da = b.conj(op_da)
        if params["transpose_a"]:
            op_da = mT(b, op_da)
        prod = matmul(b, op_da, x) if params["left_side"] else matmul(b, x, op_da)
        term = b.neg(b.triangular_solve(a, prod, **params))
        out = term if out is None else b.add(out, term)
    return [x], [out]


def _triangular_solve_vjp(b, ct, a, rhs, *, left_side, lower, transpose_a, unit_diagonal,
                          conjugate_a=False):
    # The transpose of the JVP under JAX's pairing, for real and complex matrices alike
    # (Note [complex linear algebra derivatives]): op(A)^-1 transposes to op(A)^-T (the
    # same conjugation), and the cotangent of op(dA) is conjugated back with conjugate_a.
    conj = {"conjugate_a": True} if conjugate_a else {}
    flipped = dict(left_side=left_side, lower=lower, transpose_a=not transpose_a,
                   unit_diagonal=unit_diagonal, **conj)
    rhs_bar = b.triangular_solve(a, ct, **flipped)          # op(A)^-T xbar
    x = b.triangular_solve(a, rhs, left_side=left_side, lower=lower,
                           transpose_a=transpose_a, unit_diagonal=unit_diagonal, **conj)
    if left_side:
        prod = matmul(b, x, mT(b, rhs_bar)) if transpose_a else matmul(b, rhs_bar, mT(b, x))
    else:
        prod = matmul(b, mT(b, rhs_bar), x) if transpose_a else matmul(b, mT(b, x), rhs_bar)
    if conjugate_a:
        prod = b.conj(prod)
    a_bar = b.neg(_triangle_of(b, prod, lower, unit_diagonal))
    return [a_bar, rhs_bar]


def _triangular_solve_batch(b, axis, args, dims, **params):
    # With one matrix for the whole batch, the batch joins the right-hand sides (columns
    # on the left side, rows on the right), as JAX does: no copies of the matrix.
    (a, rhs), (da, drhs) = args, dims
    if da is not None:
        return matrix_batch_rule(triangular_solve_p)(b, axis, args, dims, **params)
    nd = rhs.type.ndim
    target = nd - 1 if params["left_side"] else nd - 2
    moved = move_axis(b, rhs, drhs, target)
    shape = moved.type.shape
    if params["left_side"]:                  # [..., m, n, B] -> [..., m, n * B]
        flat_shape = (*shape[:-2], shape[-2] * shape[-1])
    else:                                    # [..., B, m, n] -> [..., B * m, n]
        flat_shape = (*shape[:-3], shape[-3] * shape[-2], shape[-1])
    out = b.triangular_solve(a, b.reshape(moved, new_sizes=flat_shape), **params)
    return [b.reshape(out, new_sizes=shape)], [target]


triangular_solve_p = declare("triangular_solve", _triangular_solve_rule,
                             _triangular_solve_impl)
batch_rules[triangular_solve_p] = _triangular_solve_batch
jvp_rules[triangular_solve_p] = _triangular_solve_jvp
vjp_rules[triangular_solve_p] = _triangular_solve_vjp
lower_rules[triangular_solve_p] = _triangular_solve_lowering


# --- lu --------------------------------------------------------------------------------------

def _lu_rule(a: TensorType):
    check_matrix("lu", a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    return a, TensorType((*batch, min(m, n)), INT32), TensorType((*batch, m), INT32)


def _lu_impl(a):
    from scipy.linalg import lapack
    a = np.asarray(a)
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    lu = np.empty_like(a)
    pivots = np.zeros((*batch, min(m, n)), np.int32)
    perm = np.zeros((*batch, m), np.int32)
    getrf = getattr(lapack, f"{LAPACK_KINDS[a.dtype]}getrf")
    for i in np.ndindex(batch):
        lu[i], piv, _ = getrf(a[i])
        pivots[i] = piv[:min(m, n)]
        order = np.arange(m)
        for k, p in enumerate(pivots[i]):
            order[k], order[p] = order[p], order[k]
        perm[i] = order
    return lu, pivots, perm


def _permutation_from_pivots(b: Builder, pivots: Any, m: int) -> Any:
    """The row order that LAPACK's sequence of swaps (row k <-> row pivots[k]) produces,
    as a while loop over k (the swaps are sequential)."""
    batch = pivots.type.shape[:-1]
    count = pivots.type.shape[-1]
    perm_t = TensorType((*batch, m), INT32)
    nd = len(batch)

    def select_at(bb, values, index_mask):
        return bb.reduce_sum(bb.select(index_mask, values, lit(0, INT32)), axes=(nd,))

    def spread(bb, x):                                  # [...] -> [..., m]
        return bb.broadcast_in_dim(x, shape=perm_t.shape, broadcast_dimensions=tuple(range(nd)))

    cond = Builder("cond")
    k = cond.input(TensorType((), INT32))
    cond.input(perm_t)
    cond_func = cond.build([cond.lt(k, lit(count, INT32))])

    body = Builder("body")
    piv = body.input(pivots.type)
    k = body.input(TensorType((), INT32))
    perm = body.input(perm_t)
    at_k_piv = body.eq(body.iota(dtype=INT32, shape=pivots.type.shape, dimension=nd), k)
    j = spread(body, select_at(body, piv, at_k_piv))
    slots = body.iota(dtype=INT32, shape=perm_t.shape, dimension=nd)
    is_k, is_j = body.eq(slots, k), body.eq(slots, j)
    pk, pj = spread(body, select_at(body, perm, is_k)), spread(body, select_at(body, perm, is_j))
    swapped = body.select(is_k, pj, body.select(is_j, pk, perm))
    body_func = body.build([body.add(k, lit(1, INT32)), swapped])

    start = b.iota(dtype=INT32, shape=perm_t.shape, dimension=nd)
    zero = b.convert(lit(0, INT32), new_dtype=INT32)
    _, out = b.bind(_while_p(), pivots, zero, start, cond_func=cond_func, body_func=body_func,
                    cond_nconsts=0, body_nconsts=1)
    return out


def _while_p():
    from .core import registry
    return registry["while"]


def lu_lowering(target: Callable[[str, np.dtype], str]) -> Any:
    """The lowering of lu on the ``getrf`` kernel named ``target("getrf", dtype)``: LAPACK's
    on the CPU, cuSOLVER's on CUDA, which take and return the same buffers."""
    def rule(ctx, eqn, a):
        t = eqn.inputs[0].type
        m, n = t.shape[-2:]
        batch = t.shape[:-2]
        ipiv_t = TensorType((*batch, min(m, n)), INT32)
        info_t = TensorType(batch, INT32)
        lu, ipiv, _info = ffi_call(target("getrf", t.dtype), [a], [t], [t, ipiv_t, info_t],
                                   aliases={0: 0})
        # LAPACK's pivots are 1-based; a singular matrix (info > 0) still has a valid
        # factorisation with a zero on u's diagonal, as in JAX.
        def post(b, ipiv):
            pivots = b.sub(ipiv, lit(1, INT32))
            return pivots, _permutation_from_pivots(b, pivots, m)
        return [lu, *_lower_func(ctx, post, [ipiv_t], [ipiv])]
    return rule


def _permutation_matrix(b: Builder, perm: Any, dtype: np.dtype) -> Any:
    """P with P[i, j] = (perm[i] == j), so that P a = a[perm]."""
    shape = (*perm.type.shape, perm.type.shape[-1])
    nd = perm.type.ndim
    rows = b.broadcast_in_dim(perm, shape=shape, broadcast_dimensions=tuple(range(nd)))
    cols = b.iota(dtype=INT32, shape=shape, dimension=nd)
    return b.convert(b.eq(rows, cols), new_dtype=dtype)


def _lu_factors(b, lu):
    """``L`` (m x m, unit lower) and ``U`` (n x n, upper) of an m x n ``lu``; for a
    rectangular one, JAX's completion: ``L``'s last m - k columns and ``U``'s last n - k
    rows those of the identity (k = min(m, n))."""
    *batch, m, n = lu.type.shape
    if m == n:
        return _ones_on_diagonal(b, tril(b, lu, -1)), tril(b, lu, 0, lower=False)
    k = min(m, n)
    zero, nd = lit(0, lu.type.dtype), lu.type.ndim
    start = (0,) * nd
    low = b.slice(lu, start_indices=start, limit_indices=(*batch, m, k), strides=None)
    low = b.pad(tril(b, low, -1), zero, padding_config=((0, 0, 0),) * (nd - 1) + ((0, m - k, 0),))
    up = b.slice(lu, start_indices=start, limit_indices=(*batch, k, n), strides=None)
    up = b.pad(tril(b, up, 0, lower=False), zero,
               padding_config=((0, 0, 0),) * (nd - 2) + ((0, n - k, 0), (0, 0, 0)))
    rows = b.iota(dtype=INT32, shape=up.type.shape, dimension=nd - 2)
    tail = getattr(b, "and")(eye_mask(b, up.type.shape), b.ge(rows, lit(k, INT32)))
    return _ones_on_diagonal(b, low), b.select(tail, lit(1, lu.type.dtype), up)


def _lu_jvp(b, primals, tangents):
    # lau = L^-1 P dA U^-1; dLU = L tril(lau, -1) + triu(lau) U   (JAX's rule, with JAX's
    # square completions of L and U for a rectangular a: _lu_factors)
    (a,), (da,) = primals, tangents
    lu, pivots, perm = b.lu(a)
    low, up = _lu_factors(b, lu)
    x = matmul(b, _permutation_matrix(b, perm, a.type.dtype), da)
    la = b.triangular_solve(low, x, left_side=True, lower=True, transpose_a=False,
                            unit_diagonal=True)
    lau = b.triangular_solve(up, la, left_side=False, lower=False, transpose_a=False,
                             unit_diagonal=False)
    dlu = b.add(matmul(b, low, tril(b, lau, -1)), matmul(b, tril(b, lau, 0, lower=False), up))
    return [lu, pivots, perm], [dlu, None, None]


def _lu_vjp(b, ct, a):
    ct_lu = ct[0]
    if ct_lu is None:
        return [None]
    if a.type.shape[-1] != a.type.shape[-2]:        # the transpose of the JVP, derived
        return _lu_vjp_transposed(b, ct, a)
    lu, _, perm = b.lu(a)
    low, up = _lu_factors(b, lu)
    lau_bar = b.add(tril(b, matmul(b, mT(b, low), ct_lu), -1),
                    tril(b, matmul(b, ct_lu, mT(b, up)), 0, lower=False))
    la_bar = b.triangular_solve(up, lau_bar, left_side=False, lower=False, transpose_a=True,
                                unit_diagonal=False)
    x_bar = b.triangular_solve(low, la_bar, left_side=True, lower=True, transpose_a=True,
                               unit_diagonal=True)
    return [matmul(b, mT(b, _permutation_matrix(b, perm, a.type.dtype)), x_bar)]


lu_p = declare("lu", _lu_rule, _lu_impl, multiple_results=True)
batch_rules[lu_p] = matrix_batch_rule(lu_p)
jvp_rules[lu_p] = _lu_jvp
_lu_vjp_transposed = vjp_by_transposing(_lu_jvp, True, None)
vjp_rules[lu_p] = _lu_vjp
lower_rules[lu_p] = lu_lowering(lapack_target)

