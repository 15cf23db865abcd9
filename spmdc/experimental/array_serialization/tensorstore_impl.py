"""``jax.experimental.array_serialization.tensorstore_impl``: writing and reading sharded
arrays with TensorStore, shard by shard.

Note [arrays in TensorStore]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~
A saved array is one TensorStore array (zarr3 by default, zarr for the older
``serialization.get_tensorstore_spec``), optionally inside an OCDBT key-value store, as
JAX writes it, so a checkpoint written by JAX reads here and back. Writing: each
process writes its addressable shards whose ``replica_id`` is 0 (one copy of each block
in all), into the region the shard's ``index`` names; the chunk shape divides the local
shard shape (large shards are split by prime factors below ~2 GB a file). Reading: for
every addressable device of the target sharding the region it holds
(``devices_indices_map``) is read into a host buffer of the shard's shape (zero-padded
where the stored array is smaller than the asked-for shape), cast to the asked-for
dtype, placed on that device, and the shards are assembled with
``make_array_from_single_device_arrays``: the array comes back with the sharding asked
for, whatever sharding it was saved with. ``_LimitInFlightBytes`` bounds the host memory
of reads in flight.

TensorStore is optional for spmdc: it is imported when first needed (``ts()``), and
its absence is an ``ImportError`` saying so; the module-level values JAX defines from it
(``Future``, ``Transaction``, ``_TS_CONTEXT``, ``_TS_CHUNK_LAYOUT``) are made on first
access.
"""
from __future__ import annotations

import asyncio
import functools
import math
import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...core.devices import device_put, make_array_from_single_device_arrays
from ...runtime import pjrt
from ...runtime.array import Array
from ...runtime.layouts import Format
from ...runtime.sharding import Sharding, SingleDeviceSharding

__all__ = ["async_serialize", "async_deserialize", "get_tensorstore_spec",
           "estimate_read_memory_footprint", "combine_kvstores", "merge_nested_ts_specs",
           "verify_tensorstore_spec", "is_tensorstore_spec_leaf"]

_TS_ARRAY_DRIVER = "zarr3"
_DEFAULT_BASE_DRIVER = "file"
_PROCESS_DIR_FORMAT = "process_{}"
_FILE_SIZE_TARGET = 2 * 1024 ** 3


def ts() -> Any:
    """The tensorstore module (ImportError, saying what needs it, when absent)."""
    try:
        import tensorstore
    except ImportError as e:
        raise ImportError(
            "jax.experimental.array_serialization needs the tensorstore package, which "
            "is not installed: pip install tensorstore") from e
    return tensorstore


@functools.cache
def _module_value(name: str) -> Any:
    t = ts()
    if name == "_TS_CONTEXT":
        return t.Context({"file_io_concurrency": {"limit": 128},
                          "cache_pool": {"total_bytes_limit": 10_000_000_000},
                          "cache_pool#remote": {"total_bytes_limit": 10_000_000_000},
                          "data_copy_concurrency": {"limit": 128}})
    if name == "_TS_CHUNK_LAYOUT":
        return t.ChunkLayout(chunk=t.ChunkLayout.Grid(elements=100_000_000))
    return getattr(t, name)


