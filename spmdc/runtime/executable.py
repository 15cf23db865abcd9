"""Compiled executables: the one path from a Func to a program XLA compiled.

``compile_func`` lowers a Func to StableHLO and compiles it, for every kind of program
spmdc runs: a single-device one (jit), one replica per device (pmap, shard_map), or one
program in the partition form that XLA's SPMD partitioner splits over a mesh (jit over
sharded arrays: ``partitioning``). The ``Executable`` it returns knows its devices and
the inputs a launch consumes; runtime/launcher.py places arguments and launches it.
``program_key`` says when two Funcs are the same program, so that a compiled program can
be reused for a Func traced again (Note [programs equal by structure]); a
``ProgramCache`` keeps such programs, the ones used last.
"""
from __future__ import annotations

import collections
import enum
import hashlib
import math
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.ir import Func, Lit, SourceInfo
from ..compiler.stablehlo import Partitioning, lower_program, parse_module
from . import pjrt
from .compile_log import in_avals_text, log_compile
from .monitoring import BACKEND_COMPILE_EVENT, JAXPR_TO_MLIR_MODULE_EVENT, timed

__all__ = ["Executable", "compile_func", "run_func", "fingerprint", "program_key",
           "ProgramCache"]


class Executable:
    __slots__ = ("exe", "devices", "local_devices", "func", "module_text", "in_types",
                 "donated")

    def __init__(self, exe: Any, devices: tuple[Any, ...], func: Func, module_text: str,
                 donated: tuple[int, ...] = (), n_embedded: int = 0):
        self.exe = exe
        self.devices = devices
        # The devices whose replicas this process runs, in replica order: all of them
        # but in a multi-process computation (Note [pmap over processes] in pmap.py).
        self.local_devices = pjrt.addressable(exe, devices)
        self.func = func
        self.module_text = module_text
        # what a launch passes: ``func``'s inputs but the ``n_embedded`` last, which the
        # module holds as constants (Note [captured arrays are constants] in stages.py)
        self.in_types = [(t.shape, t.dtype)
                         for t in func.in_types[:len(func.inputs) - n_embedded]]
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

    def output_tiles(self, n_outputs: int) -> list[tuple[list[int], list[int], bool] | None]:
        """How XLA's SPMD partitioner laid out each of the ``n_outputs`` outputs (a
        partitioned program's); on a one-device mesh, each is whole (replicated)."""
        tiles = pjrt.output_tiles(self.exe)
        return [([], [], False)] * n_outputs if tiles is None else tiles


def fingerprint(name: str, module_text: str) -> str:
    """What identifies a program across processes: its name and a hash of its StableHLO
    (Note [launch fingerprints] in runtime/distributed.py)."""
    digest = hashlib.sha256(module_text.encode()).hexdigest()[:16]
    return f"{name}#{digest}"


# Note [the compile hook]
# ~~~~~~~~~~~~~~~~~~~~~~~
# Every program spmdc compiles goes through one call, `backend_compile_and_load(backend,
# module, devices, ...)`, looked up as an attribute of a module each time, as JAX's
# compile path looks up `jax._src.compiler.backend_compile_and_load`. The module is
# this one, until spmdc/_src/compiler.py (JAX's `jax._src.compiler` under the alias)
# installs itself with `set_compile_hooks`. A library that replaces that attribute
# (chex's `restrict_backends` wraps it to refuse compiling for a platform) then sees
# every compilation, as it does under JAX; `backend.platform` names the platform.


def backend_compile_and_load(backend: Any, module: Any, devices: Sequence[Any],
                             host_callbacks: Sequence[Any] = (), *, wait: bool = False,
                             partitioned: bool = False,
                             compiler_options: dict[str, Any] | None = None) -> Any:
    """Compile ``module`` on ``backend`` (the PJRT client) for ``devices``
    (runtime/pjrt/compilation.py's ``compile``). See Note [the compile hook]."""
    return pjrt.compile(module, devices, host_callbacks, wait=wait, partitioned=partitioned,
                        compiler_options=compiler_options)


_compile_hooks: Any = sys.modules[__name__]


def set_compile_hooks(module: Any) -> None:
    """Look ``backend_compile_and_load`` up on ``module`` from now on. See Note [the
    compile hook]."""
    global _compile_hooks
    _compile_hooks = module


