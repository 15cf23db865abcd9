"""Activation functions and friends: ``spmdc.nn`` (JAX's ``jax.nn``).

Each function computes what JAX 0.10.2's does, in the same way where the numbers depend
on it (``softmax`` subtracts the maximum, ``softplus`` is ``logaddexp(x, 0)``, ``gelu``
uses ``erfc`` or the tanh approximation), so results agree with JAX's to the last bits
or nearly so.

Note [gradients of piecewise activations]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
JAX gives ``relu`` and ``relu6`` custom derivatives: the gradient is 0 at the kinks
(``relu'(0) = 0``, ``relu6'(0) = relu6'(6) = 0``), where ``max`` alone would split the
cotangent half/half. They are ``custom_jvp`` functions here too, computing ``max`` (one
operation per element, as XLA's cost analysis counts JAX's program; NaN stays NaN) with
the tangent ``select(x > 0, t, 0)``. ``softmax``/``log_softmax``/``logsumexp`` subtract
``stop_gradient(max)``: the result does not depend on the shift, so the gradient is exact
and never overflows.
"""
from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.core.operands import inexact
from spmdc.lax import logistic
from spmdc.lax.special import erfc
from spmdc.numpy.reductions import logsumexp
from spmdc.runtime.config_states import softmax_custom_jvp
from spmdc.transforms.custom_derivatives import custom_jvp


def _array(x: Any) -> Any:
    return jnp.asarray(x)


def identity(x: Any) -> Any:
    """``x`` unchanged (as an array)."""
    return _array(x)


