"""``spmdc.scipy.special`` (JAX's ``jax.scipy.special``): special functions on spmdc
arrays, computed the way JAX 0.10.2 computes them (same primitives, same expansions), so
values agree with JAX's and stay accurate at extreme arguments.

Integer and boolean arguments become the default float dtype. ``xlogy``, ``xlog1py`` and
``logit`` carry JAX's custom derivatives (``custom_jvp``). ``log_ndtr`` is differentiated
through its branches, each of which sees only the arguments it is selected for, so the
gradient is finite far into both tails (and slightly more accurate than JAX's rule).
"""
from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.operands import inexact
from spmdc.numpy.reductions import logsumexp as logsumexp
from spmdc.transforms.custom_derivatives import custom_jvp
from spmdc.transforms.eager import library_jit  # See Note [library functions run as one program]


def _c(x: Any, value: float) -> Any:
    """``value`` as a rank-0 constant of ``x``'s dtype."""
    return np.asarray(value, x.dtype)


def _polyval(coefficients: Any, x: Any) -> Any:
    """Horner's rule, highest power first (``numpy.polyval``)."""
    out = jnp.zeros_like(x)
    for c in coefficients:
        out = out * x + _c(x, c)
    return out


# --- error function and the normal distribution ---------------------------------------------

def erf(x: Any) -> Any:
    (x,) = inexact(x)
    return lax.erf(x)


def erfc(x: Any) -> Any:
    (x,) = inexact(x)
    return lax.erfc(x)


def erfinv(x: Any) -> Any:
    (x,) = inexact(x)
    return lax.erf_inv(x)


def _real_float(name: str, x: Any) -> Any:
    x = jnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"{name}: x.dtype={x.dtype} is not supported; pass float32 or "
                        "float64 values")
    return x


def ndtr(x: Any) -> Any:
    """The standard normal CDF, from ``erf`` near 0 and ``erfc`` in the tails."""
    return _ndtr(_real_float("ndtr", x))


def _ndtr(x: Any) -> Any:
    half_sqrt_2 = _c(x, 0.5 * math.sqrt(2.0))
    w = x * half_sqrt_2
    z = jnp.abs(w)
    y = jnp.where(z < half_sqrt_2, _c(x, 1.0) + lax.erf(w),
                  jnp.where(w > 0, _c(x, 2.0) - lax.erfc(z), lax.erfc(z)))
    return _c(x, 0.5) * y


# Rational approximations of the normal quantile (Cephes ndtri): |p - 1/2| small, and
# the two tails in z = sqrt(-2 log p).
_NDTRI_P0 = (-59.96335010141079, 98.00107541859997, -56.67628574690703, 13.931260938727968,
             -1.2391658386738125)
_NDTRI_Q0 = (1.0, 1.9544885833814176, 4.676279128988815, 86.36024213908905,
             -225.46268785411937, 200.26021238006066, -82.03722561683334, 15.90562251262117,
             -1.1833162112133)
_NDTRI_P1 = (4.0554489230596245, 31.525109459989388, 57.16281922464213, 44.08050738932008,
             14.684956192885803, 2.1866330685079025, -0.1402560791713545,
             -0.03504246268278482, -0.0008574567851546854)
_NDTRI_Q1 = (1.0, 15.779988325646675, 45.39076351288792, 41.3172038254672, 15.04253856929075,
             2.504649462083094, -0.14218292285478779, -0.03808064076915783,
             -0.0009332594808954574)
_NDTRI_P2 = (3.2377489177694603, 6.915228890689842, 3.9388102529247444, 1.3330346081580755,
             0.20148538954917908, 0.012371663481782003, 0.00030158155350823543,
             2.6580697468673755e-06, 6.239745391849833e-09)
_NDTRI_Q2 = (1.0, 6.02427039364742, 3.6798356385616087, 1.3770209948908132,
             0.21623699359449663, 0.013420400608854318, 0.00032801446468212774,
             2.8924786474538068e-06, 6.790194080099813e-09)


def ndtri(p: Any) -> Any:
    """The standard normal quantile (inverse of ``ndtr``); ``ndtri(0) = -inf``."""
    p = _real_float("ndtri", p)
    big = _c(p, -np.expm1(-2.0))
    mcp = jnp.where(p > big, _c(p, 1.0) - p, p)        # the smaller of p and 1 - p
    mcp = jnp.where(mcp == 0, _c(p, 0.5), mcp)
    w = mcp - _c(p, 0.5)
    ww = w * w
    x_central = (w + w * ww * (_polyval(_NDTRI_P0, ww) / _polyval(_NDTRI_Q0, ww))) \
        * _c(p, -math.sqrt(2.0 * math.pi))
    z = jnp.sqrt(_c(p, -2.0) * jnp.log(mcp))
    first = z - jnp.log(z) / z
    x_far = first - _polyval(_NDTRI_P2, 1 / z) / _polyval(_NDTRI_Q2, 1 / z) / z
    x_tail = first - _polyval(_NDTRI_P1, 1 / z) / _polyval(_NDTRI_Q1, 1 / z) / z
    x = jnp.where(mcp > _c(p, np.exp(-2.0)), x_central, jnp.where(z >= 8, x_far, x_tail))
    x = jnp.where(p > _c(p, 1.0 - np.exp(-2.0)), x, -x)
    return jnp.where(p == 0, _c(p, -np.inf), jnp.where(p == 1, _c(p, np.inf), x))


