"""The samplers' and initializers' ``out_sharding`` (JAX's keyword): the draw laid out
as asked, its type over Explicit axes saying so, its values those of the unsharded draw.
Each expected type is what JAX 0.10.2 printed for the same call on 8 CPU devices under
``set_mesh(make_mesh((2, 4), ('X', 'Y')))``."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import random as R
from spmdc.nn import initializers
from spmdc.sharding import AxisType, NamedSharding
from spmdc.sharding import PartitionSpec as P

K = R.key(0)
CASES = [
    ("normal", lambda s: R.normal(K, (8, 4), out_sharding=s), P("X"), "float32[8@X,4]"),
    ("uniform", lambda s: R.uniform(K, (8, 4), out_sharding=s), P(None, "Y"),
     "float32[8,4@Y]"),
    ("bits", lambda s: R.bits(K, (8, 4), out_sharding=s), P(None, "Y"), "uint32[8,4@Y]"),
    ("categorical", lambda s: R.categorical(K, jnp.zeros((8, 3)), out_sharding=s), P("X"),
     "int32[8@X]"),
    ("permutation", lambda s: R.permutation(K, 8, out_sharding=s), P("X"), "int32[8@X]"),
    ("orthogonal", lambda s: R.orthogonal(K, 4, (8,), out_sharding=s), P(None, "Y"),
     "float32[8,4@Y,4]"),
    ("lecun_normal", lambda s: initializers.lecun_normal()(K, (8, 4), jnp.float32, s),
     P("X"), "float32[8@X,4]"),
    ("zeros", lambda s: initializers.zeros(K, (8, 4), jnp.float32, out_sharding=s),
     P(None, "Y"), "float32[8,4@Y]"),
]

# the samplers whose JAX 0.10.2 signature has out_sharding
JAX_SAMPLERS = (
    "bits uniform randint permutation normal multivariate_normal truncated_normal bernoulli "
    "beta cauchy dirichlet exponential gamma loggamma poisson gumbel categorical laplace "
    "logistic pareto t chisquare f rademacher maxwell orthogonal generalized_normal ball "
    "rayleigh wald geometric triangular lognormal").split()


@pytest.fixture(scope="module")
def mesh():
    return spmdc.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)


def test_draws_are_laid_out_as_asked_with_the_unsharded_values(mesh):
    # one program for every sharded draw, one for the unsharded ones (two compiles)
    types = []

    def sharded():
        outs = [draw(spec) for _, draw, spec, _ in CASES]
        types.extend(str(spmdc.typeof(o)) for o in outs)
        return outs
    with spmdc.set_mesh(mesh):
        outs = spmdc.jit(sharded)()
        plain = spmdc.jit(lambda: [draw(None) for _, draw, _, _ in CASES])()
    assert types == [want for *_, want in CASES]
    for (name, _, spec, _), out, p in zip(CASES, outs, plain, strict=True):
        # as JAX reports it, from the type: one spec entry per dimension
        full = P(*spec, *[None] * (out.ndim - len(spec)))
        assert out.sharding == NamedSharding(mesh, full), name
        np.testing.assert_array_equal(np.asarray(out), np.asarray(p), err_msg=name)


def test_an_eager_draw_is_laid_out_as_asked(mesh):
    with spmdc.set_mesh(mesh):
        out = R.normal(K, (8, 4), out_sharding=P("X"))
    assert str(spmdc.typeof(out)) == "float32[8@X,4]"
    assert out.sharding == NamedSharding(mesh, P("X", None))     # JAX's: from the type


def test_every_jax_sampler_takes_out_sharding_as_a_keyword():
    for name in JAX_SAMPLERS:
        parameter = inspect.signature(getattr(R, name)).parameters["out_sharding"]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is None


def test_a_spec_of_the_wrong_rank_is_a_value_error(mesh):
    with spmdc.set_mesh(mesh), pytest.raises(ValueError, match="has 2 entries"):
        R.permutation(K, 8, out_sharding=P(None, "Y"))
