"""spmdc.pmap: run one per-device program on several devices (SPMD).

At top level ``pmap(f)(*args)`` splits each mapped argument along its ``in_axes`` over N
devices, traces ``f`` once per signature on one device's slice with the axis name bound
(``axis_env``), runs the collectives pass (axis names, Note [replication]), compiles the
program for N replicas and launches it (runtime/launcher.py places the arguments and
wraps the results). Results are ``spmdc.Array``s split over the devices; one passed to the next
pmap over the same devices is used in place. ``pmap(f).lower(*args)`` shows the
per-device IR and the StableHLO.

Under another transformation:
- inside an enclosing pmap, a pmap adds an axis to the device mesh (Note [nested pmap]);
- anywhere else (jit, grad, vmap at top level), it has vmap's semantics on one device:
  the numbers are the same, and grad of a pmap then sums over the mapped axis as in JAX.

The nested case, and how its gradients work, is transforms/pmap_nested.py (Note [nested
pmap] there).
"""
from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

from ..compiler.ir import Func
from ..compiler.passes import observe, recording, run_pass
from ..compiler.passes.cleanup import cleanup
from ..compiler.passes.collectives import Mesh, check_collectives
from ..compiler.stablehlo import donation_aliases
from ..core import dtypes
from ..core import precision as _precision
from ..core import rank_promotion as _rank_promotion
from ..core.config import checked_call, runtime_checks
from ..core.pytree_tracing import fun_name as _fun_name
from ..core.pytree_tracing import trace_pytree
from ..core.tracing import current_trace, where
from ..core.tree import tree_flatten
from ..runtime import pjrt
from ..runtime.array import Array
from ..runtime.executable import compile_func
from ..runtime.launcher import ReplicatedLauncher, launched, pace
from ..runtime.pjrt import ROOM, python_path_after, recursion_reserve
from ..tracebacks import api_boundary
from . import mapping
from .arguments import (
    check_backend,
    check_devices,
    check_index_in_range,
    check_mapped_size,
    check_static_argnums,
    checking_results,
    donated_leaves,
    explain_failed_call,
    index_tuple,
    run_launcher,
    usable_donations,
)
from .jit import _display_name, _leaf_signature
from .mapping import axis_spec, mapped_leaves, mapped_size, out_paths, slice_types
from .pmap_nested import DeviceAxis, nested_pmap_call, peel_gathers, recording_mesh
from .stages import DeviceCompiled, Lowered
from .vmap import _batched_call

__all__ = ["pmap", "DeviceAxis"]


_fresh_names = itertools.count()


# --- pmap ------------------------------------------------------------------------------------

def pmap(fun: Callable[..., Any] | None = None, axis_name: str | None = None, *,
         in_axes: Any = 0, out_axes: Any = 0, static_broadcasted_argnums: Any = (),
         devices: Sequence[Any] | None = None, axis_size: int | None = None,
         donate_argnums: Any = (), backend: str | None = None) -> Any:
    """Map ``fun`` over devices, JAX style (see the module docstring).

    ``in_axes`` / ``out_axes`` may be negative and count from the end: ``in_axes=-1`` maps
    the last axis. (JAX's pmap rejects negative in_axes; spmdc gives them the meaning they
    have in vmap.) ``donate_argnums`` gives those arguments' buffers to the program, which
    writes per-device outputs of the same shape and dtype into them; the donated Arrays
    are deleted by the call (Note [donation] in compiler/stablehlo.py). ``backend`` must
    name the platform spmdc runs on, if given."""
    check_backend("pmap", backend)
    if fun is None:
        return lambda f: pmap(f, axis_name, in_axes=in_axes, out_axes=out_axes,
                              static_broadcasted_argnums=static_broadcasted_argnums,
                              devices=devices, axis_size=axis_size,
                              donate_argnums=donate_argnums, backend=backend)
    return Pmapped(fun, axis_name, in_axes, out_axes, static_broadcasted_argnums, devices,
                   axis_size, donate_argnums)


