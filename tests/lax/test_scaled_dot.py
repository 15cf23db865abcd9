"""lax.scaled_dot against values and errors recorded from JAX 0.10.2 (CPU)."""
import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

REC = json.loads((pathlib.Path(__file__).parents[1] / "data" / "lax_scaled_dot_jax.json")
                 .read_text())
D = REC["data"]
LHS = np.asarray(D["lhs"], np.float32).astype(ml_dtypes.float8_e4m3fn)
RHS = np.asarray(D["rhs"], np.float32).astype(ml_dtypes.float8_e4m3fn)
LS = np.asarray(D["ls"], np.float32).astype(ml_dtypes.float8_e8m0fnu)
RS = np.asarray(D["rs"], np.float32).astype(ml_dtypes.float8_e8m0fnu)


def _same(got, name):
    dtype, values = REC["out"][name]
    assert str(got.dtype) == dtype
    # float32 sums of the same bfloat16 products: spmdc's dot widens its operands
    # first, JAX's keeps them narrow, so the order of one sum may differ in the last bit
    np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(values, np.float32),
                               rtol=2e-6)


def test_values_are_jaxs_with_and_without_scales_under_jit_and_vmap():
    _same(spmdc.jit(lambda a, b, c, d: lax.scaled_dot(a, b, lhs_scale=c, rhs_scale=d))(
        LHS, RHS, LS, RS), "default")
    _same(lax.scaled_dot(LHS, RHS, lhs_scale=LS, rhs_scale=RS,
                         preferred_element_type=jnp.float32), "f32")
    _same(lax.scaled_dot(LHS[0], RHS[0]), "noscale2d")
    _same(spmdc.vmap(lambda a, b, c, d: lax.scaled_dot(
        a, b, lhs_scale=c, rhs_scale=d, preferred_element_type=jnp.float32))(LHS, RHS, LS, RS),
        "vmap")


@pytest.mark.parametrize("name", sorted(REC["out"]["errors"]))
def test_bad_operands_are_jaxs_type_errors(name):
    calls = {
        "rank1": lambda: lax.scaled_dot(LHS[0, 0], RHS[0, :, 0]),
        "ratio": lambda: lax.scaled_dot(LHS, RHS, lhs_scale=np.ones((2, 4, 64),
                                                                    ml_dtypes.float8_e8m0fnu),
                                        rhs_scale=RS),
        "divisible": lambda: lax.scaled_dot(LHS, RHS, lhs_scale=np.ones(
            (2, 4, 3), ml_dtypes.float8_e8m0fnu), rhs_scale=RS),
        "contract": lambda: lax.scaled_dot(LHS, RHS[:, :32], lhs_scale=LS, rhs_scale=RS[:, :1]),
        "scale_dim": lambda: lax.scaled_dot(LHS, RHS, lhs_scale=np.ones(
            (2, 5, 2), ml_dtypes.float8_e8m0fnu), rhs_scale=RS),
    }
    kind, message = REC["out"]["errors"][name]
    with pytest.raises(TypeError) as e:
        calls[name]()
    assert kind == "TypeError" and str(e.value) == message
