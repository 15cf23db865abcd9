"""The Schur-based functions of spmdc.scipy.linalg (JAX's ``jax.scipy.linalg``):
``schur``, ``rsf2csf``, ``sqrtm``, ``funm`` and ``solve_sylvester``, on
``spmdc.lax.linalg.schur`` (LAPACK's ``gees``). See Note [functions of a matrix by its
Schur form].
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .. import lax
from .. import numpy as jnp
from ..core import dtypes
from ..lax import linalg as lax_linalg

__all__ = ["funm", "rsf2csf", "schur", "solve_sylvester", "sqrtm"]

# Note [functions of a matrix by its Schur form]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A = Z T Z^H with Z unitary and T upper triangular (the complex Schur form; the real one
# has 2x2 blocks for complex eigenvalue pairs, which ``rsf2csf`` rotates away with Givens
# rotations, as SciPy's). A function of A is then Z f(T) Z^H, and f(T) is upper
# triangular, computed column by column from its diagonal f(t_ii):
# - ``sqrtm``: Björck and Hammarling's recurrence u_ij = (t_ij - sum_k u_ik u_kj) /
#   (u_ii + u_jj) (entries where the numerator is exactly 0 stay 0, as JAX's);
# - ``funm``: Parlett's recurrence (Golub and Van Loan's algorithm 11.1.1), whose
#   divisions by t_jj - t_ii make it fail for repeated eigenvalues (``disp=False``
#   returns an estimate of the error, as SciPy's);
# - ``solve_sylvester`` (A X + X B = C): Bartels and Stewart's method, both A and B^H in
#   complex Schur form, the triangular equation solved entry by entry from the bottom
#   right (method='schur'); or by eigendecompositions (method='eigen'). Both return NaNs
#   when some eigenvalue of A plus one of B is within ``tol`` of 0 (no unique solution).
# The results are complex, as JAX's (SciPy returns real ones when it can), except
# solve_sylvester's for real C.


def _conj_t(x: Any) -> Any:
    return jnp.swapaxes(x, -1, -2).conj()


def _square(name: str, x: Any, what: str = "a") -> Any:
    x = jnp.asarray(x)
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ValueError(f"{name}: {what} must be a square matrix (or a batch of them), "
                         f"got shape {x.shape}")
    return x


def _inexact(x: Any) -> Any:
    return x if dtypes.is_inexact(x.dtype) else x.astype(dtypes.default_float())


def _complex(x: Any) -> Any:
    return x if x.dtype.kind == "c" else x.astype(np.result_type(x.dtype, np.complex64))


def schur(a: Any, output: str = "real") -> tuple[Any, Any]:
    """``(T, Z)`` with ``a = Z T Z^H``: T quasi upper triangular (``output='real'``, 2x2
    blocks for complex eigenvalue pairs) or upper triangular (``'complex'``)."""
    if output not in ("real", "complex"):
        raise ValueError("Expected 'output' to be either 'real' or 'complex', got "
                         f"output={output!r}.")
    a = _inexact(_square("schur", a))
    if output == "complex":
        a = _complex(a)
    return lax_linalg.schur(a)


def _rsf2csf_2d(t: Any, z: Any) -> tuple[Any, Any]:
    t, z = _complex(t), _complex(z)
    n = t.shape[0]
    if n == 1:
        return t, z
    eps = np.finfo(t.dtype).eps
    columns = jnp.arange(n)

    def rotate(m, t, z):
        """The Givens rotation G that zeroes T[m, m-1], applied to T's rows m-1, m (from
        column m-1 on), its columns m-1, m (up to row m) and Z's columns m-1, m."""
        block = lax.dynamic_slice(t, (m - 1, m - 1), (2, 2))
        mu = jnp.linalg.eigvals(block) - t[m, m]
        r = jnp.sqrt(jnp.abs(mu[0]) ** 2 + jnp.abs(t[m, m - 1]) ** 2).astype(t.dtype)
        c, s = mu[0] / r, t[m, m - 1] / r
        g = jnp.stack([jnp.stack([c.conj(), s]), jnp.stack([-s, c])])
        rows = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
        rows = jnp.where(columns >= m - 1, g @ jnp.where(columns >= m - 1, rows, 0), rows)
        t = lax.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
        cols = lax.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
        above = (columns < m + 1)[:, None]
        cols = jnp.where(above, jnp.where(above, cols, 0) @ _conj_t(g), cols)
        t = lax.dynamic_update_slice_in_dim(t, cols, m - 1, axis=1)
        z_cols = lax.dynamic_slice_in_dim(z, m - 1, 2, axis=1) @ _conj_t(g)
        return t, lax.dynamic_update_slice_in_dim(z, z_cols, m - 1, axis=1)

    def step(i, carry):             # SciPy's order: m = n - 1 down to 1
        t, z = carry
        m = n - i
        needed = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
        t, z = lax.cond(needed, rotate, lambda m, t, z: (t, z), m, t, z)
        return t.at[m, m - 1].set(0.0), z
    return lax.fori_loop(1, n, step, (t, z))


