"""lax.scaled_dot on spmdc and on JAX 0.10.2 (`tools/record.py lax_scaled_dot` records
JAX's results in tests/data/lax_scaled_dot_reference.json; tests/lax/test_scaled_dot.py
compares): float8 operands with e8m0 block scales, with and without scales, under jit and
vmap, and bad operands (recorded as JAX's exception)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

_rng = np.random.default_rng(0)
LHS = _rng.normal(size=(2, 4, 64)).astype(ml_dtypes.float8_e4m3fn)
RHS = _rng.normal(size=(2, 64, 3)).astype(ml_dtypes.float8_e4m3fn)
LS = (2.0 ** _rng.integers(-3, 3, size=(2, 4, 2))).astype(ml_dtypes.float8_e8m0fnu)
RS = (2.0 ** _rng.integers(-3, 3, size=(2, 2, 3))).astype(ml_dtypes.float8_e8m0fnu)


def _ones(*shape):
    return np.ones(shape, ml_dtypes.float8_e8m0fnu)


def _typed(r):
    """The result's dtype name and its values in float32."""
    return str(r.dtype), np.asarray(r, np.float32)


def cases(lib):
    sd, f32 = lib.lax.scaled_dot, lib.numpy.float32
    return {
        "default": lambda: _typed(lib.jit(lambda a, b, c, d: sd(a, b, lhs_scale=c,
                                                                rhs_scale=d))(LHS, RHS, LS, RS)),
        "f32": lambda: _typed(sd(LHS, RHS, lhs_scale=LS, rhs_scale=RS,
                                 preferred_element_type=f32)),
        "no_scales_2d": lambda: _typed(sd(LHS[0], RHS[0])),
        "vmap": lambda: _typed(lib.vmap(lambda a, b, c, d: sd(
            a, b, lhs_scale=c, rhs_scale=d, preferred_element_type=f32))(LHS, RHS, LS, RS)),
        "error.rank1": lambda: sd(LHS[0, 0], RHS[0, :, 0]),
        "error.ratio": lambda: sd(LHS, RHS, lhs_scale=_ones(2, 4, 64), rhs_scale=RS),
        "error.divisible": lambda: sd(LHS, RHS, lhs_scale=_ones(2, 4, 3), rhs_scale=RS),
        "error.contract": lambda: sd(LHS, RHS[:, :32], lhs_scale=LS, rhs_scale=RS[:, :1]),
        "error.scale_dim": lambda: sd(LHS, RHS, lhs_scale=_ones(2, 5, 2), rhs_scale=RS),
    }
