"""jax.experimental.custom_partitioning (Note [partitioning in Python]): the sharding
rules against the attributes and errors JAX 0.10.2 gives (recorded below), the docs'
FFT example and collectives in the per-device function on 8 devices against NumPy, the
output shardings JAX gives (recorded), the partition callback's calls counted, and the
function itself run wherever nothing partitions it."""
from __future__ import annotations

import functools
import re

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import errors
from spmdc.compiler.stablehlo import ir, mlir_context
from spmdc.experimental.custom_partitioning import (
    BATCHING,
    ArrayMapping,
    CompoundFactor,
    SdyShardingRule,
    custom_partitioning,
)
from spmdc.experimental.custom_partitioning_sharding_rule import (
    sdy_sharding_rule_to_mlir,
    str_to_sdy_sharding_rule,
)
from spmdc.experimental.shard_map import shard_map
from spmdc.sharding import Mesh, NamedSharding
from spmdc.sharding import PartitionSpec as P

# (rule, keywords, operand shapes, result shapes, JAX 0.10.2's attribute or error)
RULES = [
    ("...i -> ...i", {}, [(32, 16)], [(32, 16)],
     "#sdy.op_sharding_rule<([i, j])->([i, j]) {i=32, j=16}, custom>"),
    ("i j, j k -> i k", {"reduction_factors": ("j",)}, [(8, 4), (4, 6)], [(8, 6)],
     "#sdy.op_sharding_rule<([i, j], [j, k])->([i, k]) {i=8, j=4, k=6} reduction={j}, "
     "custom>"),
    ("(a b) c -> (a b) c", {"a": 2, "b": 4}, [(8, 3)], [(8, 3)],
     "#sdy.op_sharding_rule<([ij, k])->([ij, k]) {i=2, j=4, k=3}, custom>"),
    ("(a b) c -> a b c", {}, [(8, 3)], [(2, 4, 3)],
     "#sdy.op_sharding_rule<([ij, k])->([i, j, k]) {i=2, j=4, k=3}, custom>"),
    ("(a b) c -> a c", {}, [(8, 3)], [(2, 3)],
     "ValueError: Factor b is only used in compound factors; must specify its size"),
    ("...1 i, ...2 j -> ...1 i, ...2 j", {}, [(2, 3, 4), (5, 6)], [(2, 3, 4), (5, 6)],
     "#sdy.op_sharding_rule<([i, j, k], [l, m])->([i, j, k], [l, m]) {i=2, j=3, k=4, l=5, "
     "m=6}, custom>"),
    ("i j -> j", {"need_replication_factors": ("i",), "permutation_factors": ("j",)},
     [(4, 8)], [(8,)],
     "#sdy.op_sharding_rule<([i, j])->([j]) {i=4, j=8} need_replication={i} "
     "permutation={j}, custom>"),
    (" -> i", {}, [()], [(4,)], "#sdy.op_sharding_rule<([])->([i]) {i=4}, custom>"),
    ("i, i -> i", {}, [(4,), (2,)], [(3,)],
     "#sdy.op_sharding_rule<([i], [i])->([i]) {i=2}, custom>"),
    ("...i, ...i -> ...i", {}, [(3, 4), (3, 4)], [(4,)],
     "ValueError: Ellipsis represents different number of leading dimensions 1 and 0"),
    ("i -> i", {}, [(4, 2)], [(4, 2)],
     "ValueError: Sharding rule 0th operand has rank 1, but the operation 0th operand has "
     "rank 2"),
]

# rule text -> JAX 0.10.2's ValueError message
BAD_TEXT = [
    ("i j", "There is no -> in rule: 'i j'"),
    ("i -> j k ->", "There is no -> in rule: 'i -> j k ->'"),
    ("1i -> i", "Factor names have to start with a letter, but got '1'"),
    ("i.j -> i", "Character '.' must be used inside ellipsis '...'"),
    ("((a b)) -> a", "Compound factors should be one level, nested brackets are not allowed"),
    ("(a) -> a", "Brackets should contain at least two factors"),
    ("(a b -> a", "Brackets are not balanced in rule: '(a b'"),
    ("a) -> a", "Brackets are not balanced"),
    ("i# -> i", "Unknown character '#'"),
    ("i … -> i", "Unknown character '…'"),
]

