"""spmdc.dlpack (JAX's ``jax.dlpack``): arrays from other libraries' DLPack tensors, and
which dtypes DLPack exchange supports.

``from_dlpack`` reads the tensor through NumPy's DLPack import and places it on an spmdc
device. spmdc's buffers are its own, so the Array is always a copy (JAX's may share the
producer's memory); ``copy=False``, which asks for sharing, is JAX's ValueError for a copy
that cannot be avoided. Tensors in host memory are read (CPU, CUDA-pinned host memory);
NumPy cannot read device memory, so a GPU tensor is a TypeError naming the device type.
"""
from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np

from .errors import where
from .numpy import from_dlpack as _jnp_from_dlpack
from .runtime.sharding import Sharding

__all__ = ["from_dlpack", "is_supported_dtype", "SUPPORTED_DTYPES"]

SUPPORTED_DTYPES: frozenset[np.dtype] = frozenset(np.dtype(t) for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
    np.bool_))

# DLPack's device types NumPy reads (DLDeviceType: kDLCPU 1, kDLCUDAHost 3).
_HOST_DEVICE_TYPES = {1: "CPU", 3: "CUDA host"}


def is_supported_dtype(dtype: Any) -> bool:
    """Whether DLPack exchange supports arrays of ``dtype``."""
    if dtype is None:
        raise TypeError(f"is_supported_dtype: expected a string or dtype-like object; got "
                        f"dtype=None{where()}")
    return np.dtype(dtype) in SUPPORTED_DTYPES


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Any:
    """An Array holding the values of ``external_array`` (an object with ``__dlpack__``
    and ``__dlpack_device__``), on ``device`` (a device or a one-device Sharding) if
    given, with the dtype canonicalised as JAX's (float64 becomes float32 unless x64 is
    enabled)."""
    if isinstance(device, Sharding):
        devices = device.device_set
        if len(devices) > 1:
            raise ValueError("from_dlpack can only unpack a dlpack tensor onto a single "
                             f"device, but a Sharding with {len(devices)} devices was "
                             f"provided{where()}")
        (device,) = devices
    if not (hasattr(external_array, "__dlpack__")
            and hasattr(external_array, "__dlpack_device__")):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                        f"__dlpack_device__ methods; got {type(external_array).__name__}"
                        f"{where()}")
    device_type, _ = external_array.__dlpack_device__()
    if int(device_type) not in _HOST_DEVICE_TYPES:
        raise TypeError(f"from_dlpack: the array is in the memory of DLPack device type "
                        f"{int(device_type)}; spmdc reads DLPack tensors in host memory "
                        f"only (copy it to the host first){where()}")
    if copy is False:
        raise ValueError("Specified copy=False, but spmdc always copies a DLPack tensor "
                         "into its own buffers; set copy=True or copy=None to perform the "
                         f"requested operation{where()}")
    return _jnp_from_dlpack(external_array, device=device)
