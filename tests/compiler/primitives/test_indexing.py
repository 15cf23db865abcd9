"""gather and scatter: the NumPy references against plain NumPy indexing, then lowering,
vmap and grad against those references (tests/primcheck.py), for the patterns NumPy
indexing and ``.at[...]`` produce."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from primcheck import check_grad, check_lowering, check_vmap, eqn_func

import spmdc.compiler  # noqa: F401  (registers every primitive)
from spmdc.compiler.builder import Builder
from spmdc.compiler.ir import TensorType, check, parse
from spmdc.compiler.primitives.core import ShapeError
from spmdc.compiler.primitives.indexing import gather_p, scatter_p

SETTINGS = settings(max_examples=10, deadline=None)


# --- index patterns: (gather params, scatter params) as the frontend would build them -----

def take_params(ndim: int, axis: int, n_batch: int) -> tuple[dict, dict]:
    """``x[(:,)*axis, idx]`` with ``idx`` of rank ``n_batch`` (indices: idx[..., None])."""
    offset = tuple(range(axis)) + tuple(range(axis + n_batch, n_batch + ndim - 1))
    common = dict(collapsed=(axis,), index_map=(axis,), offset=offset)
    return _params(**common)


def point_params(ndim: int, k: int, n_batch: int) -> tuple[dict, dict]:
    """``x[i_0, ..., i_{k-1}]`` with index arrays of rank ``n_batch`` stacked last."""
    return _params(collapsed=tuple(range(k)), index_map=tuple(range(k)),
                   offset=tuple(range(n_batch, n_batch + ndim - k)))


def _params(collapsed, index_map, offset):
    gather = dict(offset_dims=offset, collapsed_slice_dims=collapsed, start_index_map=index_map)
    scatter = dict(update_window_dims=offset, inserted_window_dims=collapsed,
                   scatter_dims_to_operand_dims=index_map)
    return gather, scatter


def _rng(seed):
    return np.random.default_rng(seed)


def slice_sizes(shape, collapsed) -> tuple[int, ...]:
    return tuple(1 if d in collapsed else n for d, n in enumerate(shape))


def gathered(x, indices, gp) -> np.ndarray:
    return gather_p.impl(x, indices, **gp, slice_sizes=slice_sizes(x.shape,
                                                                   gp["collapsed_slice_dims"]))


@st.composite
def take_case(draw, oob: bool = True):
    """An operand, an axis, and an index array along it (maybe out of bounds)."""
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    axis = draw(st.integers(0, ndim - 1))
    idx_shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=2)))
    low, high = (-2, shape[axis] + 1) if oob else (0, shape[axis] - 1)
    idx = np.array(draw(st.lists(st.integers(low, high), min_size=int(np.prod(idx_shape)),
                                 max_size=int(np.prod(idx_shape))))).reshape(idx_shape)
    seed = draw(st.integers(0, 2**16))
    x = np.random.default_rng(seed).normal(size=shape)
    return x, axis, idx.astype(np.int32), seed


# --- the references are NumPy indexing ----------------------------------------------------------

@SETTINGS
@given(take_case())
def test_gather_reference_is_take_with_clamping(case):
    x, axis, idx, _ = case
    gp, _ = take_params(x.ndim, axis, idx.ndim)
    want = np.take(x, np.clip(idx, 0, x.shape[axis] - 1), axis=axis)
    np.testing.assert_array_equal(gathered(x, idx[..., None], gp), want)
    # mode='fill': out-of-bounds windows read as zero
    filled = gather_p.impl(x, idx[..., None], **gp, mode="fill",
                           slice_sizes=slice_sizes(x.shape, (axis,)))
    inside = ((idx >= 0) & (idx < x.shape[axis])).reshape(
        (1,) * axis + idx.shape + (1,) * (x.ndim - axis - 1))
    np.testing.assert_array_equal(filled, np.where(inside, want, 0))


@SETTINGS
@given(take_case())
def test_scatter_reference_is_ufunc_at_dropping_out_of_bounds(case):
    x, axis, idx, seed = case
    gp, sp = take_params(x.ndim, axis, idx.ndim)
    updates = _rng(seed + 1).normal(size=gathered(x, idx[..., None], gp).shape)
    inside = (idx >= 0) & (idx < x.shape[axis])
    lead = (slice(None),) * axis
    moved = np.moveaxis(updates, list(range(axis, axis + idx.ndim)), list(range(idx.ndim)))
    for combine, ufunc in (("add", np.add), ("max", np.maximum), ("mul", np.multiply)):
        want = x.copy()
        for pos in zip(*np.nonzero(inside), strict=True):   # one update slab at a time
            view = want[lead + (idx[pos],)]
            want[lead + (idx[pos],)] = ufunc(view, moved[pos])
        got = scatter_p.impl(x, idx[..., None], updates, **sp, combine=combine)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    clipped = scatter_p.impl(x, idx[..., None], updates, **sp, combine="add", mode="clip")
    want = x.copy()
    np.add.at(want, lead + (np.clip(idx, 0, x.shape[axis] - 1),), updates)
    np.testing.assert_allclose(clipped, want, rtol=1e-12)


def test_point_gather_and_batched_rows_reference():
    x = np.arange(24.0).reshape(2, 3, 4)
    i, j = np.array([[0, 1], [1, 1]]), np.array([[2, 0], [5, 1]])      # 5 clamps to 2
    gp, _ = point_params(3, 2, 2)
    got = gather_p.impl(x, np.stack([i, j], -1), **gp, slice_sizes=(1, 1, 4))
    np.testing.assert_array_equal(got, x[i, np.clip(j, 0, 2)])
    # out[b, k] = y[b, idx[b, k]] through a batching-dimension pair
    y, idx = np.arange(12.0).reshape(3, 4), np.array([[3, 0], [1, 1], [2, 9]])
    got = gather_p.impl(y, idx[..., None], offset_dims=(), collapsed_slice_dims=(1,),
                        start_index_map=(1,), slice_sizes=(1, 1), operand_batching_dims=(0,),
                        start_indices_batching_dims=(0,))
    np.testing.assert_array_equal(got, np.take_along_axis(y, np.clip(idx, 0, 3), axis=1))


def test_window_gather_reference_clamps_the_whole_window():
    x = np.arange(10.0)
    got = gather_p.impl(x, np.array([[0], [8], [-3]]), offset_dims=(1,),
                        collapsed_slice_dims=(), start_index_map=(0,), slice_sizes=(3,))
    np.testing.assert_array_equal(got, [x[0:3], x[7:10], x[0:3]])
    # a scatter window that would stick out is dropped whole
    got = scatter_p.impl(np.zeros(5), np.array([[1], [3]]), np.ones((2, 3)),
                         update_window_dims=(1,), inserted_window_dims=(),
                         scatter_dims_to_operand_dims=(0,), combine="add")
    np.testing.assert_array_equal(got, [0, 1, 1, 1, 0])


# --- lowering, vmap, grad on the common patterns ------------------------------------------------

@SETTINGS
@given(take_case(), st.sampled_from(["clip", "fill"]))
def test_gather_take(case, mode):
    x, axis, idx, seed = case
    gp, _ = take_params(x.ndim, axis, idx.ndim)
    params = {**gp, "slice_sizes": slice_sizes(x.shape, (axis,)), "mode": mode}
    indices = idx[..., None]
    check_lowering(gather_p, [x.astype(np.float32), indices], params)
    check_grad(gather_p, [x, indices], params, second_order=True)
    rng, size = _rng(seed), 3
    xb, ib = rng.normal(size=(size, *x.shape)).astype(np.float32), \
        rng.integers(-1, x.shape[axis] + 1, size=(*indices.shape, size)).astype(np.int32)
    x32 = x.astype(np.float32)
    check_vmap(gather_p, [xb, indices], params, [0, None], size)
    check_vmap(gather_p, [x32, ib], params, [None, ib.ndim - 1], size)
    check_vmap(gather_p, [np.moveaxis(xb, 0, -1), ib], params, [x.ndim, ib.ndim - 1], size)


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 2), st.data())
def test_gather_points(ndim, n_batch, data):
    """x[i, j] (or x[i] on a vector): point gathers over the leading k dims."""
    k = data.draw(st.integers(1, ndim))
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    batch = tuple(data.draw(st.lists(st.integers(1, 3), min_size=n_batch, max_size=n_batch)))
    rng = _rng(data.draw(st.integers(0, 2**16)))
    x = rng.normal(size=shape)
    indices = np.stack([rng.integers(-1, shape[d] + 1, size=batch) for d in range(k)],
                       -1).astype(np.int32)
    gp, _ = point_params(ndim, k, n_batch)
    params = {**gp, "slice_sizes": slice_sizes(shape, tuple(range(k)))}
    check_lowering(gather_p, [x.astype(np.float32), indices], params)
    check_grad(gather_p, [x, indices], params, second_order=True)
    xb = rng.normal(size=(2, *shape)).astype(np.float32)
    ib = np.stack([indices, indices[..., ::-1] % np.array(shape[:k])[::-1]])
    check_vmap(gather_p, [xb, ib], params, [0, 0], 2)


@SETTINGS
@given(take_case(), st.sampled_from(["add", "set"]), st.sampled_from(["drop", "clip"]))
def test_scatter_take(case, combine, mode):
    x, axis, idx, seed = case
    if combine == "set":          # distinct in-bounds targets: see Note [duplicate indices]
        idx = _rng(seed).permutation(x.shape[axis])[:min(x.shape[axis], 2)].astype(np.int32)
    gp, sp = take_params(x.ndim, axis, idx.ndim)
    indices = idx[..., None]
    rng, size = _rng(seed), 3
    updates = rng.normal(size=gathered(x, indices, gp).shape)
    params = {**sp, "combine": combine, "mode": mode}
    x32, u32 = x.astype(np.float32), updates.astype(np.float32)
    check_lowering(scatter_p, [x32, indices, u32], params)
    check_grad(scatter_p, [x, indices, updates], params, second_order=True)
    xb = rng.normal(size=(size, *x.shape)).astype(np.float32)
    ub = rng.normal(size=(*updates.shape, size)).astype(np.float32)
    if combine == "set":          # each batch member keeps distinct targets
        ib = np.stack([indices, indices[::-1], indices], 1)
    else:
        ib = rng.integers(-1, x.shape[axis] + 1, size=(indices.shape[0], size,
                                                       *indices.shape[1:])).astype(np.int32)
    check_vmap(scatter_p, [xb, indices, u32], params, [0, None, None], size)
    check_vmap(scatter_p, [x32, ib, u32], params, [None, 1, None], size)
    check_vmap(scatter_p, [x32, indices, ub], params, [None, None, ub.ndim - 1], size)
    check_vmap(scatter_p, [xb, ib, ub], params, [0, 1, ub.ndim - 1], size)


@SETTINGS
@given(st.integers(2, 5), st.integers(1, 6), st.sampled_from(["add", "mul", "min", "max"]),
       st.integers(0, 2**16))
def test_scatter_duplicates(n, k, combine, seed):
    """Rows hit several times combine every update (exactly, on small integers)."""
    rng = _rng(seed)
    x = rng.integers(-3, 4, size=(n, 2)).astype(np.int32)
    indices = rng.integers(0, n, size=(k, 1)).astype(np.int32)
    updates = rng.integers(-3, 4, size=(k, 2)).astype(np.int32)
    params = dict(update_window_dims=(1,), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,), combine=combine)
    check_lowering(scatter_p, [x, indices, updates], params)
    check_lowering(scatter_p, [x.astype(np.float32), indices, updates.astype(np.float32)],
                   params)
    if combine == "add":
        check_grad(scatter_p, [x.astype(np.float64), indices, updates.astype(np.float64)],
                   params, second_order=True)


def test_batching_dims_lower_and_differentiate():
    rng = _rng(0)
    y, idx = rng.normal(size=(3, 4)), np.array([[3, 0], [1, 1], [2, 9]], np.int32)[..., None]
    gp = dict(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
              slice_sizes=(1, 1), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    check_lowering(gather_p, [y.astype(np.float32), idx], gp)
    check_grad(gather_p, [y, idx], gp, second_order=True)
    check_vmap(gather_p, [rng.normal(size=(3, 4, 2)).astype(np.float32), idx], gp, [2, None], 2)
    sp = dict(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
              operand_batching_dims=(0,), scatter_indices_batching_dims=(0,), combine="add")
    u = rng.normal(size=(3, 2))
    check_lowering(scatter_p, [y.astype(np.float32), idx, u.astype(np.float32)], sp)
    check_grad(scatter_p, [y, idx, u], sp, second_order=True)


# --- IR text, errors ----------------------------------------------------------------------------

def test_ir_round_trip():
    f = eqn_func(scatter_p, [TensorType((5, 3), np.dtype(np.float32)),
                             TensorType((2, 1), np.dtype(np.int32)),
                             TensorType((2, 3), np.dtype(np.float32))],
                 dict(update_window_dims=(1,), inserted_window_dims=(0,),
                      scatter_dims_to_operand_dims=(0,), combine="add"))
    text = str(f)
    assert "scatter(%0, %1, %2) {update_window_dims=(1,)" in text and "combine='add'" in text
    assert str(check(parse(text))) == text


@pytest.mark.parametrize("params, fragment", [
    (dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1),
          slice_sizes=(1, 3)), "index vector"),
    (dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
          slice_sizes=(2, 3)), "must be 1 in collapsed"),
    (dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
          slice_sizes=(1, 4)), "do not fit operand"),
    (dict(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,),
          slice_sizes=(1, 3), mode="wrap"), "mode='wrap'"),
])
def test_gather_shape_errors(params, fragment):
    b = Builder()
    x, i = b.input(TensorType((5, 3), np.dtype(np.float32))), \
        b.input(TensorType((2, 1), np.dtype(np.int32)))
    with pytest.raises(ShapeError, match=fragment):
        b.gather(x, i, **params)


def test_scatter_shape_errors_and_float_indices():
    b = Builder()
    x = b.input(TensorType((5, 3), np.dtype(np.float32)))
    i = b.input(TensorType((2, 1), np.dtype(np.int32)))
    u = b.input(TensorType((4, 3), np.dtype(np.float32)))
    dims = dict(update_window_dims=(1,), inserted_window_dims=(0,),
                scatter_dims_to_operand_dims=(0,))
    with pytest.raises(ShapeError, match="batch shape"):
        b.scatter(x, i, u, **dims)
    with pytest.raises(ShapeError, match="combine='sub'"):
        b.scatter(x, i, b.input(TensorType((2, 3), np.dtype(np.float32))), **dims, combine="sub")
    with pytest.raises(ShapeError, match="indices must be integers"):
        b.gather(x, x, offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0, 1, 2),
                 slice_sizes=(1, 1))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("mode", ["drop", "clip"])
def test_scatter_mul_grad_with_repeated_indices_and_zero_updates(seed, mode):
    rng = _rng(seed)
    x = rng.normal(size=(4, 2))
    indices = rng.integers(-1, 5, size=(6, 1)).astype(np.int32)    # repeats, out of range
    updates = rng.normal(size=(6, 2))
    params = dict(update_window_dims=(1,), inserted_window_dims=(0,),
                  scatter_dims_to_operand_dims=(0,), combine="mul", mode=mode)
    check_grad(scatter_p, [x, indices, updates], params, second_order=True, seed=seed)
    # Zero updates (some elements get two or more): the gradient is exact; its own
    # derivative is not where two zeros meet (Note [duplicate indices]).
    updates[rng.random(size=updates.shape) < 0.3] = 0.0
    check_grad(scatter_p, [x, indices, updates], params, seed=seed)