# a construction -> JAX 0.10.2's exception type and message
BAD_OBJECTS = [
    (lambda: CompoundFactor("a"), ValueError,
     "A compound factor should contain at least two factors"),
    (lambda: CompoundFactor("a", 1), ValueError,
     "Each element of CompoundFactor must be a str, but got <class 'int'>"),
    (lambda: CompoundFactor(BATCHING, "a"), ValueError,
     "Ellipsis can't be used in a compound factor"),
    (lambda: ArrayMapping("a", BATCHING), ValueError,
     "Ellipsis can only be used at the beginning of a dimension"),
    (lambda: ArrayMapping(3), ValueError,
     "Each element of ArrayMapping must be a str or CompoundFactor, but got <class 'int'>"),
    (lambda: SdyShardingRule((ArrayMapping("a"),), (ArrayMapping("a"),), b=2), ValueError,
     "Factor b is not used in the rule, but size is provided"),
    (lambda: SdyShardingRule((ArrayMapping("a"),), (ArrayMapping("a"),), a=2), ValueError,
     "Factor a represents a whole dimension; do not specify its size"),
    (lambda: SdyShardingRule((ArrayMapping("a"),), (ArrayMapping("a"),),
                             reduction_factors=["a"]), ValueError,
     "reduction_factors must be a tuple of factors"),
    (lambda: SdyShardingRule((ArrayMapping("a"),), (ArrayMapping("a"),),
                             reduction_factors=("a", "a")), ValueError,
     "reduction_factors contains duplicated factors"),
    (lambda: SdyShardingRule((ArrayMapping("a"),), (ArrayMapping("a"),),
                             reduction_factors=("b",)), ValueError,
     "Factor b in reduction_factors is not used in the rule"),
    (lambda: SdyShardingRule((ArrayMapping("a"),), (ArrayMapping("a"),),
                             reduction_factors=("a",), permutation_factors=("a",)),
     ValueError, "Factor a can only be in one of the reduction, need replication, or "
                 "permutation factor sets."),
    (lambda: str_to_sdy_sharding_rule(3), TypeError,
     "rule must be a str, but got <class 'int'>"),
    (lambda: str_to_sdy_sharding_rule("i -> i", i=2.0), TypeError,
     "factor_sizes must be a dict of str to int, but got {'i': 2.0}"),
]


def _attribute(rule, keywords, ins, outs):
    with mlir_context(), ir.Location.unknown():
        types = [ir.RankedTensorType.get(list(s), ir.F32Type.get()) for s in (*ins, *outs)]
        try:
            return str(sdy_sharding_rule_to_mlir(str_to_sdy_sharding_rule(rule, **keywords),
                                                 types[:len(ins)], types[len(ins):]))
        except ValueError as e:
            return f"ValueError: {e}"


@pytest.mark.parametrize("rule, keywords, ins, outs, jax_gives", RULES)
def test_rule_attribute_is_jaxs(rule, keywords, ins, outs, jax_gives):
    assert _attribute(rule, keywords, ins, outs) == jax_gives


def test_rule_errors_are_jaxs():
    for text, message in BAD_TEXT:
        with pytest.raises(ValueError) as e:
            str_to_sdy_sharding_rule(text)
        assert str(e.value) == message, text
    for make, kind, message in BAD_OBJECTS:
        with pytest.raises(kind) as e:
            make()
        assert str(e.value) == message
    rule = SdyShardingRule((ArrayMapping(BATCHING, "i"),),
                           (ArrayMapping(CompoundFactor("a", "b")),), a=2, b=2)
    assert str(rule) == "SdyShardingRule((('…', 'i'),), ((('a', 'b'),),), {'a': 2, 'b': 2})"
    assert str_to_sdy_sharding_rule("... -> ...").operand_mappings == (("…0",),)


# --- on 8 devices ---------------------------------------------------------------------------

def _batch_kept(sharding, shape):
    """The docs' ``supported_sharding``: the leading dimensions' layout, the last whole."""
    rank = len(shape.shape)
    kept = min(len(sharding.spec), rank - 1)
    return NamedSharding(sharding.mesh,
                         P(*sharding.spec[:kept], *(None,) * (rank - kept)))