@custom_jvp
def relu(x: Any) -> Any:
    """``max(x, 0)``, with gradient 0 at 0. See Note [gradients of piecewise activations]."""
    return jnp.maximum(_array(x), 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@custom_jvp
def relu6(x: Any) -> Any:
    """``min(max(x, 0), 6)``, with gradient 0 at 0 and 6."""
    return jnp.minimum(jnp.maximum(_array(x), 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


def _logaddexp0(x: Any) -> Any:
    """``log(exp(x) + 1)`` without overflow: ``max(x, 0) + log1p(exp(-|x|))``."""
    # -|x| written as min(x, 0) - max(x, 0): at 0 the ties split the cotangent half/half,
    # so the slope there is 0 and softplus'(0) = 1/2 (abs has slope 1 at 0, as in JAX).
    return jnp.maximum(x, 0) + jnp.log1p(jnp.exp(jnp.minimum(x, 0) - jnp.maximum(x, 0)))


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, computed without overflow."""
    (x,) = inexact(x)
    return jnp.where(jnp.isnan(x), x, _logaddexp0(x))


def squareplus(x: Any, b: Any = 4) -> Any:
    """``(x + sqrt(x^2 + b)) / 2``."""
    x, b = _array(x), _array(b)
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def sparse_plus(x: Any) -> Any:
    """0 for ``x <= -1``, ``x`` for ``x >= 1``, ``(x + 1)^2 / 4`` between."""
    x = _array(x)
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def soft_sign(x: Any) -> Any:
    """``x / (|x| + 1)``."""
    x = _array(x)
    return x / (jnp.abs(x) + 1)


def sigmoid(x: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-x))``."""
    (x,) = inexact(x)
    return logistic(x)


def sparse_sigmoid(x: Any) -> Any:
    """``clip(x + 1, 0, 2) / 2``."""
    return 0.5 * jnp.clip(_array(x) + 1.0, 0.0, 2.0)


def silu(x: Any) -> Any:
    """``x * sigmoid(x)``."""
    x = _array(x)
    return x * sigmoid(x)


swish = silu


def mish(x: Any) -> Any:
    """``x * tanh(softplus(x))``."""
    x = _array(x)
    return x * jnp.tanh(softplus(x))


def log_sigmoid(x: Any) -> Any:
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return -softplus(-_array(x))


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """``x`` for ``x > 0``, ``alpha (exp(x) - 1)`` otherwise."""
    x = _array(x)
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """``x`` for ``x >= 0``, ``negative_slope * x`` otherwise."""
    x = _array(x)
    return jnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Any:
    """``x`` clipped to ``[-1, 1]``."""
    x = _array(x)
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    x = _array(x)
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x: Any) -> Any:
    """Scaled ELU with the self-normalising constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def gelu(x: Any, approximate: bool = True) -> Any:
    """Gaussian error linear unit: the tanh approximation, or exact with ``erfc``."""
    (x,) = inexact(x)
    if approximate:
        sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * x ** 3)))
        return x * cdf
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return jnp.asarray(0.5 * x * erfc(-x * sqrt_half), x.dtype)


def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: split ``x`` in two halves along ``axis``, ``a * sigmoid(b)``."""
    x = _array(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: the size of axis {axis} must be even, got {size}")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def hard_sigmoid(x: Any) -> Any:
    """``relu6(x + 3) / 6``."""
    return relu6(_array(x) + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    """``x * hard_sigmoid(x)``."""
    x = _array(x)
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def log1mexp(x: Any) -> Any:
    """``log(1 - exp(-x))``, accurate for small and large ``x``."""
    x = _array(x)
    c = np.log(2.0)
    return jnp.where(x < c, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


# --- normalisations --------------------------------------------------------------------------

def _masked_max(x: Any, axis: Any, where: Any, keepdims: bool = True) -> Any:
    """``max(x, axis, where=where, initial=-inf)``."""
    if where is not None:
        x = jnp.where(where, x, -np.inf)
    if any(d == 0 for d in x.shape):
        return jnp.max(x, axis, keepdims=keepdims, initial=-np.inf)
    return jnp.max(x, axis, keepdims=keepdims)


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """``exp(x) / sum(exp(x), axis)``, computed without overflow (max subtracted).

    ``where`` masks out entries: they get 0, and the others are normalised among
    themselves. See Note [gradients of piecewise activations] on the gradient."""
    (x,) = inexact(x)
    if softmax_custom_jvp.value:            # JAX's rule, as jax_softmax_custom_jvp chooses
        return _softmax_with_rule(x, _axis_key(axis), where)
    return _softmax(x, axis, where, lax.stop_gradient)


def _softmax(x: Any, axis: Any, where: Any, hold: Any) -> Any:
    x_max = _masked_max(x, axis, where)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    unnormalized = jnp.exp(x_safe - hold(x_max))
    result = unnormalized / jnp.sum(unnormalized, axis, keepdims=True, where=where)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


def _axis_key(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _softmax_with_rule(x: Any, axis: Any, where: Any) -> Any:
    """softmax with its own JVP, ``y * (dx - sum(y * dx))`` (``jax_softmax_custom_jvp``):
    the tangent needs ``y`` alone, not the exponentials."""
    return _softmax(x, axis, where, lambda m: m)


@_softmax_with_rule.defjvp
def _softmax_jvp(axis: Any, primals: Any, tangents: Any) -> Any:
    (x, where), (x_dot, _) = primals, tangents
    y = _softmax_with_rule(x, axis, where)
    return y, y * (x_dot - jnp.sum(y * x_dot, axis, where=where, keepdims=True))


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """``x - logsumexp(x, axis)``, computed without overflow; masked entries give -inf."""
    (x,) = inexact(x)
    x_max = _masked_max(x, axis, where)
    x_safe = x if where is None else jnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, keepdims=True, where=where))
    result = shifted - shifted_logsumexp
    if where is not None:
        return jnp.where(where, result, -np.inf)
    return result


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """``log(mean(exp(x), axis))``, computed as ``logsumexp - log(count)``."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    x = _array(x)
    ones = jnp.ones(x.shape, lse.dtype)
    count = jnp.sum(ones if where is None else jnp.where(where, ones, 0), axis,
                    keepdims=keepdims)
    return lse - jnp.log(count)


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Any:
    """``(x - mean) / sqrt(variance + epsilon)``, with the mean and variance over ``axis``
    computed when not given (``algorithm='fast'``: ``E[x^2] - E[x]^2`` clipped at 0;
    ``'stable'``: ``E[(x - E[x])^2]``)."""
    if algorithm not in ("fast", "stable"):
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    x = _array(x)
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(x - mean), axis, keepdims=True, where=where)
        else:
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) \
                - jnp.square(mean)
            variance = jnp.clip(variance, 0)
    return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """``x[..., None] == arange(num_classes)``, as ``dtype`` (default float), with the
    new axis at ``axis``. Out-of-range and negative indices give all zeros."""
    try:
        num_classes = operator.index(num_classes)
    except TypeError:
        raise TypeError("one_hot: num_classes must be a concrete integer, got "
                        f"{num_classes!r}") from None
    if isinstance(axis, str) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"one_hot: axis must be an integer, got {axis!r} (one_hot over "
                        "a named mapped axis is not supported)")
    x = _array(x)
    ndim = x.ndim + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"one_hot: axis {axis} is out of bounds for an output of rank {ndim}")
    pos = axis % ndim
    shape = [1] * ndim
    shape[pos] = num_classes
    classes = jnp.reshape(jnp.arange(num_classes, dtype=x.dtype), shape)
    dtype = jnp.zeros((), float).dtype if dtype is None else dtype
    return (jnp.expand_dims(x, pos) == classes).astype(dtype)
