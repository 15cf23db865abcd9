"""``spmdc.experimental.multihost_utils``: host values across the processes of a
computation (spmdc.distributed), as JAX's module of that name does.

Each helper is a collective over every device: all processes must call it, in the same
order, with leaves of the same shape and dtype. In a single-process computation they
are immediate. Results are NumPy arrays, on every process.
"""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from .. import lax
from ..core.tree import tree_flatten, tree_map
from ..runtime import pjrt
from ..runtime.array import Array
from ..runtime.sharding import NamedSharding, PartitionSpec
from ..transforms.jit import jit
from ..transforms.pmap import pmap

__all__ = ["process_allgather", "broadcast_one_to_all", "sync_global_devices",
           "assert_equal"]


def _gather_rows(x: Any) -> np.ndarray:
    """Every process's ``x``, stacked along a new axis 0 in process order."""
    host = np.asarray(x)
    count = pjrt.process_count()
    if count == 1:
        return host[None]
    n = len(pjrt.local_devices())
    gathered = _all_gather(np.broadcast_to(host, (n, *host.shape)))
    # Device k of process p holds process p's x (each process's n devices hold copies):
    # keep one per process.
    return np.asarray(gathered)[0][::n]


_all_gather = pmap(lambda v: lax.all_gather(v, "processes"), "processes")


def _replicate(x: Array) -> Array:
    """``x`` replicated over its mesh: a program every process launches."""
    mesh = x.sharding.mesh
    return jit(lambda v: v, out_shardings=NamedSharding(mesh, PartitionSpec()))(x)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every process's leaves: stacked along a new leading axis in process order, or
    with ``tiled`` concatenated along axis 0 (a scalar is always stacked). A leaf that is
    an Array laid out over several processes' devices is one global value: it comes back
    whole, as in JAX (Note [arrays over processes] in runtime/array.py)."""
    def gather(x: Any) -> np.ndarray:
        if isinstance(x, Array) and not x.is_fully_addressable:
            return np.asarray(_replicate(x))
        rows = _gather_rows(x)
        if tiled and rows.ndim > 1:
            return np.concatenate(list(rows), axis=0)
        return rows
    return tree_map(gather, in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Process 0's leaves (or, with ``is_source``, those of the processes passing True,
    summed) on every process; every process's leaves must have the same shapes."""
    if pjrt.process_count() == 1:
        return tree_map(np.asarray, in_tree)
    if is_source is None:
        is_source = pjrt.process_index() == 0
    sources = _gather_rows(np.asarray(bool(is_source)))

    def broadcast(x: Any) -> np.ndarray:
        rows = _gather_rows(x)
        picked = rows[sources]
        return np.sum(picked, axis=0, dtype=rows.dtype)
    return tree_map(broadcast, in_tree)


def assert_equal(in_tree: Any, fail_message: str = "") -> None:
    """Raise AssertionError (with ``fail_message``) unless every process passes the
    same leaves."""
    leaves, _ = tree_flatten(in_tree)
    gathered = [_gather_rows(x) for x in leaves]
    for k, rows in enumerate(gathered):
        differ = [p for p in range(len(rows)) if not np.array_equal(rows[p], rows[0])]
        if differ:
            raise AssertionError(
                f"{fail_message}{'. ' if fail_message else ''}leaf {k} differs between "
                f"process 0 and process{'es' if len(differ) > 1 else ''} "
                f"{', '.join(map(str, differ))}: {rows[0]!r} vs {rows[differ[0]]!r}")


def sync_global_devices(name: str) -> None:
    """A barrier over every device of every process; all processes must pass the same
    ``name``, or it is an AssertionError naming the processes that differ."""
    assert_equal(np.uint32(zlib.crc32(name.encode())),
                 f"sync_global_devices name mismatch ({name!r})")

