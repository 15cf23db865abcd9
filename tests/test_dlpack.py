"""spmdc.dlpack (jax.dlpack): from_dlpack of host tensors onto a device, and
is_supported_dtype, with JAX 0.10.2's results and exception types (recorded)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import spmdc
from spmdc import dlpack
from spmdc.sharding import NamedSharding, PartitionSpec, SingleDeviceSharding


def test_from_dlpack_reads_a_host_tensor_with_jaxs_dtype_and_device():
    y = dlpack.from_dlpack(np.arange(6, dtype=np.float64).reshape(2, 3))
    assert isinstance(y, spmdc.Array) and y.dtype == np.float32       # x64 off, as JAX
    assert np.asarray(y).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert y.devices() == {spmdc.devices()[0]}
    last = spmdc.devices()[-1]
    for target in (last, SingleDeviceSharding(last)):
        z = dlpack.from_dlpack(np.arange(3, dtype=np.int16), device=target)
        assert z.dtype == np.int16 and z.devices() == {last}
        assert np.asarray(z).tolist() == [0, 1, 2]
    assert dlpack.from_dlpack(np.ones(2, np.float32), copy=True).dtype == np.float32
    assert spmdc.dlpack is dlpack


@pytest.mark.devices(2)
def test_from_dlpack_bad_input_is_jaxs_exception():
    with pytest.raises(TypeError, match="must have __dlpack__ and __dlpack_device__"):
        dlpack.from_dlpack([1, 2])
    mesh = spmdc.make_mesh((2,), ("x",))
    with pytest.raises(ValueError, match="onto a single device, but a Sharding with 2"):
        dlpack.from_dlpack(np.ones(2), device=NamedSharding(mesh, PartitionSpec()))
    with pytest.raises(ValueError, match="copy=False"):
        dlpack.from_dlpack(np.ones(2), copy=False)

    class OnGpu:
        def __dlpack__(self, stream=None):
            raise AssertionError("not read")

        def __dlpack_device__(self):
            return (2, 0)                       # kDLCUDA
    with pytest.raises(TypeError, match="DLPack device type 2"):
        dlpack.from_dlpack(OnGpu())


def test_is_supported_dtype_as_jax():
    supported = [np.float32, "int8", ml_dtypes.bfloat16, np.float16, "complex64", np.bool_,
                 np.dtype("float64"), np.uint64]
    assert all(dlpack.is_supported_dtype(d) for d in supported)
    assert not dlpack.is_supported_dtype(ml_dtypes.float8_e4m3fn)
    assert not dlpack.is_supported_dtype(np.str_)
    with pytest.raises(TypeError, match="dtype=None"):
        dlpack.is_supported_dtype(None)
