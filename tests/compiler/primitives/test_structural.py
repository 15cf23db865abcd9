"""Structural primitives (primitives/structural.py and primitives/dynamic_slicing.py)
against their NumPy references: lowering, vmap (in_dims with None, non-zero dims, batched
start indices) and first- and second-order grad; plus shape-rule errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from primcheck import check_grad, check_lowering, check_vmap, eqn_func

import spmdc.compiler  # noqa: F401  (registers every primitive)
from spmdc.compiler.builder import Builder
from spmdc.compiler.interpreter import evaluate
from spmdc.compiler.ir import TensorType, check, parse
from spmdc.compiler.passes.autodiff import nondifferentiable, vjp_func
from spmdc.compiler.passes.vmap import BatchAxis, vmap_func
from spmdc.compiler.primitives import dynamic_slicing as dyn
from spmdc.compiler.primitives import structural as st_prims
from spmdc.compiler.primitives.core import ShapeError

F32, I32, BOOL = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_)
DTYPES = st.sampled_from([F32, I32, BOOL])
FEW = settings(max_examples=25, deadline=None)
shapes = st.lists(st.integers(0, 3), max_size=3).map(tuple)
nonempty_rank = st.lists(st.integers(0, 3), min_size=1, max_size=3).map(tuple)


def _array(rng, shape, dtype):
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype.kind == "i":
        return rng.integers(-5, 5, shape).astype(dtype)
    return rng.normal(size=shape).astype(dtype)


def _index(rng, size):
    """A start index, sometimes out of bounds (dynamic slices clamp)."""
    return np.int32(rng.integers(-2, size + 3))


def check_all(data, prim, make, params, batched_args=None):
    """Lowering, vmap and (for float operands) grad of ``prim`` on operands ``make(rng)``.

    vmap draws an in_dim (or None) per operand; ``batched_args`` forces some operands to be
    batched (the start indices of the dynamic ops)."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31), label="seed"))
    args = make(rng)
    check_lowering(prim, args, params)

    dims = [data.draw(st.none() | st.integers(0, np.ndim(a)), label=f"in_dim {k}")
            for k, a in enumerate(args)]
    for k in batched_args or ():
        dims[k] = 0
    if all(d is None for d in dims):
        dims[0] = data.draw(st.integers(0, np.ndim(args[0])), label="in_dim 0")
    size = data.draw(st.integers(1, 3), label="axis_size")
    samples = [make(rng) for _ in range(size)]
    batched = [a if d is None else np.stack([s[k] for s in samples], axis=d)
               for k, (a, d) in enumerate(zip(args, dims, strict=True))]
    check_vmap(prim, batched, params, dims, size)

    if np.asarray(args[0]).dtype == F32:
        wide = [a.astype(np.float64) if np.asarray(a).dtype == F32 else a for a in args]
        check_grad(prim, wide, params, second_order=True)


# --- the static ops ---------------------------------------------------------------------------

@FEW
@given(st.data(), shapes, DTYPES, st.integers(0, 2))
def test_broadcast_in_dim(data, base, dtype, extra):
    rank = len(base) + extra
    dims = tuple(sorted(data.draw(st.permutations(range(rank)))[:len(base)]))
    stretch = [data.draw(st.booleans()) for _ in base]
    out = [data.draw(st.integers(0, 3)) for _ in range(rank)]
    for n, d in zip(base, dims, strict=True):
        out[d] = n
    x_shape = tuple(1 if s else n for n, s in zip(base, stretch, strict=True))
    check_all(data, st_prims.broadcast_in_dim_p, lambda r: [_array(r, x_shape, dtype)],
              dict(shape=tuple(out), broadcast_dimensions=dims))


@FEW
@given(st.data(), shapes, DTYPES)
def test_transpose(data, shape, dtype):
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    check_all(data, st_prims.transpose_p, lambda r: [_array(r, shape, dtype)],
              dict(permutation=perm))


