"""spmdc/numpy/bit_packing.py against NumPy: packbits and unpackbits along every axis (and
the flattened array), in both bit orders, with count= shorter and longer than the bits,
and their errors."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

BITS = np.random.default_rng(0).integers(0, 3, (3, 13)).astype(np.int32)


@pytest.mark.parametrize("bitorder", ["big", "little"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_packbits_and_unpackbits_match_numpy(axis, bitorder):
    packed = jnp.packbits(BITS, axis=axis, bitorder=bitorder)
    want = np.packbits(BITS != 0, axis=axis, bitorder=bitorder)
    assert packed.dtype == np.uint8
    np.testing.assert_array_equal(packed, want)
    for count in (None, 5, 20):
        np.testing.assert_array_equal(
            jnp.unpackbits(want, axis=axis, count=count, bitorder=bitorder),
            np.unpackbits(want, axis=axis, count=count, bitorder=bitorder))


def test_packbits_under_jit_and_vmap():
    packed = spmdc.jit(lambda x: jnp.packbits(x, axis=1))(BITS)
    np.testing.assert_array_equal(packed, np.packbits(BITS != 0, axis=1))
    rows = spmdc.vmap(jnp.unpackbits)(np.packbits(BITS != 0, axis=1))
    np.testing.assert_array_equal(rows, np.unpackbits(np.packbits(BITS != 0, axis=1), axis=1))


@pytest.mark.parametrize("call,error,fragment", [
    (lambda: jnp.packbits(BITS, bitorder="middle"), ValueError, "bitorder must be"),
    (lambda: jnp.unpackbits(BITS.astype(np.uint8), bitorder="middle"), ValueError,
     "bitorder must be"),
    (lambda: jnp.packbits(BITS, axis=2), ValueError, "axis 2 is out of bounds"),
    (lambda: jnp.unpackbits(BITS), TypeError, "uint8"),
    (lambda: jnp.packbits(BITS.astype(np.float32)), TypeError, "integer or boolean")])
def test_bad_arguments_name_the_problem(call, error, fragment):
    with pytest.raises(error, match=fragment):
        call()
