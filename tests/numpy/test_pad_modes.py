"""jnp.pad in every NumPy mode (Flax's circular and reflecting convolutions pad with
'wrap' and 'reflect'), against np.pad, under jit, grad and vmap, with a callable mode and
JAX's errors for bad input."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

X = np.array([[0.5, -1.0, 2.0, 3.5], [1.5, 0.25, -2.5, 4.0], [-0.75, 1.0, 2.25, -3.0]],
             np.float32)
XI = np.array([[3, -5, 8, 1], [0, 7, -2, 6], [4, 4, -1, 2]], np.int32)
MODES = [("wrap", {}), ("edge", {}), ("reflect", {}), ("symmetric", {}),
         ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"}),
         ("maximum", {}), ("minimum", {}), ("mean", {}), ("median", {}),
         ("mean", {"stat_length": 2}), ("minimum", {"stat_length": ((1, 3), (2, 1))}),
         ("linear_ramp", {"end_values": (1, -2)}),
         ("constant", {"constant_values": ((1, 2), (3, 4))})]
WIDTHS = [((1, 2), (0, 3)), ((5, 7), (9, 1)), 2]     # the second is wider than the axes


def _check_against_numpy(modes, widths, arrays):
    def pads(a):
        return [jnp.pad(a, width, mode=mode, **kwargs) for mode, kwargs in modes
                for width in widths]
    got = spmdc.jit(lambda *a: [pads(x) for x in a])(*arrays)
    cases = [(mode, kwargs, width) for mode, kwargs in modes for width in widths]
    for a, got_a in zip(arrays, got, strict=True):
        for (mode, kwargs, width), g in zip(cases, got_a, strict=True):
            want = np.pad(a, width, mode=mode, **kwargs)
            assert g.dtype == want.dtype, (mode, kwargs, width)
            if mode == "linear_ramp" and a.dtype.kind == "i":
                continue            # NumPy rounds an integer ramp, JAX (and spmdc) floor it
            np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-6,
                                       err_msg=f"{mode} {kwargs} {width}")


def test_every_mode_matches_numpy_padding_wider_than_the_array():
    # one program: every mode, widths wider than the axes (reflected chunk by chunk)
    _check_against_numpy([m for m in MODES if m[0] != "median"], WIDTHS[1:2], (X,))


def test_integer_statistics_round_and_median_pads():
    _check_against_numpy([("mean", {}), ("median", {"stat_length": 3})], WIDTHS[:1],
                         (XI, X))


@pytest.mark.slow
def test_every_mode_width_and_dtype_matches_numpy():
    _check_against_numpy(MODES, WIDTHS, (X, XI))


def test_eager_wrap_and_reflect_as_flax_convolutions_pad():
    for mode in ("wrap", "reflect", "edge"):
        np.testing.assert_array_equal(jnp.pad(X, ((0, 0), (2, 1)), mode=mode),
                                      np.pad(X, ((0, 0), (2, 1)), mode=mode))


def test_integer_linear_ramp_floors_as_jax():
    got = spmdc.jit(lambda a: jnp.pad(a, ((5, 7), (9, 1)), mode="linear_ramp",
                                      end_values=(1, -2)))(XI)
    np.testing.assert_array_equal(got[-1], [1, 0, 0, -1, -1, -1, -1, -2, -2, -2, -2, -2,
                                            -2, -2])                # JAX 0.10.2's row


def test_empty_mode_pads_with_zeros_and_zero_width_is_identity():
    np.testing.assert_array_equal(jnp.pad(XI, 1, mode="empty"), np.pad(XI, 1))
    np.testing.assert_array_equal(jnp.pad(X, 0, mode="reflect"), X)


def test_reflect_gradient_and_wrap_under_vmap():
    row = X[0]
    # pad(x, 2, reflect) = x2 x1 | x0 x1 x2 x3 | x2 x1: x1 and x2 appear three times
    grad = spmdc.grad(lambda a: (jnp.pad(a, 2, mode="reflect") ** 2).sum())(row)
    np.testing.assert_allclose(grad, 2 * row * np.array([1, 3, 3, 1]), rtol=1e-6)
    got = spmdc.vmap(lambda a: jnp.pad(a, (1, 2), mode="wrap"))(X)
    np.testing.assert_array_equal(got, np.pad(X, ((0, 0), (1, 2)), mode="wrap"))


def test_callable_mode_gets_rows_widths_axis_and_keywords():
    def edges(row, width, axis, kwargs):
        return row.at[:width[0]].set(kwargs["before"]).at[len(row) - width[1]:].set(
            kwargs["after"])
    got = jnp.pad(jnp.array([2, 3, 4]), 2, edges, before=-10, after=10)
    np.testing.assert_array_equal(got, [-10, -10, 2, 3, 4, 10, 10])


@pytest.mark.parametrize("call,error,match", [
    (lambda: jnp.pad(X, 1, mode="nope"), NotImplementedError, "unknown mode 'nope'"),
    (lambda: jnp.pad(X, 1, mode="edge", constant_values=1), ValueError,
     "takes no keyword constant_values"),
    (lambda: jnp.pad(X, -1), ValueError, "non-negative"),
    (lambda: jnp.pad(X, 1, mode="reflect", reflect_type="sideways"), ValueError,
     "reflect_type"),
    (lambda: jnp.pad(np.zeros((0, 2)), 1, mode="wrap"), ValueError, "empty axis 0"),
    (lambda: jnp.pad(X, 1, mode="mean", stat_length=0), ValueError, "stat_length of 0"),
])
def test_bad_input_raises_what_jax_raises(call, error, match):
    with pytest.raises(error, match=match):
        call()