class Pmapped:
    """The callable ``pmap`` returns; compiled specialisations are cached by signature."""

    def __init__(self, fun: Callable[..., Any], axis_name: str | None, in_axes: Any,
                 out_axes: Any, static_argnums: Any, devices: Sequence[Any] | None,
                 axis_size: int | None, donate_argnums: Any = ()):
        if not callable(fun):
            raise TypeError(f"pmap expects a callable, got {type(fun).__name__}")
        if axis_name is not None and not isinstance(axis_name, str):
            raise TypeError(f"pmap axis_name must be a string, got {axis_name!r}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.name = _fun_name(fun)
        self.user_axis_name = axis_name
        # An unnamed pmap still needs a mesh axis; no user code can name this one.
        self.axis_name = axis_name if axis_name is not None else f"_pmap{next(_fresh_names)}"
        self.in_axes = axis_spec(in_axes, "pmap", "in_axes")
        self.out_axes = axis_spec(out_axes, "pmap", "out_axes")
        self.static_argnums = index_tuple("pmap", "static_broadcasted_argnums",
                                          () if static_argnums is None else static_argnums)
        self.devices = check_devices("pmap", devices)
        self.axis_size = axis_size
        self.donate_argnums = index_tuple("pmap", "donate_argnums",
                                          () if donate_argnums is None else donate_argnums)
        check_static_argnums("pmap", "donate_argnums", fun, self.donate_argnums)
        both = set(self.donate_argnums) & set(self.static_argnums)
        if both:
            raise ValueError(f"pmap: argument{'s' if len(both) > 1 else ''} {sorted(both)} "
                             f"{'are' if len(both) > 1 else 'is'} both static and donated"
                             f"{where()}; a static argument has no buffer to donate")
        self._cache: dict[Any, PmapEntry] = {}
        self.trace_count = 0            # how many times fun was traced (tests read it)
        # jaxlib's C++ dispatcher in front of the Python path (Note [C++ dispatch] in
        # runtime/pjrt/dispatch.py); functions with static arguments take the Python path only.
        self._dispatch = None if self.static_argnums else pjrt.dispatcher(
            self.name, self._cache_miss, kind="replicated")

    # --- static arguments --------------------------------------------------------------------
    def _split(self, args: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        if not self.static_argnums:
            return (), args
        n = len(args)
        check_index_in_range(f"pmap({self.name})", "static_broadcasted_argnums",
                             self.static_argnums, n,
                             "static broadcasted arguments must be passed positionally")
        nums = sorted({i % n for i in self.static_argnums if -n <= i < n})
        for i in nums:
            try:
                hash(args[i])
            except TypeError:
                raise ValueError(
                    f"static_broadcasted_argnums: argument {i} of pmap({self.name}) has "
                    f"unhashable type {type(args[i]).__name__}; static arguments must be "
                    "hashable (use a tuple instead of a list), or pass it as a regular "
                    "argument") from None
        statics = tuple((i, args[i]) for i in nums)
        return statics, tuple(a for i, a in enumerate(args) if i not in nums)

    def with_statics(self, statics: tuple[Any, ...]) -> Callable[..., Any]:
        """``fun`` taking only the non-static arguments, ``statics`` put back in place."""
        # See Note [arguments that are not arrays]
        checked = checking_results("pmap", self.fun, _display_name(self.fun))
        if not statics:
            return checked

        def fun(*args: Any, **kwargs: Any) -> Any:
            full = list(args)
            for i, v in statics:
                full.insert(i, v)
            return checked(*full, **kwargs)
        return fun

    def in_axes_for(self, statics: tuple[Any, ...]) -> Any:
        """``in_axes`` for the non-static arguments alone."""
        if not statics or not isinstance(self.in_axes, tuple):
            return self.in_axes
        drop = {i for i, _ in statics}
        return tuple(a for i, a in enumerate(self.in_axes) if i not in drop) \
            if len(self.in_axes) > max(drop) else self.in_axes

    # --- calls -------------------------------------------------------------------------------
    @api_boundary                      # See Note [library frames] (errors.py)
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if runtime_checks and current_trace() is None:   # Note [config on the hot path]
            return checked_call("pmap", _fun_name(self.fun), self.fun,
                                lambda a, k: self._call(a, k)[0], args, kwargs)
        if self._dispatch is None or current_trace() is not None:
            return self._call(args, kwargs)[0]
        try:
            pace()     # Note [pacing replicated launches] in runtime/launcher.py: C++ too
            out = self._dispatch(*args, **kwargs)
        except Exception as e:
            recursion_reserve.value += ROOM   # before any call: see python_path_after
            if not python_path_after(e, lambda error, deleted: explain_failed_call(
                    args, kwargs, error, deleted)):
                raise
            return self._call(args, kwargs)[0]
        leaves, _ = tree_flatten(out)
        if leaves and type(leaves[0]) is Array and leaves[0]._group is not None:
            launched([leaves[0]._group])
        return out

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> tuple[Any, PmapEntry | None]:
        """The Python path: the outputs, and the entry that ran (None under a trace)."""
        statics, args = self._split(args)
        trace = current_trace()
        if trace is not None:
            if any(isinstance(s, DeviceAxis) for s in trace.axis_env.values()):
                return nested_pmap_call(self, trace, statics, args, kwargs), None
            # No device axis around: vmap's semantics, on one device.
            return _batched_call(self.with_statics(statics), self.name, args, kwargs,
                                 self.in_axes_for(statics), self.out_axes,
                                 self.user_axis_name, self.axis_size), None
        leaves, in_tree = tree_flatten((args, kwargs))
        try:
            signature = tuple(map(_leaf_signature, leaves))
        except TypeError:       # See Note [arguments that are not arrays]
            mapped_leaves("pmap", args, kwargs, self.in_axes_for(statics),
                          _display_name(self.fun))
            raise
        key = (in_tree, signature, statics, dtypes._x64,
               _precision._default[0],                   # Note [default precision]
               dtypes._promotion[0],                     # Note [strict promotion]
               _rank_promotion._mode[0])                 # Note [rank promotion]
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._compile(statics, args, kwargs)
        return entry(leaves), entry

    def _cache_miss(self, *args: Any, **kwargs: Any) -> tuple[Any, Any, bool]:
        """What the C++ dispatcher calls for a signature it cannot launch itself."""
        out, entry = self._call(args, kwargs)
        return out, entry and entry.fast_path((args, kwargs), out), False

    def _build(self, statics: tuple[Any, ...], args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> _Built:
        """Trace, check and clean up the per-device program for these arguments."""
        leaves, dims, paths = mapped_leaves("pmap", args, kwargs, self.in_axes_for(statics),
                                            _display_name(self.fun))
        size = mapped_size("pmap", leaves, dims, paths, self.axis_size)
        check_mapped_size(f"pmap({self.name})", size)
        self._check_devices(size, f"the mapped axis has size {size}")
        # Across processes each passes its own part of the mapped axis (Note [pmap over
        # processes]); the program sees the whole axis.
        size *= pjrt.process_count()
        in_types, in_weak = slice_types(leaves, dims)
        self.trace_count += 1
        with recording_mesh(self.axis_name, size) as recorder:
            func, out_weak, consts, out_tree, _ = trace_pytree(
                self.with_statics(statics), args, kwargs, self.name, in_types, in_weak,
                {self.axis_name: DeviceAxis(size)})
        observe("traced", func)
        mesh: Mesh = tuple(recorder.axes)
        total = math.prod(s for _, s in mesh)
        if len(mesh) > 1:
            self._check_devices(total // pjrt.process_count(), "the device mesh " + " x ".join(
                str(s) if n.startswith("_pmap") else f"{s} ({n!r})" for n, s in mesh)
                + f" has {total} devices")
        out_dims = mapping.out_dims("pmap", self.out_axes, out_tree, func.out_types)
        func, depths = peel_gathers(func, out_dims, recorder)
        names = out_paths(out_tree)
        in_varying = [frozenset({self.axis_name}) if d is not None else frozenset()
                      for d in dims] + [frozenset()] * len(consts)
        func = run_pass("collectives", check_collectives, func, mesh, in_varying,
                        [d is None for d in out_dims], names, f"pmap({self.name})")
        func = run_pass("cleanup", cleanup, func)
        devices = self.devices or _first_devices(total)
        n = len(args) + len(statics)
        nums = [i % n for i in self.donate_argnums if -n <= i < n]
        donated = donated_leaves(statics, args, kwargs, nums)
        return _Built(func, mesh, tuple(devices), dims, consts, out_weak, out_tree, out_dims,
                      depths, donated)

    def _compile(self, statics: tuple[Any, ...], args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> PmapEntry:
        return self._build(statics, args, kwargs).compile()

    def lower(self, *args: Any, **kwargs: Any) -> PmapLowered:
        """The per-device program for these arguments (``.ir()``), its StableHLO for all
        replicas (``.as_text()``), and ``.compile()``."""
        statics, args = self._split(args)
        with recording() as stages:
            built = self._build(statics, args, kwargs)
        return PmapLowered(built, stages)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    def _check_devices(self, needed: int, what: str) -> None:
        """``needed`` devices in this process (of the same number in every process)."""
        if self.devices is not None:
            if pjrt.process_count() > 1:
                raise ValueError(
                    f"pmap({self.name}): devices= is not supported in a computation over "
                    f"{pjrt.process_count()} processes; leave it out, and pmap runs on the "
                    f"first devices of every process{where()}")
            if len(self.devices) != needed:
                raise ValueError(f"pmap({self.name}): {what}, but devices= lists "
                                 f"{len(self.devices)} devices; with devices= the mapped "
                                 f"size must equal len(devices){where()}")
            return
        available = len(pjrt.local_devices())
        if needed > available:
            here = "this process has" if pjrt.process_count() > 1 else "are available"
            more = (f"create more virtual CPU devices by setting SPMDC_CPU_DEVICES={needed} "
                    "before spmdc is imported" if pjrt.platform_wanted() == "cpu" else
                    "run on a host with more devices")
            raise ValueError(
                f"pmap({self.name}): {what}, but only {available} devices {here} "
                f"({needed} > {available}). Map over at most {available}, or {more}"
                f"{where()}")


# Note [pmap over processes]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~
# After spmdc.distributed.initialize, a pmap is one program over the devices of every
# process, as in JAX: each process passes arrays whose mapped axis has its *local*
# length n, the program's axis has n x the process count, and process p runs replicas
# p*n .. p*n+n-1 (devices() is grouped by process; with nested pmaps, the outer axis is
# the one split over processes). Each process places and reads only its own replicas'
# buffers (PmapEntry.local), and its results hold its own part: a mapped output has the
# local length, an out_axes=None output (replicated, by Note [replication]) the whole
# value, on every process. The lowering is the same replica form as in one process.

def _first_devices(total: int) -> list[Any]:
    """The devices of a ``total``-replica program: the first ``total`` devices, or over
    several processes the first ``total / process count`` of each (Note [pmap over
    processes])."""
    count = pjrt.process_count()
    if count == 1:
        return list(pjrt.devices()[:total])
    per = total // count
    return [d for p in range(count)
            for d in [e for e in pjrt.devices() if e.process_index == p][:per]]


class PmapEntry:
    """One compiled specialisation of a pmapped function: its executable, and the launcher
    that places the arguments, launches and wraps the results (runtime/launcher.py's
    ReplicatedLauncher: Note [pacing replicated launches] there)."""
    __slots__ = ("executable", "launcher", "out_tree")

    def __init__(self, executable: Any, mesh: Mesh, func: Func, dims: list[int | None],
                 consts: list[Any], out_weak: list[bool], out_tree: Any,
                 out_dims: list[int | None], depths: list[int]):
        self.executable = executable
        self.out_tree = out_tree
        self.launcher = ReplicatedLauncher(executable, mesh, func.in_types, dims, consts,
                                           func.out_types, out_weak, out_dims, depths)

    def __call__(self, leaves: Sequence[Any]) -> Any:
        return run_launcher(self.launcher, leaves, self.executable.donated, self.out_tree)

    def fast_path(self, args: Any, out: Any) -> Any:
        """The C++ launch for calls like ``args`` that returned ``out``, where it does
        what the Python path does (ReplicatedLauncher.fast_path)."""
        return self.launcher.fast_path(args, out, tree_flatten)


class _Built:
    """A traced, checked per-device program and what launching it needs."""

    def __init__(self, func: Func, mesh: Mesh, devices: tuple[Any, ...],
                 dims: list[int | None], consts: list[Any], out_weak: list[bool],
                 out_tree: Any, out_dims: list[int | None], depths: list[int],
                 donated: tuple[int, ...] = ()):
        self.func, self.mesh, self.devices, self.dims = func, mesh, devices, dims
        self.consts, self.out_weak, self.out_tree = consts, out_weak, out_tree
        self.out_dims, self.depths = out_dims, depths
        self.donated = donated          # donated arguments (Note [donation])

    def aliases(self, warn: bool = False) -> dict[int, int]:
        """The donated inputs and the outputs reusing their buffers, per device."""
        if warn:
            return usable_donations(self.func.in_types, self.func.out_types, self.donated)
        return donation_aliases(self.func.in_types, self.func.out_types, self.donated)

    def compile(self, compiler_options: dict[str, Any] | None = None) -> PmapEntry:
        executable = compile_func(self.func, self.devices, axis_env=dict(self.mesh),
                                  mesh_axes=[n for n, _ in self.mesh],
                                  aliases=self.aliases(warn=True),
                                  compiler_options=compiler_options)
        return PmapEntry(executable, self.mesh, self.func, self.dims, self.consts,
                         self.out_weak, self.out_tree, self.out_dims, self.depths)


class PmapLowered(Lowered):
    """``pmap(f).lower(*args)``: ``ir()``, ``as_text()`` (StableHLO for every replica),
    and ``compile()``, which gives a callable taking arguments of the lowered types."""

    def __init__(self, built: _Built, recorded: Sequence[tuple[str, Any]] = ()):
        super().__init__(built.func, list(built.devices), built.consts, built.out_weak,
                         built.out_tree, len(built.dims), axis_env=dict(built.mesh),
                         mesh_axes=[n for n, _ in built.mesh], recorded=recorded,
                         donated=built.donated)
        self._built = built
        axis = built.mesh[0][0]
        self.in_varying = ([frozenset({axis}) if d is not None else frozenset()
                            for d in built.dims] + [frozenset()] * len(built.consts))

    def compile(self, compiler_options: dict[str, Any] | None = None) -> DeviceCompiled:
        """The compiled program; ``compiler_options`` are XLA's options by name, as for
        ``jit(f).lower(...).compile``."""
        entry = self._built.compile(compiler_options)
        observe("optimized_hlo", entry.executable.optimized_hlo)
        return DeviceCompiled(entry)
