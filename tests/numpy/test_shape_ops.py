"""spmdc/numpy/shape_ops.py, joining.py and rearranging.py against NumPy:
splits and stacks, rot90 and the flips, roll, and the array-API names concat,
matrix_transpose and permute_dims."""
import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


def test_splits_and_stacks():
    _same(jnp.array_split(X, 3, 2), np.array_split(X, 3, 2))
    _same(jnp.array_split(X, [1, -1, 9], 2), np.array_split(X, [1, -1, 9], 2))
    _same(jnp.hsplit(X, 3), np.hsplit(X, 3))
    _same(jnp.vsplit(X, [1]), np.vsplit(X, [1]))
    _same(jnp.dsplit(X, [1, 3]), np.dsplit(X, [1, 3]))
    _same(jnp.unstack(X, axis=1), tuple(np.moveaxis(X, 1, 0)))
    a, b = np.ones(3, np.float32), np.zeros((3, 2), np.float32)
    np.testing.assert_array_equal(jnp.dstack([a, a]), np.dstack([a, a]))
    np.testing.assert_array_equal(jnp.column_stack([a, b]), np.column_stack([a, b]))
    np.testing.assert_array_equal(jnp.append(X, [1, 2]), np.append(X, [1, 2]))
    np.testing.assert_array_equal(jnp.append(X, X[:1], axis=0), np.append(X, X[:1], axis=0))
    shapes = [x.shape for x in jnp.broadcast_arrays(np.ones(3), np.ones((2, 1)))]
    assert shapes == [(2, 3), (2, 3)]


B = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("k", range(-1, 5))
def test_rot90_flips(k):
    np.testing.assert_array_equal(jnp.rot90(B, k, (2, 0)), np.rot90(B, k, (2, 0)))
    np.testing.assert_array_equal(jnp.fliplr(B), np.fliplr(B))
    np.testing.assert_array_equal(jnp.flipud(B), np.flipud(B))


V = np.array([1.0, -2.0, 3.0], np.float32)


def test_roll():
    np.testing.assert_array_equal(jnp.roll(B, -5), np.roll(B, -5))
    np.testing.assert_array_equal(jnp.roll(B, (1, 2), (0, 2)), np.roll(B, (1, 2), (0, 2)))
    np.testing.assert_array_equal(jnp.roll(B, 7, axis=-1), np.roll(B, 7, axis=-1))
    np.testing.assert_array_equal(spmdc.jit(lambda s: jnp.roll(B, s, 1))(2), np.roll(B, 2, 1))
    got = spmdc.vmap(lambda s: jnp.roll(V, s))(np.arange(3))
    np.testing.assert_array_equal(got, np.stack([np.roll(V, s) for s in range(3)]))


def test_roll_is_slices_and_a_traced_shift_a_dynamic_slice():
    # As JAX: a known shift is two slices joined, so no index array is built into the
    # program (a custom_vjp rule that rolls a 1024-long history closed over one).
    text = str(spmdc.make_jaxpr(lambda x: jnp.roll(x, -1, 0))(np.zeros(1024, np.float32)))
    assert "slice" in text and "concatenate" in text and "gather" not in text

    @spmdc.custom_vjp
    def f(x, h):
        return x * 1.0

    def f_fwd(x, h):
        return x * 1.0, jnp.roll(h, -1, axis=0).at[0].set(jnp.max(x))

    f.defvjp(f_fwd, lambda res, g: (g, res))
    h = np.arange(1024, dtype=np.float32)
    grads = spmdc.jit(spmdc.grad(lambda x, h: jnp.sum(f(x, h)), argnums=(0, 1)))(
        np.array([3.0, -1.0], np.float32), h)
    np.testing.assert_array_equal(np.asarray(grads[1]), np.concatenate([[3.0], h[2:], [0.0]]))
    roll = spmdc.jit(jnp.roll, static_argnums=2)
    for shift in (-5, 3, 13):
        np.testing.assert_array_equal(np.asarray(roll(B, np.int32(shift), 1)),
                                      np.roll(B, shift, 1))


A = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def test_array_api_aliases():
    np.testing.assert_array_equal(jnp.matrix_transpose(B), np.swapaxes(B, -1, -2))
    np.testing.assert_array_equal(jnp.permute_dims(B, (2, 0, 1)), B.transpose(2, 0, 1))
    np.testing.assert_array_equal(jnp.concat([A, A], axis=1), np.concatenate([A, A], 1))


def test_repeat_counts_per_element_and_a_static_total():
    # per-element counts (a list or a concrete array: TFP's Bates distribution passes an
    # Array outside jit) as NumPy; under jit a traced count needs total_repeat_length,
    # whose result is cut short or padded with the last element (values recorded from
    # JAX 0.10.2)
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(jnp.repeat(jnp.arange(3.0), jnp.array([1, 2, 0])),
                                  np.repeat(np.arange(3.0), [1, 2, 0]))
    np.testing.assert_array_equal(jnp.repeat(x, [2, 1], axis=0), np.repeat(x, [2, 1], axis=0))
    np.testing.assert_array_equal(jnp.repeat(x, 2, axis=1), np.repeat(x, 2, axis=1))
    padded = spmdc.jit(lambda r: jnp.repeat(jnp.arange(3.0), r, total_repeat_length=5))
    np.testing.assert_array_equal(padded(jnp.array([1, 2, 1])), [0, 1, 1, 2, 2])
    np.testing.assert_array_equal(padded(jnp.array([1, 1, 1])), [0, 1, 2, 2, 2])
    np.testing.assert_array_equal(padded(jnp.array([3, 3, 3])), [0, 0, 0, 1, 1])
    cut = spmdc.jit(lambda v: jnp.repeat(v, 2, total_repeat_length=4))
    np.testing.assert_array_equal(cut(jnp.arange(3.0)), [0, 0, 1, 1])
    with pytest.raises(spmdc.errors.ConcretizationTypeError, match="total_repeat_length"):
        spmdc.jit(lambda r: jnp.repeat(jnp.arange(3.0), r))(jnp.array([1, 2, 1]))
    with pytest.raises(ValueError, match="do not fit"):
        jnp.repeat(jnp.arange(3.0), [1, 2])


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric"])
def test_pad_modes_that_copy_elements(mode):
    # NumPy's (and JAX's) values, wide pads included (Equinox's Conv with padding_mode
    # 'CIRCULAR' pads with 'wrap'); one jit compile per mode, gradients through it
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    widths = [(1, 2), (3, 0)], [(5, 7), (9, 1)], 2
    outs = spmdc.jit(lambda v: [jnp.pad(v, w, mode) for w in widths])(x)
    for got, w in zip(outs, widths, strict=True):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, np.pad(x, w, mode))
    grad = spmdc.grad(lambda v: jnp.pad(v, 1, mode).sum())(x)
    np.testing.assert_array_equal(grad, _pad_counts(x.shape, 1, mode))
    with pytest.raises(ValueError, match="empty axis 0"):
        jnp.pad(np.zeros((0, 2)), 1, mode)


def _pad_counts(shape, width, mode):
    """How many output elements read each input element."""
    ids = np.arange(int(np.prod(shape))).reshape(shape)
    return np.bincount(np.pad(ids, width, mode).ravel(), minlength=ids.size).reshape(shape)


def test_pad_refuses_a_mode_numpy_lacks():
    # JAX's NotImplementedError for a mode that is none of NumPy's
    with pytest.raises(NotImplementedError, match="unknown mode 'middle'"):
        jnp.pad(jnp.ones(3), 1, "middle")