@FEW
@given(st.data(), shapes, DTYPES)
def test_reshape(data, shape, dtype):
    size = int(np.prod(shape, dtype=np.int64))
    new = data.draw(st.sampled_from([(size,), tuple(reversed(shape)), (1, *shape, 1), ()]
                                    if size == 1 else [(size,), tuple(reversed(shape)),
                                                       (1, *shape, 1)]))
    check_all(data, st_prims.reshape_p, lambda r: [_array(r, shape, dtype)],
              dict(new_sizes=new))


@FEW
@given(st.data(), st.lists(st.integers(0, 2), max_size=3).map(tuple), DTYPES)
def test_squeeze(data, shape, dtype):
    ones = [d for d, n in enumerate(shape) if n == 1]
    dims = tuple(data.draw(st.lists(st.sampled_from(ones), unique=True)) if ones else [])
    check_all(data, st_prims.squeeze_p, lambda r: [_array(r, shape, dtype)],
              dict(dimensions=dims))


@FEW
@given(st.data(), shapes, DTYPES, st.integers(1, 2))
def test_expand_dims(data, shape, dtype, extra):
    dims = tuple(data.draw(st.permutations(range(len(shape) + extra)))[:extra])
    check_all(data, st_prims.expand_dims_p, lambda r: [_array(r, shape, dtype)],
              dict(dimensions=dims))


@FEW
@given(st.data(), shapes, DTYPES)
def test_rev(data, shape, dtype):
    dims = tuple(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True))
                 if shape else [])
    check_all(data, st_prims.rev_p, lambda r: [_array(r, shape, dtype)],
              dict(dimensions=dims))


@FEW
@given(st.data(), shapes, DTYPES, st.booleans())
def test_slice(data, shape, dtype, strided):
    starts, limits, strides = [], [], []
    for n in shape:
        starts.append(data.draw(st.integers(0, n)))
        limits.append(data.draw(st.integers(starts[-1], n)))
        strides.append(data.draw(st.integers(1, 3)))
    check_all(data, st_prims.slice_p, lambda r: [_array(r, shape, dtype)],
              dict(start_indices=tuple(starts), limit_indices=tuple(limits),
                   strides=tuple(strides) if strided else None))


@FEW
@given(st.data(), nonempty_rank, DTYPES, st.integers(1, 3))
def test_concatenate(data, shape, dtype, count):
    dim = data.draw(st.integers(0, len(shape) - 1))
    shapes_ = [shape[:dim] + (data.draw(st.integers(0, 3)),) + shape[dim + 1:]
               for _ in range(count)]
    check_all(data, st_prims.concatenate_p,
              lambda r: [_array(r, s, dtype) for s in shapes_], dict(dimension=dim))


@FEW
@given(st.data(), shapes, DTYPES)
def test_pad(data, shape, dtype):
    config = []
    for n in shape:
        lo, interior = data.draw(st.integers(-2, 2)), data.draw(st.integers(0, 2))
        core = lo + n + max(n - 1, 0) * interior
        config.append((lo, max(data.draw(st.integers(-2, 2)), -core), interior))
    check_all(data, st_prims.pad_p,
              lambda r: [_array(r, shape, dtype), _array(r, (), dtype)],
              dict(padding_config=tuple(config)))


@FEW
@given(st.data(), nonempty_rank, st.sampled_from([I32, F32]))
def test_iota(data, shape, dtype):
    dim = data.draw(st.integers(0, len(shape) - 1))
    params = dict(dtype=dtype, shape=shape, dimension=dim)
    check_lowering(st_prims.iota_p, [], params)
    want = np.arange(shape[dim]).reshape([-1 if d == dim else 1 for d in range(len(shape))])
    np.testing.assert_array_equal(st_prims.iota_p.impl(**params),
                                  np.broadcast_to(want, shape).astype(dtype))


def test_iota_under_vmap_stays_unbatched():
    # iota has no operands: vmap copies it once, unbatched, and batches only its users.
    b = Builder("f")
    x = b.input(TensorType((3,), I32))
    func = check(b.build([b.add(x, b.iota(dtype=I32, shape=(3,), dimension=0))]))
    batched = check(vmap_func(func, [1], BatchAxis(2), [0]))
    assert [e.prim.name for e in batched.eqns].count("iota") == 1
    xs = np.arange(6, dtype=np.int32).reshape(3, 2)
    np.testing.assert_array_equal(evaluate(batched, xs)[0], xs.T + np.arange(3))
    assert st_prims.iota_p in nondifferentiable