def _fft_with_partition(calls):
    def partition(mesh, arg_shapes, result_shape):
        calls.append((arg_shapes[0].sharding, result_shape.sharding))
        s = _batch_kept(arg_shapes[0].sharding, arg_shapes[0])
        return mesh, jnp.fft.fft, s, (s,)

    @custom_partitioning
    def my_fft(x):
        return jnp.fft.fft(x)
    my_fft.def_partition(partition=partition, sharding_rule="...i -> ...i")
    return my_fft


@pytest.mark.devices(8)
def test_docs_fft_keeps_the_batch_sharding():
    mesh = Mesh(np.array(spmdc.devices()[:8]), ("x",))
    calls = []
    my_fft = _fft_with_partition(calls)
    x = np.random.RandomState(0).randn(32, 16).astype(np.complex64)
    y = spmdc.device_put(x, NamedSharding(mesh, P("x")))
    out = spmdc.jit(my_fft)(y)
    np.testing.assert_allclose(np.asarray(out), np.fft.fft(x), atol=2e-5)
    assert out.sharding.spec == P("x")           # JAX 0.10.2: P('x',)
    assert calls == [(NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P("x", None)))]
    pattern = "(dynamic-slice|all-gather)"    # the docs' check of the compiled HLO
    assert re.search(pattern, spmdc.jit(my_fft).lower(y).compile().as_text()) is None
    assert re.search(pattern, spmdc.jit(jnp.fft.fft).lower(y).compile().as_text())
    v = np.random.RandomState(1).randn(64).astype(np.complex64)    # 1-D: gathered first
    one_d = NamedSharding(mesh, P("x"))
    out = spmdc.jit(my_fft, in_shardings=one_d, out_shardings=one_d)(
        spmdc.device_put(v, one_d))
    np.testing.assert_allclose(np.asarray(out), np.fft.fft(v), atol=1e-4)
    assert calls[-1][0] == NamedSharding(mesh, P("x"))   # then gathered, as partition asks


@pytest.mark.devices(8)
def test_per_device_function_with_a_collective_on_a_2d_mesh():
    mesh = Mesh(np.array(spmdc.devices()[:8]).reshape(4, 2), ("x", "y"))
    seen = []

    @custom_partitioning
    def column_sums(a):
        return jnp.broadcast_to(a.sum(0, keepdims=True), a.shape)

    def partition(mesh, arg_shapes, result_shape):
        seen.append(arg_shapes[0].sharding.spec)

        def per_device(block):
            total = spmdc.lax.psum(block.sum(0, keepdims=True), "x")
            return jnp.broadcast_to(total, block.shape)
        return mesh, per_device, arg_shapes[0].sharding, (arg_shapes[0].sharding,)
    column_sums.def_partition(partition=partition, sharding_rule="i j -> i j")
    x = np.arange(32 * 4, dtype=np.float32).reshape(32, 4)
    out = spmdc.jit(column_sums)(spmdc.device_put(x, NamedSharding(mesh, P("x", "y"))))
    np.testing.assert_allclose(np.asarray(out), np.broadcast_to(x.sum(0), x.shape))
    assert out.sharding.spec == P("x", "y") and seen == [P("x", "y")]   # as JAX's


