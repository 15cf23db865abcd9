"""jax.experimental.random's stateful_rng / StatefulPRNG: draws that advance a ref-held
counter, eagerly, under jit (the ref is threaded state), split under vmap and spawned,
with the keys and values JAX 0.10.2 gives for the same seeds (recorded)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
from spmdc.experimental import random
from spmdc.random import key_data


def test_repr_and_repeated_draws_as_jaxs():
    rng = random.stateful_rng(42)
    assert str(rng) == ("StatefulPRNG(_base_key=Array((), dtype=key<fry>) overlaying:\n"
                        "[ 0 42], _counter=Ref(0, dtype=int32, weak_type=True))")
    assert [float(rng.uniform()), float(rng.uniform())] == [0.5302608013153076,
                                                            0.7276642322540283]
    jitted = spmdc.jit(rng.uniform)
    assert [float(jitted()), float(jitted())] == [0.6672406196594238, 0.38901209831237793]
    assert key_data(rng.key()).tolist() == [2954079971, 3276725750]
    assert key_data(rng.key()).tolist() == [2765691542, 824333390]


def test_methods_split_and_spawn_as_jaxs():
    @spmdc.jit                                   # one compile for the draws
    def draws(rng):
        return (rng.normal(1.0, 2.0, size=3), rng.random(2), rng.integers(5, size=(2, 2)),
                rng.uniform(np.zeros(2), 3.0), rng.key(2))
    normal, floats, ints, uniform, keys = draws(random.stateful_rng(7))
    np.testing.assert_allclose(normal, np.float32([3.2280943393707275, 1.2832626104354858,
                                                   -0.04490840435028076]), rtol=0, atol=1e-7)
    np.testing.assert_array_equal(floats, np.float32([0.6751335859298706, 0.8261764049530029]))
    assert ints.tolist() == [[1, 3], [3, 0]]
    np.testing.assert_array_equal(uniform, np.float32([0.6940022706985474, 0.9496182203292847]))
    assert keys.shape == (2,)

    @spmdc.jit
    def children(parent):
        mapped = spmdc.vmap(lambda r, x: x + r.uniform())(parent.split(3),
                                                          spmdc.numpy.zeros(3))
        return mapped, [r.integers(0, 10, 2) for r in parent.spawn(2)]
    mapped, spawned = children(random.stateful_rng(123))
    np.testing.assert_array_equal(mapped, np.float32([0.3552595376968384, 0.21937882900238037,
                                                      0.5336955785751343]))
    spawned_jax = [r.integers(0, 10, 2).tolist() for r in random.stateful_rng(123).spawn(2)]
    assert spawned_jax == [[4, 5], [2, 1]]
    assert [s.tolist() for s in spawned] != spawned_jax      # after split: other keys


def test_a_generator_passed_to_jit_advances():
    @spmdc.jit
    def f(r):
        return r.normal(size=2) + r.uniform(size=2)
    rng = random.stateful_rng(9)
    np.testing.assert_array_equal(f(rng), np.float32([0.2414342612028122, 1.2397613525390625]))
    np.testing.assert_array_equal(f(rng), np.float32([0.8256270289421082, 0.8748819231987]))
    assert int(rng._counter[...]) == 4


def test_bad_input_is_jaxs_exception():
    with pytest.raises(ValueError, match="Expected base_key to be a typed PRNG key; got 1"):
        random.StatefulPRNG(1, 2)
    with pytest.raises(ValueError, match="cannot operate on split stateful generator"):
        random.stateful_rng(1).split(2).key()
    with pytest.raises(TypeError, match="requires an explicit seed"):
        spmdc.jit(lambda: random.stateful_rng())()
    unseeded = random.stateful_rng()
    assert unseeded.integers(10).shape == ()
