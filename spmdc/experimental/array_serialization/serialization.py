"""``jax.experimental.array_serialization.serialization``: saving and restoring sharded
arrays with TensorStore (Note [arrays in TensorStore] in tensorstore_impl.py), and
``GlobalAsyncCheckpointManager``, which writes them in the background.

Note [asynchronous checkpoint commits]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
``GlobalAsyncCheckpointManager.serialize`` returns once every addressable shard has been
copied out of its device buffer (the arrays may then be changed or deleted); a thread
waits for TensorStore's commits, then (several processes) waits at a barrier of the
distributed client, then process 0 runs ``on_commit_callback`` (e.g. renaming a temporary
directory) and sets a key the others wait for in ``wait_until_finished``. An error in
the thread is kept and raised once by ``check_for_errors`` or ``wait_until_finished``; a
barrier timeout becomes ``BarrierTimeoutError`` with hints. A new ``serialize`` first
waits for the previous one, as JAX's does.
"""
from __future__ import annotations

import abc
import asyncio
import functools
import itertools
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ...errors import BarrierTimeoutError
from ...runtime import distributed, monitoring, pjrt
from . import tensorstore_impl as ts_impl
from .tensorstore_impl import _LimitInFlightBytes, async_deserialize, async_serialize

run_serialization = ts_impl._run_serialization
run_deserialization = ts_impl._run_deserialization
_DEFAULT_DRIVER = ts_impl._DEFAULT_BASE_DRIVER
# The older zarr format (the dtype in the base spec), as JAX names these here.
_get_metadata = functools.partial(ts_impl._get_tensorstore_metadata, driver="zarr")
get_tensorstore_spec = functools.partial(ts_impl.get_tensorstore_spec, driver="zarr",
                                         ocdbt=False)

__all__ = ["async_serialize", "async_deserialize", "run_serialization",
           "run_deserialization", "get_tensorstore_spec", "is_remote_storage",
           "BarrierTimeoutError", "GlobalAsyncCheckpointManagerBase", "AsyncManager",
           "GlobalAsyncCheckpointManager", "_LimitInFlightBytes"]

_CHECKPOINT_SUCCESS = "checkpoint_write_success"
_module_unique_count = itertools.count()
_DISTRIBUTED_SYSTEM_MSG = ("Please initialize the distributed system via "
                           "`jax.distributed.initialize()` at the start of your program.")
_REMOTE_URL_PREFIXES = ["gs://", "s3://"]
_REMOTE_DRIVERS = ("gcs", "s3")
_BARRIER_TIMED_OUT_MSG = (
    "Suggestions for possible fixes:\n"
    "* Check the logs to see if one or more processes failed.\n"
    "* Make sure the training and checkpointing endpoints are close geographically.\n"
    "* Try increasing the timeout you pass to GlobalAsyncCheckpointManager.")

logger = logging.getLogger(__name__)


def __getattr__(name: str) -> Any:
    if name == "TS_CONTEXT":
        return ts_impl._module_value("_TS_CONTEXT")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def is_remote_storage(tspec: dict[str, Any] | str) -> bool:
    """Whether a spec or URL names cloud storage (gs://, s3://, the gcs/s3 drivers)."""
    if isinstance(tspec, str):
        return re.match(rf"^({'|'.join(_REMOTE_URL_PREFIXES)})", tspec) is not None
    for key in ("base", "kvstore"):
        if key in tspec:
            return is_remote_storage(tspec[key])
    return tspec.get("driver") in _REMOTE_DRIVERS


def _get_key(key: int) -> str:
    return f"tensorstore_checkpoint_{key}"


def _client() -> Any:
    state = distributed.state()
    return None if state is None else state.client


class GlobalAsyncCheckpointManagerBase(abc.ABC):
    """The interface of an asynchronous checkpointer of sharded arrays."""

    @abc.abstractmethod
    def check_for_errors(self) -> None:
        """Raise an error of the background commit, if any (does not block)."""

    @abc.abstractmethod
    def wait_until_finished(self) -> None:
        """Block until the background commit has finished."""

    @abc.abstractmethod
    def serialize(self, arrays: Any, tensorstore_specs: Any, *,
                  on_commit_callback: Callable[[], None]) -> None:
        """Write arrays to TensorStore."""

    @abc.abstractmethod
    def deserialize(self, shardings: Sequence[Any], tensorstore_specs: Sequence[Any],
                    global_shapes: Sequence[Any] | None = None,
                    dtypes: Sequence[Any] | None = None) -> Any:
        """Read arrays from TensorStore."""