@pytest.mark.devices(8)
def test_static_arguments_pytrees_and_rule_forms():
    mesh = Mesh(np.array(spmdc.devices()[:8]), ("x",))
    x = np.arange(32 * 4, dtype=np.float32).reshape(32, 4)
    y = spmdc.device_put(x, NamedSharding(mesh, P("x")))

    @functools.partial(custom_partitioning, static_argnums=(1,))
    def scaled(d, k):
        return {"s": d["a"] * k + d["b"], "p": d["a"] * d["b"]}

    def partition(k, mesh, arg_shapes, result_shape):
        s = arg_shapes[0]["a"].sharding
        return (mesh, lambda d: {"s": d["a"] * k + d["b"], "p": d["a"] * d["b"]},
                {"s": s, "p": s}, ({"a": s, "b": s},))
    scaled.def_partition(partition=partition, sharding_rule=lambda k, mesh, ins, outs: (
        "i j, i j -> i j, i j", {}))
    out = spmdc.jit(scaled, static_argnums=1)({"a": y, "b": y}, 3)
    np.testing.assert_allclose(np.asarray(out["s"]), 4 * x)
    np.testing.assert_allclose(np.asarray(out["p"]), x * x)
    assert out["s"].sharding.spec == P("x") and out["p"].sharding.spec == P("x")

    @custom_partitioning
    def plus_one(a):
        return a + 1
    kinds = []

    def gspmd_partition(mesh, arg_shapes, result_shape):
        kinds.append(type(arg_shapes[0].sharding).__name__)
        over_abstract = NamedSharding(mesh.abstract_mesh, P("x"))   # partitions in order
        return mesh, lambda a: a + 1, over_abstract, (arg_shapes[0].sharding,)
    plus_one.def_partition(
        partition=gspmd_partition, decode_shardings=False,
        sharding_rule=SdyShardingRule((ArrayMapping("i", "j"),), (ArrayMapping("i", "j"),)))
    out = spmdc.jit(plus_one)(y)
    np.testing.assert_allclose(np.asarray(out), x + 1)
    assert kinds == ["GSPMDSharding"] and out.sharding.spec == P("x")

    no_rule = custom_partitioning(lambda a: a * 2)
    no_rule.def_partition(partition=lambda mesh, args, res: (
        mesh, lambda a: a * 2, args[0].sharding, (args[0].sharding,)))
    out = spmdc.jit(no_rule)(y)               # JAX 0.10.2: replicated without a rule
    np.testing.assert_allclose(np.asarray(out), 2 * x)
    assert out.sharding.spec == P()


