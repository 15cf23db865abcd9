"""``keys.at[i].set(k)`` and ``.get()`` on typed key arrays, as Flax's lifted while loops
keep a table of rngs in a variable and replace one per step (under jit too)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
from spmdc import random

KEYS = random.split(random.key(0), 3)
NEW = random.key(5)


def test_set_replaces_one_key_and_get_reads_it_under_jit():
    out, got = spmdc.jit(lambda ks, k: (ks.at[1].set(k), ks.at[2].get()))(KEYS, NEW)
    assert out.dtype == KEYS.dtype and out.shape == (3,)
    want = np.array(random.key_data(KEYS))
    want[1] = random.key_data(NEW)
    np.testing.assert_array_equal(random.key_data(out), want)
    np.testing.assert_array_equal(random.key_data(got), random.key_data(KEYS)[2])


def test_set_with_a_slice_broadcasts_a_key_and_refuses_raw_data():
    out = KEYS.at[:2].set(NEW)
    np.testing.assert_array_equal(random.key_data(out)[:2],
                                  np.broadcast_to(random.key_data(NEW), (2, 2)))
    with pytest.raises(TypeError, match="takes typed keys"):
        KEYS.at[0].set(random.key_data(NEW))
