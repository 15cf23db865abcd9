"""spmdc.nn.initializers against JAX 0.10.2: parameters bit for bit equal to JAX's for the
same key (recorded by `tools/record.py libs`), typed keys and dtypes, the errors."""
from __future__ import annotations

import numpy as np
import oracle
import pytest

import spmdc.numpy as jnp
from spmdc import random
from spmdc.nn import initializers

REF = oracle.recorded("libs_reference.npz")


@pytest.mark.parametrize("name", ["glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
                                  "lecun_normal", "lecun_uniform", "normal", "uniform",
                                  "truncated_normal", "variance_scaling"])
def test_initializers_are_bit_exact_with_jax(name):
    inits = {"normal": initializers.normal(0.5), "uniform": initializers.uniform(2.0),
             "truncated_normal": initializers.truncated_normal(0.3, lower=-1., upper=1.5),
             "variance_scaling": initializers.variance_scaling(0.7, "fan_geo_avg", "normal",
                                                               in_axis=0, out_axis=(1, 2))}
    init = inits.get(name) or getattr(initializers, name)()
    got = np.asarray(init(random.PRNGKey(3), (4, 3, 5)))
    np.testing.assert_array_equal(got, REF[f"init.{name}"])


def test_initializer_with_typed_key_and_dtype():
    got = initializers.glorot_normal()(random.key(11), (6, 2), jnp.float16)
    assert got.dtype == jnp.float16
    # float16 truncated normal: within one unit in the last place, since JAX's own
    # float16 draws round differently by host CPU (Note [CPU-dependent rounding] in
    # random/test_samplers.py)
    np.testing.assert_allclose(np.asarray(got, np.float32),
                               REF["init.glorot_normal.typed_key"].astype(np.float32),
                               rtol=2 ** -9, atol=0)
    assert initializers.zeros(None, (2, 3)).dtype == jnp.float32
    np.testing.assert_array_equal(initializers.constant(2.5)(None, (2,)), [2.5, 2.5])
    assert isinstance(initializers.he_normal(), initializers.Initializer)


def test_initializer_errors():
    with pytest.raises(ValueError, match="invalid mode"):
        initializers.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError, match="invalid distribution"):
        initializers.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="at least 2D"):
        initializers.glorot_normal()(random.PRNGKey(0), (3,))
    with pytest.raises(ValueError, match="out_sharding"):
        initializers.normal()(random.PRNGKey(0), (3,), out_sharding="x")
    with pytest.raises(TypeError, match="real floating"):
        initializers.normal()(random.PRNGKey(0), (3,), jnp.int32)


# JAX 0.10.2: delta_orthogonal(scale=1.5)(PRNGKey(0), (3, 3, 2, 4))[1, 1]
DELTA_ORTHOGONAL_JAX = [[1.383000373840332, -0.36955857276916504, 0.1500847339630127,
                         -0.4221500754356384],
                        [0.4709630012512207, 0.30663537979125977, -1.0632572174072266,
                         0.8964670896530151]]


def test_delta_orthogonal_matches_jax_and_is_zero_off_centre():
    w = np.asarray(initializers.delta_orthogonal(scale=1.5)(random.PRNGKey(0), (3, 3, 2, 4)))
    np.testing.assert_allclose(w[1, 1], DELTA_ORTHOGONAL_JAX, rtol=1e-6)
    assert np.abs(w).sum() == pytest.approx(np.abs(w[1, 1]).sum())
    v = np.asarray(initializers.delta_orthogonal()(random.PRNGKey(1), (4, 3, 3)))
    np.testing.assert_allclose(v[1] @ v[1].T, np.eye(3), atol=1e-5)
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        initializers.delta_orthogonal()(random.PRNGKey(0), (3, 3))
    with pytest.raises(ValueError, match="fan_in"):
        initializers.delta_orthogonal()(random.PRNGKey(0), (3, 4, 2))