def rsf2csf(T: Any, Z: Any, check_finite: bool = True) -> tuple[Any, Any]:  # noqa: N803
    """The complex Schur form ``(T, Z)`` of a real Schur form (``schur``'s output):
    T upper triangular. ``check_finite`` is SciPy's; spmdc checks nothing."""
    t, z = jnp.asarray(T), jnp.asarray(Z)
    for name, x in (("T", t), ("Z", z)):
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise ValueError(f"Input '{name}' must be square.")
    if t.shape[-1] != z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
    return jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(
        _inexact(t), _inexact(z))


def _sqrtm_triangular(t: Any) -> Any:
    diag = jnp.sqrt(jnp.diagonal(t))
    n = diag.shape[0]

    def column(j, u):
        def entry(offset, u):
            i = j - 1 - offset
            k = jnp.arange(n)
            inside = (k > i) & (k < j)
            s = jnp.sum(jnp.where(inside, u[i, :] * u[:, j], 0))
            value = jnp.where(t[i, j] == s, 0, (t[i, j] - s) / (diag[i] + diag[j]))
            return u.at[i, j].set(value)
        return lax.fori_loop(0, j, entry, u)
    return lax.fori_loop(0, n, column, jnp.diag(diag))


def sqrtm(A: Any, blocksize: int = 1) -> Any:  # noqa: N803
    """The principal square root of ``A`` (complex; Note [functions of a matrix by its
    Schur form]). Only ``blocksize=1`` (the unblocked method) is computed, as in JAX."""
    if blocksize != 1:
        raise NotImplementedError("Blocked version is not implemented yet (sqrtm's "
                                  "blocksize > 1, as in JAX); use blocksize=1")
    a = _square("sqrtm", A, "A")
    if a.ndim != 2:
        raise ValueError(f"sqrtm: A must be one square matrix, got shape {a.shape}")
    t, z = schur(a, output="complex")
    root = _sqrtm_triangular(t)
    return jnp.matmul(jnp.matmul(z, root, precision=lax.Precision.HIGHEST), _conj_t(z),
                      precision=lax.Precision.HIGHEST)


def _parlett(f: Any, t: Any) -> tuple[Any, Any]:
    """Golub and Van Loan's algorithm 11.1.1: f(T) from its diagonal, and the smallest
    |t_jj - t_ii| met."""
    n = t.shape[0]
    index = jnp.arange(n)

    def inner(i, carry):
        p, f, smallest = carry
        j = i + p
        s = t[i - 1, j - 1] * (f[j - 1, j - 1] - f[i - 1, i - 1])
        between = (index >= i) & (index < j - 1)
        s = s + (jnp.where(between, t[i - 1], 0) @ jnp.where(between, f[:, j - 1], 0)
                 - jnp.where(between, f[i - 1], 0) @ jnp.where(between, t[:, j - 1], 0))
        den = t[j - 1, j - 1] - t[i - 1, i - 1]
        s = jnp.where(den != 0, s / den, s)
        return p, f.at[i - 1, j - 1].set(s), jnp.minimum(smallest, jnp.abs(den))

    def outer(p, carry):
        _, f, smallest = lax.fori_loop(1, n - p + 1, inner, (p, *carry))
        return f, smallest
    return lax.fori_loop(1, n, outer, (f, jnp.abs(t[0, 0])))


