"""The small names JAX programs use everywhere: spmdc.tree, tree_util's registration
helpers, config, typeof/eval_shape/ShapeDtypeStruct, dtypes, test_util, and how a
program sets its device count."""
import dataclasses
import functools
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import lax, tree_util

# --- spmdc.tree and tree_util --------------------------------------------------------------

def test_tree_namespace_matches_tree_util():
    t = {"b": (1, 2), "a": [3, {"c": 4}]}
    assert spmdc.tree.leaves(t) == [3, 4, 1, 2]
    assert spmdc.tree.map(lambda x: x * 10, t) == {"b": (10, 20), "a": [30, {"c": 40}]}
    leaves, treedef = spmdc.tree.flatten(t)
    assert spmdc.tree.unflatten(treedef, leaves) == t
    assert spmdc.tree.structure(t) == treedef
    assert spmdc.tree.reduce(lambda a, b: a + b, t) == 10
    assert spmdc.tree.reduce(lambda a, b: a + b, t, 100) == 110
    assert spmdc.tree.all({"a": True, "b": (1, 2)}) and not spmdc.tree.all([1, 0])
    paths = [tree_util.keystr(p) for p, _ in spmdc.tree.leaves_with_path(t)]
    assert paths == ["['a'][0]", "['a'][1]['c']", "['b'][0]", "['b'][1]"]
    doubled = spmdc.tree.map_with_path(lambda p, x: (tree_util.keystr(p), x * 2), [1, 2])
    assert doubled == [("[0]", 2), ("[1]", 4)]


def test_tree_reduce_of_empty_tree_needs_initializer():
    with pytest.raises(TypeError, match="initializer"):
        spmdc.tree.reduce(lambda a, b: a + b, [])
    assert spmdc.tree.reduce(lambda a, b: a + b, [], 7) == 7


def test_tree_transpose():
    outer = spmdc.tree.structure([0, 0, 0])
    inner = spmdc.tree.structure({"x": 0, "y": 0})
    rows = [{"x": 1, "y": 2}, {"x": 3, "y": 4}, {"x": 5, "y": 6}]
    assert spmdc.tree.transpose(outer, inner, rows) == {"x": [1, 3, 5], "y": [2, 4, 6]}
    assert spmdc.tree.transpose(outer, None, rows) == {"x": [1, 3, 5], "y": [2, 4, 6]}
    with pytest.raises(TypeError, match="outer leaf 1"):
        spmdc.tree.transpose(outer, inner, [rows[0], {"x": 1}, rows[2]])


def test_tree_broadcast():
    assert spmdc.tree.broadcast([1, 2], [(0, 0), {"a": 0}]) == [(1, 1), {"a": 2}]


def test_register_dataclass_under_jit():
    @functools.partial(tree_util.register_dataclass, data_fields=["w", "b"],
                       meta_fields=["name"])
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object
        name: str

    layer = Layer(jnp.ones((2, 2)), jnp.zeros(2), "dense")
    out = spmdc.jit(lambda p, x: x @ p.w + p.b)(layer, jnp.ones(2))
    np.testing.assert_allclose(out, [2.0, 2.0])
    leaves, treedef = tree_util.tree_flatten(layer)
    assert len(leaves) == 2
    assert tree_util.tree_unflatten(treedef, leaves).name == "dense"
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_leaves_with_path(layer)]
    assert paths == [".w", ".b"]


def test_register_dataclass_from_field_metadata_and_errors():
    @tree_util.register_dataclass
    @dataclasses.dataclass
    class P:
        x: object
        n: int = dataclasses.field(metadata=dict(static=True))

    leaves, treedef = tree_util.tree_flatten(P(1.0, 3))
    assert leaves == [1.0]
    assert tree_util.tree_unflatten(treedef, [2.0]) == P(2.0, 3)

    @dataclasses.dataclass
    class Q:
        a: object
        b: object
    with pytest.raises(ValueError, match=r"\['b'\] are neither"):
        tree_util.register_dataclass(Q, data_fields=["a"], meta_fields=[])


def test_register_pytree_with_keys_names_children():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    tree_util.register_pytree_with_keys(
        Pair,
        lambda p: (((tree_util.GetAttrKey("a"), p.a), (tree_util.GetAttrKey("b"), p.b)), None),
        lambda aux, ch: Pair(*ch))
    paths = [tree_util.keystr(p) for p, _ in tree_util.tree_leaves_with_path(Pair(1, 2))]
    assert paths == [".a", ".b"]
    assert tree_util.tree_map(lambda x: x + 1, Pair(1, 2)).b == 3


def test_partial_is_a_pytree_through_jit():
    def scale(k, x):
        return k * x
    p = tree_util.Partial(scale, jnp.float32(3.0))
    out = spmdc.jit(lambda f, x: f(x))(p, jnp.ones(2))
    np.testing.assert_allclose(out, [3.0, 3.0])
    assert tree_util.tree_leaves(p) == [p.args[0]]
    nested = tree_util.Partial(functools.partial(scale, 2.0))
    assert tree_util.tree_leaves(nested) == [] and nested(5.0) == 10.0