# --- the dynamic ops ----------------------------------------------------------------------------

@FEW
@given(st.data(), shapes, DTYPES, st.booleans())
def test_dynamic_slice(data, shape, dtype, batch_indices):
    sizes = tuple(data.draw(st.integers(0, n)) for n in shape)
    make = lambda r: [_array(r, shape, dtype), *(_index(r, n) for n in shape)]
    forced = [1 + data.draw(st.integers(0, len(shape) - 1))] if batch_indices and shape else []
    check_all(data, dyn.dynamic_slice_p, make, dict(slice_sizes=sizes), forced)


@FEW
@given(st.data(), shapes, DTYPES, st.booleans())
def test_dynamic_update_slice(data, shape, dtype, batch_indices):
    update = tuple(data.draw(st.integers(0, n)) for n in shape)
    make = lambda r: [_array(r, shape, dtype), _array(r, update, dtype),
                      *(_index(r, n) for n in shape)]
    forced = [2 + data.draw(st.integers(0, len(shape) - 1))] if batch_indices and shape else []
    check_all(data, dyn.dynamic_update_slice_p, make, {}, forced)


@pytest.mark.parametrize("prim", ["dynamic_slice", "dynamic_update_slice"])
def test_batched_indices_do_not_unroll(prim):
    # The batched program's size must not grow with the batch size.
    x = TensorType((5, 4), F32)
    idx = TensorType((), I32)
    if prim == "dynamic_slice":
        func = eqn_func(dyn.dynamic_slice_p, [x, idx, idx], dict(slice_sizes=(2, 3)))
        in_dims = [None, 0, 0]
    else:
        func = eqn_func(dyn.dynamic_update_slice_p, [x, TensorType((2, 3), F32), idx, idx], {})
        in_dims = [0, None, 0, 0]
    counts = {len(vmap_func(func, in_dims, BatchAxis(n), [0]).eqns) for n in (2, 7, 31)}
    assert len(counts) == 1


@pytest.mark.parametrize("prim", ["dynamic_slice", "dynamic_update_slice"])
def test_grad_through_batched_indices(prim):
    # grad of the vmapped program (the one-hot form of Note [batched start indices]) equals
    # the per-example cotangents the VJP rules define, built from the NumPy references.
    rng = np.random.default_rng(1)
    size, x_t, idx = 4, TensorType((5, 4), np.dtype(np.float64)), TensorType((), I32)
    xs = rng.normal(size=(size, 5, 4))
    rows, cols = np.array([-1, 0, 3, 9], np.int32), np.array([2, 1, 0, 5], np.int32)
    if prim == "dynamic_slice":
        func = eqn_func(dyn.dynamic_slice_p, [x_t, idx, idx], dict(slice_sizes=(2, 3)))
        args, in_dims, wrt = [xs, rows, cols], [0, 0, 0], [True, False, False]
    else:
        update = TensorType((2, 3), np.dtype(np.float64))
        func = eqn_func(dyn.dynamic_update_slice_p, [x_t, update, idx, idx], {})
        args = [xs, rng.normal(size=(size, 2, 3)), rows, cols]
        in_dims, wrt = [0, 0, 0, 0], [True, True, False, False]
    batched = check(vmap_func(func, in_dims, BatchAxis(size), [0]))
    grads = evaluate(check(vjp_func(batched, wrt)), *args,
                     w := rng.normal(size=batched.out_types[0].shape))[1:]
    for k in range(size):
        if prim == "dynamic_slice":
            want = [dyn.dynamic_update_slice_p.impl(np.zeros((5, 4)), w[k], rows[k], cols[k])]
        else:
            want = [dyn.dynamic_update_slice_p.impl(w[k], np.zeros((2, 3)), rows[k], cols[k]),
                    dyn.dynamic_slice_p.impl(w[k], rows[k], cols[k], slice_sizes=(2, 3))]
        for g, expected in zip(grads, want, strict=True):
            np.testing.assert_allclose(g[k], expected, err_msg=f"{prim}, example {k}")


