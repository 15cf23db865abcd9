"""The derivatives of ``svd`` of complex matrices (JAX's rule for every dtype); the real
ones stay in linalg_decomp.py, whose rules this module's wrap dispatch to by dtype.

Note [complex svd derivatives]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
With ``A = U S V^H`` (``S`` real), JAX's JVP is, for ``dS = U^H dA V``:
``ds = re(diag(dS))``; ``dU = U (F o (dS S + (dS S)^H) + D)`` with
``D = (dS - dS^H)/2 o diag(1/s)`` (the phase freedom of each singular pair, zero for
real matrices); ``dV = V (F o (S dS + (S dS)^H))``; plus ``(I - U U^H) dA V S^-1`` in
``dU`` when ``m > n`` and ``(I - V V^H) dA^H U S^-1`` in ``dV`` when ``n > m``;
``F[i, j] = 1 / (s_j^2 - s_i^2)`` off the diagonal, 0 on it. The VJP is that map's
transpose under JAX's pairing ``<x, y> = re(sum(x * y))`` (no conjugation, as JAX
transposes complex linear maps: ``M x`` transposes to ``M^T ct``, ``x^H`` to ``ct^H``,
``re(x)`` to ``ct + 0j``), written term by term in ``_svd_vjp_complex``.
"""
from __future__ import annotations

from typing import Any

from ..builder import Builder, lit
from ..passes.autodiff import vjp_rules
from ..passes.forward import jvp_rules
from .linalg import _diagonal, eye_mask, matmul, mT
from .linalg_decomp import (
    _algorithm_param,
    _cols,
    _diag_matrix,
    _reciprocal_gaps,
    _rows,
    _svd_check_derivative,
    svd_p,
)

__all__: list[str] = []

_svd_jvp_real = jvp_rules[svd_p]
_svd_vjp_real = vjp_rules[svd_p]


def _h(b: Builder, x: Any) -> Any:
    """The conjugate transpose of the last two dimensions."""
    return b.conj(mT(b, x))


def _c(b: Builder, x: Any, like: Any) -> Any:
    """Real ``x`` as the complex dtype of ``like``."""
    return b.convert(x, new_dtype=like.type.dtype)


def _spread(b: Builder, s: Any, x: Any) -> Any:
    """``s[j]`` at every ``[..., i, j]`` of ``x``'s shape, in ``x``'s complex dtype."""
    return _c(b, _rows(b, s, x.type.shape), x)


def _parts(b: Builder, a: Any, algorithm: str) -> tuple[Any, ...]:
    """``s, U, V^H, [s_j], [s_i], F, diag(1/s)`` (complex where they multiply matrices)."""
    s, u, vt = b.svd(a, full_matrices=False, compute_uv=True, **_algorithm_param(algorithm))
    shape = (*s.type.shape, s.type.shape[-1])
    s_j, s_i = _rows(b, s, shape), _cols(b, s, shape)
    f = _reciprocal_gaps(b, b.mul(b.add(s_j, s_i), b.sub(s_j, s_i)))
    zero = b.convert(b.eq(s, lit(0, s.type.dtype)), new_dtype=s.type.dtype)
    s_inv = b.sub(b.div(lit(1, s.type.dtype), b.add(s, zero)), zero)
    return s, u, vt, _c(b, s_j, a), _c(b, s_i, a), _c(b, f, a), _c(b, _diag_matrix(b, s_inv), a)


def _svd_jvp_complex(b, a, da, full_matrices, compute_uv, algorithm):
    # See Note [complex svd derivatives].
    s, u, vt, s_j, s_i, f, s_inv = _parts(b, a, algorithm)
    v = _h(b, vt)
    ds_mat = matmul(b, _h(b, u), matmul(b, da, v))
    ds = b.real(_diagonal(b, ds_mat))
    if not compute_uv:
        return [b.svd(a, full_matrices=full_matrices, compute_uv=False,
                      **_algorithm_param(algorithm))[0]], [ds]
    dss, sds = b.mul(ds_mat, s_j), b.mul(s_i, ds_mat)
    half = lit(0.5, s.type.dtype)
    phase = b.mul(b.mul(b.sub(ds_mat, _h(b, ds_mat)), _c(b, half, a)), s_inv)
    du = matmul(b, u, b.add(b.mul(f, b.add(dss, _h(b, dss))), phase))
    dv = matmul(b, v, b.mul(f, b.add(sds, _h(b, sds))))
    m, n = a.type.shape[-2:]
    if m > n:
        dav = matmul(b, da, v)
        du = b.add(du, b.div(b.sub(dav, matmul(b, u, matmul(b, _h(b, u), dav))),
                             _spread(b, s, dav)))
    if n > m:
        dahu = matmul(b, _h(b, da), u)
        dv = b.add(dv, b.div(b.sub(dahu, matmul(b, v, matmul(b, vt, dahu))),
                             _spread(b, s, dahu)))
    return [s, u, vt], [ds, du, _h(b, dv)]


