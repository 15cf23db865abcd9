"""Reductions, argmax/argmin, dot_general and the cumulative scans (primitives/reductions.py
and primitives/cumulative.py) against their NumPy references: lowering, vmap (batch dims
anywhere, unbatched operands), first- and second-order grad, shape-rule errors, and the
batched IR of a vmapped matmul (one dot_general, no loop)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from primcheck import check_grad, check_lowering, check_vmap, eqn_func

import spmdc.compiler  # noqa: F401  (registers every primitive)
from spmdc.compiler.builder import Builder
from spmdc.compiler.interpreter import evaluate
from spmdc.compiler.ir import TensorType, check
from spmdc.compiler.passes.autodiff import vjp_func
from spmdc.compiler.passes.cleanup import cleanup
from spmdc.compiler.passes.vmap import BatchAxis, vmap_func
from spmdc.compiler.primitives import cumulative as cum
from spmdc.compiler.primitives import reductions as red
from spmdc.compiler.primitives.core import ShapeError
from spmdc.runtime.executable import run_func

F32, I32, F64, BOOL = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.float64),
                       np.dtype(np.bool_))
FEW = settings(max_examples=6, deadline=None)
seeds = st.integers(0, 2**32 - 1)
shapes = st.lists(st.integers(0, 3), max_size=3).map(tuple)
ranked_shapes = st.lists(st.integers(0, 3), min_size=1, max_size=3).map(tuple)


def _array(rng, shape, dtype, nan=False, no_zeros=False):
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind == "i":      # small values: ties for arg*, and products that stay small
        return rng.integers(-3, 4, shape).astype(dtype)
    x = rng.normal(size=shape)
    if no_zeros:               # the prod rules assume no zeros; keep well away from 0
        x = np.sign(x + (x == 0)) * rng.uniform(0.5, 1.5, shape)
    if nan and x.size:
        x.reshape(-1)[rng.integers(0, x.size, rng.integers(1, 3))] = np.nan
    return x.astype(dtype)


@st.composite
def axes_of(draw, shape):
    """A subset of the axes of ``shape`` in any order."""
    perm = draw(st.permutations(range(len(shape))))
    return tuple(perm[:draw(st.integers(0, len(shape)))])


def _with_batch(rng, x_shape, dtype, dim, size, **kw):
    shape = list(x_shape)
    shape.insert(dim, size)
    return _array(rng, tuple(shape), dtype, **kw)


# --- reduce_* --------------------------------------------------------------------------------

REDUCTIONS = [(red.reduce_sum_p, F32), (red.reduce_sum_p, I32),
              (red.reduce_prod_p, F32), (red.reduce_prod_p, I32),
              (red.reduce_max_p, F32), (red.reduce_max_p, I32), (red.reduce_max_p, BOOL),
              (red.reduce_min_p, F32), (red.reduce_min_p, I32), (red.reduce_min_p, BOOL),
              (red.reduce_and_p, BOOL), (red.reduce_or_p, BOOL)]
_ids = [f"{p.name}-{d}" for p, d in REDUCTIONS]


@pytest.mark.parametrize("prim,dtype", REDUCTIONS, ids=_ids)
@FEW
@given(data=st.data(), shape=shapes, seed=seeds)
def test_reduce_lowering(prim, dtype, data, shape, seed):
    rng = np.random.default_rng(seed)
    nan = prim in (red.reduce_max_p, red.reduce_min_p) and data.draw(st.booleans())
    x = _array(rng, shape, dtype, nan=nan)
    check_lowering(prim, [x], {"axes": data.draw(axes_of(shape))})


@pytest.mark.parametrize("prim,dtype", REDUCTIONS, ids=_ids)
@FEW
@given(data=st.data(), shape=shapes, seed=seeds, size=st.integers(1, 3))
def test_reduce_vmap(prim, dtype, data, shape, seed, size):
    rng = np.random.default_rng(seed)
    dim = data.draw(st.integers(0, len(shape)))
    x = _with_batch(rng, shape, dtype, dim, size)
    check_vmap(prim, [x], {"axes": data.draw(axes_of(shape))}, [dim], size)


@pytest.mark.parametrize("prim", [red.reduce_sum_p, red.reduce_prod_p, red.reduce_max_p,
                                  red.reduce_min_p], ids=lambda p: p.name)
@FEW
@given(data=st.data(), shape=shapes, seed=seeds)
def test_reduce_grad(prim, data, shape, seed):
    rng = np.random.default_rng(seed)
    x = _array(rng, shape, F64, no_zeros=prim is red.reduce_prod_p)
    with np.errstate(divide="ignore", invalid="ignore"):   # max over an empty axis: 0/0
        check_grad(prim, [x], {"axes": data.draw(axes_of(shape))}, second_order=True)


@pytest.mark.parametrize("prim,dtype,identity", [
    (red.reduce_sum_p, F32, 0), (red.reduce_prod_p, I32, 1),
    (red.reduce_max_p, F32, -np.inf), (red.reduce_max_p, I32, np.iinfo(np.int32).min),
    (red.reduce_max_p, BOOL, False), (red.reduce_min_p, F32, np.inf),
    (red.reduce_min_p, I32, np.iinfo(np.int32).max), (red.reduce_min_p, BOOL, True),
    (red.reduce_and_p, BOOL, True), (red.reduce_or_p, BOOL, False)],
    ids=lambda v: getattr(v, "name", str(v)))
def test_reduce_over_empty_axis_gives_identity(prim, dtype, identity):
    x = np.zeros((2, 0, 3), dtype)
    func = eqn_func(prim, [TensorType(x.shape, dtype)], {"axes": (1,)})
    want = np.full((2, 3), identity, dtype)
    np.testing.assert_array_equal(evaluate(func, x)[0], want)
    np.testing.assert_array_equal(run_func(func, x)[0], want)


def test_reduce_max_splits_cotangent_among_ties():
    b = Builder()
    x = b.input(TensorType((2, 4), F32))
    func = b.build([b.reduce_max(x, axes=(1,))])
    grad = cleanup(vjp_func(func, [True]))
    xs = np.array([[1, 3, 3, 2], [5, 0, 5, 5]], F32)
    _, g = evaluate(grad, xs, np.array([1, 6], F32))
    np.testing.assert_allclose(g, [[0, 0.5, 0.5, 0], [2, 0, 2, 2]])


# --- argmax / argmin -------------------------------------------------------------------------

ARGS = [(p, d) for p in (red.argmax_p, red.argmin_p) for d in (F32, I32, BOOL)]


@pytest.mark.parametrize("prim,dtype", ARGS, ids=[f"{p.name}-{d}" for p, d in ARGS])
@FEW
@given(data=st.data(), shape=ranked_shapes, seed=seeds, nan=st.booleans())
def test_arg_lowering(prim, dtype, data, shape, seed, nan):
    axis = data.draw(st.integers(0, len(shape) - 1))
    shape = shape[:axis] + (max(shape[axis], 1),) + shape[axis + 1:]   # size 0 is an error
    x = _array(np.random.default_rng(seed), shape, dtype, nan=nan)
    check_lowering(prim, [x], {"axis": axis, "index_dtype": I32})


@pytest.mark.parametrize("prim", [red.argmax_p, red.argmin_p], ids=lambda p: p.name)
def test_arg_ties_and_nans_follow_numpy(prim):
    x = np.array([[1, 7, 7, -2, -2], [np.nan, 3, np.nan, 9, -9], [4, 4, 4, 4, 4],
                  [-np.inf, np.inf, 0, -np.inf, np.inf]], F32)
    want = {"argmax": [1, 0, 0, 1], "argmin": [3, 0, 0, 0]}[prim.name]
    func = eqn_func(prim, [TensorType(x.shape, F32)], {"axis": 1, "index_dtype": I32})
    np.testing.assert_array_equal(evaluate(func, x)[0], want)
    np.testing.assert_array_equal(run_func(func, x)[0], want)


@pytest.mark.parametrize("prim", [red.argmax_p, red.argmin_p], ids=lambda p: p.name)
@FEW
@given(data=st.data(), shape=ranked_shapes, seed=seeds, size=st.integers(1, 3))
def test_arg_vmap(prim, data, shape, seed, size):
    axis = data.draw(st.integers(0, len(shape) - 1))
    shape = shape[:axis] + (max(shape[axis], 1),) + shape[axis + 1:]
    dim = data.draw(st.integers(0, len(shape)))
    x = _with_batch(np.random.default_rng(seed), shape, I32, dim, size)
    check_vmap(prim, [x], {"axis": axis, "index_dtype": I32}, [dim], size)


# --- dot_general -----------------------------------------------------------------------------

@st.composite
def dot_configs(draw):
    """Shapes and dimension numbers of a dot_general with dimensions in any order."""
    n_batch, n_contract = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    n_free_x, n_free_y = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    size = st.integers(1, 3) if draw(st.integers(0, 4)) else st.integers(0, 3)
    batch = [draw(size) for _ in range(n_batch)]
    contract = [draw(size) for _ in range(n_contract)]

    def operand(n_free):
        roles = ([("b", k) for k in range(n_batch)] + [("c", k) for k in range(n_contract)]
                 + [("f", k) for k in range(n_free)])
        roles = draw(st.permutations(roles))
        sizes = {"b": batch, "c": contract, "f": [draw(size) for _ in range(n_free)]}
        shape = tuple(sizes[r][k] for r, k in roles)
        return shape, tuple(roles.index(("c", k)) for k in range(n_contract)), \
            tuple(roles.index(("b", k)) for k in range(n_batch))

    (xs, xc, xb), (ys, yc, yb) = operand(n_free_x), operand(n_free_y)
    return xs, ys, {"contract": (xc, yc), "batch": (xb, yb)}


@FEW
@given(config=dot_configs(), seed=seeds, dtype=st.sampled_from([F32, I32]))
def test_dot_general_lowering(config, seed, dtype):
    xs, ys, params = config
    rng = np.random.default_rng(seed)
    check_lowering(red.dot_general_p, [_array(rng, xs, dtype), _array(rng, ys, dtype)], params,
                   atol=1e-5)


@settings(max_examples=12, deadline=None)
@given(config=dot_configs(), seed=seeds, data=st.data())
def test_dot_general_vmap(config, seed, data):
    xs, ys, params = config
    rng = np.random.default_rng(seed)
    which = data.draw(st.sampled_from(["lhs", "rhs", "both"]))
    dx = data.draw(st.integers(0, len(xs))) if which != "rhs" else None
    dy = data.draw(st.integers(0, len(ys))) if which != "lhs" else None
    size = data.draw(st.integers(1, 3))
    x = _array(rng, xs, F32) if dx is None else _with_batch(rng, xs, F32, dx, size)
    y = _array(rng, ys, F32) if dy is None else _with_batch(rng, ys, F32, dy, size)
    check_vmap(red.dot_general_p, [x, y], params, [dx, dy], size, atol=1e-5)


@settings(max_examples=10, deadline=None)
@given(config=dot_configs(), seed=seeds)
def test_dot_general_grad(config, seed):
    xs, ys, params = config
    rng = np.random.default_rng(seed)
    check_grad(red.dot_general_p, [_array(rng, xs, F64), _array(rng, ys, F64)], params,
               second_order=True)


@pytest.mark.parametrize("in_dims", [(0, None), (None, 0), (0, 0), (1, 1), (None, 1)])
def test_vmapped_matmul_is_one_dot_general(in_dims):
    b = Builder("matmul")
    x, w = b.input(TensorType((3, 4), F32)), b.input(TensorType((4, 5), F32))
    func = check(b.build([b.dot_general(x, w, contract=((1,), (0,)), batch=((), ()))]))
    batched = check(vmap_func(func, in_dims, BatchAxis(7), [0]))
    dots = [e for e in batched.eqns if e.prim is red.dot_general_p]
    assert len(dots) == 1, str(batched)
    assert len(batched.eqns) <= 2, str(batched)    # at most one transpose to out_axes
    both = None not in in_dims
    assert (dots[0].params["batch"] != ((), ())) == both, str(batched)
    rng = np.random.default_rng(0)
    args = [rng.normal(size=t.shape).astype(F32) for t in batched.in_types]
    xs = [a if d is None else np.moveaxis(a, d, 0) for a, d in zip(args, in_dims, strict=True)]
    want = np.stack([(xs[0][i] if in_dims[0] is not None else xs[0])
                     @ (xs[1][i] if in_dims[1] is not None else xs[1]) for i in range(7)])
    np.testing.assert_allclose(run_func(batched, *args)[0], want, rtol=1e-5, atol=1e-5)


# --- cumulative scans ------------------------------------------------------------------------

SCANS = [(cum.cumsum_p, F32), (cum.cumsum_p, I32), (cum.cumprod_p, F32), (cum.cumprod_p, I32),
         (cum.cummax_p, F32), (cum.cummax_p, I32), (cum.cummax_p, BOOL),
         (cum.cummin_p, F32), (cum.cummin_p, BOOL)]


@pytest.mark.parametrize("prim,dtype", SCANS, ids=[f"{p.name}-{d}" for p, d in SCANS])
@settings(max_examples=4, deadline=None)
@given(data=st.data(), shape=ranked_shapes, seed=seeds, reverse=st.booleans())
def test_scan_lowering_and_vmap(prim, dtype, data, shape, seed, reverse):
    rng = np.random.default_rng(seed)
    params = {"axis": data.draw(st.integers(0, len(shape) - 1)), "reverse": reverse}
    check_lowering(prim, [_array(rng, shape, dtype)], params)
    dim, size = data.draw(st.integers(0, len(shape))), data.draw(st.integers(1, 3))
    check_vmap(prim, [_with_batch(rng, shape, dtype, dim, size)], params, [dim], size)


@pytest.mark.parametrize("prim", [cum.cumsum_p, cum.cumprod_p, cum.cummax_p, cum.cummin_p],
                         ids=lambda p: p.name)
@settings(max_examples=4, deadline=None)
@given(data=st.data(), shape=ranked_shapes, seed=seeds, reverse=st.booleans())
def test_scan_grad(prim, data, shape, seed, reverse):
    x = _array(np.random.default_rng(seed), shape, F64, no_zeros=prim is cum.cumprod_p)
    params = {"axis": data.draw(st.integers(0, len(shape) - 1)), "reverse": reverse}
    check_grad(prim, [x], params, second_order=True)


def test_cummax_grad_matches_prefix_max_ties():
    # out_i = max(x_0..x_i), so each out_i's cotangent splits evenly among prefix ties.
    b = Builder()
    x = b.input(TensorType((4,), F32))
    grad = cleanup(vjp_func(b.build([b.cummax(x, axis=0, reverse=False)]), [True]))
    _, g = evaluate(grad, np.array([1, 3, 3, 2], F32), np.ones(4, F32))
    np.testing.assert_allclose(g, [1, 2, 1, 0])


# --- shape-rule errors -----------------------------------------------------------------------

@pytest.mark.parametrize("prim,in_types,params,fragment", [
    (red.reduce_sum_p, [TensorType((2, 3), F32)], {"axes": (2,)}, "out of range"),
    (red.reduce_max_p, [TensorType((2, 3), F32)], {"axes": (0, 0)}, "repeated"),
    (red.reduce_sum_p, [TensorType((2,), BOOL)], {"axes": (0,)}, "does not accept dtype bool"),
    (red.reduce_and_p, [TensorType((2,), F32)], {"axes": (0,)}, "does not accept dtype f32"),
    (red.argmax_p, [TensorType((2, 0), F32)], {"axis": 1, "index_dtype": I32}, "size 0"),
    (red.argmin_p, [TensorType((), F32)], {"axis": 0, "index_dtype": I32}, "out of range"),
    (red.argmax_p, [TensorType((3,), F32)], {"axis": 0, "index_dtype": F32}, "index_dtype"),
    (red.dot_general_p, [TensorType((2, 3), F32), TensorType((4, 5), F32)],
     {"contract": ((1,), (0,)), "batch": ((), ())}, "cannot contract"),
    (red.dot_general_p, [TensorType((2, 3), F32), TensorType((3,), I32)],
     {"contract": ((1,), (0,)), "batch": ((), ())}, "one dtype"),
    (red.dot_general_p, [TensorType((3, 3), F32), TensorType((3,), F32)],
     {"contract": ((1, 0), (0,)), "batch": ((), ())}, "unequal"),
    (cum.cumsum_p, [TensorType((), F32)], {"axis": 0, "reverse": False}, "out of range"),
], ids=lambda v: getattr(v, "name", None))
def test_shape_errors(prim, in_types, params, fragment):
    with pytest.raises(ShapeError, match=fragment) as info:
        eqn_func(prim, in_types, params)
    assert prim.name in str(info.value)
