"""vmap as a user API: in_axes/out_axes, named axes, nesting, closures, IR shape, errors.

Per-primitive batching rules are checked in tests/compiler/primitives/ (primcheck.check_vmap);
the pass itself on IR text in tests/compiler/ir/vmap_*.ir. Here: the frontend semantics, checked
against NumPy loops over slices.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spmdc
import spmdc.numpy as jnp
from spmdc import lax

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def stack_loop(f, args, in_axes, size, out_axis=0):
    """NumPy oracle: apply f to each slice along the mapped axes and stack the results."""
    outs = []
    for i in range(size):
        sliced = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes,
                                                                               strict=True)]
        outs.append(np.asarray(f(*sliced)))
    return np.stack(outs, axis=out_axis)


# --- in_axes / out_axes ----------------------------------------------------------------------

def test_default_axes():
    x = rand(4, 3)
    close(spmdc.vmap(jnp.sin)(x), np.sin(x))


def test_in_axes_tuple_with_none():
    x, w = rand(3, 5), rand(3)
    got = spmdc.vmap(lambda a, b: a * b, in_axes=(1, None))(x, w)
    assert got.shape == (5, 3)
    close(got, x.T * w)


def test_in_axes_list_is_a_tuple():
    x, w = rand(3, 5), rand(3)
    close(spmdc.vmap(lambda a, b: a * b, in_axes=[1, None])(x, w), x.T * w)


def test_in_axes_dict_prefix():
    params = {"w": rand(3, 2), "b": rand(6, 2)}   # b is batched, w shared
    x = rand(6, 3)

    def f(p, v):
        return v @ p["w"] + p["b"]
    got = spmdc.vmap(f, in_axes=({"w": None, "b": 0}, 0))(params, x)
    close(got, x @ params["w"] + params["b"])


def test_in_axes_nested_prefix():
    a, b, c = rand(4, 2), rand(2, 4), rand(3)
    # ((a, b), c): a on axis 0, b on axis 1, c unbatched
    got = spmdc.vmap(lambda ab, c_: ab[0] * ab[1] + c_.sum(),
                     in_axes=((0, 1), None))((a, b), c)
    close(got, a * b.T + c.sum())


def test_in_axes_prefix_covers_a_whole_subtree():
    a, b = rand(4, 2), rand(4, 3)
    got = spmdc.vmap(lambda t: t[0].sum() + t[1].sum(), in_axes=(0,))((a, b))
    close(got, a.sum(1) + b.sum(1))


def test_negative_in_axes():
    x = rand(2, 3, 5)
    got = spmdc.vmap(lambda a: a.sum(0), in_axes=-1)(x)
    close(got, stack_loop(lambda a: a.sum(0), [x], [2], 5))
    got = spmdc.vmap(lambda a: a.sum(0), in_axes=-2)(x)
    close(got, stack_loop(lambda a: a.sum(0), [x], [1], 3))


def test_negative_and_nonzero_out_axes():
    x = rand(5, 2, 3)
    close(spmdc.vmap(lambda a: a * 2, out_axes=-1)(x), np.moveaxis(x * 2, 0, -1))
    close(spmdc.vmap(lambda a: a * 2, out_axes=1)(x), np.moveaxis(x * 2, 0, 1))
    close(spmdc.vmap(lambda a: a * 2, out_axes=2)(x), np.moveaxis(x * 2, 0, 2))


def test_out_axes_pytree_prefix():
    x = rand(4, 3)
    got = spmdc.vmap(lambda a: {"s": a.sum(), "t": (a, a * 2)},
                     out_axes={"s": 0, "t": (1, -1)})(x)
    close(got["s"], x.sum(1))
    close(got["t"][0], x.T)
    close(got["t"][1], (x * 2).T)


def test_out_axes_none_for_unmapped_output():
    x, w = rand(4, 3), rand(3)
    got, shared = spmdc.vmap(lambda a, b: (a * b, b + 1), in_axes=(0, None),
                             out_axes=(0, None))(x, w)
    close(got, x * w)
    assert shared.shape == (3,)
    close(shared, w + 1)


def test_unmapped_output_is_broadcast():
    x, w = rand(4, 3), rand(3)
    got = spmdc.vmap(lambda a, b: b * 2, in_axes=(0, None))(x, w)
    assert got.shape == (4, 3)
    close(got, np.broadcast_to(w * 2, (4, 3)))
    const = spmdc.vmap(lambda a: 1.0)(x)
    assert const.shape == (4,)
    close(const, np.ones(4))
    got = spmdc.vmap(lambda a, b: b * 2, in_axes=(0, None), out_axes=1)(x, w)
    close(got, np.broadcast_to((w * 2)[:, None], (3, 4)))


def test_unmapped_arguments_reach_the_function_as_given():
    # Note [unmapped arguments]: JAX 0.10.2 passes an in_axes=None leaf through, so a
    # static int stays an int inside jit(static_argnums) and at top level alike.
    def inner(x, n):
        seen.append(type(n).__name__)
        return jnp.zeros(n) + x

    seen: list[str] = []
    f = spmdc.jit(lambda x, n: spmdc.vmap(inner, in_axes=(0, None))(x, n), static_argnums=1)
    got = f(jnp.arange(3.0), 4)
    close(got, np.broadcast_to(np.arange(3.0)[:, None], (3, 4)))
    got = spmdc.vmap(inner, in_axes=(0, None))(jnp.arange(3.0), 2)
    close(got, np.broadcast_to(np.arange(3.0)[:, None], (3, 2)))
    assert seen == ["int", "int"]
    kinds = []
    spmdc.vmap(lambda x, a, b: kinds.append((type(a).__name__, type(b).__name__)) or x,
               in_axes=(0, None, None))(jnp.ones(3), 2.5, np.ones(2))
    assert kinds == [("float", "ndarray")]
    # an unmapped traced value of an enclosing jit stays that jit's value
    close(spmdc.jit(lambda x, w: spmdc.vmap(lambda a, b: a * b, in_axes=(0, None))(x, w))(
        rand(4, 3) * 0 + 1, np.arange(3.0, dtype=np.float32)), np.tile(np.arange(3.0), (4, 1)))


def test_kwargs_are_mapped_over_axis_0():
    x, y = rand(4, 3), rand(4, 3)
    got = spmdc.vmap(lambda a, b=None: a - b, in_axes=(None,))(x[0], b=y)
    close(got, x[0] - y)
    got = spmdc.vmap(lambda a, *, scale: a * scale)(x, scale=y)
    close(got, x * y)


def test_axis_size_without_mapped_inputs():
    w = rand(3)
    got = spmdc.vmap(lambda b: b + 1, in_axes=None, axis_size=5)(w)
    assert got.shape == (5, 3)
    close(got, np.broadcast_to(w + 1, (5, 3)))
    idx = spmdc.vmap(lambda: lax.axis_index("i"), axis_name="i", axis_size=4)()
    np.testing.assert_array_equal(np.asarray(idx), np.arange(4))


def test_axis_size_agrees_with_mapped_size():
    x = rand(4, 3)
    close(spmdc.vmap(jnp.cos, axis_size=4)(x), np.cos(x))


# --- hypothesis: composite functions against stacking over slices --------------------------

def _f_affine(a, b):
    return jnp.tanh(a * 2.0 + b).sum(0)


def _f_outer(a, b):
    return jnp.exp(a[:, None] - b[None, :]).max(1)


def _f_norm(a, b):
    return (a - a.mean()) / (jnp.sqrt((b * b).sum()) + 1.0)


def _np_affine(a, b):
    return np.tanh(a * 2.0 + b).sum(0)


def _np_outer(a, b):
    return np.exp(a[:, None] - b[None, :]).max(1)


def _np_norm(a, b):
    return (a - a.mean()) / (np.sqrt((b * b).sum()) + 1.0)


COMPOSITES = [(_f_affine, _np_affine, 2), (_f_outer, _np_outer, 1), (_f_norm, _np_norm, 1)]


@st.composite
def batched_case(draw, rank):
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)))
    size = draw(st.integers(1, 4))
    axes, args = [], []
    for _ in range(2):
        ax = draw(st.one_of(st.none(), st.integers(-rank - 1, rank)))
        axes.append(ax)
        if ax is None:
            args.append(rand(*shape))
        else:
            pos = ax % (rank + 1)
            args.append(rand(*(shape[:pos] + (size,) + shape[pos:])))
    if all(a is None for a in axes):
        axes[0] = 0
        args[0] = rand(size, *shape)
    out_axis = draw(st.integers(-1, 0))
    return args, axes, size, out_axis


@pytest.mark.parametrize("f,ref,rank", COMPOSITES, ids=["affine", "outer", "norm"])
@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_composites_match_stacked_slices(f, ref, rank, data):
    args, axes, size, out_axis = data.draw(batched_case(rank))
    got = spmdc.vmap(f, in_axes=tuple(axes), out_axes=out_axis)(*args)
    want = stack_loop(ref, args, [None if a is None else a % (rank + 1) for a in axes], size,
                      out_axis=out_axis)
    close(got, want, 1e-4)


# --- nesting and composition -----------------------------------------------------------------

def test_vmap_of_vmap_with_different_axes():
    x, y = rand(3, 4, 5), rand(5, 3)
    f = spmdc.vmap(spmdc.vmap(lambda a, b: a * b, in_axes=(1, 0)), in_axes=(0, 1))
    # outer maps x over 0 (size 3), y over 1; inner maps x-slice (4,5) over 1 (size 5), y over 0
    got = f(x, y)
    want = np.stack([np.stack([x[i, :, j] * y[j, i] for j in range(5)]) for i in range(3)])
    close(got, want)


def test_vmap_of_vmap_matmul_is_batched_matmul():
    a, b = rand(2, 3, 4, 5), rand(2, 3, 5, 6)
    close(spmdc.vmap(spmdc.vmap(jnp.matmul))(a, b), a @ b, 1e-4)


def test_jit_of_vmap_and_vmap_of_jit():
    x, w = rand(6, 3), rand(3, 2)

    def f(a, m):
        return jnp.tanh(a @ m)
    want = np.tanh(x @ w)
    close(spmdc.jit(spmdc.vmap(f, in_axes=(0, None)))(x, w), want, 1e-5)
    close(spmdc.vmap(spmdc.jit(f), in_axes=(0, None))(x, w), want, 1e-5)
    close(spmdc.jit(spmdc.vmap(spmdc.jit(f), in_axes=(0, None)))(x, w), want, 1e-5)


def test_vmap_inside_jit_closes_over_outer_tracer():
    x, w = rand(5, 3), rand(3)

    @spmdc.jit
    def g(a, b):
        c = b * 2                          # an outer-jit tracer the vmapped function closes over
        return spmdc.vmap(lambda row: (row * c).sum())(a)
    close(g(x, w), (x * (w * 2)).sum(1))


def test_vmap_inside_grad_closes_over_outer_tracer():
    x, w = rand(5, 3), rand(3)

    def loss(b):
        return spmdc.vmap(lambda row: jnp.sin(row * b).sum())(x).sum()
    close(spmdc.grad(loss)(w), (x * np.cos(x * w)).sum(0), 1e-4)


def test_grad_of_vmap_of_grad_closing_over_both():
    x = rand(5)

    def outer(c):
        return spmdc.vmap(lambda a: spmdc.grad(lambda b: jnp.sin(a * b * c))(1.0))(x).sum()
    # d/dc sum_a a*c*cos(a*c) at c=2
    close(spmdc.grad(outer)(2.0), (x * np.cos(2 * x) - 2 * x * x * np.sin(2 * x)).sum(), 1e-4)


def test_grad_inside_vmap():
    x = rand(5, 3)
    got = spmdc.vmap(spmdc.grad(lambda r: jnp.sin(r).sum()))(x)
    close(got, np.cos(x))


def test_vmap_of_closure_over_outer_vmap_tracer():
    x, y = rand(4, 3), rand(5, 3)
    # inner vmap closes over the outer's batched row: it is an unbatched input of the inner
    got = spmdc.vmap(lambda a: spmdc.vmap(lambda b: (a * b).sum())(y))(x)
    close(got, x @ y.T, 1e-5)


# --- named axes ---------------------------------------------------------------------------------

def test_psum_over_vmapped_axis():
    x = rand(4, 3)
    got = spmdc.vmap(lambda a: lax.psum(a, "i"), axis_name="i")(x)
    close(got, np.broadcast_to(x.sum(0), (4, 3)))
    # a psum over the batch no longer varies along it, so out_axes=None is allowed
    got = spmdc.vmap(lambda a: lax.psum(a, "i"), axis_name="i", out_axes=None)(x)
    assert got.shape == (3,)
    close(got, x.sum(0))


def test_psum_of_unbatched_value_scales_by_size():
    x, w = rand(4, 3), rand(3)
    got = spmdc.vmap(lambda a, b: a + lax.psum(b, "i"), in_axes=(0, None), axis_name="i")(x, w)
    close(got, x + 4 * w)


def test_pmean_and_axis_index():
    x = rand(4, 3)
    got = spmdc.vmap(lambda a: a - lax.pmean(a, "i"), axis_name="i")(x)
    close(got, x - x.mean(0))
    got = spmdc.vmap(lambda a: a * lax.axis_index("i"), axis_name="i")(x)
    close(got, x * np.arange(4)[:, None])


def test_collective_over_outer_name_passes_through_inner_vmap():
    x = rand(2, 3)
    f = spmdc.vmap(spmdc.vmap(lambda a: lax.psum(a, "outer"), axis_name="inner"),
                   axis_name="outer")
    close(f(x), np.broadcast_to(x.sum(0), (2, 3)))
    g = spmdc.vmap(spmdc.vmap(lambda a: lax.axis_index(("outer", "inner")), axis_name="inner"),
                   axis_name="outer")
    np.testing.assert_array_equal(np.asarray(g(x)), np.arange(6).reshape(2, 3))


def test_nested_named_axes():
    x = rand(2, 3, 4)
    f = spmdc.vmap(spmdc.vmap(lambda a: lax.psum(a, "inner") + lax.psum(a, "outer"),
                              axis_name="inner"), axis_name="outer")
    close(f(x), x.sum(1, keepdims=True) + x.sum(0, keepdims=True), 1e-5)


# --- the IR: no per-example loop --------------------------------------------------------------

def _dot_generals(func):
    return [e for e in func.eqns if e.prim.name == "dot_general"]


def test_batched_matmul_is_one_dot_general_with_batch_dim():
    f = spmdc.vmap(lambda a, b: a @ b)
    for n in (2, 16):
        func = spmdc.make_ir(f)(rand(n, 3, 4), rand(n, 4, 5))
        dots = _dot_generals(func)
        assert len(dots) == 1
        assert dots[0].params["batch"] == ((0,), (0,))
        assert "batch=((0,), (0,))" in str(func)
        assert func.out_types[0].shape == (n, 3, 5)
    assert len(spmdc.make_ir(f)(rand(2, 3, 4), rand(2, 4, 5)).eqns) == \
        len(spmdc.make_ir(f)(rand(64, 3, 4), rand(64, 4, 5)).eqns)


def test_matmul_with_unbatched_operand_has_no_batch_dim():
    func = spmdc.make_ir(spmdc.vmap(lambda a, b: a @ b, in_axes=(0, None)))(rand(7, 3, 4),
                                                                             rand(4, 5))
    dots = _dot_generals(func)
    assert len(dots) == 1
    assert dots[0].params["batch"] == ((), ())


# --- errors ---------------------------------------------------------------------------------

def _still_works():
    x = rand(3, 2)
    close(spmdc.vmap(jnp.sin)(x), np.sin(x))


def test_error_inconsistent_sizes_names_paths():
    f = spmdc.vmap(lambda p, q: p["a"] + q)
    with pytest.raises(ValueError, match="inconsistent sizes") as e:
        f({"a": rand(3, 2)}, rand(4, 2))
    msg = str(e.value)
    assert "args[0]['a'] has size 3" in msg
    assert "args[1] has size 4" in msg
    _still_works()


def test_error_axis_size_disagrees():
    with pytest.raises(ValueError, match="axis_size=5"):
        spmdc.vmap(jnp.sin, axis_size=5)(rand(3, 2))
    _still_works()


def test_error_in_axes_not_a_tree_prefix():
    with pytest.raises(ValueError, match="in_axes"):
        spmdc.vmap(lambda a, b: a + b, in_axes=(0, 0, 0))(rand(3), rand(3))
    with pytest.raises(ValueError, match="in_axes"):
        spmdc.vmap(lambda d: d["x"], in_axes=({"y": 0},))({"x": rand(3)})
    with pytest.raises(ValueError, match="in_axes"):
        spmdc.vmap(lambda t: t[0], in_axes=((0, 0, 0),))((rand(3), rand(3)))
    _still_works()


def test_error_in_axes_out_of_range():
    with pytest.raises(ValueError, match=r"out of range for argument args\[1\] of rank 2"):
        spmdc.vmap(lambda a, b: a + b, in_axes=(0, 2))(rand(3, 2), rand(3, 2))
    with pytest.raises(ValueError, match="out of range"):
        spmdc.vmap(jnp.sin, in_axes=-3)(rand(3, 2))
    with pytest.raises(ValueError, match="scalar"):
        spmdc.vmap(jnp.sin)(np.float32(1.0))
    _still_works()


def test_error_no_mapped_input_and_no_axis_size():
    with pytest.raises(ValueError, match="axis_size"):
        spmdc.vmap(jnp.sin, in_axes=None)(rand(3))
    _still_works()


def test_error_out_axes_do_not_match_outputs():
    x = rand(3, 2)
    with pytest.raises(ValueError, match="out_axes"):
        spmdc.vmap(lambda a: (a, a), out_axes=(0, 0, 0))(x)
    with pytest.raises(ValueError, match="out_axes"):
        spmdc.vmap(lambda a: a, out_axes={"k": 0})(x)
    with pytest.raises(ValueError, match="out of range"):
        spmdc.vmap(lambda a: a, out_axes=3)(x)
    # JAX's words ("at vmap out_axes..., got axis spec None but output was batched on axis
    # 0"), which Flax's tests match, then spmdc's path and advice.
    with pytest.raises(ValueError, match=r"at vmap out_axes, got axis spec None but output "
                                         r"was batched on axis 0 \(the output depends on "
                                         r"the mapped inputs"):
        spmdc.vmap(lambda a: a * 2, out_axes=None)(x)
    with pytest.raises(ValueError, match=r"at vmap out_axes\['u'\]\[1\], got axis spec "
                                         r"None but output was batched on axis 0 "
                                         r"\(output\['u'\]\[1\] depends"):
        spmdc.vmap(lambda a: {"u": (a.sum(), a * 2)}, out_axes={"u": (0, None)})(x)
    with pytest.raises(ValueError, match="depends on the mapped inputs"):
        spmdc.vmap(lambda a: lax.axis_index("i"), axis_name="i", out_axes=None)(x)
    _still_works()


def test_error_under_jit_then_jit_still_works():
    @spmdc.jit
    def g(a, b):
        return spmdc.vmap(lambda u, v: u + v)(a, b)
    with pytest.raises(ValueError, match="inconsistent sizes"):
        g(rand(3, 2), rand(4, 2))
    x, y = rand(3, 2), rand(3, 2)
    close(g(x, y), x + y)
    _still_works()


def test_error_bad_axis_spec_type():
    with pytest.raises(TypeError, match="in_axes"):
        spmdc.vmap(jnp.sin, in_axes="0")
    # like JAX: top-level in_axes is an int, None or a tuple; a dict means "wrap me"
    with pytest.raises(TypeError, match=r"got a dict.*wrap it: in_axes=\(spec,\)"):
        spmdc.vmap(lambda d: d["a"], in_axes={"a": 0})
    with pytest.raises(TypeError, match="callable"):
        spmdc.vmap(3)
    _still_works()


@spmdc.tree_util.register_pytree_node_class
class _FieldsByType:
    """A pytree node that, as distrax's Jittable, sorts its fields into leaves and
    metadata by their type when flattened: Python numbers are metadata, a bare
    ``object()`` (what JAX's vmap puts in an output skeleton) is a leaf."""

    def __init__(self, **fields):
        self.fields = fields

    def tree_flatten(self):
        keys = sorted(self.fields)
        is_leaf = [type(self.fields[k]) is object or not isinstance(
            self.fields[k], (bool, int, float)) for k in keys]
        children = [self.fields[k] if s else None for k, s in zip(keys, is_leaf, strict=True)]
        meta = [None if s else self.fields[k] for k, s in zip(keys, is_leaf, strict=True)]
        return children, (keys, is_leaf, meta)

    @classmethod
    def tree_unflatten(cls, aux, children):
        keys, is_leaf, meta = aux
        return cls(**{k: c if s else m
                      for k, s, c, m in zip(keys, is_leaf, children, meta, strict=True)})


def test_vmap_outputs_a_node_that_sorts_fields_by_type():
    # distrax's Normal returned from vmap: out_axes are matched on a skeleton whose
    # placeholders must stay leaves when the node flattens them again
    def summed(loc, scale):
        return _FieldsByType(loc=loc.sum(keepdims=True), scale=scale.sum(keepdims=True),
                             event_ndims=0)

    loc = jnp.arange(60.0).reshape(3, 4, 5)
    out = spmdc.vmap(summed)(loc, jnp.ones((3, 4, 5)))
    np.testing.assert_array_equal(out.fields["loc"],
                                  np.arange(60.0).reshape(3, 20).sum(1).reshape(3, 1, 1))
    np.testing.assert_array_equal(out.fields["scale"], np.full((3, 1, 1), 20.0))
    assert out.fields["event_ndims"] == 0
