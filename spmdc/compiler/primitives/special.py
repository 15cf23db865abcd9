"""Special-function primitives beyond elementwise.py's: ``erfc``, ``bessel_i0e``,
``bessel_i1e``. They back ``spmdc.scipy.special`` and ``spmdc.nn.gelu``.

``erfc`` and ``bessel_i1e`` lower to the ``chlo`` ops of the same name, as JAX's do, so
their values agree with JAX's bit for bit. ``bessel_i0e`` has no ``chlo`` op: it lowers
to the equations of Cephes' Chebyshev expansion (see Note [i0e as a series]).

Note [i0e as a series]
~~~~~~~~~~~~~~~~~~~~~~
``i0e(x) = exp(-|x|) I0(x)`` is evaluated as Cephes does: a Chebyshev series in
``|x|/2 - 2`` for ``|x| <= 8`` and one in ``32/|x| - 2`` (divided by ``sqrt|x|``) above,
with Cephes' coefficients (the float32 expansion is the tail of the float64 one).
``_i0e_series`` emits those equations into a Builder; the lowering rule lowers them as a
sub-function, and the VJP of ``bessel_i1e`` (which needs ``i0e``) binds the primitive.
float16/bfloat16 are computed in float32, as JAX does.
"""
from __future__ import annotations

import math

import numpy as np

from ..builder import Builder, lit
from ..ir import TensorType
from ..passes.autodiff import vjp_rules
from ..passes.forward import diagonal_jvp, jvp_rules
from ..passes.vmap import batch_rules
from ..stablehlo import chlo, elementwise_lowering, lower_body, lower_rules
from .core import elementwise_unary
from .rules import elementwise_batch_rule

REAL = "f"


def _scipy(name):
    """A scipy.special function as a reference (bfloat16/float16 computed in float32)."""
    def impl(x):
        import scipy.special
        x = np.asarray(x)
        wide = x if x.dtype in (np.float32, np.float64) else x.astype(np.float32)
        return getattr(scipy.special, name)(wide).astype(x.dtype)
    return impl


def _chain(deriv):
    """VJP of ``y = f(x)`` from ``deriv(b, x) = f'(x)``: ``ct * f'(x)``."""
    return lambda b, ct, x: [b.mul(ct, deriv(b, x))]


def _c(x, value):
    return lit(value, x.type.dtype)


# --- erfc ----------------------------------------------------------------------------------

erfc_p = elementwise_unary("erfc", _scipy("erfc"), REAL)
vjp_rules[erfc_p] = _chain(lambda b, x: b.mul(_c(x, -2 / math.sqrt(math.pi)),  # -2/sqrt(pi) e^-x^2
                                              b.exp(b.neg(b.mul(x, x)))))
jvp_rules[erfc_p] = diagonal_jvp(erfc_p)
lower_rules[erfc_p] = elementwise_lowering(chlo.ErfcOp)

# --- modified Bessel functions, exponentially scaled -------------------------------------------

# Cephes' Chebyshev coefficients for i0e (float64; float32 uses the last 18 and 7).
_I0E_SMALL = (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_LARGE = (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1)


def _chebyshev(b, t, coefficients):
    """Clenshaw's recurrence for sum' c_k T_k(t/2), Cephes' ``chbevl``."""
    b0 = b1 = b2 = _c(t, 0)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = b.add(b.sub(b.mul(t, b1), b2), _c(t, c))
    return b.mul(_c(t, 0.5), b.sub(b0, b2))


def _i0e_series(b, x):
    """Emit ``i0e(x)`` for float32/float64 ``x``. See Note [i0e as a series]."""
    small, large = ((_I0E_SMALL, _I0E_LARGE) if x.type.dtype == np.float64
                    else (_I0E_SMALL[-18:], _I0E_LARGE[-7:]))
    ax = b.abs(x)
    near = _chebyshev(b, b.sub(b.mul(_c(x, 0.5), ax), _c(x, 2.0)), small)
    far = b.div(_chebyshev(b, b.sub(b.div(_c(x, 32.0), ax), _c(x, 2.0)), large), b.sqrt(ax))
    return b.select(b.le(ax, _c(x, 8.0)), near, far)


def _i0e_lowering(ctx, eqn, x):
    t = eqn.inputs[0].type
    wide = t if t.dtype in (np.float32, np.float64) else TensorType(t.shape, np.float32)
    b = Builder("i0e")
    v = b.input(t)
    w = v if wide is t else b.convert(v, new_dtype=wide.dtype)
    out = _i0e_series(b, w)
    if wide is not t:
        out = b.convert(out, new_dtype=t.dtype)
    return lower_body(ctx, b.build([out]), [x])[0]


bessel_i0e_p = elementwise_unary("bessel_i0e", _scipy("i0e"), REAL)
vjp_rules[bessel_i0e_p] = lambda b, ct, x: [                 # i1e(x) - sign(x) i0e(x)
    b.mul(ct, b.sub(b.bessel_i1e(x), b.mul(b.sign(x), b.bessel_i0e(x))))]
jvp_rules[bessel_i0e_p] = diagonal_jvp(bessel_i0e_p)
lower_rules[bessel_i0e_p] = _i0e_lowering


def _i1e_derivative(b, x):
    # i0e(x) - i1e(x) (sign(x) + 1/x), with its limit 1/2 where |x| <= eps (JAX's guard).
    eps = float(np.finfo(x.type.dtype).eps)
    not_tiny = b.gt(b.abs(x), _c(x, eps))
    safe = b.select(not_tiny, x, _c(x, eps))
    slope = b.sub(b.bessel_i0e(safe), b.mul(b.bessel_i1e(safe),
                                            b.add(b.sign(safe), b.div(_c(x, 1), safe))))
    return b.select(not_tiny, slope, _c(x, 0.5))


bessel_i1e_p = elementwise_unary("bessel_i1e", _scipy("i1e"), REAL)
vjp_rules[bessel_i1e_p] = _chain(_i1e_derivative)
jvp_rules[bessel_i1e_p] = diagonal_jvp(bessel_i1e_p)
lower_rules[bessel_i1e_p] = elementwise_lowering(chlo.BesselI1eOp)

for _prim in (erfc_p, bessel_i0e_p, bessel_i1e_p):
    batch_rules[_prim] = elementwise_batch_rule(_prim)
