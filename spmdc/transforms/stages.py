"""The ahead-of-time stages of a jit program, as JAX's ``jax.stages``: ``jit(f).trace(*args)``
gives a ``Traced`` (the traced program as a ``ClosedJaxpr``, a view of its IR in JAX's
form (transforms/jaxpr_view.py), its input and output
abstract values and pytrees), ``.lower()`` a ``Lowered`` (the cleaned-up Func, its
StableHLO and every stage recorded on the way; ``PartitionedLowered`` for a program that
runs over a mesh), ``.compile()`` a ``Compiled``, callable with arguments of the lowered
types. An ``Entry`` is one compiled single-device specialisation of a jit program: what
``Compiled`` calls and what jit's cache holds.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..compiler.ir import Func, print_func
from ..compiler.passes import observe, recording, run_pass
from ..compiler.passes.cleanup import cleanup
from ..compiler.passes.collectives import value_axes
from ..compiler.stablehlo import PLATFORMS, donation_aliases, lower_text, parse_module
from ..core.abstract import ShapedArray, ShapeDtypeStruct
from ..core.devices import default_device
from ..core.tracing import type_of
from ..core.tree import tree_flatten, tree_unflatten
from ..runtime import pjrt
from ..runtime.array import Array
from ..runtime.executable import Executable, compile_func
from ..runtime.launcher import OneDeviceLauncher
from ..runtime.sharding import Mesh, NamedSharding
from .arguments import run_launcher, usable_donations
from .jaxpr_view import ClosedJaxpr, closed_jaxpr
from .partitioned import PartitionedEntry

__all__ = ["ClosedJaxpr", "Traced", "Lowered", "Compiled", "DeviceCompiled", "PartitionedLowered",
           "Entry",
           "compile_entry", "device_of"]


# --- the compiled stage of a single-device program ---------------------------------------

class Entry:
    """One compiled specialisation of a jitted function: its program (for the stages and
    the ahead-of-time API) and the launcher that runs it (runtime/launcher.py)."""
    __slots__ = ("launcher", "executable", "in_types", "n_args", "out_tree", "donated")

    def __init__(self, executable: Executable, func: Func, consts: list[Any],
                 out_weak: list[bool], out_tree: Any, n_args: int,
                 donated: tuple[int, ...] = ()):
        self.executable = executable
        # the arguments', then the constants' passed at launch (none when the program
        # holds them: Note [captured arrays are constants])
        self.in_types = func.in_types[:n_args + len(consts)]
        self.n_args = n_args
        self.out_tree = out_tree
        self.donated = donated      # the arguments a launch consumes (Note [donation])
        self.launcher = OneDeviceLauncher(executable, self.in_types, func.out_types,
                                          out_weak, consts, donated)

    def __call__(self, leaves: Sequence[Any]) -> Any:
        return run_launcher(self.launcher, leaves, self.donated, self.out_tree)

    def fast_path(self, args: Any, out: Any) -> Any:
        """The C++ launch for calls like ``args`` that returned ``out``, if it is safe
        (Note [C++ dispatch] in runtime/pjrt/dispatch.py)."""
        return self.launcher.fast_path(args, out, tree_flatten)


def compile_entry(func: Func, device: Any, consts: list[Any], out_weak: list[bool],
                   out_tree: Any, n_args: int, donated: Sequence[int] = (),
                   compiler_options: dict[str, Any] | None = None, *,
                   embed: bool = False) -> Entry:
    """Compile ``func`` (arguments, then captured constants) for ``device``; ``donated``:
    the arguments (leaf positions) whose buffers it may reuse; ``compiler_options``: XLA's
    options by name. With ``embed`` (jit's programs) the constants' values are compiled
    into the program and a launch passes the arguments alone (Note [captured arrays are
    constants]). Otherwise the executable takes the constants *before* the arguments, the
    order in which jaxlib's C++ dispatcher passes them (Note [C++ dispatch]); Entry
    launches it that way."""
    if embed:
        aliases = usable_donations(func.in_types[:n_args], func.out_types, list(donated))
        exe = compile_func(func, [device], aliases=aliases, constants=consts,
                           compiler_options=compiler_options)
        return Entry(exe, func, [], out_weak, out_tree, n_args, exe.donated)
    launched = Func(func.name, func.inputs[n_args:] + func.inputs[:n_args], func.eqns,
                    func.outputs)
    n_consts = len(func.inputs) - n_args
    aliases = usable_donations(launched.in_types, launched.out_types,
                               [n_consts + i for i in donated])
    exe = compile_func(launched, [device], aliases=aliases,
                       compiler_options=compiler_options)
    return Entry(exe, func, consts, out_weak, out_tree, n_args,
                  tuple(i - n_consts for i in exe.donated))


# Note [captured arrays are constants]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# JAX 0.10.2 writes every array a jitted function closes over (a NumPy array or a jax
# Array, of any size: checked up to 10^7 elements, with jax_use_simplified_jaxpr_constants
# on or off) into the module as a ``stablehlo.constant``; ``@main`` takes the arguments
# alone. XLA then folds what it can: ``x / c`` becomes ``x * (1 / c)`` with the reciprocal
# computed at compile time, which rounds differently in the last bit from a division by
# an argument. A sampler such as NumPyro's NUTS amplifies such bits until the trajectory
# differs, so a program must hold its constants where JAX's does to give JAX's numbers.
#
# spmdc's Func keeps the captured values as its last inputs (the IR has scalar literals
# only, and every pass sees the same Func); only the lowering differs: ``constants`` in
# compiler/stablehlo.py's ``lower`` turns those inputs into constant ops, and the launch
# passes the arguments alone (no ``const_args`` for the C++ dispatcher either). Which
# programs do it:
# - jit's, single-device: a call's compile (``compile_entry(embed=True)``), and
#   ``jit(f).lower(...)`` / ``jit(f).trace(...).lower()`` (``Lowered.embedded``), so the
#   text shown is the program that runs.
# - Not an eager transformation's program (grad, vmap ... called outside jit). JAX runs
#   those op by op, each op receiving the closed-over array as an argument, so it folds
#   nothing there either. And those executables are shared by program structure
#   (Note [eager transformations trace every call] in eager.py), a key without the
#   constants' values: an executable holding one value would run for another.
# - Not pmap, shard_map or a program over a mesh, which place each constant on every
#   device (a possible later step).
# Caching stays sound: jit's entry is keyed by the function object and argument types
# (Note [shared jit cache] in jit.py) and was already specialised to the values captured
# when it was traced, so holding them in the executable instead of in the launcher
# changes no hit. The persistent compilation cache keys the module's text, which spells the values
# out, so two programs that differ only in a constant never share an executable. As in
# JAX, a large constant lengthens the module and its compile.


def device_of(leaves: Sequence[Any]) -> Any:
    """The device a jit call runs on: its first one-device Array argument's, else the
    default device."""
    for x in leaves:
        if type(x) is Array and not x.split and len(x._devices) == 1:
            return x._devices[0]
    return default_device()             # jax_default_device's, else the first


# --- the stages ---------------------------------------------------------------------------

class ArgInfo:
    """One argument leaf of a traced call (``jax.stages.ArgInfo``): its abstract value
    and whether the call donates it."""
    __slots__ = ("_aval", "donated")

    def __init__(self, aval: Any, donated: bool):
        self._aval, self.donated = aval, donated

    @property
    def shape(self) -> tuple[int, ...]:
        return self._aval.shape

    @property
    def dtype(self) -> Any:
        return self._aval.dtype

    def __eq__(self, other: object) -> bool:
        return (type(other) is ArgInfo and self._aval == other._aval
                and self.donated == other.donated)

    def __hash__(self) -> int:
        return hash((self._aval, self.donated))

    def __repr__(self) -> str:
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


class Traced:
    """``jit(f).trace(*args)``: the traced program, not yet lowered."""

    def __init__(self, fun_name: str, func: Func, out_weak: list[bool], consts: list[Any],
                 in_tree: Any, out_tree: Any, leaves: list[Any], device: Any,
                 recorded: list[tuple[str, Any]], donated: Sequence[int] = ()):
        self.fun_name = fun_name
        self._donated = frozenset(donated)          # the donated argument leaves
        self.in_tree, self.out_tree = in_tree, out_tree
        n = len(leaves)
        self.in_avals = [ShapedArray(t.shape, t.dtype, type_of(x)[1])
                         for t, x in zip(func.in_types[:n], leaves, strict=True)]
        self.out_avals = [ShapedArray(t.shape, t.dtype, w)
                          for t, w in zip(func.out_types, out_weak, strict=True)]
        self._func, self._out_weak, self._consts = func, out_weak, consts
        self._n_args, self._device, self._recorded = n, device, recorded
        self._jaxpr: ClosedJaxpr | None = None

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The traced program in JAX's form (made on first use: eval_shape never asks)."""
        if self._jaxpr is None:
            self._jaxpr = closed_jaxpr(self._func, self._consts, self._n_args,
                                       [a.weak_type for a in self.in_avals], self._out_weak)
        return self._jaxpr

    @property
    def args_info(self) -> Any:
        """The arguments' pytree (``(args, kwargs)``, statics left out) of ArgInfo."""
        return tree_unflatten(self.in_tree, [ArgInfo(a, i in self._donated)
                                             for i, a in enumerate(self.in_avals)])

    @property
    def out_info(self) -> Any:
        """The outputs' pytree of ShapeDtypeStructs."""
        return tree_unflatten(self.out_tree, [ShapeDtypeStruct(a.shape, a.dtype,
                                                               weak_type=a.weak_type)
                                              for a in self.out_avals])

    def lower(self, *, lowering_platforms: tuple[str, ...] | None = None) -> Lowered:
        """The cleaned-up program and its StableHLO (see ``jit(f).lower``), for the
        client's platform, or for the one platform in ``lowering_platforms`` ('cpu' or
        'cuda'), which needs no device of that kind: its ``as_text()`` is the module that
        platform would compile (Note [lowering per platform] in compiler/stablehlo.py)."""
        platform = None
        if lowering_platforms is not None:
            names = tuple(lowering_platforms)
            if len(names) != 1 or names[0] not in PLATFORMS:
                raise ValueError(f"lowering_platforms: spmdc lowers for one platform, one of "
                                 f"{', '.join(PLATFORMS)}; got {names!r}")
            platform = names[0]
        with recording() as stages:
            func = run_pass("cleanup", cleanup, self._func)
        return Lowered(func, [self._device], self._consts, self._out_weak, self.out_tree,
                       self._n_args, recorded=[*self._recorded, *stages], platform=platform,
                       embedded=True, in_tree=self.in_tree)

    def __repr__(self) -> str:
        return f"Traced({self.fun_name})"


class Lowered:
    """``jit(f).lower(*args)``: the traced and cleaned Func, its StableHLO, and every
    stage recorded on the way (``stages()``, ``stage(name)``)."""

    def __init__(self, func: Func, devices: list[Any], consts: list[Any],
                 out_weak: list[bool], out_tree: Any, n_args: int,
                 axis_env: dict[str, int] | None = None, mesh_axes: Sequence[str] = (),
                 recorded: Sequence[tuple[str, Any]] = (), donated: tuple[int, ...] = (),
                 platform: str | None = None, embedded: bool = False, in_tree: Any = None):
        self.func = func
        self.in_tree = in_tree      # the pytree of (args, kwargs), when the caller knows it
        # whether the module holds the captured constants (jit's programs; Note [captured
        # arrays are constants]) rather than taking them as arguments
        self.embedded = embedded
        # the platform as_text lowers for: the client's, unless ``trace(...).lower(
        # lowering_platforms=...)`` named one (Note [lowering per platform])
        self.platform = platform or pjrt.platform_wanted()
        self.donated = donated      # donated arguments (Note [donation])
        self.devices = devices
        self.consts = consts
        self.out_weak = out_weak
        self.out_tree = out_tree
        self.n_args = n_args
        self.axis_env = axis_env
        self.mesh_axes = tuple(mesh_axes)
        self._text: str | None = None
        self._optimized: str | None = None
        # (unique name, Func): the traced program and each pass's output, in order
        self.recorded: list[tuple[str, Func]] = _unique_names(
            [(n, v) for n, v in recorded if isinstance(v, Func)])
        # For per-device programs (pmap, shard_map): the mesh axes each input varies over;
        # the stages then show every value's as ``{V:i,j}`` (Note [replication]).
        self.in_varying: list[frozenset[str]] | None = None

    def _show(self, func: Func) -> str:
        if self.in_varying is None or len(func.inputs) != len(self.in_varying):
            return str(func)
        axes = value_axes(func, self.in_varying)

        def note(v: Any) -> str:
            shown = sorted(a for a in axes.get(v, ()) if not a.startswith("_"))
            return "{V:" + ",".join(shown) + "}" if shown else ""
        return print_func(func, annotate=note)

    def stages(self, hlo: bool = True) -> list[tuple[str, str]]:
        """The stages in order as ``(name, text)``: ``traced``, the output of each pass
        that ran (``vmap``, ``grad``, ``collectives``, ``cleanup`` ...; a name seen twice
        gets ``.2``, ``.3``), then, with ``hlo``, ``stablehlo`` and ``optimized_hlo``
        (which compiles)."""
        out = [(name, self._show(func)) for name, func in self.recorded]
        if hlo:
            out += [("stablehlo", self.as_text()), ("optimized_hlo", self.optimized_hlo())]
        return out

    def stage_names(self, hlo: bool = True) -> list[str]:
        return [n for n, _ in self.recorded] + (["stablehlo", "optimized_hlo"] if hlo else [])

    def stage(self, name: str) -> str:
        """One stage's text (see ``stages``); a bare name such as ``cleanup`` means its
        last occurrence."""
        if name == "stablehlo":
            return self.as_text()
        if name == "optimized_hlo":
            return self.optimized_hlo()
        for n, func in reversed(self.recorded):
            if n == name or n.split(".")[0] == name:
                return self._show(func)
        raise KeyError(f"no stage {name!r}; the stages are "
                       f"{', '.join(self.stage_names())}")

    def optimized_hlo(self) -> str:
        """The HLO XLA produced after its own optimisations (compiles once)."""
        if self._optimized is None:
            self._optimized = self.compile().as_text()
        return self._optimized

    def ir(self) -> str:
        """Our IR, as text."""
        return str(self.func)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The StableHLO module, as text; with ``debug_info``, with each op's location
        (the user's source line, under its named_scope names)."""
        if dialect not in (None, "stablehlo"):
            raise ValueError(f"Lowered.as_text: spmdc lowers to StableHLO only; dialect "
                             f"must be None or 'stablehlo', got {dialect!r}")
        constants = self.consts if self.embedded else ()
        if debug_info:
            return lower_text(self.func, num_replicas=len(self.devices),
                              axis_env=self.axis_env, mesh_axes=self.mesh_axes,
                              debug_info=True, aliases=self._aliases(),
                              platform=self.platform, constants=constants)
        if self._text is None:
            self._text = lower_text(self.func, num_replicas=len(self.devices),
                                    axis_env=self.axis_env, mesh_axes=self.mesh_axes,
                                    aliases=self._aliases(), platform=self.platform,
                                    constants=constants)
            observe("stablehlo", self._text)
        return self._text

    def compiler_ir(self, dialect: str | None = None) -> Any:
        """The lowered program as an object: ``'stablehlo'`` (the default) an MLIR module,
        ``'hlo'`` XLA's HLO (an XlaComputation; ``.as_hlo_text()``), as JAX gives them."""
        if dialect in (None, "stablehlo"):
            return parse_module(self.as_text())
        if dialect == "hlo":
            return pjrt.hlo_computation(self.as_text())
        raise ValueError(f"Lowered.compiler_ir: dialect must be None, 'stablehlo' or "
                         f"'hlo', got {dialect!r}")

    @property
    def out_info(self) -> Any:
        """The outputs' pytree of ShapeDtypeStructs (as ``Traced.out_info``)."""
        return tree_unflatten(self.out_tree, [
            ShapeDtypeStruct(t.shape, t.dtype, weak_type=w)
            for t, w in zip(self.func.out_types, self.out_weak, strict=True)])

    def cost_analysis(self) -> dict[str, float]:
        """XLA's cost estimates of the program before it is optimised (``flops``,
        ``bytes accessed``, ...), as JAX's; ``compile().cost_analysis()`` gives those of
        the optimised program."""
        return pjrt.hlo_cost_analysis(self.as_text())

    def _aliases(self) -> dict[int, int]:
        return donation_aliases(self.func.in_types, self.func.out_types, self.donated)

    def compile(self, compiler_options: dict[str, Any] | None = None) -> Compiled:
        """The compiled program; ``compiler_options`` are XLA's options by name
        (``{"xla_cpu_enable_fast_math": True}``), as JAX passes them: an unknown name or
        a value of the wrong kind fails as jaxlib's ``JaxRuntimeError``."""
        if self.platform != pjrt.platform_wanted():
            raise ValueError(f"this program was lowered for {self.platform}, but spmdc runs "
                             f"on {pjrt.platform_wanted()}: only as_text() is available")
        entry = compile_entry(self.func, self.devices[0], self.consts, self.out_weak,
                               self.out_tree, self.n_args, self.donated, compiler_options,
                               embed=self.embedded)
        observe("optimized_hlo", entry.executable.optimized_hlo)
        return Compiled(entry, self.in_tree)


def _unique_names(stages: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    seen: dict[str, int] = {}
    out = []
    for name, value in stages:
        seen[name] = seen.get(name, 0) + 1
        out.append((name if seen[name] == 1 else f"{name}.{seen[name]}", value))
    return out


class Compiled:
    """``jit(f).lower(*args).compile()``: callable with arguments of the lowered types."""

    def __init__(self, entry: Entry, in_tree: Any = None):
        self._entry = entry
        self.in_tree = in_tree      # the pytree of (args, kwargs) it was lowered for

    @property
    def out_tree(self) -> Any:
        return self._entry.out_tree

    def as_text(self) -> str:
        """The optimized HLO XLA produced."""
        return self._entry.executable.optimized_hlo()

    def cost_analysis(self) -> dict[str, float]:
        return self._entry.executable.cost_analysis()

    def memory_analysis(self) -> Any:
        """XLA's memory figures for the executable (``peak_memory_in_bytes``, ...)."""
        return self._entry.executable.memory_analysis()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, _ = tree_flatten((args, kwargs))
        expected = self._entry.in_types[:self._entry.n_args]
        got = [type_of(x)[0] for x in leaves]
        if list(expected) != got:
            raise TypeError("compiled function called with argument types "
                            f"{[str(t) for t in got]}, but it was compiled for "
                            f"{[str(t) for t in expected]}")
        return self._entry(leaves)


class DeviceCompiled(Compiled):
    """``compile()`` of a program that runs over several devices (``pmap``'s, or a
    ``jit`` over a mesh): a ``jax.stages.Compiled`` (libraries annotate it so, Equinox's
    AOT path among them) whose entry lays the argument leaves out over the devices."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._entry(tree_flatten((args, kwargs))[0])


class PartitionedLowered(Lowered):
    """``jit(f).lower(*args)`` for a program that runs over a mesh: its StableHLO in the
    partition form, and ``compile()`` (whose ``as_text()`` is the partitioned HLO, with
    the collectives XLA inserted)."""
    partitioned = True

    def __init__(self, func: Func, mesh: Mesh, shardings: list[NamedSharding],
                 out_requests: list[NamedSharding | None], consts: list[Any],
                 out_weak: list[bool], out_tree: Any, n_args: int, recorded: Any,
                 donated: tuple[int, ...] = ()):
        super().__init__(func, list(mesh._flat_devices), consts, out_weak, out_tree, n_args,
                         recorded=recorded, donated=donated)
        self._layout = (mesh, shardings, out_requests)
        self._entry: PartitionedEntry | None = None

    def _compiled(self, compiler_options: dict[str, Any] | None = None) -> PartitionedEntry:
        if compiler_options:      # compiled for this call alone, not the cached one
            mesh, shardings, out_requests = self._layout
            return PartitionedEntry(self.func, mesh, shardings, out_requests, self.consts,
                                    self.out_weak, self.out_tree, self.donated,
                                    compiler_options)
        if self._entry is None:
            mesh, shardings, out_requests = self._layout
            self._entry = PartitionedEntry(self.func, mesh, shardings, out_requests,
                                           self.consts, self.out_weak, self.out_tree,
                                           self.donated)
        return self._entry

    def as_text(self, *args: Any, **kwargs: Any) -> str:
        return self._compiled().module_text

    def compile(self, compiler_options: dict[str, Any] | None = None) -> DeviceCompiled:
        return DeviceCompiled(self._compiled(compiler_options))
