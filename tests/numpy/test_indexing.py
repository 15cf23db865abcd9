"""NumPy-style advanced indexing and ``.at[...]`` updates (spmdc/numpy/indexing.py and
index_plan.py) against NumPy: eagerly, under jit (with concrete and with traced indices),
under vmap (against a loop) and under grad (against analytic derivatives)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc
import spmdc.numpy as jnp

SETTINGS = settings(max_examples=30, deadline=None)


def _x(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def _close(got, want, **kw):
    got = np.asarray(got)
    assert got.shape == np.shape(want), (got.shape, np.shape(want))
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, **kw)


# --- index patterns ---------------------------------------------------------------------------

@st.composite
def index_case(draw):
    """(x, index): a 1-4-d operand and a NumPy index mixing integer arrays (at least one,
    broadcasting together, negatives included), ints, slices (any step), None and `...`."""
    ndim = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    kinds = draw(st.lists(st.sampled_from(["array", "slice", "int", "full"]),
                          min_size=ndim, max_size=ndim))
    if "array" not in kinds:
        kinds[draw(st.integers(0, ndim - 1))] = "array"
    index: list = []
    for n, kind in zip(shape, kinds, strict=True):
        if draw(st.integers(0, 5)) == 0:
            index.append(None)
        if kind == "array":
            rank = draw(st.integers(0, len(batch)))
            ishape = tuple(1 if draw(st.booleans()) else m for m in batch[len(batch) - rank:])
            index.append(rng.integers(-n, n, size=ishape).astype(np.int32) if rank else
                         rng.integers(-n, n, size=(1,)).astype(np.int32))
        elif kind == "int":
            index.append(int(rng.integers(-n, n)))
        elif kind == "slice":
            start, stop = draw(st.sampled_from([None, -n - 1, -1, 0, 1, n])), \
                draw(st.sampled_from([None, -1, 0, 2, n + 1]))
            step = draw(st.sampled_from([None, 1, 2, -1, -2]))
            index.append(slice(start, stop, step))
        else:
            index.append(slice(None))
    # Trailing full slices may become an Ellipsis (or vanish).
    while index and isinstance(index[-1], slice) and index[-1] == slice(None) \
            and draw(st.booleans()):
        index.pop()
    if draw(st.booleans()):
        index.append(Ellipsis)
    return _x(shape, seed=int(rng.integers(1000))), tuple(index)


def _arrays(index):
    return [i for i in index if isinstance(i, np.ndarray)]


def _with(index, arrays):
    """``index`` with its NumPy arrays replaced, in order, by ``arrays``."""
    it = iter(arrays)
    return tuple(next(it) if isinstance(i, np.ndarray) else i for i in index)


# --- x[idx] ------------------------------------------------------------------------------------

@SETTINGS
@given(index_case())
def test_getitem_matches_numpy(case):
    x, index = case
    want = x[index]
    _close(jnp.asarray(x)[index], want)                                  # eager
    _close(spmdc.jit(lambda x: x[index])(x), want)                       # constant indices
    traced = spmdc.jit(lambda x, *arrays: x[_with(index, arrays)])       # traced indices
    _close(traced(x, *_arrays(index)), want)


@pytest.mark.parametrize("shape,index_fn", [
    ((5, 4), lambda i, j: (i,)),
    ((5, 4), lambda i, j: (slice(None), j)),
    ((5, 4), lambda i, j: (i, j)),
    ((5, 3, 4), lambda i, j: (i, slice(None), j)),           # separated: batch moves to front
    ((5, 4, 3), lambda i, j: (i, j, slice(None))),           # adjacent: stays in place
    ((3, 5, 4), lambda i, j: (slice(1, 3), i, j)),           # adjacent after a slice
    ((3, 5, 4), lambda i, j: (Ellipsis, j)),
    ((5, 4), lambda i, j: (None, i)),
    ((5, 4), lambda i, j: (i, None, j)),                     # None separates: to the front
    ((5, 3, 4), lambda i, j: (i, 1, j)),                     # ints count as advanced
    ((5, 3, 4), lambda i, j: (i, slice(None, None, -2), 2)),
    ((2, 5, 3, 4), lambda i, j: (slice(None), i, slice(None), j)),   # to the front
    ((2, 5, 4, 3), lambda i, j: (slice(1, 2), i, None, j)),
    ((2, 5, 3, 4), lambda i, j: (slice(None, None, -1), i, 0)),      # adjacent: in place
])
def test_getitem_named_patterns(shape, index_fn):
    x = _x(shape)
    i = np.array([[0, -1, 3], [4, 2, -5]], np.int32)          # rank 2, negatives
    j = np.array([3, 0, -4], np.int32)                        # broadcasts against i
    index = index_fn(i, j)
    want = x[index]
    _close(jnp.asarray(x)[index], want)
    _close(spmdc.jit(lambda x, i, j: x[index_fn(i, j)])(x, i, j), want)


def test_separated_advanced_indices_move_to_front():
    x = jnp.zeros((5, 3, 4))
    i = np.zeros((2, 6), np.int32)
    assert x[i, :, i].shape == (2, 6, 3)
    assert x[:, i, i].shape == (5, 2, 6)
    assert x[i, 0, :].shape == (2, 6, 4)
    assert x[0, :, i].shape == (2, 6, 3)
    assert x[:, i, 0].shape == (5, 2, 6)
    assert jnp.zeros((5, 3, 4, 7))[:, i, :, i].shape == (2, 6, 5, 4)


def test_out_of_bounds_indices_clamp():
    x = _x((4, 3))
    idx = np.array([-9, 7, 100, 3], np.int32)                 # -9 -> clamps to 0 after wrap
    want = x[np.clip(np.where(idx < 0, idx + 4, idx), 0, 3)]
    _close(jnp.asarray(x)[idx], want)
    _close(spmdc.jit(lambda x, i: x[i])(x, idx), want)          # traced indices
    _close(spmdc.jit(lambda x, i: x[1, i - 1])(x, idx), x[1, np.clip(idx - 1, 0, 2)])


def test_lists_scalars_and_arrays_as_indices():
    x = _x((4, 3))
    xa = jnp.asarray(x)
    _close(xa[np.array([0, 2, -1])], x[[0, 2, -1]])
    _close(xa[[[0], [2]], [1, 2]], x[[[0], [2]], [1, 2]])
    _close(xa[jnp.asarray(np.array([3, 1]))], x[[3, 1]])
    _close(xa[np.array(2), [0, 1]], x[2, [0, 1]])
    _close(xa[np.array([], np.int32)], x[np.array([], np.int64)])
    _close(spmdc.jit(lambda x, k: x[jnp.array([k, 0, k])])(x, 3), x[[3, 0, 3]])


# --- boolean masks --------------------------------------------------------------------------------

def test_boolean_masks():
    x = _x((4, 3, 2))
    xa = jnp.asarray(x)
    m1 = np.array([True, False, True, True])
    m2 = x[..., 0] > 0
    for index in [m1, (slice(None), np.array([False, True, True])), m2, (m2, 1),
                  (Ellipsis, np.array([True, False])), np.array([True, False, False, True]),
                  (m1, slice(None), [1, 0, 1])]:
        _close(xa[index], x[index])
    _close(xa[jnp.asarray(m2)], x[m2])                          # a concrete spmdc.Array
    _close(spmdc.jit(lambda x: x[m2])(x), x[m2])                 # a constant mask
    _close(xa[True], x[True])
    _close(xa[np.False_], x[np.False_])
    _close(xa[1, True], x[1, True])


def test_traced_boolean_mask_is_an_error():
    with pytest.raises(IndexError, match="depend on the data.*where"):
        spmdc.jit(lambda x: x[x > 0])(np.ones(3, np.float32))
    with pytest.raises(IndexError, match="depend on the data"):
        spmdc.jit(lambda x, m: x.at[m].set(0.0))(np.ones(3, np.float32), np.ones(3, bool))


@pytest.fixture
def strict_indexing():
    spmdc.config.update("spmdc_strict_indexing", True)
    yield
    spmdc.config.update("spmdc_strict_indexing", False)


def test_out_of_bounds_ints_clamp_as_jax():
    # Recorded from JAX 0.10.2 (Note [out-of-bounds ints] in spmdc/numpy/index_plan.py).
    x = jnp.arange(12.0).reshape(3, 4)
    _close(x[[0, 1], 4], [3.0, 7.0])
    _close(x[5], [8.0, 9.0, 10.0, 11.0])
    _close(x[-4, 2], 2.0)
    _close(x[1, 100], 7.0)
    _close(x[None, 7, ..., -9], [8.0])
    _close(x[np.int32(7), 1], 9.0)
    _close(spmdc.jit(lambda x: x[3, 4])(x), 11.0)
    _close(spmdc.grad(lambda x: x[7].sum())(jnp.arange(5.0)), [0, 0, 0, 0, 1])
    assert not spmdc.config.spmdc_strict_indexing
    with pytest.raises(IndexError, match="size 0"):     # nothing to clamp to, as in JAX
        jnp.zeros((0, 3))[1]


def test_strict_indexing_keeps_the_error(strict_indexing):
    x = jnp.zeros((3, 4))
    assert spmdc.config.read("spmdc_strict_indexing") is True
    with pytest.raises(IndexError, match=r"index 4 is out of bounds for axis 1 with size 4 "
                                         r"\(spmdc_strict_indexing is on\)"):
        x[[0, 1], 4]
    with pytest.raises(IndexError, match="index 5 is out of bounds for axis 0 with size 3"):
        x[5]
    with pytest.raises(IndexError, match="index -4 is out of bounds for axis 0"):
        spmdc.jit(lambda x: x[-4])(x)
    _close(x.at[5].get(), np.zeros(4))                 # .at[...]'s mode decides, as before


def test_index_errors():
    x = jnp.zeros((3, 4))
    with pytest.raises(IndexError, match="broadcast"):
        x[np.zeros(2, np.int32), np.zeros(3, np.int32)]
    with pytest.raises(IndexError, match="boolean index"):
        x[np.ones(4, bool)]
    with pytest.raises(TypeError, match="integer or boolean type"):   # JAX's class
        x[np.array([0.5])]
    with pytest.raises(IndexError, match="too many"):
        x[np.ones((3, 4), bool), 0]
    # The library keeps working afterwards.
    _close(x[np.array([0])], np.zeros((1, 4)))


def test_index_types_jax_rejects_raise_its_type_error():
    # Recorded from JAX 0.10.2: a list as the whole index (not inside a tuple), a float or
    # a str, and a float index array are TypeErrors, not IndexErrors as in NumPy.
    x = jnp.arange(10.0)
    for bad, fragment in [(lambda: x[[11]], "non-tuple sequence"),
                          (lambda: x.at[[5]].get(), "non-tuple sequence"),
                          (lambda: x[1.5], "got float 1.5"), (lambda: x["a"], "got str 'a'"),
                          (lambda: x[np.array([1.5])], "integer or boolean type"),
                          (lambda: spmdc.jit(lambda x, i: x[i])(x, 1.5), "integer or boolean")]:
        with pytest.raises(TypeError, match=fragment):
            bad()
    _close(x[np.array([11])], [9.0])                  # an index array clamps, as in JAX
    _close(x[[1, 2], ...], [1.0, 2.0])                # a list inside a tuple indexes


def test_empty_results():
    x = _x((3, 4))
    _close(jnp.asarray(x)[np.zeros((0, 2), np.int32)], x[np.zeros((0, 2), np.int32)])
    _close(jnp.asarray(x)[[0, 1], 2:2], x[[0, 1], 2:2])
    _close(jnp.asarray(x)[np.zeros(3, bool)], x[np.zeros(3, bool)])
    with pytest.raises(IndexError, match="size 0"):
        jnp.zeros((0, 3))[np.array([0])]


# --- x.at[idx] ---------------------------------------------------------------------------------

@SETTINGS
@given(index_case(), st.sampled_from(["add", "set", "mul", "min", "max"]))
def test_at_update_matches_numpy(case, combine):
    x, index = case
    ufunc = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}
    region = x[index]
    values = _x(region.shape, seed=7)
    want = x.copy()
    if combine == "set":
        # The winner among duplicate indices is unspecified: write values that agree.
        flat = np.arange(x.size).reshape(x.shape)[index]
        values = np.asarray(flat, np.float32) * 0.5
        want[index] = values
    else:
        ufunc[combine].at(want, index, values)

    def update(x, values, *arrays):
        ref = x.at[_with(index, arrays)]
        return getattr(ref, {"mul": "multiply"}.get(combine, combine))(values)
    _close(update(jnp.asarray(x), values, *_arrays(index)), want, )
    _close(spmdc.jit(update)(x, values, *_arrays(index)), want)


def test_at_add_accumulates_duplicates():
    x = np.zeros(5, np.float32)
    idx = np.array([1, 1, 3, 1, -1], np.int32)
    want = x.copy()
    np.add.at(want, idx, np.arange(5, dtype=np.float32))
    _close(jnp.asarray(x).at[idx].add(np.arange(5, dtype=np.float32)), want)
    _close(spmdc.jit(lambda x, i: x.at[i].add(1.0))(x, idx), np.bincount(idx % 5, minlength=5))


def test_at_with_basic_indices():
    x = _x((6, 4))
    xa = jnp.asarray(x)

    def numpy_set(index, v):
        y = x.copy()
        y[index] = v
        return y
    _close(xa.at[2:5].set(0), numpy_set(slice(2, 5), 0))
    _close(xa.at[::2].set(np.arange(4, dtype=np.float32)), numpy_set(slice(None, None, 2),
                                                                   np.arange(4)))
    _close(xa.at[::-1, 1].set(np.arange(6)), numpy_set((slice(None, None, -1), 1), np.arange(6)))
    _close(xa.at[1].add(10), x + 10 * (np.arange(6) == 1)[:, None])
    _close(xa.at[...].set(3), np.full((6, 4), 3))
    _close(xa.at[:].multiply(2), 2 * x)
    _close(xa.at[:, None, 1:3].max(0.0), numpy_set((slice(None), slice(1, 3)),
                                                     np.maximum(x[:, 1:3], 0)))
    _close(jnp.asarray(np.float32(2)).at[()].set(5), np.float32(5))
    _close(jnp.asarray(np.float32(2)).at[...].add(5), np.float32(7))


def test_at_with_traced_scalar_index_under_jit():
    x = _x((5, 3))
    f = spmdc.jit(lambda x, i, v: x.at[i].add(v))
    for i in (0, 3, -1, -5):
        want = x.copy()
        want[i] += 2.0
        _close(f(x, i, 2.0), want)
    _close(f(x, 5, 2.0), x)                  # out of bounds: dropped
    _close(spmdc.jit(lambda x, i: x.at[i, 1:].set(0.0))(x, 2),
           np.where((np.arange(5)[:, None] == 2) & (np.arange(3) >= 1), 0, x))


def test_at_out_of_bounds_updates_are_dropped():
    x = np.arange(4, dtype=np.float32)
    idx = np.array([0, 4, 9, -5, -4], np.int32)          # only 0 and -4 (= 0) are inside
    _close(jnp.asarray(x).at[idx].set(-1.0), np.array([-1, 1, 2, 3]))
    _close(spmdc.jit(lambda x, i: x.at[i].add(1.0))(x, idx), np.array([2, 1, 2, 3]))


def test_at_values_broadcast_and_convert():
    x = np.zeros((3, 4), np.int32)
    y = jnp.asarray(x).at[np.array([0, 2])].set(np.array([[2.7, -1.2, 3.0, 4.0]]))
    assert y.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(y), [[2, -1, 3, 4], [0, 0, 0, 0], [2, -1, 3, 4]])
    z = jnp.asarray(x).at[1:].add(np.ones((1, 1, 4)))        # extra leading 1s are dropped
    np.testing.assert_array_equal(np.asarray(z), [[0] * 4, [1] * 4, [1] * 4])
    with pytest.raises(ValueError, match="cannot broadcast"):
        jnp.asarray(x).at[np.array([0, 1])].set(np.ones(3))


def test_at_get_equals_getitem():
    x = _x((4, 5))
    xa = jnp.asarray(x)
    for index in [(np.array([1, -1]), slice(1, 4)), 2, (slice(None), [0, 0, 3]), (None, 1)]:
        _close(xa.at[index].get(), np.asarray(xa[index]))
        _close(xa.at[index].get(), x[index])


# --- vmap ---------------------------------------------------------------------------------------

@SETTINGS
@given(index_case(), st.sampled_from(["x", "indices", "both"]), st.booleans())
def test_vmap_of_any_index_pattern_matches_loop(case, batched, update):
    x, index = case
    rng = np.random.default_rng(0)
    arrays = _arrays(index)
    xs = np.stack([x, x[::-1].copy() if x.shape[0] > 1 else 2 * x, -x])
    arrays_b = [np.stack([a, rng.permutation(a.ravel()).reshape(a.shape), -a - 1])
                for a in arrays]

    def f(x, *arrays):
        idx = _with(index, arrays)
        return x.at[idx].add(1.0) if update else x[idx]

    def np_f(x, *arrays):
        idx = _with(index, arrays)
        if not update:
            return x[idx]
        y = x.copy()
        np.add.at(y, idx, 1.0)
        return y
    x_axis = 0 if batched in ("x", "both") else None
    i_axis = 0 if batched in ("indices", "both") else None
    # an unmapped x reaches f as given (Note [unmapped arguments]), so it is an Array
    got = spmdc.vmap(f, in_axes=(x_axis,) + (i_axis,) * len(arrays))(
        xs if x_axis == 0 else jnp.asarray(x), *(arrays_b if i_axis == 0 else arrays))
    want = np.stack([np_f(xs[b] if x_axis == 0 else x,
                          *([a[b] for a in arrays_b] if i_axis == 0 else arrays))
                     for b in range(3)])
    _close(got, want)


def test_vmap_indexing_matches_loop():
    xs = _x((3, 5, 4))
    idx = np.array([[0, -1], [4, 2], [1, 1]], np.int32)     # one index array per example
    loop = np.stack([xs[b][idx[b], 1:] for b in range(3)])
    _close(spmdc.vmap(lambda x, i: x[i, 1:])(xs, idx), loop)                    # both
    _close(spmdc.vmap(lambda x: x[idx[0], 1:])(xs), xs[:, idx[0], 1:])          # x only
    _close(spmdc.vmap(lambda i: jnp.asarray(xs[0])[i, 1:])(idx),                 # indices only
           np.stack([xs[0][i, 1:] for i in idx]))
    xt, cols = xs.transpose(1, 0, 2), idx[:, 0] % 4           # batch along axis 1
    _close(spmdc.vmap(lambda x, i: x[:, [i, 0]], in_axes=(1, 0))(xt, cols),
           np.stack([xt[:, b][:, [cols[b], 0]] for b in range(3)]))


def test_vmap_at_update_matches_loop():
    xs = _x((3, 5))
    idx = np.array([[0, 4], [2, 2], [-1, 1]], np.int32)
    vs = _x((3, 2), seed=1)

    def loop(fn):
        return np.stack([fn(xs[b], idx[b], vs[b]) for b in range(3)])

    def np_add(x, i, v):
        y = x.copy()
        np.add.at(y, i, v)
        return y
    _close(spmdc.vmap(lambda x, i, v: x.at[i].add(v))(xs, idx, vs), loop(np_add))
    _close(spmdc.vmap(lambda i, v: jnp.asarray(xs[0]).at[i].add(v))(idx, vs),
           np.stack([np_add(xs[0], idx[b], vs[b]) for b in range(3)]))
    _close(spmdc.vmap(lambda x, v: x.at[idx[0]].add(v))(xs, vs),
           np.stack([np_add(xs[b], idx[0], vs[b]) for b in range(3)]))
    scalar = np.array([4, 0, 2], np.int32)
    _close(spmdc.vmap(lambda x, i: x.at[i].set(-1.0))(xs, scalar),
           np.where(np.arange(5) == scalar[:, None], -1, xs))


# --- grad ---------------------------------------------------------------------------------------

def test_grad_of_gather():
    x = _x((5, 3))
    idx = np.array([0, 2, 2, -1, 7], np.int32)      # a duplicate and a clamped index
    rows = np.clip(np.where(idx < 0, idx + 5, idx), 0, 4)
    want = np.zeros_like(x)
    np.add.at(want, rows, 2 * x[rows])
    _close(spmdc.grad(lambda x: jnp.sum(x[idx] ** 2))(x), want)
    _close(spmdc.grad(lambda x, i: jnp.sum(x[i] ** 2))(x, idx), want)
    col = np.zeros_like(x)
    np.add.at(col, (slice(None), np.array([1, 1])), 2 * x[:, [1, 1]])
    _close(spmdc.grad(lambda x: jnp.sum(x[:, [1, 1]] ** 2))(x), col)


def test_grad_of_at_set_and_add():
    x = _x((5, 3))
    w = _x((5, 3), seed=2)
    idx = np.array([4, 0, -2], np.int32)
    v = _x((3, 3), seed=3)

    def f(x, v):
        return jnp.sum(x.at[idx].set(v) * w)
    gx, gv = spmdc.grad(f, argnums=(0, 1))(x, v)
    rows = idx % 5
    mask = np.ones_like(x)
    mask[rows] = 0
    _close(gx, w * mask)            # overwritten entries get no cotangent
    _close(gv, w[rows])
    gx, gv = spmdc.grad(lambda x, v: jnp.sum(jnp.sin(x.at[idx, 1].add(v)) * w),
                        argnums=(0, 1))(x, v[:, 0])
    y = x.copy()
    np.add.at(y, (idx, 1), v[:, 0])
    _close(gx, np.cos(y) * w)
    _close(gv, (np.cos(y) * w)[idx, 1])
    # A scalar value broadcast over the region: its gradient sums over it.
    _close(spmdc.grad(lambda s: jnp.sum(jnp.asarray(x).at[1:3].set(s) * w))(1.0),
           w[1:3].sum())


def test_grad_composes_with_jit_and_vmap():
    xs = _x((3, 5))
    idx = np.array([[0, 0], [4, 1], [-1, 2]], np.int32)

    def loss(x, i):
        return jnp.sum(x[i] ** 2) + jnp.sum(x.at[i].set(0.0))

    def want(x, i):
        g = np.ones_like(x)
        g[i] = 0
        np.add.at(g, i, 2 * x[i])
        return g
    got = spmdc.jit(spmdc.vmap(spmdc.grad(loss)))(xs, idx)
    _close(got, np.stack([want(xs[b], idx[b]) for b in range(3)]))


def test_grad_matches_finite_differences():
    x = _x((4, 3)).astype(np.float32)
    idx = np.array([[1, 3], [0, 1]], np.int32)

    def f(x):
        return jnp.sum(jnp.tanh(x[idx, ::-1]) * x.at[idx[0], 0].add(x[2, 1])[idx[1]].sum())
    g = np.asarray(spmdc.grad(f)(x))
    eps = 1e-2
    for k in [(0, 0), (1, 2), (3, 0), (2, 1)]:
        e = np.zeros_like(x)
        e[k] = eps
        fd = (float(f(jnp.asarray(x + e))) - float(f(jnp.asarray(x - e)))) / (2 * eps)
        np.testing.assert_allclose(g[k], fd, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("shape,axis", [((3, 5), 0), ((3, 5), 1), ((2, 4, 1), 0),
                                        ((2, 4, 1), -2)])
@pytest.mark.parametrize("index", [0, [1, 0]])
def test_take_along_an_axis_of_an_array_with_more_dimensions(shape, axis, index):
    # Regression: take built an index tuple that stopped at ``axis``, which the indexing
    # plan rejected ("too many indices") for any array with dimensions after it.
    x = _x(shape)
    want = np.take(x, index, axis=axis)
    np.testing.assert_array_equal(jnp.take(x, index, axis=axis), want)
    np.testing.assert_array_equal(spmdc.jit(lambda v: jnp.take(v, index, axis=axis))(x), want)


def test_take_along_a_leading_axis_of_a_matrix():
    # Regression: take() indexed only up to ``axis`` and advanced indexing then refused
    # the index as "too many indices" whenever axis was not the last one.
    b = np.arange(15.0, dtype=np.float32).reshape(5, 3)
    rows = np.array([4, 0, 2], np.int32)
    for axis in (0, -2):
        np.testing.assert_array_equal(np.asarray(jnp.take(b, rows, axis=axis)), b[rows])
        np.testing.assert_array_equal(
            np.asarray(spmdc.jit(lambda x, i, a=axis: jnp.take(x, i, axis=a))(b, rows)), b[rows])
    c = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.asarray(jnp.take(c, np.array([2, 0]), axis=1)),
                                  np.take(c, [2, 0], axis=1))