_LAZY = ("_TS_CONTEXT", "_TS_CHUNK_LAYOUT", "Future", "Transaction")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return _module_value(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _LimitInFlightBytes:
    """At most ``host_memory_bytes_limit`` bytes of host buffers in flight (one larger
    request raises the limit to its size)."""

    def __init__(self, host_memory_bytes_limit: int):
        self._max_bytes = host_memory_bytes_limit
        self._available_bytes = host_memory_bytes_limit
        self._cv = asyncio.Condition(lock=asyncio.Lock())

    async def wait_for_bytes(self, requested_bytes: int) -> None:
        if requested_bytes > self._max_bytes:
            used = self._max_bytes - self._available_bytes
            self._max_bytes = requested_bytes
            self._available_bytes = self._max_bytes - used
        async with self._cv:
            await self._cv.wait_for(lambda: self._available_bytes >= requested_bytes)
            self._available_bytes -= requested_bytes

    async def release_bytes(self, requested_bytes: int) -> None:
        async with self._cv:
            self._available_bytes += requested_bytes
            self._cv.notify_all()


def is_tensorstore_spec_leaf(leaf: Any) -> bool:
    return leaf is None or (isinstance(leaf, dict) and ("driver" in leaf or "kvstore" in leaf))


def _prime_factors(x: int) -> list[int]:
    out, p = [], 2
    while p * p <= x:
        while x % p == 0:
            out.append(p)
            x //= p
        p += 1
    if x > 1:
        out.append(x)
    return out


@functools.lru_cache(maxsize=1024)
def _compute_chunk_shape(local_shape: tuple[int, ...], dtype: Any,
                         file_size_target: int = _FILE_SIZE_TARGET) -> list[int]:
    """A chunk shape dividing ``local_shape`` of at most ~1.1 x ``file_size_target``
    bytes: the smallest prime factor available is divided out, axis by axis."""
    shape = list(local_shape)
    if not shape or math.prod(shape) == 0:
        return [max(z, 1) for z in shape]
    size = math.prod(shape) * np.dtype(dtype).itemsize
    factors = [_prime_factors(z) for z in shape]
    while size > 1.1 * file_size_target:
        axes = [i for i, f in enumerate(factors) if len(f) > 1]
        if not axes:
            return shape
        axis = min(axes, key=lambda i: factors[i][0])
        divisor = factors[axis].pop(0)
        shape[axis] //= divisor
        size //= divisor
    return shape


def _local_shape(arr: Any) -> tuple[int, ...]:
    if isinstance(arr, Array):
        return tuple(arr.sharding.shard_shape(tuple(arr.shape)))
    return tuple(arr.shape)


def _get_tensorstore_metadata(arr: Any, is_remote: bool = False,
                              file_size_target: int = _FILE_SIZE_TARGET,
                              driver: str = _TS_ARRAY_DRIVER) -> dict[str, Any]:
    """The ``metadata`` of a TensorStore spec for ``arr`` (shape, dtype, chunks)."""
    shape, local = tuple(arr.shape), _local_shape(arr)
    if driver == "zarr3":
        return {"codecs": [{"name": "zstd"}] if is_remote else [], "shape": shape,
                "data_type": np.dtype(arr.dtype).name,
                "chunk_grid": {"name": "regular", "configuration": {
                    "chunk_shape": _compute_chunk_shape(local, np.dtype(arr.dtype),
                                                        file_size_target)}}}
    if driver == "zarr":
        return {"compressor": {"id": "zstd"}, "shape": shape,
                "chunks": np.maximum(1, np.array(local, dtype=np.int64)).tolist()}
    raise ValueError(f"Unsupported driver: {driver}")


def merge_nested_ts_specs(dict1: dict[Any, Any], dict2: dict[Any, Any] | None
                          ) -> dict[Any, Any]:
    """``dict1`` updated by ``dict2``, their ``kvstore`` entries merged."""
    if dict2 is None:
        return dict1
    kvstore = dict1.get("kvstore", {}) | dict2.get("kvstore", {})
    return dict1 | dict(dict2, kvstore=kvstore)


def verify_tensorstore_spec(spec: dict[str, Any], arr: Any, path: Any, ocdbt: bool,
                            check_metadata: bool = True) -> None:
    """ValueError unless ``spec`` writes ``arr`` at ``path`` (driver, dtype, shape,
    chunks dividing the local shape)."""
    if ocdbt and spec.get("kvstore", {}).get("driver", "") != "ocdbt":
        raise ValueError(f"Expected ocdbt driver, got {spec=}")
    if check_metadata:
        if arr is None:
            raise ValueError("Array is required for metadata verification.")
        metadata = spec["metadata"]
        zarr3 = spec.get("driver", "") == "zarr3"
        if zarr3 and metadata["data_type"] != np.dtype(arr.dtype).name:
            raise ValueError(f"Provided dtype ({metadata['data_type']=}) doesn't match "
                             f"({arr.dtype=})")
        if "shape" in metadata and tuple(metadata["shape"]) != tuple(arr.shape):
            raise ValueError(f"Provided shape ({metadata['shape']=}) doesn't match "
                             f"({arr.shape=})")
        if zarr3:
            chunk = metadata["chunk_grid"]["configuration"]["chunk_shape"]
            if not np.all(np.array(_local_shape(arr)) % np.array(chunk) == 0):
                raise ValueError(f"Provided chunk shape {chunk} does not divide the local "
                                 f"shape of the array {_local_shape(arr)}")
    found = spec["kvstore"]["base"]["path"] if ocdbt else spec["kvstore"]["path"]
    if str(found) != str(path):
        raise ValueError(f"Provided {path=} does not match the spec path: {spec['kvstore']}")


def _spec_has_metadata(tree: Any) -> bool:
    return isinstance(tree, dict) and (
        "metadata" in tree or any(_spec_has_metadata(v) for v in tree.values()))


def _bucket_kvstore(driver: str, ckpt_path: str) -> dict[str, Any]:
    m = re.fullmatch(rf"^{'gs' if driver == 'gcs' else 's3'}://([^/]*)/(.*)$", ckpt_path,
                     re.DOTALL)
    if m is None:
        raise ValueError("The ckpt_path should contain the bucket name and the file path "
                         f"inside the bucket. Got: {ckpt_path}")
    return {"driver": driver, "bucket": m.group(1), "path": m.group(2)}


def get_tensorstore_spec(ckpt_path: Any, ocdbt: bool = True, process_idx: int | None = None,
                         arr: Any = None, driver: str = _TS_ARRAY_DRIVER) -> dict[str, Any]:
    """The TensorStore spec of an array saved at ``ckpt_path`` (a local path, gs:// or
    s3://), inside an OCDBT store (its parent directory) when ``ocdbt``; with ``arr``,
    its metadata too."""
    path = re.sub(r"^(gs|s3):/", r"\1://", os.path.normpath(str(ckpt_path)))
    if process_idx is not None:
        parent, name = os.path.split(path)
        path = os.path.join(parent, _PROCESS_DIR_FORMAT.format(process_idx), name)
    remote = "gcs" if path.startswith("gs://") else "s3" if path.startswith("s3://") else None
    spec: dict[str, Any] = {"driver": driver, "kvstore": {}}
    entry = None
    if ocdbt:
        original = path
        path, entry = os.path.split(path)
        if remote and re.fullmatch(r"^(gs|s3)://([^/]*)/(.*)$", path) is None:
            raise ValueError("Using OCDBT requires the bucket name, the directory name and "
                             f"the array name, your path is: {original}")
    base = (_bucket_kvstore(remote, path) if remote
            else {"driver": _DEFAULT_BASE_DRIVER, "path": path})
    if ocdbt:
        if not remote and not os.path.isabs(path):
            raise ValueError(f"Checkpoint path should be absolute. Got {path}")
        spec["kvstore"] = {"driver": "ocdbt", "base": base, "path": entry}
    else:
        spec["kvstore"] = base
    if arr is not None:
        spec["metadata"] = _get_tensorstore_metadata(arr, driver=str(spec["driver"]))
    return spec


async def combine_kvstores(combined_kvstore: dict[str, Any], kvstores: list[dict[str, Any]],
                           context: Any = None) -> None:
    """Copy every key of ``kvstores`` into ``combined_kvstore`` (one transaction; not
    safe across processes)."""
    t = ts()
    context = _module_value("_TS_CONTEXT") if context is None else context
    combined, opened = await asyncio.gather(
        t.KvStore.open(combined_kvstore, context=context),
        asyncio.gather(*(t.KvStore.open(k, context=context) for k in kvstores)))
    tx = t.Transaction()
    await asyncio.gather(*(k.experimental_copy_range_to(combined.with_transaction(tx))
                           for k in opened))
    await tx.commit_async()


async def async_serialize(arr_inp: Any, tensorstore_spec: dict[str, Any],
                          commit_future: list[Any] | None = None, context: Any = None,
                          chunk_layout: Any = None, primary_host: int | None = None,
                          replica_id: int = 0, transaction: Any = None) -> Any:
    """Write ``arr_inp``'s addressable shards of replica ``replica_id`` to the array
    ``tensorstore_spec`` names (created by ``primary_host``, every process if None).
    With ``commit_future`` (a list) the commits are appended to it and this returns once
    the data is copied out; without, it returns once written. See Note [arrays in
    TensorStore]."""
    t = ts()
    context = _module_value("_TS_CONTEXT") if context is None else context
    chunk_layout = _module_value("_TS_CHUNK_LAYOUT") if chunk_layout is None else chunk_layout
    if isinstance(arr_inp, Array) and pjrt.process_count() > 1 and \
            arr_inp.is_fully_addressable:
        raise ValueError(
            "Passing fully addressable arrays to a multiprocess serialization is not "
            "allowed, as this may lead to a race condition between processes. "
            "Serialization have failed for the array with the path from kvstore: "
            f"\"{tensorstore_spec['kvstore']}\".")
    if not _spec_has_metadata(tensorstore_spec):
        tensorstore_spec["metadata"] = _get_tensorstore_metadata(
            arr_inp, driver=tensorstore_spec["driver"])
    if tensorstore_spec["driver"] == "zarr" and "dtype" not in tensorstore_spec:
        tensorstore_spec["dtype"] = np.dtype(arr_inp.dtype).name
    if primary_host is None or pjrt.process_index() == primary_host:
        opened = t.open(t.Spec(tensorstore_spec), create=True, open=True, context=context,
                        chunk_layout=chunk_layout, transaction=transaction)
        if commit_future is not None:
            commit_future.append(opened)
        else:
            await opened
    store = await t.open(t.Spec(tensorstore_spec), open=True, assume_metadata=True,
                         context=context, chunk_layout=chunk_layout, transaction=transaction)

    async def write(shard: Any) -> None:
        if shard.replica_id != replica_id:
            return
        data = np.asarray(shard.data)
        await asyncio.sleep(0)
        future = store[shard.index].write(
            data, can_reference_source_data_indefinitely=isinstance(arr_inp, Array))
        if commit_future is not None:
            commit_future.append(future.commit)
            await future.copy
        else:
            await future.commit

    if isinstance(arr_inp, Array):
        shards = arr_inp.addressable_shards
        return await asyncio.gather(*(write(s) for s in shards))
    data = np.asarray(arr_inp)
    future = store[...].write(data)
    if commit_future is not None:
        commit_future.append(future.commit)
        return await future.copy
    return await future.commit


def _run_serialization(arrays: Sequence[Any], tensorstore_specs: Sequence[Any]) -> None:
    """Write each array to its spec, and wait."""
    async def run() -> Any:
        return await asyncio.gather(*(async_serialize(a, s) for a, s in
                                      zip(arrays, tensorstore_specs, strict=True)))
    asyncio.run(run())


def estimate_read_memory_footprint(t: Any, domain: Any) -> int:
    """Bytes read to fill ``domain`` of ``t``: whole chunks, aligned."""
    nbytes = t.dtype.numpy_dtype.itemsize
    template = t.chunk_layout.read_chunk_template
    domain = t.domain if domain is None else domain
    if not all(template[i].finite for i in range(t.rank)):
        return domain.size * nbytes
    for i in range(t.rank):
        size = template.shape[i]
        lower = domain.origin[i] - template.origin[i]
        upper = lower + domain.shape[i]
        nbytes *= -(-upper // size) * size - lower // size * size
    return nbytes


def _in_sharding(in_type: Any) -> tuple[Any, Any, Any]:
    """(sharding, layout, dtype or None) of what ``async_deserialize`` was asked for."""
    if isinstance(in_type, Format):
        return in_type.sharding, in_type.layout, None
    if hasattr(in_type, "shape") and hasattr(in_type, "dtype") and \
            hasattr(in_type, "sharding") and not isinstance(in_type, Array):
        fmt = getattr(in_type, "format", None)
        return in_type.sharding, getattr(fmt, "layout", None), in_type.dtype
    if not isinstance(in_type, Sharding):
        raise TypeError("sharding passed to deserialization should be specified, concrete "
                        f"and an instance of `jax.sharding.Sharding`. Got {in_type}")
    return in_type, None, None


async def async_deserialize(in_type: Any, tensorstore_spec: Any,
                            global_shape: Sequence[int] | None = None, dtype: Any = None,
                            byte_limiter: _LimitInFlightBytes | None = None,
                            context: Any = None, chunk_layout: Any = None,
                            assume_metadata: bool = False) -> Array:
    """The array stored at ``tensorstore_spec``, as ``in_type`` (a Sharding, a Format or
    a ShapeDtypeStruct with a sharding) asks: its sharding, ``global_shape`` (the
    stored shape if None; zero-padded or cut), ``dtype`` (the stored one if None). See
    Note [arrays in TensorStore]."""
    t = ts()
    sharding, layout, spec_dtype = _in_sharding(in_type)
    dtype = spec_dtype if dtype is None else dtype
    context = _module_value("_TS_CONTEXT") if context is None else context
    chunk_layout = _module_value("_TS_CHUNK_LAYOUT") if chunk_layout is None else chunk_layout
    store = await t.open(tensorstore_spec, open=True, assume_metadata=assume_metadata,
                         context=context, chunk_layout=chunk_layout)
    shape = tuple(store.shape if global_shape is None else global_shape)
    stored = store.dtype.numpy_dtype
    dtype = stored if dtype is None else np.dtype(dtype)
    shard_shape = tuple(sharding.shard_shape(shape))
    index_of = sharding.devices_indices_map(shape)

    async def read(device: Any) -> Any:
        wanted = t.IndexTransform(input_shape=shape)[index_of[device]].domain
        present = store.domain.intersect(wanted)
        nbytes = estimate_read_memory_footprint(store, present)
        if byte_limiter is not None:
            await byte_limiter.wait_for_bytes(nbytes)
        out = np.zeros(shard_shape, dtype=stored)
        await t.array(out)[t.d[:].translate_to[wanted.origin]][present].write(store[present])
        target = SingleDeviceSharding(device)
        placed = device_put(out.astype(dtype),
                            target if layout is None else Format(layout, target))
        if byte_limiter is not None:
            await byte_limiter.release_bytes(nbytes)
        return placed

    devices = sharding._addressable_device_assignment
    shards = await asyncio.gather(*(read(d) for d in devices))
    return make_array_from_single_device_arrays(shape, sharding, list(shards))


def _run_deserialization(shardings: Sequence[Any], tensorstore_specs: Sequence[Any],
                         global_shapes: Sequence[Any] | None = None,
                         dtypes: Sequence[Any] | None = None,
                         concurrent_gb: int = 32) -> list[Array]:
    """Read each array with its sharding (and shape, dtype), at most ``concurrent_gb``
    GB of host buffers at once."""
    n = len(tensorstore_specs)
    shapes = [None] * n if global_shapes is None else list(global_shapes)
    kinds = [None] * n if dtypes is None else list(dtypes)

    async def run() -> list[Array]:
        limiter = _LimitInFlightBytes(concurrent_gb * 10 ** 9)
        return list(await asyncio.gather(*(
            async_deserialize(s, spec, g, d, byte_limiter=limiter) for s, spec, g, d in
            zip(list(shardings), list(tensorstore_specs), shapes, kinds, strict=True))))
    return asyncio.run(run())


