"""``bessel_jn`` of ``spmdc.scipy.special``: the Bessel functions of the first kind
J_0 .. J_v of real arguments, by Miller's backward recurrence as JAX 0.10.2 computes
them (Zhang and Jin, Computation of Special Functions, 1996). See Note [Miller's
recurrence].
"""
from __future__ import annotations

import operator
from typing import Any

import spmdc.numpy as jnp
from spmdc import lax
from spmdc.transforms.eager import library_jit  # See Note [library functions run as one program]

# Note [Miller's recurrence]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# The recurrence f_k = 2 (k + 1) f_{k+1} / z - f_{k+2} runs downwards from k = n_iter,
# started at f_{n_iter+2} = 0, f_{n_iter+1} = 1e-16; it is stable in that direction and
# its f_k are proportional to J_k(z). The constant follows from the identity
# J_0 + 2 (J_2 + J_4 + ...) = 1: J_k = f_k / (f_0 + 2 sum of the even f_k, k >= 2). This
# is JAX's algorithm, with n_iter (default 50) steps. Two differences: the recurrence
# grows like k! (2/z)^k, which overflows float32 (JAX's float32 values are then NaN for
# most arguments) and, for tiny z, float64; so whenever |f_k| exceeds 1 the carried
# values are divided by it and the logarithm of the factor is kept, and each f_k is
# brought back to the final scale at the end (a factor that underflows stands for a
# J_k below the dtype's range). And at z = 0, where the recurrence divides by zero (JAX
# gives NaN), the values are SciPy's J_0(0) = 1, J_k(0) = 0.


def _miller(z: Any, v: int, n_iter: int) -> Any:
    """J_0(z) .. J_v(z) stacked on a new leading axis (Note [Miller's recurrence])."""
    zero = jnp.zeros_like(z)
    safe_z = jnp.where(z == 0, jnp.ones_like(z), z)

    def step(carry: Any, k: Any) -> Any:
        f_above2, f_above1, even_sum, log_scale = carry
        f = 2.0 * (k + 1.0) * f_above1 / safe_z - f_above2
        even_sum = jnp.where(k % 2 == 0, even_sum + 2.0 * f, even_sum)
        factor = jnp.maximum(jnp.abs(f), 1.0)
        log_scale = log_scale + jnp.log(factor)
        f, f_above1, even_sum = f / factor, f_above1 / factor, even_sum / factor
        return (f_above1, f, even_sum, log_scale), (f, log_scale)

    start = (zero, jnp.full_like(z, 1e-16), zero, zero)
    orders = jnp.arange(n_iter + 1, dtype=z.dtype)
    (_, f_0, even_sum, final_scale), (fs, scales) = lax.scan(step, start, orders,
                                                             reverse=True)
    # fs[k] is f_k at the scale reached after step k; even_sum holds 2 f_0 too.
    values = fs[:v + 1] * jnp.exp(scales[:v + 1] - final_scale) / (even_sum - f_0)
    at_zero = (jnp.arange(v + 1) == 0).astype(z.dtype).reshape((v + 1,) + (1,) * z.ndim)
    return jnp.where(z == 0, at_zero, values)


@library_jit(static_argnames=("v", "n_iter"))
def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """J_0(z), ..., J_v(z) for real ``z``: an array of shape ``(v + 1, *z.shape)`` of
    ``z``'s (inexact) dtype. ``n_iter`` steps of the recurrence (Note [Miller's
    recurrence]); a larger one is needed for |z| approaching it."""
    z = jnp.asarray(z)
    if jnp.issubdtype(z.dtype, jnp.complexfloating):
        raise TypeError(f"bessel_jn: z must be real, got dtype {z.dtype}")
    if not jnp.issubdtype(z.dtype, jnp.floating):
        z = z.astype(jnp.result_type(float))
    try:
        v = operator.index(v)
        n_iter = operator.index(n_iter)
    except TypeError:
        raise TypeError(f"bessel_jn: v and n_iter must be Python ints, got v={v!r}, "
                        f"n_iter={n_iter!r}") from None
    if v < 0 or n_iter < v:
        raise ValueError(f"bessel_jn: need 0 <= v <= n_iter, got v={v}, n_iter={n_iter}")
    return _miller(z, v, n_iter)
