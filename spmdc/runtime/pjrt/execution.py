"""Launching executables: the per-replica buffers of each argument in, the outputs back as
per-device buffers or as arrays made by result handlers."""
from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib import _jax

from .backend import Device
from .buffers import Buffer, aval, group_sharding
from .compilation import Executable, waiting
from .distributed import process_count, process_index

# jaxlib's disassemble_into_single_device_arrays tries to import jax._src.sharding_impls
# once per output shard. Without jax installed, each failed import walks sys.path (tens
# of microseconds, most of a pmap launch's Python overhead); a None entry in sys.modules
# makes the same ModuleNotFoundError immediate.
if importlib.util.find_spec("jax") is None:
    sys.modules.setdefault("jax._src.sharding_impls", None)


def addressable(exe: Executable, devs: Sequence[Device]) -> tuple[Device, ...]:
    """The devices of ``devs`` (an executable's, in replica order) that this process
    feeds: all of them in a single-process computation. They must be the order in which
    the executable takes its buffers, or replicas would get each other's data."""
    if process_count() == 1:
        return tuple(devs)
    me = process_index()
    mine = tuple(d for d in devs if d.process_index == me)
    if list(exe.local_devices()) != list(mine):
        raise AssertionError(f"spmdc: the executable runs on {exe.local_devices()} in this "
                             f"process, not on {mine}")
    return mine


def execute(exe: Executable, args: Sequence[Sequence[Buffer]],
            devs: tuple[Device, ...],
            in_types: Sequence[tuple[tuple[int, ...], np.dtype]] = ()) -> list[list[Buffer]]:
    """Run ``exe``; ``args[i][r]`` is argument i on replica r, of (shape, dtype)
    ``in_types[i]`` (needed with several replicas). Returns ``outs[k][r]``."""
    if len(devs) == 1:
        packed = [a[0] for a in args]
    else:
        sharding = group_sharding(devs)
        packed = [_jax.ArrayImpl(aval(*t), sharding, list(a), True, True)
                  for a, t in zip(args, in_types, strict=True)]
    return _launch_split(exe, packed)


def launch_and_split(exe: Executable, args: list[Buffer]) -> list[list[Buffer]]:
    """Run ``exe`` on ``group_array`` arguments; per output, its per-device buffers."""
    return _launch_split(exe, args)


def _launch_split(exe: Executable, args: list[Buffer]) -> Any:
    if waiting and id(exe) in waiting:
        results = exe.execute_sharded(args, with_tokens=True)
        results.consume_token().block_until_ready()     # its effects have run
        return results.disassemble_into_single_device_arrays()
    return exe.execute_sharded(args).disassemble_into_single_device_arrays()


def launch(exe: Executable, args: list[Buffer], handlers: list[Any]) -> list[Buffer]:
    """Run ``exe`` on one jaxlib array per argument (a single-device buffer for a
    single-replica program, a ``group_array`` for a replicated or partitioned one); one
    array per output, made by ``handlers``. With ``one_device_handler``s the results are
    placed as ``put`` places values, so that a result passed to the next call is an
    argument the C++ dispatcher accepts (Note [C++ dispatch]), whatever produced it; with
    ``result_handler``s each output stays one ``group_array``, not taken apart into its
    per-device buffers: that costs as much as the launch itself on 8 devices, and happens
    later if at all."""
    if waiting and id(exe) in waiting:
        results = exe.execute_sharded(args, with_tokens=True)
        results.consume_token().block_until_ready()     # its effects have run
        return results.consume_with_handlers(handlers)
    return exe.execute_sharded(args).consume_with_handlers(handlers)
