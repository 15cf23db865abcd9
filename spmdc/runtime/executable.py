"""Compiled executables: the one path from a Func to a program XLA compiled.

``compile_func`` lowers a Func to StableHLO and compiles it, for every kind of program
spmdc runs: a single-device one (jit), one replica per device (pmap, shard_map), or one
program in the partition form that XLA's SPMD partitioner splits over a mesh (jit over
sharded arrays: ``partitioning``). The ``Executable`` it returns knows its devices and
the inputs a launch consumes; runtime/launcher.py places arguments and launches it.
"""
from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.ir import Func
from ..compiler.stablehlo import Partitioning, lower_program, parse_module
from . import pjrt

__all__ = ["Executable", "compile_func", "run_func", "fingerprint"]


class Executable:
    __slots__ = ("exe", "devices", "local_devices", "func", "module_text", "in_types",
                 "donated")

    def __init__(self, exe: Any, devices: tuple[Any, ...], func: Func, module_text: str,
                 donated: tuple[int, ...] = ()):
        self.exe = exe
        self.devices = devices
        # The devices whose replicas this process runs, in replica order: all of them
        # but in a multi-process computation (Note [pmap over processes] in pmap.py).
        self.local_devices = pjrt.addressable(exe, devices)
        self.func = func
        self.module_text = module_text
        self.in_types = [(t.shape, t.dtype) for t in func.in_types]
        # the inputs whose buffers a launch consumes (Note [donation] in stablehlo.py)
        self.donated = donated

    def execute(self, args: Sequence[Sequence[Any]]) -> list[list[Any]]:
        """``args[i][r]``: device buffer of input i on local replica r (of
        ``local_devices``); returns ``outs[k][r]``."""
        return pjrt.execute(self.exe, args, self.local_devices, self.in_types)

    def fingerprint(self) -> str:
        return fingerprint(self.func.name, self.module_text)

    def __del__(self) -> None:
        pjrt.forget(self.exe)

    def optimized_hlo(self) -> str:
        return pjrt.optimized_hlo(self.exe)

    def cost_analysis(self) -> dict[str, float]:
        return pjrt.cost_analysis(self.exe)

    def memory_analysis(self) -> Any:
        return pjrt.memory_analysis(self.exe)

    def output_tiles(self) -> list[tuple[list[int], list[int], bool] | None]:
        """How XLA's SPMD partitioner laid out each output (a partitioned program's)."""
        return pjrt.output_tiles(self.exe)


def fingerprint(name: str, module_text: str) -> str:
    """What identifies a program across processes: its name and a hash of its StableHLO
    (Note [launch fingerprints] in runtime/distributed.py)."""
    digest = hashlib.sha256(module_text.encode()).hexdigest()[:16]
    return f"{name}#{digest}"


def compile_func(func: Func, devices: Sequence[Any] | None = None, *,
                 axis_env: dict[str, int] | None = None,
                 mesh_axes: Sequence[str] = (),
                 aliases: dict[int, int] | None = None,
                 partitioning: Partitioning | None = None) -> Executable:
    """Lower and compile ``func`` for one replica per device; ``aliases``: donated inputs
    and the outputs that reuse their buffers (Note [donation] in compiler/stablehlo.py).
    With ``partitioning`` (the mesh and each input's and output's layout), the one program
    in the partition form instead, partition k on ``devices[k]`` (Note [partition form]
    in compiler/stablehlo.py)."""
    devices = tuple(devices or pjrt.local_devices()[:1])
    if mesh_axes and axis_env and math.prod(axis_env[a] for a in mesh_axes) != len(devices):
        # XLA would stop at a failed internal check, or worse, on some platforms
        raise ValueError(f"compile_func: the mesh axes {list(mesh_axes)} span "
                         f"{math.prod(axis_env[a] for a in mesh_axes)} devices, but "
                         f"{len(devices)} were given")
    aliases = aliases or {}
    partitioned = partitioning is not None
    text, callbacks, effects = lower_program(func, num_replicas=1 if partitioned else len(devices),
                                             axis_env=axis_env, mesh_axes=mesh_axes,
                                             partitioning=partitioning, aliases=aliases,
                                             platform=pjrt.platform_wanted())
    if callbacks:       # See Note [host callbacks] in compiler/stablehlo.py
        exe = pjrt.compile(parse_module(text), devices, callbacks, wait=effects,
                           partitioned=partitioned)
    elif partitioned:
        exe = pjrt.compile(text, devices, partitioned=True)
    else:
        exe = pjrt.compile(text, devices)
    return Executable(exe, devices, func, text, tuple(sorted(aliases)))


def run_func(func: Func, *args: Any) -> list[np.ndarray]:
    """Compile and run ``func`` on one device with host arguments; return host results.
    (A convenience for tests and tools; user code goes through jit.)"""
    exe = compile_func(func)
    dev = exe.devices[0]
    bufs = [[pjrt.put(np.asarray(x, t.dtype), dev)] for x, t in zip(args, func.in_types,
                                                                      strict=True)]
    return [pjrt.to_numpy(o[0]) for o in exe.execute(bufs)]