def test_is_tree_node_and_flatten_one_level():
    assert tree_util.is_tree_node((1, 2)) and not tree_util.is_tree_node(1.0)
    assert tree_util.flatten_one_level({"a": 1, "b": (2,)})[0] == [1, (2,)]
    with pytest.raises(ValueError, match="leaf"):
        tree_util.flatten_one_level(1.0)


# --- abstract values -----------------------------------------------------------------------

def test_typeof():
    assert str(spmdc.typeof(jnp.ones((2, 3)))) == "float32[2,3]"
    assert str(spmdc.typeof(1.0)) == "~float32[]"
    assert spmdc.typeof(np.int32(1)).dtype == np.int32
    seen = []
    spmdc.jit(lambda x: seen.append(spmdc.typeof(x)) or x)(jnp.ones(4))
    assert seen[0].shape == (4,) and seen[0].dtype == np.float32


def test_eval_shape_runs_nothing_and_takes_structs():
    calls = []

    def f(x, y):
        calls.append(1)
        return {"s": x.sum(0), "p": x @ y}
    out = spmdc.eval_shape(f, spmdc.ShapeDtypeStruct((3, 4), np.float32), jnp.ones((4, 2)))
    assert out["s"] == spmdc.ShapeDtypeStruct((4,), np.float32)
    assert out["p"].shape == (3, 2) and out["p"].dtype == np.float32
    huge = spmdc.eval_shape(lambda x: x * 2, spmdc.ShapeDtypeStruct((1 << 20, 1 << 12), "f4"))
    assert huge.shape == (1 << 20, 1 << 12)      # 16 GiB: never allocated
    with pytest.raises(ValueError, match="negative"):
        spmdc.ShapeDtypeStruct((-1,), np.float32)


# --- config --------------------------------------------------------------------------------

@pytest.mark.cpu_platform
def test_config_unknown_option_and_bad_values():
    with pytest.raises(AttributeError, match="unknown config option 'jax_nope'.*jax_enable_x64"):
        spmdc.config.update("jax_nope", True)
    with pytest.raises(TypeError, match="True or False"):
        spmdc.config.update("jax_debug_nans", "yes")
    with pytest.raises(ValueError, match="spmdc runs on 'cpu' or 'cuda'"):
        spmdc.config.update("jax_platform_name", "tpu")
    spmdc.devices()
    with pytest.raises(RuntimeError, match="came too late: spmdc's cpu client already exists"):
        spmdc.config.update("jax_platform_name", "gpu")
    spmdc.config.update("jax_platform_name", "cpu")
    assert spmdc.config.jax_platforms == "cpu"
    assert spmdc.config.jax_enable_x64 is False
    assert spmdc.config.read("jax_num_cpu_devices") == spmdc.device_count()


@pytest.mark.cpu_platform
def test_num_cpu_devices_after_first_use_is_an_error():
    spmdc.devices()
    with pytest.raises(RuntimeError, match="too late"):
        spmdc.config.update("jax_num_cpu_devices", spmdc.device_count() + 1)
    spmdc.config.update("jax_num_cpu_devices", spmdc.device_count())      # no change: fine


def test_enable_x64_switches_programs_already_cached():
    f = spmdc.jit(lambda: jnp.ones(2) * 1.5)
    assert f().dtype == np.float32
    with spmdc.enable_x64():
        assert f().dtype == np.float64 and f().dtype == np.float64
        assert spmdc.config.jax_enable_x64 is True
    assert f().dtype == np.float32
    spmdc.config.update("jax_enable_x64", True)
    try:
        assert f().dtype == np.float64
    finally:
        spmdc.config.update("jax_enable_x64", False)
    assert f().dtype == np.float32


@pytest.mark.devices(2)
def test_debug_nans_raises_for_jit_and_pmap_then_turns_off():
    f = spmdc.jit(jnp.log)
    spmdc.config.update("jax_debug_nans", True)
    try:
        np.testing.assert_allclose(f(jnp.ones(2)), [0.0, 0.0])
        with pytest.raises(FloatingPointError, match="nan.*jit"):
            f(-jnp.ones(2))
        with pytest.raises(FloatingPointError, match="nan.*pmap"):
            spmdc.pmap(jnp.log)(-jnp.ones(2))
    finally:
        spmdc.config.update("jax_debug_nans", False)
    assert np.isnan(np.asarray(f(-jnp.ones(2)))).all()