def funm(A: Any, func: Callable[[Any], Any], disp: bool = True) -> Any:  # noqa: N803
    """``func`` (a function of a scalar, applied elementwise to an array) as a function of
    the matrix ``A``: Z f(T) Z^H (Note [functions of a matrix by its Schur form]). With
    ``disp=False``, ``(F, err)``: err estimates the relative error (inf on overflow)."""
    a = jnp.asarray(A)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(a)
    t, z = rsf2csf(t, z)
    f = jnp.diag(func(jnp.diagonal(t))).astype(t.dtype)
    f, smallest = _parlett(f, t)
    f = z @ f @ _conj_t(z)
    if disp:
        return f
    tol = np.finfo(np.float32 if f.dtype == np.complex64 else np.float64).eps
    smallest = jnp.where(smallest == 0.0, tol, smallest)
    err = jnp.where(jnp.any(jnp.isinf(f)), np.inf, jnp.minimum(1, jnp.maximum(
        tol, (tol / smallest) * jnp.max(jnp.sum(jnp.abs(jnp.triu(t, 1)), axis=0)))))
    return f, err


def _triangular_sylvester(r: Any, s: Any, f: Any) -> Any:
    """Y with R Y + Y S^T = F for upper-triangular R (m x m) and lower-triangular S^T
    (S n x n upper triangular): entry by entry from the last (Bartels-Stewart)."""
    m, n = f.shape
    rows, cols = jnp.arange(m), jnp.arange(n)

    def step(y, flat):
        i, j = flat // n, flat % n
        row_term = jnp.sum(jnp.where(rows > i, r[i, :] * y[:, j], 0))
        col_term = jnp.sum(jnp.where(cols > j, y[i, :] * s[:, j], 0))
        value = (f[i, j] - row_term - col_term) / (r[i, i] + s[j, j])
        return y.at[i, j].set(value), None
    y, _ = lax.scan(step, jnp.zeros((m, n), f.dtype), jnp.arange(m * n - 1, -1, -1))
    return y


def _real_embedding(x: Any) -> Any:
    """The real matrix [[re, -im], [im, re]] acting on [re; im] as x acts on a complex
    vector: complex solves on spmdc's real LU."""
    return jnp.block([[x.real, -x.imag], [x.imag, x.real]])


def _complex_solve(a: Any, b: Any) -> Any:
    n = a.shape[0]
    stacked = jnp.linalg.solve(_real_embedding(a), jnp.concatenate([b.real, b.imag]))
    return (stacked[:n] + 1j * stacked[n:]).astype(a.dtype)


def _sylvester_2d(a: Any, b: Any, c: Any, method: str, tol: float) -> Any:
    m, n = c.shape
    if method == "schur":
        r, u = schur(a, output="complex")
        s, v = schur(_conj_t(b), output="complex")
        f = _conj_t(u) @ c.astype(r.dtype) @ v
        x = u @ _triangular_sylvester(r, _conj_t(s), f) @ _conj_t(v)
    else:
        ra, ua = jnp.linalg.eig(a)
        rb, ub = jnp.linalg.eig(b)
        f = _complex_solve(ua, c.astype(ra.dtype) @ ub)
        y = f / (ra[:, None] + rb[None, :])
        x = ua @ y @ _complex_solve(ub, jnp.eye(n, dtype=ub.dtype))
    if c.dtype.kind != "c":
        x = x.real
    singular = jnp.any(jnp.abs(jnp.linalg.eigvals(a)[:, None]
                               + jnp.linalg.eigvals(b)[None, :]) < tol)
    return jnp.where(singular, jnp.nan, x)


def solve_sylvester(A: Any, B: Any, C: Any, *, method: str = "schur",  # noqa: N803
                    tol: float = 1e-8) -> Any:
    """X with ``A X + X B = C`` (A m x m, B n x n, C m x n, batched over leading
    dimensions), by Bartels and Stewart's method (``method='schur'``) or by
    eigendecompositions (``'eigen'``); NaNs when no unique solution exists within
    ``tol``. See Note [functions of a matrix by its Schur form]."""
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either '
                         '"schur" or "eigen".')
    a, b, c = (jnp.asarray(x) for x in (A, B, C))
    dtype = jnp.result_type(a, b, c)
    if not dtypes.is_inexact(dtype):
        dtype = dtypes.default_float()
    a, b, c = (x.astype(dtype) for x in (a, b, c))
    if c.ndim < 2:
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\n"
                         f"B: {b.shape}\nC: {c.shape}")
    m, n = c.shape[-2:]
    if a.shape[-2:] != (m, m) or b.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {a.shape}\n"
                         f"B: {b.shape}\nC: {c.shape}")
    return jnp.vectorize(lambda a, b, c: _sylvester_2d(a, b, c, method, tol),
                         signature="(m,m),(n,n),(m,n)->(m,n)")(a, b, c)
