"""jax.experimental.array_serialization (spmdc/experimental/array_serialization/): sharded
arrays written shard by shard to TensorStore and read back with the sharding asked for
(Note [arrays in TensorStore]); GlobalAsyncCheckpointManager commits in a thread (Note
[asynchronous checkpoint commits]). TensorStore is optional: the round trips skip when it
is not installed (spmdc's own environment has none), and the module imports without it."""
import importlib.util
import os

import numpy as np
import pytest
from needs import needs_devices

import spmdc
from spmdc.experimental.array_serialization import serialization as ser
from spmdc.experimental.array_serialization import tensorstore_impl as ts_impl
from spmdc.sharding import NamedSharding
from spmdc.sharding import PartitionSpec as P

HAS_TENSORSTORE = importlib.util.find_spec("tensorstore") is not None
needs_tensorstore = pytest.mark.skipif(not HAS_TENSORSTORE,
                                       reason="tensorstore is not installed here")


def test_specs_as_jax_writes_them():
    x = np.zeros((8, 4), np.float32)
    spec = ts_impl.get_tensorstore_spec("/ckpt/params/w", arr=x)
    assert spec == {"driver": "zarr3", "kvstore": {
        "driver": "ocdbt", "base": {"driver": "file", "path": "/ckpt/params"}, "path": "w"},
        "metadata": {"codecs": [], "shape": (8, 4), "data_type": "float32", "chunk_grid": {
            "name": "regular", "configuration": {"chunk_shape": [8, 4]}}}}
    assert ser.get_tensorstore_spec("gs://bucket/dir/a") == {
        "driver": "zarr", "kvstore": {"driver": "gcs", "bucket": "bucket", "path": "dir/a"}}
    assert ts_impl._compute_chunk_shape((1024, 3), np.dtype(np.float32), 4000) == [256, 3]
    assert ser.is_remote_storage("s3://b/x") and not ser.is_remote_storage({"driver": "file"})
    with pytest.raises(ValueError, match="Checkpoint path should be absolute"):
        ts_impl.get_tensorstore_spec("relative/a")


@pytest.mark.skipif(HAS_TENSORSTORE, reason="checks the message without tensorstore")
def test_without_tensorstore_says_so():
    with pytest.raises(ImportError, match="needs the tensorstore package"):
        ser.run_serialization([np.zeros(2)], [ts_impl.get_tensorstore_spec("/tmp/a")])


@needs_tensorstore
def test_round_trip_with_another_sharding_shape_and_dtype(tmp_path):
    needs_devices(4)
    mesh = spmdc.make_mesh((2, 2), ("x", "y"))
    x = spmdc.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4),
                         NamedSharding(mesh, P("x", "y")))
    committed = []
    manager = ser.GlobalAsyncCheckpointManager()
    manager.serialize_with_paths([x], [os.path.join(tmp_path, "a")],
                                 on_commit_callback=lambda: committed.append(True))
    manager.wait_until_finished()
    assert committed == [True]
    target = NamedSharding(mesh, P(None, "x"))
    (y,) = manager.deserialize_with_paths([target], [os.path.join(tmp_path, "a")])
    assert y.sharding == target
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    (z,) = manager.deserialize_with_paths([target], [os.path.join(tmp_path, "a")],
                                          global_shapes=[(10, 4)], dtypes=[np.int32])
    assert z.dtype == np.int32 and z.shape == (10, 4)
    np.testing.assert_array_equal(np.asarray(z)[7:], [[28, 29, 30, 31], [0] * 4, [0] * 4])
    spec = ts_impl.get_tensorstore_spec(os.path.join(tmp_path, "b"), arr=x)
    ser.run_serialization([x], [spec])
    (w,) = ser.run_deserialization([NamedSharding(mesh, P())], [spec])
    assert float(np.asarray(w).sum()) == 496.0


@needs_tensorstore
def test_commit_errors_are_raised_once(tmp_path):
    manager = ser.GlobalAsyncCheckpointManager()

    def fail():
        raise OSError("disk full")
    manager.serialize_with_paths([np.ones(3, np.float32)], [os.path.join(tmp_path, "c")],
                                 on_commit_callback=fail)
    with pytest.raises(OSError, match="disk full"):
        manager.wait_until_finished()
    manager.check_for_errors()
