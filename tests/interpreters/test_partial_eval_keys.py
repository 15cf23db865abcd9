"""Typed keys through partial evaluation, as Flax's ``nn.scan`` carries its rngs: it
builds each input's abstract value with ``ShapedArray(shape=, dtype=result_type(x),
sharding=x.aval.sharding)`` and partially evaluates its body with a key among the
unknown inputs. See Note [typed keys in partial evaluation]."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc import api_util
from spmdc._src.core import ShapedArray
from spmdc.extend import linear_util as lu
from spmdc.interpreters import partial_eval as pe
from spmdc.sharding import PartitionSpec


def _aval_as_flax_builds_it(x, batch_dim=False):
    sharding = x.aval.sharding if hasattr(x, "aval") else None
    shape = jnp.shape(x)
    if batch_dim:
        shape = shape[1:]
        if sharding is not None:
            sharding = sharding.update(spec=PartitionSpec(*sharding.spec[1:]))
    return ShapedArray(shape=shape, dtype=jnp.result_type(x), sharding=sharding)


def test_key_avals_and_result_type_of_keys():
    key = spmdc.random.key(0)
    keys = spmdc.random.split(key, 3)
    assert jnp.result_type(key) == key.dtype == jnp.result_type(key, keys)
    aval = _aval_as_flax_builds_it(keys, batch_dim=True)
    assert aval.shape == () and aval.dtype == key.dtype
    with pytest.raises(ValueError, match="not a valid dtype for JAX type promotion"):
        jnp.result_type(key, 1.0)


def test_a_type_keeps_only_explicit_axes_of_its_sharding():
    # as JAX's get_sharding: an Auto axis is dropped, an Explicit one kept and shown
    auto = spmdc.sharding.AbstractMesh((2,), ("x",))
    typed = ShapedArray((4,), np.float32, sharding=spmdc.sharding.NamedSharding(
        auto, PartitionSpec("x")))
    assert str(typed) == "float32[4]" and typed.sharding.spec == PartitionSpec(None)
    explicit = spmdc.sharding.AbstractMesh((2,), ("x",), spmdc.sharding.AxisType.Explicit)
    typed = ShapedArray((4,), np.float32, sharding=spmdc.sharding.NamedSharding(
        explicit, PartitionSpec("x")))
    assert str(typed) == "float32[4@x]" and typed.sharding.spec == PartitionSpec("x")
    with pytest.raises(ValueError, match="not divisible by 2"):
        ShapedArray((3,), np.float32, sharding=spmdc.sharding.NamedSharding(
            explicit, PartitionSpec("x")))


def _body(k, y):
    # known: a key and a constant that depend on neither input; unknown: the rest
    return [spmdc.random.fold_in(spmdc.random.key(7), 2), jnp.ones(2),
            spmdc.random.fold_in(k, 3), y + spmdc.random.uniform(k, (3,))]


KEY = spmdc.random.key(1)
X = np.array([1.0, 2.0, 3.0], np.float32)


def test_nounits_takes_and_returns_keys():
    avals = [_aval_as_flax_builds_it(KEY), _aval_as_flax_builds_it(X)]
    jaxpr, outs, consts = pe.trace_to_jaxpr_nounits(
        lu.wrap_init(_body), [pe.PartialVal.unknown(a) for a in avals])
    assert [pv.is_known() for pv in outs] == [True, True, False, False]
    known_key = outs[0].get_known()
    assert known_key.dtype == KEY.dtype
    np.testing.assert_array_equal(spmdc.random.key_data(known_key), spmdc.random.key_data(
        spmdc.random.fold_in(spmdc.random.key(7), 2)))
    assert outs[2].get_aval() == ShapedArray((), KEY.dtype)
    assert outs[3].get_aval() == ShapedArray((3,), np.float32)
    # the jaxpr reads and writes the keys' data
    new_data, y = spmdc.core.eval_jaxpr(jaxpr, consts, spmdc.random.key_data(KEY), X)
    np.testing.assert_array_equal(new_data, spmdc.random.key_data(
        spmdc.random.fold_in(KEY, 3)))
    np.testing.assert_allclose(y, X + spmdc.random.uniform(KEY, (3,)), rtol=1e-6)


def test_nounits_through_flatten_fun_as_flax_scan_calls_it():
    in_tree = spmdc.tree_util.tree_structure((KEY, X))
    f, out_tree = api_util.flatten_fun_nokwargs(
        lu.wrap_init(lambda k, y: tuple(_body(k, y))), in_tree)
    avals = [_aval_as_flax_builds_it(KEY), _aval_as_flax_builds_it(X)]
    _, outs, _ = pe.trace_to_jaxpr_nounits(f, [pe.PartialVal.known(KEY),
                                               pe.PartialVal.unknown(avals[1])])
    known = [pv.get_known() for pv in outs if pv.is_known()]
    key, ones, new_key = spmdc.tree_util.tree_unflatten(out_tree(), [*known, None])[:3]
    assert key.dtype == new_key.dtype == KEY.dtype
    np.testing.assert_array_equal(spmdc.random.key_data(new_key),
                                  spmdc.random.key_data(spmdc.random.fold_in(KEY, 3)))
    np.testing.assert_array_equal(ones, [1.0, 1.0])
