"""Gradients rounded as JAX rounds them (Note [JAX's derivative arithmetic]): float32 bit
patterns recorded from JAX 0.10.2 on CPU, where the operands are arguments of the jitted
function (so no constant folding of XLA's enters either program)."""
from __future__ import annotations

import numpy as np

import spmdc
import spmdc.numpy as jnp

Y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0], np.float32)
SIGMA = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0], np.float32)
M = np.float32(-1.9708247)


def _bits(x) -> list[int]:
    return np.asarray(x, np.float32).ravel().view(np.uint32).tolist()


def test_division_gradient_rounds_as_jax():
    # sum(((y - m) / sigma)^2), as NumPyro's Normal.log_prob is written
    def f(m, y, sigma):
        return jnp.sum(((y - m) / sigma) ** 2)
    gm, gsigma = spmdc.jit(spmdc.grad(f, argnums=(0, 2)))(M, Y, SIGMA)
    assert _bits(gm) == [3214219249]
    assert _bits(gsigma) == [3204990102, 3192626003, 3121058796, 3187124126, 3140056434,
                             3159967864, 3209442291, 3179877757]


def test_division_jvp_rounds_as_jax():
    def tangent(m, s):
        return spmdc.jvp(lambda a, b: (Y - a) / b, (m, s), (np.float32(0.7), s * 0.3))[1]
    t = spmdc.jit(tangent)(M, SIGMA)
    assert _bits(t) == [3206899125, 3200056811, 3167244692, 3198015712, 3185676376,
                        3188990324, 3207285698, 3196788987]