def test_dynamic_slice_clamps_like_xla():
    x = np.arange(10, dtype=np.float32)
    for start, want in ((-3, [0, 1, 2]), (8, [7, 8, 9]), (4, [4, 5, 6])):
        check_lowering(dyn.dynamic_slice_p, [x, np.int32(start)], dict(slice_sizes=(3,)))
        np.testing.assert_array_equal(
            dyn.dynamic_slice_p.impl(x, np.int32(start), slice_sizes=(3,)), want)


def test_params_print_and_parse_back():
    b = Builder("f")
    x = b.input(TensorType((3, 4), F32))
    y = b.pad(x, b.reduce_sum(x, axes=(0, 1)), padding_config=((1, -1, 2), (0, 0, 0)))
    z = b.slice(y, start_indices=(0, 1), limit_indices=(3, 4), strides=None)
    w = b.iota(dtype=I32, shape=(2, 3), dimension=1)
    text = str(check(b.build([z, w])))
    assert str(parse(text)) == text


# --- shape-rule errors ---------------------------------------------------------------------------

def _fails(prim, in_types, params, match):
    with pytest.raises(ShapeError, match=match):
        prim.abstract_eval(*in_types, **params)


def test_shape_errors():
    x = TensorType((3, 4), F32)
    idx = TensorType((), I32)
    _fails(st_prims.slice_p, [x], dict(start_indices=(0, 2), limit_indices=(3, 5),
                                       strides=None), r"slice: .*do not fit f32\[3,4\]")
    _fails(st_prims.slice_p, [x], dict(start_indices=(0,), limit_indices=(3,), strides=None),
           "needs 2 start")
    _fails(st_prims.pad_p, [x, TensorType((), I32)], dict(padding_config=((0, 0, 0),) * 2),
           "padding value i32.* must be a rank-0 f32")
    _fails(st_prims.pad_p, [x, TensorType((), F32)],
           dict(padding_config=((-2, -2, 0), (0, 0, 0))), "crops more than")
    _fails(st_prims.concatenate_p, [x, TensorType((2, 4), F32)], dict(dimension=1),
           "differ in a dimension other than 1")
    _fails(st_prims.concatenate_p, [x, TensorType((3, 4), I32)], dict(dimension=0),
           "one dtype")
    _fails(st_prims.squeeze_p, [x], dict(dimensions=(0,)), "not all of size 1")
    _fails(st_prims.expand_dims_p, [x], dict(dimensions=(3,)), "out of range or repeated")
    _fails(st_prims.rev_p, [x], dict(dimensions=(1, 1)), "out of range or repeated")
    _fails(st_prims.transpose_p, [x], dict(permutation=(0, 0)), "not a permutation")
    _fails(st_prims.reshape_p, [x], dict(new_sizes=(5,)), "12 elements")
    _fails(st_prims.iota_p, [], dict(dtype=BOOL, shape=(3,), dimension=0), "not an integer")
    _fails(st_prims.iota_p, [], dict(dtype=I32, shape=(3,), dimension=1), "out of range")
    _fails(st_prims.broadcast_in_dim_p, [x], dict(shape=(3, 5), broadcast_dimensions=(0, 1)),
           "cannot broadcast")
    _fails(dyn.dynamic_slice_p, [x, idx], dict(slice_sizes=(1, 1)), "needs 2 start indices")
    _fails(dyn.dynamic_slice_p, [x, idx, TensorType((), F32)], dict(slice_sizes=(1, 1)),
           "rank-0 integers")
    _fails(dyn.dynamic_slice_p, [x, idx, idx], dict(slice_sizes=(4, 1)), "do not fit")
    _fails(dyn.dynamic_update_slice_p, [x, TensorType((3, 5), F32), idx, idx], {},
           "does not fit inside")