_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (-10.0, 5.0), np.dtype(np.float64): (-20.0, 8.0)}


def log_ndtr(x: Any, series_order: int = 3) -> Any:
    """``log(ndtr(x))``, accurate far into both tails: ``-ndtr(-x)`` above the upper
    segment, an asymptotic series of ``series_order`` terms below the lower one."""
    if not isinstance(series_order, int):
        raise TypeError("log_ndtr: series_order must be a Python integer.")
    if not 0 <= series_order <= 30:
        raise ValueError(f"log_ndtr: series_order must be in [0, 30], got {series_order}")
    x = jnp.asarray(x)
    if x.dtype not in _LOG_NDTR_SEGMENTS:
        raise TypeError(f"log_ndtr: x.dtype={x.dtype} is not supported; pass float32 or "
                        "float64 values")
    lower, upper = (_c(x, s) for s in _LOG_NDTR_SEGMENTS[x.dtype])
    above, below = x > upper, x <= lower
    # Each branch sees only arguments it is selected for, so the branches not taken have
    # finite gradients (NaN * 0 would poison the sum).
    upper_tail = -_ndtr(-jnp.where(above, x, upper))
    middle = jnp.log(_ndtr(jnp.where(above | below, _c(x, 0.0), x)))
    lower_tail = _log_ndtr_lower(jnp.where(below, x, lower), series_order)
    return jnp.where(above, upper_tail, jnp.where(below, lower_tail, middle))


def _log_ndtr_lower(x: Any, series_order: int) -> Any:
    x2 = x * x
    log_scale = _c(x, -0.5) * x2 - jnp.log(-x) - _c(x, 0.5 * math.log(2.0 * math.pi))
    if series_order <= 0:
        return log_scale
    even, odd = jnp.zeros_like(x), jnp.zeros_like(x)
    x2n = x2
    for n in range(1, series_order + 1):
        term = _c(x, float(np.prod(np.arange(2 * n - 1, 1, -2)))) / x2n   # (2n-1)!! / x^2n
        if n % 2:
            odd = odd + term
        else:
            even = even + term
        x2n = x2n * x2
    return log_scale + jnp.log(_c(x, 1.0) + even - odd)


# --- gamma and beta functions -----------------------------------------------------------------

def gammaln(x: Any) -> Any:
    (x,) = inexact(x)
    return lax.lgamma(x)


def digamma(x: Any) -> Any:
    (x,) = inexact(x)
    return lax.digamma(x)


