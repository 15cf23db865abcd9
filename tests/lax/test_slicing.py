"""spmdc/lax/slicing.py: lax.gather and the lax.scatter family against JAX 0.10.2's
recorded results (tests/lax_gather_cases.py) and their errors; index_in_dim,
slice_in_dim, split, unstack and index_take against NumPy. The dynamic slices are tested
with their primitives in tests/compiler/primitives."""
from __future__ import annotations

import lax_gather_cases
import numpy as np
import oracle
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

RECORDED = oracle.recorded_cases("lax_gather_reference.json")
CASES = lax_gather_cases.cases(spmdc)


def test_every_recorded_case_is_run():
    assert set(RECORDED) == set(CASES)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_matches_jax(name):
    oracle.assert_matches_recorded(CASES[name](), RECORDED[name], name)


def test_bad_arguments_are_clear_errors():
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                    start_index_map=(0, 1))
    x, idx = np.ones((4, 6), np.float32), np.zeros((2, 2), np.int32)
    for call, error, fragment in [
        (lambda: lax.gather(x, idx, dn, (1, 2), mode="bogus"), ValueError, "Unknown gather"),
        (lambda: lax.gather(x, idx, dn, (1, 2), mode="one_hot"), ValueError, "ONE_HOT"),
        (lambda: lax.gather(x, idx.astype(np.float32), dn, (1, 2)), TypeError, "integers"),
        (lambda: lax.gather(x, idx, (1,), (1, 2)), TypeError, "GatherDimensionNumbers"),
        (lambda: lax.gather(x, idx, dn, (1, 2), unique_indices=3), TypeError,
         "True or False"),
        (lambda: lax.scatter_add(x, idx, np.ones((2, 2), np.int32), lax.ScatterDimensionNumbers(
            (1,), (0,), (0, 1))), TypeError, "astype"),
    ]:
        with pytest.raises(error, match=fragment):
            call()
    assert lax.GatherScatterMode.from_any("clip") is lax.GatherScatterMode.CLIP


X = np.array([[1.5, -2.5, 0.25], [0.5, 3.0, -0.75]], np.float32)


def test_index_take_matches_numpy_and_wraps():
    src = np.arange(24).reshape(2, 3, 4)
    i, j = np.array([0, 1, -1]), np.array([2, 5, 1])
    want = np.moveaxis(src, (0, 2), (0, 1))[i % 2, j % 4]
    np.testing.assert_array_equal(lax.index_take(src, (i, j), (0, 2)), want)
    g = spmdc.grad(lambda s: jnp.sum(lax.index_take(s, (i, j), (0, 2))))(src.astype(np.float32))
    want_g = np.zeros(src.shape, np.float32)
    for a, c in zip(i % 2, j % 4, strict=True):      # each taken slice counts once
        want_g[a, :, c] += 1
    np.testing.assert_array_equal(g, want_g)


def test_index_in_dim_and_slice_in_dim():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(lax.index_in_dim(x, -1, 2, keepdims=False), x[..., -1])
    np.testing.assert_array_equal(lax.index_in_dim(x, 1, 1), x[:, 1:2])
    np.testing.assert_array_equal(lax.slice_in_dim(x, 1, None, 2, axis=2), x[..., 1::2])
    with pytest.raises(IndexError, match="out of bounds"):
        lax.index_in_dim(x, 3, 1)


def test_split():
    pieces = lax.split(X, [1, 2], axis=1)
    np.testing.assert_array_equal(pieces[1], X[:, 1:])
    with pytest.raises(ValueError, match="sum to"):
        lax.split(X, [1, 1], axis=1)


def test_unstack_and_index_take():
    parts = lax.unstack(np.arange(6).reshape(2, 3), axis=1)
    assert len(parts) == 3 and np.array_equal(parts[2], [2, 5])
    np.testing.assert_array_equal(lax.index_take(np.arange(12).reshape(3, 4),
                                                 [np.array([0, 2, 5]), np.array([1, 3, -1])],
                                                 [0, 1]), [1, 11, 11])


def test_gather_and_scatter_bind_only_parameters_that_are_not_defaults():
    # See Note [default gather and scatter parameters]: no batching dimensions and the
    # default mode are left out of the program, which then reads as jnp's indexing.
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    idx = np.array([[2], [0]], np.int32)
    gdn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                     start_index_map=(0,))
    text = str(spmdc.make_ir(lambda a: lax.gather(a, idx, gdn, (1, 4),
                                                   mode="clip"))(x))
    assert "gather(" in text and "batching" not in text and "mode" not in text
    sdn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    ones = np.ones((2, 4), np.float32)
    text = str(spmdc.make_ir(lambda a: lax.scatter_add(a, idx, ones, sdn))(x))
    assert "scatter(" in text and "batching" not in text and "mode" not in text
    text = str(spmdc.make_ir(lambda a: lax.scatter_sub(a, idx, ones, sdn, mode="clip"))(x))
    assert "combine='add', mode='clip'" in text
    expected = x.copy()
    expected[[2, 0]] -= 1
    np.testing.assert_array_equal(lax.scatter_sub(x, idx, ones, sdn, mode="clip"), expected)
    np.testing.assert_array_equal(lax.gather(x, idx, gdn, (1, 4), mode="clip"), x[[2, 0]])