def compile_func(func: Func, devices: Sequence[Any] | None = None, *,
                 axis_env: dict[str, int] | None = None,
                 mesh_axes: Sequence[str] = (),
                 aliases: dict[int, int] | None = None,
                 partitioning: Partitioning | None = None,
                 constants: Sequence[Any] = (),
                 compiler_options: dict[str, Any] | None = None) -> Executable:
    """Lower and compile ``func`` for one replica per device; ``aliases``: donated inputs
    and the outputs that reuse their buffers (Note [donation] in compiler/stablehlo.py);
    ``constants``: the values of ``func``'s last inputs, compiled into the program (Note
    [captured arrays are constants] in transforms/stages.py): a launch passes the others.
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
    started = time.perf_counter()          # See runtime/compile_log.py (jax_log_compiles)
    log_compile("Compiling jit(%s) with global shapes and types %s.", func.name,
                in_avals_text(func))
    # See Note [JAX's compile events] (runtime/monitoring.py)
    lower_tracked = timed(JAXPR_TO_MLIR_MODULE_EVENT, f"jit({func.name})", lower_program)
    text, callbacks, effects = lower_tracked(func, num_replicas=1 if partitioned else len(devices),
                                             axis_env=axis_env, mesh_axes=mesh_axes,
                                             partitioning=partitioning, aliases=aliases,
                                             platform=pjrt.platform_wanted(),
                                             constants=constants)
    log_compile("Finished jaxpr to MLIR module conversion jit(%s) in %.9f sec", func.name,
                time.perf_counter() - started)
    started = time.perf_counter()
    compile_now = timed(BACKEND_COMPILE_EVENT, f"jit({func.name})",
                        _compile_hooks.backend_compile_and_load)
    # XLA's options by name, passed only when given, so that a library's replacement hook
    # with the older signature keeps working (Note [the compile hook])
    options = {"compiler_options": dict(compiler_options)} if compiler_options else {}
    if callbacks:       # See Note [host callbacks] in compiler/stablehlo.py
        exe = compile_now(pjrt.client(), parse_module(text), devices, callbacks,
                          wait=effects, partitioned=partitioned, **options)
    else:
        exe = compile_now(pjrt.client(), text, devices, partitioned=partitioned, **options)
    log_compile("Finished XLA compilation of jit(%s) in %.9f sec", func.name,
                time.perf_counter() - started)
    return Executable(exe, devices, func, text, tuple(sorted(aliases)), len(constants))


def run_func(func: Func, *args: Any) -> list[np.ndarray]:
    """Compile and run ``func`` on one device with host arguments; return host results.
    (A convenience for tests and tools; user code goes through jit.)"""
    exe = compile_func(func)
    dev = exe.devices[0]
    bufs = [[pjrt.put(np.asarray(x, t.dtype), dev)] for x, t in zip(args, func.in_types,
                                                                      strict=True)]
    return [pjrt.to_numpy(o[0]) for o in exe.execute(bufs)]


# Note [programs equal by structure]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# Two Funcs traced at different times are the same program when they bind the same
# primitives (the objects, not their names: two libraries may declare primitives of one
# name) in the same order, on the same wiring of values, with equal literals and equal
# parameters, and return the same values. Then lowering and compiling them gives the same
# executable, and one compiled for the first may run the second. ``program_key`` is a
# hashable value that is equal for two Funcs exactly then: the Vars are numbered in order
# of definition (as the printer names them), a literal is its dtype and the exact text
# of its value (``repr``: ``0.0`` and ``-0.0`` differ, ``1`` and ``True`` differ), and a
# parameter is its type with its value. Sub-functions in parameters are keyed the same
# way. An equation's ``named_scope`` names are part of it (they name the ops in the
# module); its ``file:line`` is not (only a location, which changes nothing computed).
#
# Only parameter values whose equality is their meaning are keyed: numbers, strings,
# dtypes, enums, tuples of those and sub-functions. Anything else (a host callback, a
# custom derivative rule, a checkpoint policy, an object compared by identity) may
# behave differently from an equal-looking one, so the Func has no key (None) and
# nothing compiled for another Func is reused for it.
#
# The key does not cover what lowering reads besides the Func: the devices, the layout
# of the arguments, donation, and the rule tables. Callers add the first three to their
# key; a lowering rule registered again after a program was compiled is not seen by
# programs compiled before, as with every compile cache here.


class _Opaque(Exception):
    """A parameter value whose equality cannot stand for the program's."""


_EXACT = (bool, int, str, type(None), np.bool_, np.integer)
_BY_TEXT = (float, complex, np.floating, np.complexfloating)


def _param_key(v: Any) -> Any:
    if isinstance(v, _EXACT):
        return v.__class__, v
    if isinstance(v, _BY_TEXT):
        return v.__class__, repr(v)
    if isinstance(v, tuple | list):
        return (v.__class__, *map(_param_key, v))
    if isinstance(v, np.dtype):
        return np.dtype, v
    if isinstance(v, type) and issubclass(v, np.generic):
        return type, v
    if isinstance(v, enum.Enum):
        return v.__class__, v.name
    if isinstance(v, Func):
        return Func, _func_key(v)
    raise _Opaque


def _func_key(func: Func) -> tuple[Any, ...]:
    numbers: dict[Any, int] = {}
    for v in func.inputs:
        numbers[v] = len(numbers)

    def use(a: Any) -> Any:
        if a.__class__ is Lit:
            return a.type, a.value.__class__, repr(a.value)
        return numbers[a]

    eqns = []
    for eqn in func.eqns:
        params = tuple((k, _param_key(v)) for k, v in eqn.params.items())
        ins = tuple(map(use, eqn.inputs))
        for v in eqn.outputs:
            numbers[v] = len(numbers)
        scope = eqn.source.scope if eqn.source.__class__ is SourceInfo else None
        eqns.append((eqn.prim, ins, params, tuple(v.type for v in eqn.outputs), scope))
    return (func.name, func.in_types, tuple(eqns), tuple(map(use, func.outputs)))


def program_key(func: Func) -> tuple[Any, ...] | None:
    """A hashable value equal for two Funcs exactly when they are the same program, or
    None when a parameter's value cannot be compared (Note [programs equal by
    structure])."""
    try:
        return _func_key(func)
    except _Opaque:
        return None


class ProgramCache:
    """Compiled programs by key, at most ``capacity`` of them: the ones used last are kept.
    Safe to use from several threads."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self._programs: collections.OrderedDict[Any, Any] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> Any:
        """The program stored under ``key``, or None."""
        with self._lock:
            program = self._programs.get(key)
            if program is not None:
                self._programs.move_to_end(key)
            return program

    def put(self, key: Any, program: Any) -> Any:
        """Store ``program`` under ``key``, dropping the one used longest ago if full;
        returns ``program``."""
        with self._lock:
            self._programs[key] = program
            while len(self._programs) > self.capacity:
                self._programs.popitem(last=False)
        return program

    def clear(self) -> None:
        with self._lock:
            self._programs.clear()

    def __len__(self) -> int:
        return len(self._programs)
