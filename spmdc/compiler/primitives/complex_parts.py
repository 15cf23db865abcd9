"""Complex numbers: real, imag, conj, complex, and abs of a complex value.

Note [complex derivatives]
~~~~~~~~~~~~~~~~~~~~~~~~~~
As in JAX, a VJP rule is the transpose of the JVP as a real-linear map, with no
conjugation: ``mul``'s rule is ``ct * y`` for complex values too. So ``grad(f,
holomorphic=True)`` is ``f'(z)``, and ``grad`` of a real-valued ``f`` of a complex ``z``
is ``df/dx - i df/dy`` (the conjugate of the usual gradient: ``grad(abs(z)**2)`` is
``2 conj(z)``). The transposes here: ``real^T(c) = complex(c, 0)``, ``imag^T(c) =
complex(0, -c)``, ``conj^T = conj``, ``complex^T(c) = (real(c), -imag(c))``, and ``abs``
of a complex ``x`` has the JVP ``real(t conj(x)) / |x|`` (0 at 0), whose transpose is
``c conj(x) / |x|``.
"""
from __future__ import annotations

import numpy as np

from ..builder import lit
from ..ir import TensorType
from ..passes.autodiff import unbroadcast, vjp_rules
from ..passes.forward import jvp_rules, linear_jvp
from ..passes.vmap import batch_rules
from ..stablehlo import create_op, elementwise_lowering, hlo, lower_rules
from .core import ShapeError, declare, same_shape_or_scalar
from .elementwise import abs_p
from .rules import elementwise_batch_rule

__all__ = ["real_p", "imag_p", "conj_p", "complex_p", "complex_dtype", "real_dtype"]


def complex_dtype(dtype: np.dtype) -> np.dtype:
    """The complex dtype whose parts have ``dtype`` (float32 -> complex64)."""
    return np.dtype(np.complex128 if np.dtype(dtype) == np.float64 else np.complex64)


def real_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype of the parts of the complex ``dtype`` (complex64 -> float32)."""
    return np.dtype(np.float64 if np.dtype(dtype) == np.complex128 else np.float32)


def _complex_operand(name: str, x: TensorType) -> None:
    if x.dtype.kind != "c":
        raise ShapeError(f"{name} expects a complex operand, got {x}")


def _part_rule(name: str):
    def rule(x: TensorType) -> TensorType:
        _complex_operand(name, x)
        return TensorType(x.shape, real_dtype(x.dtype))
    return rule


def _conj_rule(x: TensorType) -> TensorType:
    _complex_operand("conj", x)
    return x


def _complex_rule(x: TensorType, y: TensorType) -> TensorType:
    if x.dtype != y.dtype or x.dtype not in (np.float32, np.float64):
        raise ShapeError(f"complex expects two float32 or two float64 operands, got {x} and {y}")
    return TensorType(same_shape_or_scalar("complex", x, y), complex_dtype(x.dtype))


def _complex_impl(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return (x + 1j * y).astype(complex_dtype(x.dtype))


def _zeros_like(b, x):
    return b.broadcast_in_dim(lit(0, x.type.dtype), shape=x.type.shape, broadcast_dimensions=())


real_p = declare("real", _part_rule("real"), np.real)
vjp_rules[real_p] = lambda b, ct, x: [b.bind(complex_p, ct, lit(0, ct.type.dtype))]
jvp_rules[real_p] = linear_jvp(real_p)
lower_rules[real_p] = elementwise_lowering(hlo.RealOp)

imag_p = declare("imag", _part_rule("imag"), np.imag)
vjp_rules[imag_p] = lambda b, ct, x: [b.bind(complex_p, lit(0, ct.type.dtype), b.neg(ct))]
jvp_rules[imag_p] = linear_jvp(imag_p)
lower_rules[imag_p] = elementwise_lowering(hlo.ImagOp)

conj_p = declare("conj", _conj_rule, np.conj)
vjp_rules[conj_p] = lambda b, ct, x: [b.bind(conj_p, ct)]
jvp_rules[conj_p] = linear_jvp(conj_p)


def _conj_lowering(ctx, eqn, x):
    t = eqn.inputs[0].type
    part = TensorType(t.shape, real_dtype(t.dtype))
    re = create_op(hlo.RealOp, part, [x])
    im = create_op(hlo.NegOp, part, [create_op(hlo.ImagOp, part, [x])])
    return create_op(hlo.ComplexOp, t, [re, im])


lower_rules[conj_p] = _conj_lowering

complex_p = declare("complex", _complex_rule, _complex_impl)
vjp_rules[complex_p] = lambda b, ct, x, y: [
    unbroadcast(b, b.bind(real_p, ct), x.type),
    unbroadcast(b, b.neg(b.bind(imag_p, ct)), y.type)]
jvp_rules[complex_p] = linear_jvp(complex_p)
lower_rules[complex_p] = elementwise_lowering(hlo.ComplexOp)

for _prim in (real_p, imag_p, conj_p, complex_p):
    batch_rules[_prim] = elementwise_batch_rule(_prim)


# --- abs of a complex value ------------------------------------------------------------------

def _safe_direction(b, x):
    """conj(x) / |x|, and 0 where x is 0 (as JAX's rule)."""
    magnitude = b.bind(abs_p, x)
    zero = lit(0, magnitude.type.dtype)
    is_zero = b.eq(magnitude, zero)
    safe = b.select(is_zero, b.broadcast_in_dim(lit(1, magnitude.type.dtype),
                                                shape=magnitude.type.shape,
                                                broadcast_dimensions=()), magnitude)
    unit = b.div(b.bind(conj_p, x), b.bind(complex_p, safe, _zeros_like(b, safe)))
    return b.select(is_zero, _zeros_like(b, unit), unit)


_real_abs_vjp = vjp_rules[abs_p]
_real_abs_jvp = jvp_rules[abs_p]


def _abs_vjp(b, ct, x):
    if x.type.dtype.kind != "c":
        return _real_abs_vjp(b, ct, x)
    return [b.mul(b.bind(complex_p, ct, _zeros_like(b, ct)), _safe_direction(b, x))]


def _abs_jvp(b, primals, tangents):
    (x,), (t,) = primals, tangents
    if x.type.dtype.kind != "c":
        return _real_abs_jvp(b, primals, tangents)
    out = b.bind(abs_p, x)
    return [out], [None if t is None else b.bind(real_p, b.mul(t, _safe_direction(b, x)))]


vjp_rules[abs_p] = _abs_vjp         # See Note [complex derivatives]
jvp_rules[abs_p] = _abs_jvp
