"""Shardings in types over Explicit mesh axes (Note [shardings in types] in
core/explicit_sharding.py), against JAX 0.10.2's own answers on 8 CPU devices: each
expected string is what ``str(jax.typeof(...))`` printed there for the same program
over ``jax.make_mesh((2, 4), ('X', 'Y'))`` (Explicit axes), or the message of the
ShardingTypeError JAX raised. The rules run at trace time, so most cases share one
``eval_shape`` trace (nothing compiles)."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax
from spmdc.errors import ShardingTypeError
from spmdc.sharding import AxisType, NamedSharding, reshard
from spmdc.sharding import PartitionSpec as P


@pytest.fixture(scope="module")
def mesh():
    return spmdc.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)


def _placed(mesh, shape, spec):
    return spmdc.device_put(np.arange(np.prod(shape), dtype=np.float32).reshape(shape),
                            NamedSharding(mesh, spec))


# (operation, JAX's str(typeof(result))), x: float32[8@X,4], y: float32[8,4@Y],
# w: float32[4,4@Y], w2: float32[4@X,4]
RECORDED = [
    (lambda x, y, w, w2: jnp.sin(x), "float32[8@X,4]"),
    (lambda x, y, w, w2: x + 1, "float32[8@X,4]"),
    (lambda x, y, w, w2: x + y, "float32[8@X,4@Y]"),
    (lambda x, y, w, w2: x + jnp.ones(4), "float32[8@X,4]"),
    (lambda x, y, w, w2: x + jnp.ones((8, 1)), "float32[8@X,4]"),
    (lambda x, y, w, w2: x.sum(0), "float32[4]"),
    (lambda x, y, w, w2: x.sum(1), "float32[8@X]"),
    (lambda x, y, w, w2: x.sum(), "float32[]"),
    (lambda x, y, w, w2: x.max(1), "float32[8@X]"),
    (lambda x, y, w, w2: jnp.argmax(x, 1), "int32[8@X]"),
    (lambda x, y, w, w2: x.T, "float32[4,8@X]"),
    (lambda x, y, w, w2: x.reshape(32), "float32[32@X]"),
    (lambda x, y, w, w2: x.reshape(2, 4, 4), "float32[2@X,4,4]"),
    (lambda x, y, w, w2: x.reshape(4, 2, 4), "float32[4@X,2,4]"),
    (lambda x, y, w, w2: x.reshape(8, 4, 1), "float32[8@X,4,1]"),
    (lambda x, y, w, w2: x.reshape(1, 8, 4), "float32[1,8@X,4]"),
    (lambda x, y, w, w2: x.astype(jnp.int32), "int32[8@X,4]"),
    (lambda x, y, w, w2: x @ w, "float32[8@X,4@Y]"),
    (lambda x, y, w, w2: x @ w2, "float32[8@X,4]"),
    (lambda x, y, w, w2: x @ jnp.ones((4, 3)), "float32[8@X,3]"),
    (lambda x, y, w, w2: jnp.dot(y, w.T, out_sharding=P("X", None)), "float32[8@X,4]"),
    (lambda x, y, w, w2: x[:, 0], "float32[8@X]"),
    (lambda x, y, w, w2: jnp.concatenate([x, x], 0), "float32[16@X,4]"),
    (lambda x, y, w, w2: jnp.concatenate([x, x], 1), "float32[8@X,8]"),
    (lambda x, y, w, w2: jnp.broadcast_to(x, (3, 8, 4)), "float32[3,8@X,4]"),
    (lambda x, y, w, w2: x[None], "float32[1,8@X,4]"),
    (lambda x, y, w, w2: jnp.where(x > 0, x, 0.0), "float32[8@X,4]"),
    (lambda x, y, w, w2: jnp.zeros_like(x), "float32[8@X,4]"),
    (lambda x, y, w, w2: x.mean(0), "float32[4]"),
    (lambda x, y, w, w2: jnp.arange(8), "int32[8]"),
    (lambda x, y, w, w2: reshard(x, P()), "float32[8,4]"),
    (lambda x, y, w, w2: jnp.zeros((8, 4), out_sharding=P("X")), "float32[8@X,4]"),
    (lambda x, y, w, w2: jnp.ones((8, 1), out_sharding=P("X")).squeeze(), "float32[8@X]"),
    (lambda x, y, w, w2: reshard(x, P("X")).at[jnp.arange(4)].get(out_sharding=P("X")),
     "float32[4@X,4]"),
    (lambda x, y, w, w2: reshard(x, P(None, "Y")), "float32[8,4@Y]"),
    # slicing, padding and dynamic_slice keep the operand's layout where the mesh axes
    # still divide the dimension
    (lambda x, y, w, w2: x[:4], "float32[4@X,4]"),
    (lambda x, y, w, w2: x[::2], "float32[4@X,4]"),
    (lambda x, y, w, w2: x[2:6], "float32[4@X,4]"),
    (lambda x, y, w, w2: x[:, 1:], "float32[8@X,3]"),
    (lambda x, y, w, w2: jnp.pad(x, ((0, 2), (1, 1))), "float32[10@X,6]"),
    (lambda x, y, w, w2: lax.dynamic_slice(x, (2, 0), (4, 4)), "float32[4@X,4]"),
    (lambda x, y, w, w2: jnp.split(x, [2], 0)[1], "float32[6@X,4]"),
    (lambda x, y, w, w2: jnp.concatenate([x, w2], 0), "float32[12@X,4]"),
    # reshape: one dimension split or one run merged, the mesh axes spread in order
    (lambda x, y, w, w2: reshard(x, P("X", "Y")).reshape(32), "float32[32@(X,Y)]"),
    (lambda x, y, w, w2: reshard(x, P("X", "Y")).reshape(2, 4, 4), "float32[2@X,4,4@Y]"),
    (lambda x, y, w, w2: reshard(x, P(("X", "Y"), None)).reshape(2, 4, 4),
     "float32[2@X,4@Y,4]"),
    (lambda x, y, w, w2: x.reshape(8, 2, 2), "float32[8@X,2,2]"),
    (lambda x, y, w, w2: y.reshape(8, 4, 1), "float32[8,4@Y,1]"),
]

# (operation, the start of JAX's ShardingTypeError message)
REFUSED = [
    (lambda x, y, w, w2: x + reshard(y, P("Y", None)),
     "add got incompatible shardings for broadcasting: ('X', None), ('Y', None)."),
    (lambda x, y, w, w2: y @ w.T,
     "Contracting dimensions are sharded and it is ambiguous how the output should be "
     "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
     "lhs_contracting_spec=('Y',) and rhs_contracting_spec=('Y',)"),
    (lambda x, y, w, w2: jnp.take(x, jnp.arange(4), axis=0),
     "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
     "indexing"),
    (lambda x, y, w, w2: jnp.cumsum(x, 0),
     "Input should be unsharded over the axis being reduced. Got input "
     "type=float32[8@X,4] and axis=0"),
    (lambda x, y, w, w2: jnp.sort(x, 0),
     "Arguments to sort must be unsharded over the sorting dimension."),
    (lambda x, y, w, w2: x[:3],
     "slicing on sharded dims where out dim (3) is not divisible by mesh axes (2) with "
     "spec (X) is not implemented. Got input type=f32[8@X,4] and output shape=(3, 4)"),
    (lambda x, y, w, w2: y[:, 1:],
     "slicing on sharded dims where out dim (3) is not divisible by mesh axes (4) with "
     "spec (Y) is not implemented. Got input type=f32[8,4@Y] and output shape=(8, 3)"),
    (lambda x, y, w, w2: lax.slice(x, (0, 0), (5, 4)),
     "slicing on sharded dims where out dim (5) is not divisible by mesh axes (2) with "
     "spec (X) is not implemented. Got input type=f32[8@X,4] and output shape=(5, 4)"),
    (lambda x, y, w, w2: jnp.pad(x, ((0, 1), (0, 0))),
     "padding on sharded dims where out dim (9) is not divisible by mesh axes (2) with "
     "spec (X) is not implemented. Got input type=f32[8@X,4] and output "
     "shape=(np.int64(9), np.int64(4))"),
    (lambda x, y, w, w2: lax.dynamic_slice(x, (2, 0), (3, 4)),
     "dynamic_slice on sharded dims where out dim (3) is not divisible by mesh axes (2) "
     "with spec (X) is not implemented. Got input type=f32[8@X,4] and output shape=(3, 4)"),
    (lambda x, y, w, w2: jnp.concatenate([x, y], 0),
     "All operands should have the same sharding. Got shardings "),
    (lambda x, y, w, w2: y.reshape(32),
     "This reshape is not supported. Please specify the sharding of the output via the "
     "`out_sharding` argument of jax.lax.reshape. Got operand type: float32[8,4@Y], new "
     "sizes: (32,)"),
    (lambda x, y, w, w2: x.reshape(4, 8),
     "This reshape is not supported. Please specify the sharding of the output via the "
     "`out_sharding` argument of jax.lax.reshape. Got operand type: float32[8@X,4], new "
     "sizes: (4, 8)"),
]


def _operands(mesh):
    return (_placed(mesh, (8, 4), P("X", None)), _placed(mesh, (8, 4), P(None, "Y")),
            _placed(mesh, (4, 4), P(None, "Y")), _placed(mesh, (4, 4), P("X", None)))


def test_each_primitive_family_gives_jax_result_type(mesh):
    seen = []

    def f(*operands):
        for op, _ in RECORDED:
            seen.append(str(spmdc.typeof(op(*operands))))
        return operands[0]
    with spmdc.set_mesh(mesh):
        spmdc.eval_shape(f, *_operands(mesh))
    assert seen == [want for _, want in RECORDED]


@pytest.mark.parametrize("k", range(len(REFUSED)))
def test_an_ambiguous_or_conflicting_sharding_is_jax_error(mesh, k):
    op, message = REFUSED[k]
    with spmdc.set_mesh(mesh), pytest.raises(ShardingTypeError) as e:
        spmdc.eval_shape(op, *_operands(mesh))
    assert str(e.value).startswith(message)


def test_arrays_and_jit_results_carry_their_types(mesh):
    x = _placed(mesh, (8, 4), P("X", None))
    assert str(spmdc.typeof(x)) == "float32[8@X,4]"
    assert repr(spmdc.typeof(x)) == "ShapedArray(float32[8@X,4])"
    s = spmdc.typeof(x).sharding
    assert s.spec == P("X", None) and s.mesh == mesh.abstract_mesh
    texts = []

    @spmdc.jit
    def f(a, w):
        texts.append(repr(a))
        return a @ w
    w = _placed(mesh, (4, 4), P(None, "Y"))
    with spmdc.set_mesh(mesh):
        out = f(x, w)
        made = jnp.ones(4)              # made under the mesh: laid out over it
    assert texts == ["JitTracer(float32[8@X,4])"]
    assert str(spmdc.typeof(out)) == "float32[8@X,4@Y]"
    assert out.sharding == NamedSharding(mesh, P("X", "Y"))
    np.testing.assert_allclose(out, np.asarray(x) @ np.asarray(w), rtol=1e-6)
    assert made.sharding.mesh == mesh and made.sharding.is_fully_replicated
    # with the axes made Auto (auto_axes), no types and so no ambiguity: the partitioner's
    y = _placed(mesh, (8, 4), P(None, "Y"))
    with spmdc.set_mesh(mesh), spmdc.sharding.use_abstract_mesh(
            mesh.abstract_mesh.update_axis_types({"X": AxisType.Auto, "Y": AxisType.Auto})):
        seen = []
        spmdc.eval_shape(lambda a: seen.append(str(spmdc.typeof(a @ a.T))), y)
    assert seen == ["float32[8,8]"]


def test_eval_shape_keeps_the_spec_and_out_sharding_names_the_result(mesh):
    x = _placed(mesh, (8, 4), P("X", None))
    out = spmdc.eval_shape(lambda a: a * 2, x)
    assert out.sharding == NamedSharding(mesh.abstract_mesh, P("X", None))
    made = spmdc.eval_shape(lambda: reshard(jnp.ones((4, 4)), NamedSharding(mesh, P("X", "Y"))))
    assert made.sharding.spec == P("X", "Y")            # Flax's nnx.eval_shape reads it
    y = _placed(mesh, (8, 4), P(None, "Y"))
    with spmdc.set_mesh(mesh):
        z = lax.dot_general(y, y, (((1,), (1,)), ((), ())), out_sharding=P("X", None))
    assert str(spmdc.typeof(z)) == "float32[8@X,8]"
    np.testing.assert_allclose(z, np.asarray(y) @ np.asarray(y).T, rtol=1e-6)


def test_programs_without_explicit_axes_have_unsharded_types():
    auto = spmdc.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
    x = _placed(auto, (8, 4), P("X", None))
    assert str(spmdc.typeof(x)) == "float32[8,4]" and spmdc.typeof(x).sharding.mesh.empty
    y = _placed(auto, (8, 4), P(None, "Y"))
    out = spmdc.jit(lambda a, b: a @ b.T)(y, y)      # contracting split: the partitioner's
    np.testing.assert_allclose(out, np.asarray(y) @ np.asarray(y).T, rtol=1e-6)


def test_a_format_constrains_by_its_sharding():
    # Flax's shard_value passes a jax.experimental.layout.Format to with_sharding_constraint
    from spmdc.experimental.layout import Format, Layout
    auto = spmdc.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
    ns = NamedSharding(auto, P("X", None))
    value = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    out = lax.with_sharding_constraint(value, Format(Layout(major_to_minor=(0, 1)), ns))
    assert out.sharding == ns
    np.testing.assert_array_equal(out, value)
    with pytest.raises(ValueError, match="row-major"):
        lax.with_sharding_constraint(value, Format(Layout(major_to_minor=(1, 0)), ns))


def test_transformed_programs_results_have_jax_types(mesh):
    # the cotangent grad's pass writes and vmap's batched body get their types from the
    # rules run over those programs (JAX: float32[8@X,4] for both)
    x = _placed(mesh, (8, 4), P("X", None))
    with spmdc.set_mesh(mesh):
        g = spmdc.grad(lambda a: (a ** 2).sum())(x)
        v = spmdc.vmap(jnp.sin)(x)
    assert str(spmdc.typeof(g)) == "float32[8@X,4]" and str(spmdc.typeof(v)) == "float32[8@X,4]"
    np.testing.assert_allclose(g, 2 * np.asarray(x))
    np.testing.assert_allclose(v, np.sin(np.asarray(x)), rtol=1e-6)


def test_partition_spec_index_and_count_as_a_tuple():
    # Flax linen's logical constraints call spec.index(None)
    spec = P("X", None, ("X", "Y"), None)
    assert spec.index(None) == 1 and spec.index(("X", "Y")) == 2 and spec.count(None) == 2
    with pytest.raises(ValueError):
        spec.index("Z")


def test_a_type_sharding_prints_without_a_memory_kind(mesh):
    # JAX's NamedSharding over an AbstractMesh (a type's) has memory_kind None; over a
    # Mesh (an array's) 'device'
    x = _placed(mesh, (8, 4), P("X", None))
    assert x.sharding.memory_kind == "device" and repr(x.sharding).endswith(
        "spec=P('X', None), memory_kind=device)")
    typed = spmdc.eval_shape(lambda a: a, x).sharding
    assert typed.memory_kind is None
    assert repr(typed) == ("NamedSharding(mesh=AbstractMesh('X': 2, 'Y': 4, axis_types="
                           "(Explicit, Explicit), device_kind=cpu, num_cores=None, "
                           "platform=cpu), spec=P('X', None))")


def test_control_flow_bodies_and_results_have_jax_types(mesh):
    # JAX 0.10.2 on 8 devices: the bodies see their operands' types (a scan's x without
    # its leading dimension), and the results are typed by the bodies
    x = _placed(mesh, (8, 4), P("X", None))
    xs = _placed(mesh, (6, 8, 4), P(None, "X", None))
    seen = []

    def rec(tag, v):
        seen.append((tag, str(spmdc.typeof(v))))
        return v

    def program(x, xs):
        c, ys = lax.scan(lambda c, xx: (rec("scan c", c) + rec("scan x", xx), c.sum(1)), x, xs)
        w = lax.while_loop(lambda c: rec("cond", c).sum() < 100, lambda c: rec("body", c) + 1, x)
        f = lax.fori_loop(0, 3, lambda i, c: rec("fori", c) * 2, x)
        b = lax.cond(x.sum() > 0, lambda a: rec("branch", a) * 2, lambda a: a, x)
        for tag, v in (("carry", c), ("ys", ys), ("while", w), ("fori", f), ("cond", b)):
            rec(tag, v)
        return c
    with spmdc.set_mesh(mesh):
        spmdc.eval_shape(program, x, xs)
    assert seen == [("scan c", "float32[8@X,4]"), ("scan x", "float32[8@X,4]"),
                    ("cond", "float32[8@X,4]"), ("body", "float32[8@X,4]"),
                    ("fori", "float32[8@X,4]"), ("branch", "float32[8@X,4]"),
                    ("carry", "float32[8@X,4]"), ("ys", "float32[6,8@X]"),
                    ("while", "float32[8@X,4]"), ("fori", "float32[8@X,4]"),
                    ("cond", "float32[8@X,4]")]
    with spmdc.set_mesh(mesh):
        c, ys = spmdc.jit(lambda x, xs: lax.scan(
            lambda c, xx: (c * 0.5 + xx, c.sum(1)), x, xs))(x, xs)
    assert c.sharding.spec == P("X", None) and ys.sharding.spec == P(None, "X")
    want_c, want_ys = np.asarray(x), []
    for xx in np.asarray(xs):
        want_ys.append(want_c.sum(1))
        want_c = want_c * 0.5 + xx
    np.testing.assert_allclose(c, want_c, rtol=1e-6)
    np.testing.assert_allclose(ys, np.stack(want_ys), rtol=1e-6)


def test_a_scan_over_a_split_leading_dimension_is_jax_value_error(mesh):
    x = _placed(mesh, (8, 4), P("X", None))
    with spmdc.set_mesh(mesh), pytest.raises(
            ValueError, match=r"0th dimension of all xs should be replicated\. Got "
                              r"P\('X', None\)"):
        spmdc.eval_shape(lambda x: lax.scan(lambda c, r: (c + r.sum(), r), 0.0, x), x)


def test_a_result_laid_out_as_the_first_argument_reports_its_sharding():
    # JAX gives back the argument's own NamedSharding where the partitioner laid the
    # result out the same way (P(None, 'Y') stays so), else the one it read (P('Y',))
    auto = spmdc.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Auto,) * 2)
    y = _placed(auto, (8, 4), P(None, "Y"))
    assert spmdc.jit(lambda a: a * 2)(y).sharding.spec == P(None, "Y")
    assert spmdc.jit(lambda a: a.T)(y).sharding.spec == P("Y",)
    asked = NamedSharding(auto, P("X"))
    assert spmdc.jit(lambda a: a * 2, out_shardings=asked)(y).sharding.spec == P("X",)


def test_vmapped_and_rematerialised_functions_see_their_operands_types(mesh):
    # JAX 0.10.2: vmap over the unsplit dimension keeps the other's axis (float32[8@X]),
    # over the split one drops it (float32[4]); a checkpointed function sees its operand's
    x = _placed(mesh, (8, 4), P("X", None))
    seen = []

    def rec(v):
        seen.append(str(spmdc.typeof(v)))
        return v

    def program(x):
        spmdc.vmap(lambda r: rec(r) * 2, in_axes=1)(x)
        spmdc.vmap(lambda r: rec(r) * 2)(x)
        return rec(spmdc.checkpoint(lambda a: rec(a) * 2)(x))
    with spmdc.set_mesh(mesh):
        spmdc.eval_shape(program, x)
    assert seen == ["float32[8@X]", "float32[4]", "float32[8@X,4]", "float32[8@X,4]"]
