"""spmdc.sharding: Mesh, PartitionSpec, NamedSharding, device_put over a mesh, and the
layout an Array reports (sharding, addressable_shards), against NumPy slicing."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.sharding import (
    AxisType,
    Mesh,
    NamedSharding,
    PartitionSpec,
    SingleDeviceSharding,
    visualize_array_sharding,
)

pytestmark = pytest.mark.devices(8)      # its mesh spans 8 devices

P = PartitionSpec


@pytest.fixture(scope="module")
def mesh():
    return spmdc.make_mesh((2, 4), ("x", "y"))


def test_mesh_and_spec_objects(mesh):
    assert mesh.shape == {"x": 2, "y": 4} and mesh.axis_names == ("x", "y")
    assert mesh.size == 8 and mesh.axis_sizes == (2, 4)
    assert mesh.axis_types == (AxisType.Explicit, AxisType.Explicit)   # make_mesh's default
    assert [d.id for d in mesh.devices.flat] == list(range(8))
    m = Mesh(np.array(spmdc.devices()).reshape(2, 4), ("x", "y"))
    assert m.axis_types == (AxisType.Auto, AxisType.Auto)             # Mesh's default
    assert repr(mesh) == "Mesh('x': 2, 'y': 4, axis_types=(Explicit, Explicit))"
    assert repr(P("x", None, ("x", "y"))) == "P('x', None, ('x', 'y'))"
    assert repr(P("x")) == "P('x',)" and repr(P()) == "P()"
    assert P("x") == P("x") and P("x") != P("y") and hash(P("x", None)) == hash(P("x", None))
    assert spmdc.P is P and spmdc.sharding.PartitionSpec is P
    s = NamedSharding(mesh, P("x"))
    assert s == NamedSharding(mesh, P("x")) and s.num_devices == 8
    assert not s.is_fully_replicated and NamedSharding(mesh, P()).is_fully_replicated
    assert s.shard_shape((8, 4)) == (4, 4)
    assert s.is_equivalent_to(NamedSharding(mesh, P("x", None)), 2)
    assert not s.is_equivalent_to(NamedSharding(mesh, P("y")), 2)


def test_spec_entries_are_canonical_and_searchable():
    # Flax's logical-axis rules look a dimension up with spec.index(name); the values are
    # JAX 0.10.2's.
    s = P("x", None, ("a", "b"))
    assert (s.index("x"), s.index(None), s.index(["a", "b"]), s.count(None)) == (0, 1, 2, 1)
    assert P(("x",)) == P("x") and repr(P(("x",))) == "P('x',)"
    assert repr(P(["a", "b"])) == "P(('a', 'b'),)" and repr(P(())) == "P(None,)"
    with pytest.raises(ValueError, match="not in tuple"):
        s.index("z")


def test_devices_indices_map_follows_the_mesh_order(mesh):
    idx = NamedSharding(mesh, P("x", "y")).devices_indices_map((8, 8))
    devs = list(mesh.devices.flat)
    assert idx[devs[0]] == (slice(0, 4), slice(0, 2))
    assert idx[devs[5]] == (slice(4, 8), slice(2, 4))          # device (1, 1)
    # A tuple of axes: the first is major.
    idx = NamedSharding(mesh, P(("x", "y"))).devices_indices_map((16,))
    assert [idx[d] for d in devs] == [(slice(2 * k, 2 * k + 2),) for k in range(8)]
    idx = NamedSharding(mesh, P(("y", "x"))).devices_indices_map((16,))
    assert idx[devs[1]] == (slice(4, 6),) and idx[devs[4]] == (slice(2, 4),)
    # Unsplit dimensions read whole.
    assert NamedSharding(mesh, P(None, "x")).devices_indices_map((3, 4))[devs[7]] == (
        slice(None), slice(2, 4))


@pytest.mark.parametrize("spec", [P("x", "y"), P("y", "x"), P(("x", "y")), P(None, "y"),
                                  P(), P(("y", "x"), None)])
def test_device_put_places_each_block_and_reads_back(mesh, spec):
    a = np.arange(8 * 8, dtype=np.float32).reshape(8, 8)
    x = spmdc.device_put(a, NamedSharding(mesh, spec))
    assert x.sharding == NamedSharding(mesh, spec)
    np.testing.assert_array_equal(np.asarray(x), a)
    index = x.sharding.devices_indices_map(a.shape)
    shards = x.addressable_shards
    assert [s.device for s in shards] == list(mesh.devices.flat)
    for s in shards:
        assert s.index == index[s.device]
        np.testing.assert_array_equal(np.asarray(s.data), a[s.index])
        assert s.data.devices() == {s.device}
    # replica_id numbers the devices holding the same block
    blocks: dict = {}
    for s in shards:
        key = tuple((i.start, i.stop) for i in s.index)
        assert s.replica_id == blocks.get(key, 0)
        blocks[key] = s.replica_id + 1
    # Computations take sharded arrays as arguments and give the right numbers.
    np.testing.assert_allclose(spmdc.jit(lambda v: v * 2 + 1)(x), a * 2 + 1)
    np.testing.assert_allclose(jnp.sum(x, axis=0), a.sum(0))
    assert spmdc.device_put(x, NamedSharding(mesh, spec)) is x


def test_device_put_with_a_spec_needs_a_mesh_and_uses_the_current_one(mesh):
    a = np.arange(8.0, dtype=np.float32)
    with pytest.raises(ValueError, match="needs a mesh"):
        spmdc.device_put(a, P("x"))
    with spmdc.set_mesh(mesh):
        x = spmdc.device_put(a, P("y"))
    assert x.sharding == NamedSharding(mesh, P("y"))
    assert spmdc.sharding.get_mesh() is None
    with mesh:
        assert spmdc.sharding.get_mesh() is mesh
    np.testing.assert_array_equal(np.asarray(x), a)


def test_single_device_values_and_pmap_results_report_their_layout():
    x = jnp.ones(3)
    assert x.sharding == SingleDeviceSharding(spmdc.devices()[0]) and x.is_fully_replicated
    assert len(x.addressable_shards) == 1
    y = spmdc.device_put(np.ones(3), SingleDeviceSharding(spmdc.devices()[2]))
    assert y.devices() == {spmdc.devices()[2]}
    z = spmdc.pmap(lambda v: v * 2)(np.arange(8.0).reshape(8, 1))
    assert isinstance(z.sharding, NamedSharding) and z.sharding.spec == P("pmap")
    assert [s.index[0] for s in z.addressable_shards] == [slice(k, k + 1) for k in range(8)]
    np.testing.assert_array_equal(np.asarray(z.addressable_shards[3].data), [[6.0]])


def test_visualize_array_sharding(mesh, capsys):
    visualize_array_sharding(spmdc.device_put(np.ones((8, 8)), NamedSharding(mesh, P("y"))))
    out = capsys.readouterr().out.splitlines()
    assert [line.strip("| ") for line in out[1::2]] == ["CPU 0,4", "CPU 1,5", "CPU 2,6",
                                                        "CPU 3,7"]
    visualize_array_sharding(spmdc.device_put(np.ones((4, 8)), NamedSharding(mesh,
                                                                               P("x", "y"))))
    out = capsys.readouterr().out.splitlines()
    assert out[1].count("CPU") == 4 and "CPU 5" in out[3]


@pytest.mark.parametrize("make, fragment", [
    (lambda m: NamedSharding(m, P("z")), "names mesh axis 'z'"),
    (lambda m: NamedSharding(m, P("x", "x")), "uses mesh axis 'x' for more than one"),
    (lambda m: spmdc.device_put(np.ones((3, 4)), NamedSharding(m, P("x"))),
     "dimension 0 of shape (3, 4) has size 3, which is not divisible by 2"),
    (lambda m: spmdc.device_put(np.ones(4), NamedSharding(m, P(None, "x"))),
     "has 2 entries, but the array has only 1 dimensions"),
    (lambda m: spmdc.make_mesh((4, 4), ("a", "b")), "needs 16 devices"),
    (lambda m: Mesh(np.array(spmdc.devices()[:4]), ("a", "b")), "1 dimensions"),
    (lambda m: Mesh(np.array(spmdc.devices()[:2]), ("a", "a")), "name an axis twice"),
    (lambda m: P(3), "PartitionSpec entries"),
])
def test_bad_meshes_and_specs_are_clear_errors(mesh, make, fragment):
    with pytest.raises((ValueError, TypeError)) as e:
        make(mesh)
    assert fragment in str(e.value)
    np.testing.assert_array_equal(spmdc.jit(lambda v: v + 1)(np.ones(2)), [2.0, 2.0])