@pytest.mark.devices(8)
def test_the_function_itself_where_nothing_partitions_it():
    mesh = Mesh(np.array(spmdc.devices()[:8]).reshape(4, 2), ("x", "y"))
    calls = []

    @custom_partitioning
    def f(a):
        return jnp.sin(a) * 2

    def partition(mesh, arg_shapes, result_shape):
        calls.append(1)
        return mesh, lambda a: jnp.sin(a) * 2, arg_shapes[0].sharding, (
            arg_shapes[0].sharding,)
    f.def_partition(partition=partition, sharding_rule="i j -> i j")
    x = np.linspace(-1, 1, 8 * 4 * 4, dtype=np.float32).reshape(8, 4, 4)
    want = np.sin(x) * 2
    np.testing.assert_allclose(np.asarray(f(x[0])), want[0], rtol=1e-6)       # eagerly
    np.testing.assert_allclose(np.asarray(spmdc.jit(f)(x[0])), want[0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(spmdc.pmap(f)(x)), want, rtol=1e-6)
    body = shard_map(f, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    blocks = spmdc.device_put(x.reshape(32, 4), NamedSharding(mesh, P("x", "y")))
    np.testing.assert_allclose(np.asarray(spmdc.jit(body)(blocks)), want.reshape(32, 4),
                               rtol=1e-6)
    assert calls == []


@pytest.mark.devices(8)
def test_differentiated_through_a_custom_vjp_around_it():
    mesh = Mesh(np.array(spmdc.devices()[:8]), ("x",))
    calls = []

    @custom_partitioning
    def f(a):
        return jnp.sin(a) * 2

    def partition(mesh, arg_shapes, result_shape):
        calls.append(1)
        return mesh, lambda a: jnp.sin(a) * 2, arg_shapes[0].sharding, (
            arg_shapes[0].sharding,)
    f.def_partition(partition=partition, sharding_rule="i j -> i j")

    @spmdc.custom_vjp
    def g(a):                 # the way to differentiate it, in JAX as here
        return f(a)
    g.defvjp(lambda a: (f(a), a), lambda a, ct: (ct * 2 * jnp.cos(a),))
    x = np.linspace(0, 1, 32 * 4, dtype=np.float32).reshape(32, 4)
    line = spmdc.device_put(x, NamedSharding(mesh, P("x")))
    value, grads = spmdc.jit(spmdc.value_and_grad(lambda a: g(a).sum()))(line)
    np.testing.assert_allclose(float(value), (np.sin(x) * 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(grads), 2 * np.cos(x), rtol=1e-6)
    assert calls == [1]


@pytest.mark.devices(8)
def test_bad_input_raises_jaxs_exceptions():
    mesh = Mesh(np.array(spmdc.devices()[:8]), ("x",))
    x = np.ones((32, 4), np.float32)
    y = spmdc.device_put(x, NamedSharding(mesh, P("x")))

    def same(mesh, args, res):
        return mesh, lambda a: a, args[0].sharding, (args[0].sharding,)
    f = custom_partitioning(lambda a: a * 1)
    with pytest.raises(AttributeError, match="def_partition"):
        f(x)
    with pytest.raises(ValueError, match=re.escape("Unknown keyword arguments: {'foo': 3}")):
        f.def_partition(partition=same, sharding_rule=SdyShardingRule(
            (ArrayMapping("i", "j"),), (ArrayMapping("i", "j"),)), foo=3)
    f.def_partition(partition=same, infer_sharding_from_operands=lambda *a: None)
    with pytest.raises(NotImplementedError, match="Need to provide sharding_rule"):
        spmdc.jit(f)(y)
    f.def_partition(partition=same, sharding_rule="i -> i")
    with pytest.raises(ValueError, match="0th operand has rank 1, but the operation 0th "
                                         "operand has rank 2"):
        spmdc.jit(f)(y)
    f.def_partition(partition=same, sharding_rule="i j -> i j")
    with pytest.raises(NotImplementedError, match="custom_partitioning"):
        spmdc.grad(lambda a: f(a).sum())(x)
    with pytest.raises(NotImplementedError, match="custom_partitioning"):
        spmdc.vmap(f)(x)
    g = custom_partitioning(lambda a, k: a * k, static_argnums=(1,))
    g.def_partition(partition=lambda k, mesh, args, res: same(mesh, args, res),
                    sharding_rule="i j -> i j")
    with pytest.raises(errors.UnexpectedTracerError, match="static_argnums"):
        spmdc.jit(lambda a, k: g(a, k))(y, 3)
    for partition, message in (
            (lambda mesh, args, res: (mesh, lambda a: a[:1], args[0].sharding,
                                      (args[0].sharding,)), "Mismatch in result shapes"),
            (lambda mesh, args, res: (mesh, lambda a: a, P("x"), (args[0].sharding,)),
             "Custom Partitioning rules must return Sharding")):
        h = custom_partitioning(lambda a: a * 1)
        h.def_partition(partition=partition, sharding_rule="i j -> i j")
        with pytest.raises(errors.JaxRuntimeError, match=message):   # as JAX's
            spmdc.jit(h)(y)
    np.testing.assert_allclose(np.asarray(spmdc.jit(f)(y)), x)     # still works


@pytest.mark.devices(8)
def test_jaxs_own_cases_scan_and_compound_factors():
    """Two of JAX 0.10.2's tests/custom_partitioning_test.py: a psum inside a scan in the
    per-device function, and a rule with compound and need-replication factors."""
    mesh = Mesh(np.array(spmdc.devices()[:4]), ("x",))

    @custom_partitioning
    def total(x):
        return jnp.sum(x)

    def scan_partition(mesh, arg_shapes, result_shape):
        def per_device(xs):
            def step(carry, row):
                return carry + spmdc.lax.psum(jnp.sum(row), axis_name="x"), None
            return spmdc.lax.scan(step, 0.0, xs)[0]
        return mesh, per_device, result_shape.sharding, (arg_shapes[0].sharding,)
    total.def_partition(scan_partition, sharding_rule="i j -> ")
    xs = spmdc.device_put(np.ones((32, 16), np.float32), NamedSharding(mesh, P(None, "x")))
    assert float(spmdc.jit(total)(xs)) == 512.0

    mesh = Mesh(np.array(spmdc.devices()[:8]).reshape(2, 4), ("x", "y"))

    @custom_partitioning
    def f(x, y):
        return x.reshape((8,)) + y

    def partition(mesh, arg_shapes, result_shape):
        return mesh, lambda x, y: x.reshape((4,)) + y, result_shape.sharding, tuple(
            a.sharding for a in arg_shapes)
    f.def_partition(partition=partition, sharding_rule="(i k) j, (i k j) -> (i k j)",
                    i=2, k=2, need_replication_factors=("k",))
    x = spmdc.device_put(np.arange(8).reshape(4, 2), NamedSharding(mesh, P("x", None)))
    y = spmdc.device_put(np.arange(8), NamedSharding(mesh, P("x")))
    out = spmdc.jit(f)(x, y)
    np.testing.assert_array_equal(np.asarray(out), 2 * np.arange(8))
    assert out.sharding == NamedSharding(mesh, P("x"))        # as JAX's test asserts
