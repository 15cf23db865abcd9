"""jax.experimental.colocated_python (spmdc/experimental/colocated_python/): the function
runs in this process on the arrays themselves, as JAX's runs on a CPU client (Note
[colocated Python in this process]); the checks and messages are JAX's, the device
mapping is JAX's CPU fallback (each device gets the next CPU device of its process), and
the serialization helpers Orbax reads round-trip shardings (they need cloudpickle, as
JAX's do: those tests skip without it and say so)."""
import importlib.util

import numpy as np
import pytest
from needs import needs_cpu_platform, needs_devices

import spmdc
from spmdc.experimental import colocated_python as cp
from spmdc.sharding import Mesh, NamedSharding, SingleDeviceSharding
from spmdc.sharding import PartitionSpec as P

HAS_CLOUDPICKLE = importlib.util.find_spec("cloudpickle") is not None


@pytest.fixture(autouse=True)
def _cpu():
    needs_cpu_platform()
    needs_devices(4)


def test_cpu_devices_are_the_next_free_ones_in_order():
    d = spmdc.devices()
    assert cp.colocated_cpu_devices((d[3], d[1])) == [d[0], d[1]]
    assert cp.colocated_cpu_devices(d[:2]) == list(d[:2])
    mesh = Mesh(np.array(d[2:4]).reshape(1, 2), ("x", "y"), axis_types=None)
    cpu_mesh = cp.colocated_cpu_devices(mesh)
    assert isinstance(cpu_mesh, Mesh) and cpu_mesh.axis_names == ("x", "y")
    assert list(cpu_mesh.devices.flat) == [d[0], d[1]]
    with pytest.raises(ValueError, match="does not have enough local CPU devices"):
        cp.colocated_cpu_devices(list(d) + [d[0]])


def test_function_runs_on_whole_arrays_and_trees():
    seen = []

    @cp.colocated_python
    def add_one(x):
        seen.append(spmdc.tree.map(lambda v: (type(v).__name__, v.shape), x))
        return spmdc.tree.map(lambda v: v + 1, x)

    mesh = spmdc.make_mesh((2,), ("x",))
    x = spmdc.device_put(np.arange(4.0), NamedSharding(mesh, P("x")))
    out = add_one({"a": x, "b": [x]})
    np.testing.assert_array_equal(np.asarray(out["a"]), [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(np.asarray(out["b"][0]), [1.0, 2.0, 3.0, 4.0])
    assert seen == [{"a": ("Array", (4,)), "b": [("Array", (4,))]}]   # not per shard
    assert add_one.__name__ == "add_one"


def test_jax_errors():
    d = spmdc.devices()

    @cp.colocated_python
    def make_zero():
        return spmdc.numpy.array(0)

    with pytest.raises(ValueError, match="No devices found. colocated_python function "
                       "without input arguments must be first specialized with devices."):
        make_zero()
    assert int(make_zero.specialize(devices=d[:1])()) == 0
    with pytest.raises(ValueError, match="devices already specified"):
        make_zero.specialize(devices=d[:1]).specialize(devices=d[:1])

    @cp.colocated_python
    def ident(x):
        return x
    with pytest.raises(ValueError, match="only supports jax.Array as input and output, "
                       "but got <class 'numpy.ndarray'>"):
        ident(np.ones(2))
    with pytest.raises(ValueError, match="All arguments must use the same device list"):
        ident([spmdc.device_put(1.0, d[0]), spmdc.device_put(1.0, d[1])])

    @cp.colocated_python
    def to_host(x):
        return np.asarray(x)
    with pytest.raises(ValueError, match="only supports jax.Array as input and output"):
        to_host(spmdc.device_put(1.0, d[0]))


def test_out_specs_fn_is_called_on_input_specs():
    specs = []
    d = spmdc.devices()

    @cp.colocated_python
    def double(x):
        return x * 2
    double = double.specialize(out_specs_fn=lambda x: specs.append(x) or x)
    x = spmdc.device_put(np.float32(3.0), d[0])
    assert float(double(x)) == 6.0 and float(double(x)) == 6.0
    assert len(specs) == 1 and specs[0].shape == () and specs[0].dtype == np.float32
    assert specs[0].sharding == SingleDeviceSharding(d[0])


def test_class_made_on_first_call_and_dropped_with_its_wrapper():
    events = []
    x = spmdc.device_put(np.int32(1), spmdc.devices()[0])

    @cp.colocated_python_class
    class Value:
        def __init__(self, start):
            events.append("init")
            self.value = start

        def __del__(self):
            events.append("del")

        def add(self, v):
            self.value += np.asarray(v)
            return spmdc.device_put(self.value, v.sharding)

    value = Value(np.int32(5))
    assert events == [] and Value.__name__ == "Value"
    assert int(value.add(x)) == 6 and int(value.add(x)) == 7
    assert events == ["init"]
    del value
    assert events == ["init", "del"]
    unused = Value(np.int32(0))
    del unused
    assert events == ["init", "del"]


@pytest.mark.skipif(not HAS_CLOUDPICKLE, reason="colocated_python serialization needs "
                    "cloudpickle, which is not installed here")
def test_serialization_round_trip_shares_repeated_values():
    from spmdc.experimental.colocated_python import serialization as ser
    d = spmdc.devices()
    mesh = Mesh(np.array(d[:2]).reshape(1, 2), ("x", "y"))
    s1, s2 = NamedSharding(mesh, P("x")), NamedSharding(mesh, P("y"))
    one, two, same = (ser._serialize(v) for v in ([s1], [s1, s2], [s1, s1]))
    assert len(two) < 2 * len(one) and len(same) < len(two)
    assert ser._deserialize(two) == [s1, s2] and ser._deserialize(same) == [s1, s1]
    single = SingleDeviceSharding(d[1])
    assert ser._deserialize(ser._serialize((single,))) == (single,)
    assert ser._deserialize(ser._serialize(lambda v: v + 1))(1) == 2


@pytest.mark.skipif(HAS_CLOUDPICKLE, reason="checks the message without cloudpickle")
def test_serialization_without_cloudpickle_says_so():
    from spmdc.experimental.colocated_python import serialization as ser
    with pytest.raises(ModuleNotFoundError, match="cloudpickle"):
        ser._serialize(1)


def test_devices_specialized_allow_arguments_in_other_device_orders():
    # JAX's test_inputs_with_different_device_orders
    cpu = cp.colocated_cpu_devices(spmdc.local_devices())[:2]

    @cp.colocated_python
    def add(x, y):
        blocks = [x.addressable_shards[1].data + y.addressable_shards[0].data,
                  x.addressable_shards[0].data + y.addressable_shards[1].data]
        return spmdc.make_array_from_single_device_arrays(y.shape, y.sharding, blocks)

    s1 = NamedSharding(Mesh(np.array([cpu[0], cpu[1]]), "x"), P("x"))
    s2 = NamedSharding(Mesh(np.array([cpu[1], cpu[0]]), "x"), P("x"))
    x = spmdc.device_put(np.array([0, 2]), s1)
    y = spmdc.device_put(np.array([4, 8]), s2)
    with pytest.raises(ValueError, match="All arguments must use the same device list"):
        add(x, y)
    out = add.specialize(devices=cpu)(x, y)
    assert out.sharding == s2
    assert [s.device for s in out.addressable_shards] == [cpu[1], cpu[0]]
    np.testing.assert_array_equal(np.asarray(out), [2 + 4, 0 + 8])
