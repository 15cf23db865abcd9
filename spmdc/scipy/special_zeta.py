"""The Hurwitz zeta function and the Bernoulli numbers of ``spmdc.scipy.special``, as JAX
0.10.2 computes them. See Note [Hurwitz zeta derivatives]."""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core import dtypes
from spmdc.core.operands import inexact
from spmdc.transforms.custom_derivatives import custom_jvp
from spmdc.transforms.forward import jvp

# Note [Hurwitz zeta derivatives]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# zeta(s, a) is lax.zeta's value. It has no closed-form derivative, so its JVP, as JAX's,
# is the forward derivative of the Euler-Maclaurin expansion (Johansson 2015, formula 5):
# sum_{k<N} (a+k)^-s + (a+N)^(1-s)/(s-1) + (a+N)^-s (1/2 + sum_{j<M} T_j / c_j), with
# T_j the even partial products of (s+m)/(a+N) and c_j = (2j+2)!/B_{2j+2}; N = M = 8 in
# float32 and 16 in float64. So zeta is differentiable in both s and a.

# (2j + 2)! / B_{2j+2} for j = 0, ..., 15.
_BERNOULLI_COEFS = np.array([
    12, -720, 30240, -1209600, 47900160, -1307674368000 / 691, 74724249600,
    -10670622842880000 / 3617, 5109094217170944000 / 43867,
    -802857662698291200000 / 174611, 14101100039391805440000 / 77683,
    -1693824136731743669452800000 / 236364091, 186134520519971831808000000 / 657931,
    -37893265687455865519472640000000 / 3392780147,
    759790291646040068357842010112000000 / 1723168255201,
    -134196726836183700385281186201600000000 / 7709321041217,
])


def _hurwitz_arguments(x: Any, q: Any) -> list[Any]:
    if q is None:
        raise NotImplementedError(
            "zeta: the Riemann zeta function (q=None) is not provided, as in JAX; pass "
            "q=1.0 for it, or another q for the Hurwitz zeta function")
    return inexact(x, q)


@custom_jvp
def zeta(x: Any, q: Any = None) -> Any:
    """The Hurwitz zeta function, the sum over n >= 0 of (n + q)**-x."""
    s, a = _hurwitz_arguments(x, q)
    return lax.zeta(*jnp.broadcast_arrays(s, a))


def _zeta_series_expansion(x: Any, q: Any) -> Any:
    s, a = _hurwitz_arguments(x, q)
    dtype = np.dtype(a.dtype).type
    n = m = dtype(8) if a.dtype == np.float32 else dtype(16)
    s_, a_ = jnp.expand_dims(s, -1), jnp.expand_dims(a, -1)
    k = jnp.expand_dims(np.arange(n, dtype=a.dtype), tuple(range(a.ndim)))
    head = jnp.sum((a_ + k) ** -s_, -1)
    integral = lax.div((a + n) ** (dtype(1) - s), s - dtype(1))
    t0 = (a + n) ** -s
    j = jnp.expand_dims(np.arange(2 * m, dtype=a.dtype), tuple(range(s.ndim)))
    t1 = jnp.cumprod((s_ + j) / (a_ + n), -1)[..., ::2]
    t1 = jnp.clip(t1, max=dtypes.finfo(a.dtype).max)
    coefs = np.expand_dims(np.array(_BERNOULLI_COEFS[:t1.shape[-1]], dtype=a.dtype),
                           tuple(range(a.ndim)))
    return head + integral + t0 * (dtype(0.5) + (t1 / coefs).sum(-1))


@zeta.defjvp
def _zeta_jvp(primals: Any, tangents: Any) -> Any:
    return jvp(_zeta_series_expansion, primals, tangents)


def bernoulli(n: int) -> Any:
    """The Bernoulli numbers B_0, ..., B_n (B_1 = -1/2), by Chowla and Hartung's series."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"bernoulli: n must be a concrete integer, got {n!r}; pass a Python "
                        "int (under jit, mark it static)") from None
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    b3 = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[:n + 1]
    bn = jnp.zeros(n + 1).at[:3].set(b3)
    m = jnp.arange(4, n + 1, 2, dtype=bn.dtype)
    q1 = (1. / np.pi ** 2) * jnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = jnp.arange(2, 50, dtype=bn.dtype)    # 2**-50 is below float64's epsilon
    q2 = jnp.sum(k[:, None] ** -m[None, :], axis=0)
    return bn.at[4::2].set(q1 * (1 + q2))