psi = digamma


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of ``digamma``; ``n`` must have an integer dtype."""
    n_arr = jnp.asarray(n)
    if not jnp.issubdtype(n_arr.dtype, np.integer):
        raise ValueError("Argument `n` to polygamma must be of integer type. "
                         f"Got dtype {n_arr.dtype}.")
    return lax.polygamma(*jnp.broadcast_arrays(*inexact(n_arr, x)))


@library_jit
def gammasgn(x: Any) -> Any:
    """The sign of the gamma function: NaN at poles (non-positive integers) and NaN."""
    (x,) = inexact(x)
    floor_x = jnp.floor(x)
    negative = x < 0
    neg_zero = (x == 0) & (_c(x, 1.0) / jnp.where(x == 0, x, _c(x, 1.0)) < 0)
    nan = (negative & (x == floor_x)) | jnp.isnan(x)
    minus = (negative & (jnp.remainder(floor_x, 2) != 0)) | neg_zero
    return jnp.where(nan, _c(x, np.nan), jnp.where(minus, _c(x, -1.0), _c(x, 1.0)))


def gamma(x: Any) -> Any:
    (x,) = inexact(x)
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


@custom_jvp
def poch(z: Any, m: Any) -> Any:
    """The Pochhammer symbol (z)_m = gamma(z + m) / gamma(z), for real z and m."""
    z, m = inexact(z, m)
    if jnp.issubdtype(z.dtype, np.complexfloating):
        raise ValueError("poch does not support complex-valued inputs; pass real values")
    return jnp.where(m == 0., jnp.array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


poch.defjvps(lambda z_dot, ans, z, m: (digamma(z + m) - digamma(z)) * poch(z, m) * z_dot,
             lambda m_dot, ans, z, m: digamma(z + m) * poch(z, m) * m_dot)
poch = library_jit(poch)     # the custom_jvp above, run as one program


def loggamma(x: Any) -> Any:
    """``log(gamma(x))`` for ``x > 0``, NaN elsewhere (real arguments)."""
    (x,) = inexact(x)
    return jnp.where(x > 0, lax.lgamma(x), _c(x, np.nan))


def _algdiv(a: Any, b: Any) -> Any:
    """``lgamma(b) - lgamma(a + b)`` for ``b >= 8`` (TOMS 708's ``algdiv``, as JAX has it)."""
    c0, c1, c2 = 0.0833333333333333, -0.00277777777760991, 0.00079365066682539
    c3, c4, c5 = -0.00059520293135187, 0.000837308034031215, -0.00165322962780713
    h = a / b
    c = h / (1 + h)
    x = h / (1 + h)
    d = b + (a - 0.5)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (c / b)
    u = d * jnp.log1p(a / b)
    v = a * (jnp.log(b) - 1.0)
    return jnp.where(u <= v, w - v - u, w - u - v)


def betaln(a: Any, b: Any) -> Any:
    """``log|B(a, b)|``, accurate when one argument is large."""
    a, b = inexact(a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = lax.lgamma(a) + (lax.lgamma(b) - lax.lgamma(a + b))
    large_b = lax.lgamma(a) + _algdiv(a, b)
    return jnp.where(b < 8, small_b, large_b)


def beta(a: Any, b: Any) -> Any:
    a, b = inexact(a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(betaln(a, b))


def multigammaln(a: Any, d: int) -> Any:
    """The log of the multivariate gamma function of dimension ``d`` (a concrete int)."""
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError(f"multigammaln: d must be a concrete integer, got {d!r}") from None
    a, d_ = inexact(a, d)
    constant = _c(a, 0.25) * d_ * (d_ - _c(a, 1.0)) * _c(a, math.log(math.pi))
    b = jnp.arange(d, dtype=a.dtype) / _c(a, 2.0)
    res = jnp.sum(lax.lgamma(jnp.expand_dims(a, -1) - b), axis=-1)
    return res + constant


def factorial(n: Any, exact: bool = False) -> Any:
    """``n!`` as ``gamma(n + 1)`` (0 for negative ``n``)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = inexact(n)
    return jnp.where(n < 0, _c(n, 0.0), jnp.exp(lax.lgamma(n + 1)))


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """The number of combinations of ``N`` things taken ``k`` at a time (floats)."""
    N, k = inexact(N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), _c(N, 1.0), comb(N + k - 1, k))
    ok = (k <= N) & (N >= 0) & (k >= 0)
    safe_n, safe_k = jnp.where(ok, N, _c(N, 0.0)), jnp.where(ok, k, _c(N, 0.0))
    result = jnp.exp(gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k))
    return jnp.where(ok, result, _c(N, 0.0))


# --- logistic, entropies ----------------------------------------------------------------------

def expit(x: Any) -> Any:
    (x,) = inexact(x)
    return lax.logistic(x)


@custom_jvp
def _logit(x: Any) -> Any:
    return jnp.log(x / (_c(x, 1.0) - x))


_logit.defjvps(lambda g, ans, x: g / (x * (_c(x, 1.0) - x)))     # 1 / (x (1 - x))


@library_jit
def logit(x: Any) -> Any:
    """``log(x / (1 - x))``, the inverse of ``expit``; its derivative ``1/(x(1-x))`` is
    infinite (not NaN) at 0 and 1, as in JAX."""
    (x,) = inexact(x)
    return _logit(x)


def _x_times(x: Any, log_y: Any, y: Any) -> Any:
    # x * log_y, but 0 where x == 0 unless y is NaN (JAX's xlogy/xlog1py values)
    return jnp.where((x != 0) | jnp.isnan(y), x * log_y, jnp.zeros_like(x))


@custom_jvp
def _xlogy(x: Any, y: Any) -> Any:
    return _x_times(x, jnp.log(y), y)


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    return _xlogy(x, y), x_dot * jnp.log(y) + y_dot * x / y


@custom_jvp
def _xlog1py(x: Any, y: Any) -> Any:
    return _x_times(x, jnp.log1p(y), y)


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    return _xlog1py(x, y), x_dot * jnp.log1p(y) + y_dot * x / (1 + y)


def _broadcast(*args: Any) -> list[Any]:
    shape = jnp.broadcast_shapes(*(a.shape for a in args))
    return [a if a.shape == shape else jnp.broadcast_to(a, shape) for a in args]


@library_jit
def xlogy(x: Any, y: Any) -> Any:
    """``x * log(y)``, with ``xlogy(0, y) = 0`` unless ``y`` is NaN; derivatives
    ``log(y)`` and ``x / y`` (JAX's rule)."""
    return _xlogy(*_broadcast(*inexact(x, y)))


@library_jit
def xlog1py(x: Any, y: Any) -> Any:
    """``x * log1p(y)``, with ``xlog1py(0, y) = 0`` unless ``y`` is NaN."""
    return _xlog1py(*_broadcast(*inexact(x, y)))


def entr(x: Any) -> Any:
    """``-x log x`` for ``x >= 0`` (0 at 0), ``-inf`` for ``x < 0``."""
    (x,) = inexact(x)
    return jnp.where(x < 0, _c(x, -np.inf), -xlogy(x, x))


def rel_entr(p: Any, q: Any) -> Any:
    """``p log(p/q)`` for ``p, q > 0``; 0 where ``p = 0, q >= 0``; ``inf`` elsewhere."""
    p, q = inexact(p, q)
    both = (p > 0) & (q > 0)
    one_zero = (p == 0) & (q >= 0)
    safe_p, safe_q = jnp.where(both, p, _c(p, 1.0)), jnp.where(both, q, _c(p, 1.0))
    value = xlogy(safe_p, safe_p) - xlogy(safe_p, safe_q)
    return jnp.where(both, value, jnp.where(one_zero, _c(p, 0.0), _c(p, np.inf)))


def kl_div(p: Any, q: Any) -> Any:
    """``rel_entr(p, q) - p + q``."""
    p, q = inexact(p, q)
    return rel_entr(p, q) - p + q


def boxcox(x: Any, lmbda: Any) -> Any:
    x, lmbda = inexact(x, lmbda)
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    log_x = jnp.log(x)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    x, lmbda = inexact(x, lmbda)
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    log1p_x = jnp.log1p(x)
    return jnp.where(zero, log1p_x, jnp.expm1(safe * log1p_x) / safe)


# --- Bessel functions -------------------------------------------------------------------------

def i0e(x: Any) -> Any:
    (x,) = inexact(x)
    return lax.bessel_i0e(x)


def i0(x: Any) -> Any:
    (x,) = inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i0e(x)


def i1e(x: Any) -> Any:
    (x,) = inexact(x)
    return lax.bessel_i1e(x)


def i1(x: Any) -> Any:
    (x,) = inexact(x)
    return jnp.exp(jnp.abs(x)) * lax.bessel_i1e(x)


# --- softmax ----------------------------------------------------------------------------------

def softmax(x: Any, /, *, axis: Any = None) -> Any:
    """SciPy's softmax: over all axes unless ``axis`` is given."""
    from spmdc.nn.functions import softmax as nn_softmax  # spmdc.nn imports this package
    return nn_softmax(x, axis=axis)


def log_softmax(x: Any, /, *, axis: Any = None) -> Any:
    from spmdc.nn.functions import log_softmax as nn_log_softmax
    return nn_log_softmax(x, axis=axis)




# --- incomplete gamma and beta functions (Note [incomplete gamma and beta]) -------------------

def gammainc(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x)."""
    return lax.igamma(*jnp.broadcast_arrays(*inexact(a, x)))


def gammaincc(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return lax.igammac(*jnp.broadcast_arrays(*inexact(a, x)))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b); differentiable in x only."""
    return lax.betainc(*jnp.broadcast_arrays(*inexact(a, b, x)))


# --- exponential integrals (Note [exponential integrals]) -------------------------------------

from spmdc.scipy.special_bessel_jn import bessel_jn as bessel_jn  # noqa: E402
from spmdc.scipy.special_error_functions import dawsn as dawsn  # noqa: E402
from spmdc.scipy.special_error_functions import erfcx as erfcx  # noqa: E402
from spmdc.scipy.special_exponential_integrals import exp1 as exp1  # noqa: E402
from spmdc.scipy.special_exponential_integrals import expi as expi  # noqa: E402
from spmdc.scipy.special_exponential_integrals import expn as expn  # noqa: E402
from spmdc.scipy.special_faddeeva import wofz as wofz  # noqa: E402
from spmdc.scipy.special_fresnel import fresnel as fresnel  # noqa: E402
from spmdc.scipy.special_hypergeometric import hyp1f1 as hyp1f1  # noqa: E402
from spmdc.scipy.special_hypergeometric import hyp2f1 as hyp2f1  # noqa: E402
from spmdc.scipy.special_owens_t import owens_t as owens_t  # noqa: E402
from spmdc.scipy.special_sine_cosine_integrals import sici as sici  # noqa: E402
from spmdc.scipy.special_spence import spence as spence  # noqa: E402
from spmdc.scipy.special_spherical_harmonics import sph_harm_y as sph_harm_y  # noqa: E402
from spmdc.scipy.special_zeta import bernoulli as bernoulli  # noqa: E402
from spmdc.scipy.special_zeta import zeta as zeta  # noqa: E402
