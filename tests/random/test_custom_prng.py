"""``jax.enable_custom_prng`` (``jax_enable_custom_prng``): while it is on, the raw-key
functions return typed keys and a raw key given to a random function warns, as in JAX
0.10.2 (Haiku's PRNGSequence test splits under it and expects a key array)."""
import warnings

import numpy as np
import pytest

import spmdc
from spmdc import random


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
