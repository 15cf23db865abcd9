"""spmdc.make_array_from_callback / _single_device_arrays / _process_local_data: a laid
out array from its blocks, as JAX builds one (single process; across processes they are
refused, see README "Several processes, GPUs")."""
from __future__ import annotations

import numpy as np
import pytest

import spmdc
import spmdc.numpy as jnp
from spmdc.sharding import NamedSharding, SingleDeviceSharding
from spmdc.sharding import PartitionSpec as P

pytestmark = pytest.mark.devices(8)      # its mesh spans 8 devices


@pytest.fixture
def mesh():
    return spmdc.make_mesh((4, 2), ("x", "y"))


def test_from_callback_blocks_and_values(mesh):
    x = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
    s = NamedSharding(mesh, P("x", "y"))
    seen = []

    def block(index):
        seen.append(index)
        return x[index]
    a = spmdc.make_array_from_callback(x.shape, s, block)
    assert a.sharding == s and a.shape == (8, 6) and a.dtype == np.float32
    np.testing.assert_array_equal(a, x)
    assert len(seen) == 8 and all(x[i].shape == (2, 3) for i in seen)
    np.testing.assert_array_equal(spmdc.jit(lambda v: v * 2)(a), 2 * x)
    replicated = spmdc.make_array_from_callback((3,), NamedSharding(mesh, P()),
                                                lambda i: np.ones(3)[i])
    np.testing.assert_array_equal(replicated, np.ones(3))
    one = spmdc.make_array_from_callback((2,), SingleDeviceSharding(spmdc.devices()[1]),
                                         lambda i: np.array([1, 2])[i], dtype=np.int32)
    assert one.dtype == np.int32 and one.devices() == {spmdc.devices()[1]}


def test_from_single_device_arrays(mesh):
    x = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
    s = NamedSharding(mesh, P("x"))
    index = s.devices_indices_map(x.shape)
    pieces = [spmdc.device_put(x[index[d]], d) for d in list(mesh.devices.flat)[::-1]]
    a = spmdc.make_array_from_single_device_arrays(x.shape, s, pieces)
    np.testing.assert_array_equal(a, x)
    assert a.sharding == s
    np.testing.assert_array_equal(jnp.sum(a, axis=0), x.sum(axis=0))


def test_from_process_local_data(mesh):
    x = np.arange(16, dtype=np.int32).reshape(8, 2)
    a = spmdc.make_array_from_process_local_data(NamedSharding(mesh, P("x")), x)
    np.testing.assert_array_equal(a, x)
    b = spmdc.make_array_from_process_local_data(NamedSharding(mesh, P("x")), x, (8, 2))
    np.testing.assert_array_equal(b, x)


def test_errors_name_the_problem(mesh):
    s = NamedSharding(mesh, P("x"))
    x = np.zeros((8, 2), np.float32)
    with pytest.raises(ValueError, match="hold 4 x 1 blocks of shape \\(4, 2\\) of the "
                       "global shape \\(16, 2\\), \\(16, 2\\) in all, but the local data "
                       "has shape \\(8, 2\\)"):
        spmdc.make_array_from_process_local_data(s, x, (16, 2))
    with pytest.raises(ValueError, match="8 devices, but 1 arrays"):
        spmdc.make_array_from_single_device_arrays((8, 2), s, [spmdc.device_put(x[:2])])
    index = s.devices_indices_map(x.shape)
    pieces = [spmdc.device_put(x[index[d]], d) for d in mesh.devices.flat]
    pieces[3] = spmdc.device_put(np.zeros((3, 2), np.float32), mesh.devices.flat[3])
    with pytest.raises(ValueError, match="block of \\[8, 2\\] is float32\\[2, 2\\]"):
        spmdc.make_array_from_single_device_arrays((8, 2), s, pieces)
    with pytest.raises(ValueError, match="needs \\(2, 2\\)"):
        spmdc.make_array_from_callback((8, 2), s, lambda i: np.zeros((1, 2)))
    with pytest.raises(ValueError, match="divid|divisible"):
        spmdc.make_array_from_callback((6, 2), s, lambda i: np.zeros((1, 2)))
    with pytest.raises(TypeError, match="NamedSharding or SingleDeviceSharding"):
        spmdc.make_array_from_callback((8, 2), "x", lambda i: x[i])


def test_process_local_data_of_devices_scattered_over_the_mesh(mesh, monkeypatch):
    # As if this process had only the mesh's devices with an even id (another process
    # the others): its rows are blocks 0, 2, 4, 6 of 8 (mesh order), one after the other.
    from spmdc.runtime import sharding as sharding_module
    monkeypatch.setattr(sharding_module, "_local", lambda devices: tuple(
        d for d in devices if d.id % 2 == 0))
    s = NamedSharding(spmdc.make_mesh((8,), ("x",)), P("x"))
    whole = np.arange(16 * 3, dtype=np.float32).reshape(16, 3)
    mine = np.concatenate([whole[2 * k:2 * k + 2] for k in (0, 2, 4, 6)])
    a = spmdc.make_array_from_process_local_data(s, mine)
    assert a.shape == (16, 3) and not a.is_fully_addressable
    assert len(a.addressable_shards) == 4 and len(a.global_shards) == 8
    for shard in a.addressable_shards:
        np.testing.assert_array_equal(shard.data, whole[shard.index])
    assert [g.data is None for g in a.global_shards] == [False, True] * 4
    with pytest.raises(RuntimeError, match="holds only some of its blocks"):
        np.asarray(a)
    b = spmdc.make_array_from_process_local_data(NamedSharding(s.mesh, P(None, "x")),
                                                 np.zeros((2, 4)))
    assert b.shape == (2, 8)