def test_disable_jit_runs_python_control_flow():
    def absolute(x):
        if x > 0:
            return x
        return -x
    with pytest.raises(spmdc.ConcretizationTypeError):
        spmdc.jit(absolute)(-3.0)
    with spmdc.disable_jit():
        assert float(spmdc.jit(absolute)(-3.0)) == 3.0
        assert spmdc.config.jax_disable_jit is False   # the context is not the global flag
    with pytest.raises(spmdc.ConcretizationTypeError):
        spmdc.jit(absolute)(-3.0)
    spmdc.config.update("jax_disable_jit", True)
    try:
        assert float(spmdc.jit(absolute)(-2.0)) == 2.0
    finally:
        spmdc.config.update("jax_disable_jit", False)


def _run(code, **env):
    full = {**os.environ, **env}
    full.pop("SPMDC_CPU_DEVICES", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.cpu_platform
def test_device_count_from_xla_flags_and_config():
    r = _run("import spmdc; print(spmdc.device_count())",
             XLA_FLAGS="--xla_force_host_platform_device_count=4")
    assert r.stdout.strip() == "4", r.stderr
    r = _run("""
        import spmdc
        spmdc.config.update('jax_num_cpu_devices', 3)
        print(spmdc.device_count(), spmdc.pmap(lambda x: x * 2)(spmdc.numpy.ones(3)).shape)
        """)
    assert r.stdout.strip() == "3 (3,)", r.stderr
    r = _run("import spmdc; spmdc.devices()",
             XLA_FLAGS="--xla_force_host_platform_device_count=x")
    assert r.returncode != 0 and "positive integer" in r.stderr


# --- the rest ------------------------------------------------------------------------------

@pytest.mark.cpu_platform
def test_small_module_level_names():
    assert spmdc.default_backend() == "cpu"
    assert spmdc.process_index() == 0 and spmdc.process_count() == 1
    assert isinstance(spmdc.__version__, str)
    assert spmdc.dtypes.canonicalize_dtype(np.float64) == np.float32
    assert spmdc.dtypes.result_type(1.0, np.int32) == np.float32
    assert spmdc.dtypes.issubdtype(spmdc.dtypes.bfloat16, np.floating)
    assert spmdc.dtypes.itemsize_bits(spmdc.dtypes.bfloat16) == 16
    x = jnp.arange(3.0)
    x.copy_to_host_async()
    np.testing.assert_allclose(x, [0.0, 1.0, 2.0])


def test_cond_older_five_argument_form():
    out = lax.cond(True, 1.0, lambda x: x + 1, 2.0, lambda x: x - 1)
    assert float(out) == 2.0
    out = spmdc.jit(lambda p: lax.cond(p, 1.0, lambda x: x + 1, 2.0, lambda x: x - 1))(False)
    assert float(out) == 1.0


def test_check_grads_passes_and_catches_a_wrong_rule():
    from spmdc.test_util import check_grads
    check_grads(lambda x: jnp.sin(x) * x, (jnp.arange(3.0),), order=2)
    check_grads(lambda x, y: (x * y).sum(), (jnp.ones(3), jnp.arange(3.0)), order=1,
                modes=["rev"])

    @spmdc.custom_jvp
    def wrong(x):
        return jnp.sin(x)
    wrong.defjvp(lambda primals, tangents: (jnp.sin(primals[0]), 2.0 * tangents[0]))
    with pytest.raises(AssertionError, match="jvp"):
        check_grads(wrong, (jnp.arange(3.0),), order=1, modes=["fwd"])
    with pytest.raises(ValueError, match="modes"):
        check_grads(jnp.sin, (1.0,), order=1, modes=["sideways"])


def test_import_as_jax_resolves_the_new_modules():
    r = _run("""
        import sys, spmdc
        sys.modules['jax'] = spmdc
        import jax.tree, jax.tree_util, jax.dtypes, jax.test_util
        from jax import config
        from jax.tree_util import Partial, register_dataclass
        print(jax.tree.leaves([1, [2]]), config.jax_enable_x64)
        """)
    assert r.stdout.strip() == "[1, 2] False", r.stderr


@pytest.mark.cpu_platform
def test_alias_loads_no_second_copy_and_runs():
    r = _run("""
        import sys, spmdc
        sys.modules['jax'] = spmdc
        import jax, jax.numpy as jnp, jax.random, jax.scipy.special
        from jax.scipy.special import logsumexp
        from jax import lax, random
        assert jnp is spmdc.numpy and jax.random is spmdc.random and lax is spmdc.lax
        assert sys.modules['jax.scipy.special'] is spmdc.scipy.special
        print(float(jax.jit(lambda x: logsumexp(x * 2))(jnp.zeros(2))),
              jax.pmap(lambda x: x * 2)(jnp.ones(2)).tolist())
        for private in ('jax.core', 'jax.compiler', 'jax.nothing'):
            try:
                __import__(private)
            except ModuleNotFoundError:
                pass
            else:
                raise AssertionError(private)
        """, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    assert r.stdout.strip() == "0.6931471824645996 [2.0, 2.0]", r.stderr