class AsyncManager:
    """The background commit thread (Note [asynchronous checkpoint commits])."""

    def __init__(self, timeout_secs: int = 300):
        self._timeout_secs = timeout_secs
        self._timeout_in_ms = timeout_secs * 1000
        self._commit_futures: Sequence[Any] | None = None
        self._thread: threading.Thread | None = None
        self._exception: BaseException | None = None
        if pjrt.process_count() > 1 and _client() is None:
            raise ValueError(_DISTRIBUTED_SYSTEM_MSG)
        self._client = _client()
        self._count: int | None = None
        self._on_commit_callback: Callable[[], None] | None = None

    def __del__(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            logger.warning("Please add `.wait_until_finished()` in the main thread before "
                           "your program finishes: errors of a commit still running are "
                           "lost when its manager is deleted.")

    def _thread_func(self) -> None:
        try:
            me, count = pjrt.process_index(), pjrt.process_count()
            start = time.time()
            for future in self._commit_futures or ():
                future.result()
            key = None
            if count > 1:
                key = _get_key(self._count)
                self._client.wait_at_barrier(key, self._timeout_in_ms)
            if me == 0:
                if self._on_commit_callback is not None:
                    self._on_commit_callback()
                if count > 1:
                    self._client.key_value_set(key, _CHECKPOINT_SUCCESS)
            monitoring.record_event_duration_secs(
                "/jax/checkpoint/write/async/thread_duration_sec", time.time() - start)
        except Exception as e:  # kept for check_for_errors: Note [asynchronous ...]
            self._exception = e

    def _start_async_commit(self, on_commit_callback: Callable[[], None] | None) -> None:
        self._count = next(_module_unique_count)
        self._on_commit_callback = on_commit_callback
        self._thread = threading.Thread(target=self._thread_func)
        self._thread.start()

    def check_for_errors(self) -> None:
        if self._exception is not None:
            exception, self._exception = self._exception, None
            if "DEADLINE_EXCEEDED: Barrier timed out" in str(exception):
                raise BarrierTimeoutError(
                    "\n".join([str(exception), _BARRIER_TIMED_OUT_MSG])) from exception
            raise exception

    def wait_until_finished(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.check_for_errors()
        if pjrt.process_count() > 1 and self._count is not None:
            self._client.blocking_key_value_get(_get_key(self._count), self._timeout_in_ms)

    def _add_futures(self, futures: Sequence[Any]) -> None:
        self._commit_futures = futures


class GlobalAsyncCheckpointManager(AsyncManager, GlobalAsyncCheckpointManagerBase):
    """Writes sharded arrays to TensorStore asynchronously, reads them back."""

    def serialize(self, arrays: Any, tensorstore_specs: Any, *,
                  on_commit_callback: Callable[[], None] | None = None,
                  transaction: Any = None) -> None:
        """Start writing ``arrays`` (a sequence) to ``tensorstore_specs``; returns once
        their data is copied out (Note [asynchronous checkpoint commits])."""
        self.wait_until_finished()
        commits: list[Any] = []

        async def run() -> Any:
            return await asyncio.gather(*(
                async_serialize(a, s, commit_future=commits, transaction=transaction)
                for a, s in zip(arrays, tensorstore_specs, strict=True)))
        asyncio.run(run())
        self._add_futures(commits)
        self._start_async_commit(on_commit_callback)

    def serialize_with_paths(self, arrays: Sequence[Any], paths: Sequence[str], *,
                             on_commit_callback: Callable[[], None] | None = None,
                             transaction: Any = None) -> None:
        self.serialize(arrays, [get_tensorstore_spec(p) for p in paths],
                       on_commit_callback=on_commit_callback, transaction=transaction)

    def deserialize(self, shardings: Sequence[Any], tensorstore_specs: Sequence[Any],
                    global_shapes: Sequence[Any] | None = None,
                    dtypes: Sequence[Any] | None = None, concurrent_gb: int = 32) -> Any:
        self.wait_until_finished()
        return ts_impl._run_deserialization(shardings, tensorstore_specs, global_shapes,
                                            dtypes, concurrent_gb)

    def deserialize_with_paths(self, shardings: Sequence[Any], paths: Sequence[str],
                               global_shapes: Sequence[Any] | None = None,
                               dtypes: Sequence[Any] | None = None,
                               concurrent_gb: int = 32) -> Any:
        return self.deserialize(shardings, [get_tensorstore_spec(p) for p in paths],
                                global_shapes, dtypes, concurrent_gb)
