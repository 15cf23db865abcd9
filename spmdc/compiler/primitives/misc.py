"""Two elementwise primitives for spmdc.lax's ``clz`` and ``zeta``: ``clz``
(count leading zeros, stablehlo.count_leading_zeros) and the Hurwitz ``zeta`` (chlo.zeta).
Both batch with the elementwise rule; as in JAX, clz has a zero derivative (an integer
op) and differentiating zeta is an error."""
from __future__ import annotations

import numpy as np

from ..passes.autodiff import nondifferentiable, vjp_rules
from ..passes.forward import jvp_rules
from ..passes.vmap import batch_rules
from ..stablehlo import chlo, elementwise_lowering, hlo, lower_rules
from .core import elementwise_binary, elementwise_unary
from .rules import elementwise_batch_rule

__all__ = ["clz_p", "zeta_p"]


def _clz_impl(x: np.ndarray) -> np.ndarray:
    # Leading zeros of the two's complement bit pattern: bits - bit_length(unsigned view).
    bits = 8 * x.dtype.itemsize
    u = x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)
    length = np.zeros(u.shape, np.int64)
    for shift in range(bits):
        length = np.where((u >> np.uint64(shift)) & np.uint64(1), shift + 1, length)
    return (bits - length).astype(x.dtype)


clz_p = elementwise_unary("clz", _clz_impl, "iu")
nondifferentiable[clz_p] = "integer op (counts bits)"
lower_rules[clz_p] = elementwise_lowering(hlo.ClzOp)
batch_rules[clz_p] = elementwise_batch_rule(clz_p)


def _zeta_impl(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    import scipy.special
    if x.dtype not in (np.float32, np.float64):         # bfloat16/float16 via float32
        return scipy.special.zeta(x.astype(np.float32), q.astype(np.float32)).astype(x.dtype)
    return scipy.special.zeta(x, q)


# zeta(x, q) = sum_k (k + q)^-x, the Hurwitz zeta function.
zeta_p = elementwise_binary("zeta", _zeta_impl, "f")


def _zeta_no_derivative(*args, **params):
    # An error, not a zero gradient: the derivative exists but is not computed (JAX raises too).
    raise NotImplementedError("zeta: differentiation is not supported (JAX defines no "
                              "derivative for lax.zeta); stop the gradient with "
                              "lax.stop_gradient if it is not needed")


vjp_rules[zeta_p] = _zeta_no_derivative
jvp_rules[zeta_p] = _zeta_no_derivative
lower_rules[zeta_p] = elementwise_lowering(chlo.ZetaOp)
batch_rules[zeta_p] = elementwise_batch_rule(zeta_p)