def _svd_vjp_complex(b, ct, a, full_matrices, compute_uv, algorithm):
    # The transpose of _svd_jvp_complex, term by term: See Note [complex svd derivatives].
    s, u, vt, s_j, s_i, f, s_inv = _parts(b, a, algorithm)
    v = _h(b, vt)
    k = s.type.shape[-1]
    ds_bar = b.convert(b.broadcast_in_dim(lit(0, s.type.dtype), shape=(*s.type.shape, k),
                                          broadcast_dimensions=()), new_dtype=a.type.dtype)
    if ct[0] is not None:
        ds_bar = b.select(eye_mask(b, ds_bar.type.shape),
                          _c(b, _rows(b, ct[0], ds_bar.type.shape), a), ds_bar)
    m, n = a.type.shape[-2:]
    a_bar = None

    def add(total, term):
        return term if total is None else b.add(total, term)

    half = _c(b, lit(0.5, s.type.dtype), a)
    if compute_uv and ct[1] is not None:
        u_bar = ct[1]
        k_bar = matmul(b, mT(b, u), u_bar)
        p = b.mul(f, k_bar)
        ds_bar = b.add(ds_bar, b.mul(s_j, b.add(p, _h(b, p))))
        q = b.mul(b.mul(s_inv, k_bar), half)
        ds_bar = b.add(ds_bar, b.sub(q, _h(b, q)))
        if m > n:
            w = b.div(u_bar, _spread(b, s, u_bar))
            resid = b.sub(w, matmul(b, b.conj(u), matmul(b, mT(b, u), w)))
            a_bar = add(a_bar, matmul(b, resid, mT(b, v)))
    if compute_uv and ct[2] is not None:
        v_bar = _h(b, ct[2])
        p2 = b.mul(f, matmul(b, mT(b, v), v_bar))
        ds_bar = b.add(ds_bar, b.mul(s_i, b.add(p2, _h(b, p2))))
        if n > m:
            w2 = b.div(v_bar, _spread(b, s, v_bar))
            resid = b.sub(w2, matmul(b, b.conj(v), matmul(b, mT(b, v), w2)))
            a_bar = add(a_bar, _h(b, matmul(b, resid, mT(b, u))))
    out = matmul(b, b.conj(u), matmul(b, ds_bar, mT(b, v)))
    return [add(a_bar, out)]


def _svd_jvp(b, primals, tangents, *, full_matrices, compute_uv, algorithm="default"):
    (a,), (da,) = primals, tangents
    if a.type.dtype.kind != "c":
        return _svd_jvp_real(b, primals, tangents, full_matrices=full_matrices,
                             compute_uv=compute_uv, **_algorithm_param(algorithm))
    _svd_check_derivative(a.type, full_matrices, compute_uv)
    return _svd_jvp_complex(b, a, da, full_matrices, compute_uv, algorithm)


def _svd_vjp(b, ct, a, *, full_matrices, compute_uv, algorithm="default"):
    if a.type.dtype.kind != "c":
        return _svd_vjp_real(b, ct, a, full_matrices=full_matrices, compute_uv=compute_uv,
                             **_algorithm_param(algorithm))
    _svd_check_derivative(a.type, full_matrices, compute_uv)
    return _svd_vjp_complex(b, ct, a, full_matrices, compute_uv, algorithm)


jvp_rules[svd_p] = _svd_jvp
vjp_rules[svd_p] = _svd_vjp
