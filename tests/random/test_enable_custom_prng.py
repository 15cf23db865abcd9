"""``jax.enable_custom_prng`` (``jax_enable_custom_prng``): with it on, ``PRNGKey``,
``split`` and ``fold_in`` return typed keys and a raw key warns, as JAX 0.10.2 does (the
outcomes below were recorded by running the same lines under JAX). NumPyro decorates a
test with ``@jax.enable_custom_prng()`` (Note [typed keys] in spmdc/random/keys.py)."""
import warnings

import numpy as np
import pytest

import spmdc
from spmdc import random

RAW_KEY_WARNING = ("Raw arrays as random keys to jax.random functions are deprecated. "
                   "Assuming valid threefry2x32 key for now.")


@spmdc.enable_custom_prng()
def _under_decorator():
    k = random.PRNGKey(0)
    return k, random.split(k), random.fold_in(k, 1)


def test_decorator_makes_typed_keys():
    k, ks, kf = _under_decorator()
    assert str(k.dtype) == "key<fry>" and k.shape == ()
    assert str(ks.dtype) == "key<fry>" and ks.shape == (2,)
    assert str(kf.dtype) == "key<fry>"
    # The same key data as the raw key: JAX's seed 0 key is [0, 0].
    np.testing.assert_array_equal(np.asarray(random.key_data(k)), [0, 0])
    # Outside the block, raw keys again.
    assert random.PRNGKey(0).dtype == np.uint32
    assert spmdc.config.jax_enable_custom_prng is False


def test_raw_key_warns_and_gives_typed_keys():
    raw = np.array([0, 0], np.uint32)
    with spmdc.enable_custom_prng(True), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        keys = random.split(raw)
        sample = random.normal(random.key(0), (3,))
    assert str(keys.dtype) == "key<fry>"
    assert [(w.category, str(w.message)) for w in caught] == [(FutureWarning,
                                                               RAW_KEY_WARNING)]
    # JAX 0.10.2's numbers: enable_custom_prng does not change what keys draw.
    np.testing.assert_allclose(np.asarray(sample), [1.6226422, 2.0252647, -0.43359444],
                               rtol=1e-6)


def test_config_update_and_bad_value():
    spmdc.config.update("jax_enable_custom_prng", True)
    try:
        assert str(random.PRNGKey(1).dtype) == "key<fry>"
    finally:
        spmdc.config.update("jax_enable_custom_prng", False)
    assert random.PRNGKey(1).dtype == np.uint32
    with pytest.raises(TypeError, match="jax_enable_custom_prng"):
        spmdc.enable_custom_prng("yes")


# (Haiku's PRNGSequence test splits under it and expects a key array)
def test_raw_key_functions_return_typed_keys_under_enable_custom_prng():
    raw = random.PRNGKey(42)
    with spmdc.enable_custom_prng():
        assert spmdc.enable_custom_prng.value
        k = random.PRNGKey(42)
        assert (str(k.dtype), k.shape) == ("key<fry>", ())
        np.testing.assert_array_equal(random.key_data(k), raw)      # JAX: [0, 42]
        ks = random.split(k, 2)
        assert (str(ks.dtype), ks.shape) == ("key<fry>", (2,))
        with pytest.warns(FutureWarning, match="Raw arrays as random keys"):
            folded = random.fold_in(raw, 1)
        assert str(folded.dtype) == "key<fry>"
    assert not spmdc.enable_custom_prng.value
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert random.split(raw).dtype == np.uint32              # off again: raw keys
    np.testing.assert_array_equal(random.key_data(ks), random.split(raw, 2))
    np.testing.assert_array_equal(random.key_data(folded), random.fold_in(raw, 1))
