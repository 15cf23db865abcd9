"""spmdc.shard_map: a per-device program over a mesh, written with blocks and collectives.

``shard_map(f, mesh=mesh, in_specs=(P('x', None), P()), out_specs=P('x'))(a, b)`` runs
``f`` once per device of ``mesh``: each device sees its block of every argument (dimension
k of an argument split over the mesh axes its spec names at k; unnamed mesh axes
replicate), collectives over mesh axis names (``psum(v, 'x')``, ``all_gather(v, ('x',
'y'))``) combine the devices, and each output's blocks are put together by its out_spec
into one global Array laid out by ``NamedSharding(mesh, out_spec)``.

Note [shard_map]
~~~~~~~~~~~~~~~~
At top level the program is traced once on the block types with every manual mesh axis
bound as a device axis, checked by the collectives pass, and compiled for the mesh's
devices in mesh order, one replica each: the same machinery as pmap, with a mesh of
several axes from the start (pmap reaches such meshes by nesting, Note [nested pmap]).
Arguments already laid out by the argument's ``NamedSharding(mesh, spec)`` are used in
place; others are sliced on the host once.

Replication (``check_vma=True``): an output whose out_spec leaves out a manual mesh axis
claims to be the same on every device along it. The replication analysis (Note
[replication]) gives, for every value, the axes it may vary over; an output that may
vary over an axis its out_spec omits is an error before compiling, naming the output
and the line that computed it. With ``check_vma=False`` the claim is trusted, and the
global result holds the block of the first device along each omitted axis, as in JAX.

Under a transformation (jit, grad, vmap), shard_map becomes one ``shard_map`` equation
(compiler/primitives/shard_map.py) that carries two programs: the per-device body traced
as above, and the *global* function on one device: every argument reshaped so that the
pieces its spec splits it into stand on leading axes, one per mesh axis, the body vmapped
over them (``axis_name`` bound, so the collectives mean what they mean on the mesh), and
each output put back together by its out_spec, taking index 0 along the mesh axes it
omits. A jit program containing the equation runs over the mesh in the partition form
(Note [jit over sharded arrays] in partitioned.py): the body becomes a Shardy manual
computation and runs distributed. Every rule that transforms the equation uses the global
program, so ``grad`` of a shard_map is the gradient of that global function, which is
JAX's shard_map semantics (a replicated argument receives the sum of the per-device
cotangents; a psum's cotangent is the same on every device), and vmap batches it. Inside
a pmap body (a device axis bound around it), shard_map inlines the global program.

Reverse mode *inside* the body (``grad``, ``vjp``, ``linear_transpose`` in ``f``) is
refused with a clear error (mapping.refuse_in_shard_map_body). JAX types every value
inside a shard_map body with the mesh axes it varies over and transposes by those types:
an invariant value that meets a varying one is implicitly broadcast, and that broadcast
transposes to a psum, so the gradient of a replicated parameter inside the body comes
out already summed over the devices; a psum of a varying value transposes to a plain
broadcast. spmdc's transposes inside a mapped body follow pmap's per-device convention
(Note [collective transpose]): no implicit sum, psum to psum. The two give different
numbers for the most common body (a per-device loss's gradient with respect to
replicated parameters), so rather than give the pmap numbers under JAX's name, spmdc
refuses until its autodiff pass learns the typed transposes. Forward mode (jvp) inside
the body is the same under both conventions and works.

Deliberate difference: JAX types an ``all_gather``'s result as still varying over the
gathered axis (its ``all_gather_invariant`` is the invariant one), so an out_spec that
omits that axis is rejected there; spmdc's replication analysis knows the gathered value
is the same on every device of the group and accepts it.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from ..compiler.ir import Func, TensorType
from ..compiler.passes import observe, recording, run_pass
from ..compiler.passes.cleanup import cleanup
from ..compiler.passes.collectives import ReplicationError, check_collectives, varying_axes
from ..compiler.primitives.shard_map import shard_map_p
from ..core.operands import asarray
from ..core.pytree_tracing import fun_name, trace_pytree
from ..core.tracing import bind, current_trace, type_of, where
from ..core.tree import (
    broadcast_prefix,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)
from ..runtime import pjrt
from ..runtime.array import Array
from ..runtime.executable import compile_func
from ..runtime.launcher import BlockLauncher
from ..runtime.sharding import Mesh, NamedSharding, PartitionSpec, check_spec, current_mesh
from .arguments import run_launcher
from .mapping import _arg_path, out_paths, shard_map_body
from .partitioned import remember_mesh
from .pmap_nested import DeviceAxis
from .stages import Lowered

__all__ = ["shard_map", "smap"]


class _Infer:
    def __repr__(self) -> str:
        return "Infer"


Infer = _Infer()


def shard_map(f: Callable[..., Any] | None = None, /, *, out_specs: Any,
              in_specs: Any = Infer, mesh: Mesh | None = None,
              axis_names: Any = frozenset(), check_vma: bool = True) -> Any:
    """Map ``f`` over the devices of ``mesh`` (module docstring). ``in_specs`` may be left
    out when every argument is an Array laid out by a NamedSharding over the mesh (its
    spec is used); ``axis_names``: the mesh axes the body handles by hand (default all);
    the others replicate the whole computation."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                   axis_names=axis_names, check_vma=check_vma)
    if not callable(f):
        raise TypeError(f"shard_map expects a callable, got {type(f).__name__}")
    return ShardMapped(f, mesh, in_specs, out_specs, axis_names, check_vma)


def smap(f: Callable[..., Any] | None = None, /, *, in_axes: Any = Infer, out_axes: Any,
         axis_name: str) -> Any:
    """shard_map over one mesh axis, with vmap-style ``in_axes``/``out_axes``: an integer
    splits that dimension over ``axis_name``, None replicates."""
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)

    def spec(axis: Any) -> Any:
        if axis is None:
            return PartitionSpec()
        if not isinstance(axis, int) or isinstance(axis, bool) or axis < 0:
            raise TypeError(f"smap: in_axes/out_axes entries must be None or a non-negative "
                            f"int, got {axis!r}")
        return PartitionSpec(*([None] * axis), axis_name)

    def to_specs(axes: Any) -> Any:
        if axes is Infer:
            return Infer
        leaves, tree = tree_flatten(axes, is_leaf=lambda x: x is None)
        return tree_unflatten(tree, [spec(a) for a in leaves])

    return shard_map(f, in_specs=to_specs(in_axes), out_specs=to_specs(out_axes),
                     axis_names=frozenset({axis_name}))


def _is_spec(x: Any) -> bool:
    return x is None or isinstance(x, PartitionSpec)


class ShardMapped:
    """The callable shard_map returns; compiled programs are cached by signature."""

    def __init__(self, f: Callable[..., Any], mesh: Mesh | None, in_specs: Any,
                 out_specs: Any, axis_names: Any, check_vma: bool):
        functools.update_wrapper(self, f)
        self.f = f
        self.name = fun_name(f)
        if mesh is not None and not isinstance(mesh, Mesh):
            raise TypeError(f"shard_map: mesh must be a spmdc.sharding.Mesh, got "
                            f"{type(mesh).__name__}")
        self.mesh = mesh
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.axis_names = frozenset(axis_names)
        self.check_vma = bool(check_vma)
        self._cache: dict[Any, _Entry] = {}

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)

    @property
    def what(self) -> str:
        return f"shard_map({self.name})"

    def _mesh(self) -> tuple[Mesh, tuple[str, ...]]:
        mesh = self.mesh if self.mesh is not None else current_mesh()
        if mesh is None:
            raise ValueError(f"{self.what}: no mesh; pass mesh=spmdc.make_mesh(...) or set "
                             f"one with spmdc.set_mesh(mesh){where()}")
        unknown = sorted(self.axis_names - set(mesh.axis_names))
        if unknown:
            raise ValueError(f"{self.what}: axis_names names {unknown[0]!r}, which is not an "
                             f"axis of the mesh {mesh.axis_names}{where()}")
        manual = tuple(n for n in mesh.axis_names if not self.axis_names or n in self.axis_names)
        if len(pjrt.devices()) < mesh.size:
            raise ValueError(f"{self.what}: the mesh has {mesh.size} devices but only "
                             f"{len(pjrt.devices())} are available{where()}")
        return mesh, manual

    # --- specs -------------------------------------------------------------------------------
    def _in_specs(self, mesh: Mesh, manual: tuple[str, ...], args: tuple[Any, ...],
                  leaves: list[Any], paths: list[str]) -> list[PartitionSpec]:
        if self.in_specs is Infer:
            specs = []
            for leaf, path in zip(leaves, paths, strict=True):
                s = leaf._sharding if type(leaf) is Array else None
                if s is None or s.mesh != mesh:
                    raise ValueError(f"{self.what}: in_specs was not given, and argument "
                                     f"{path} is not an Array laid out over the mesh; pass "
                                     f"in_specs=... {where()}")
                specs.append(s.spec)
        else:
            prefix = self.in_specs
            if isinstance(prefix, list):
                prefix = tuple(prefix)
            if isinstance(prefix, tuple) and len(prefix) != len(args):
                raise ValueError(f"{self.what}: in_specs has {len(prefix)} entries but the "
                                 f"function was called with {len(args)} positional "
                                 f"arguments; give one spec per argument{where()}")
            if not _is_spec(prefix) and not isinstance(prefix, tuple):
                prefix = (prefix,) if len(args) == 1 else prefix
            specs = broadcast_prefix((prefix, {}), (args, {}), is_leaf=_is_spec,
                                     what=f"{self.what} in_specs")
        out = []
        for spec, leaf, path in zip(specs, leaves, paths, strict=True):
            spec = self._check_spec(spec, mesh, manual, f"in_specs for argument {path}")
            t = type_of(leaf)[0]
            self._check_fits(spec, mesh, t.shape, f"argument {path}")
            out.append(spec)
        return out

    def _check_spec(self, spec: Any, mesh: Mesh, manual: tuple[str, ...], what: str
                    ) -> PartitionSpec:
        if spec is None:
            return PartitionSpec()
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"{self.what}: {what} must be a PartitionSpec (or None), got "
                            f"{spec!r}{where()}")
        try:
            check_spec(spec, mesh, f"{self.what}: {what}")
        except ValueError as e:
            raise ValueError(f"{e}{where()}") from None
        auto = [a for a in spec.all_axes() if a not in manual]
        if auto:
            raise ValueError(f"{self.what}: {what} {spec!r} names mesh axis {auto[0]!r}, "
                             f"which is not in axis_names {sorted(manual)}{where()}")
        if any(p is PartitionSpec.UNCONSTRAINED for p in spec):
            raise ValueError(f"{self.what}: {what} {spec!r}: P.UNCONSTRAINED has no meaning "
                             f"in shard_map specs{where()}")
        return spec

    def _check_fits(self, spec: PartitionSpec, mesh: Mesh, shape: tuple[int, ...],
                    what: str) -> None:
        if len(spec) > len(shape):
            raise ValueError(f"{self.what}: the spec {spec!r} for {what} has {len(spec)} "
                             f"entries, but {what} has only {len(shape)} dimensions (shape "
                             f"{shape}){where()}")
        for d, n in enumerate(shape):
            axes = spec.axes_of(d)
            parts = math.prod(mesh.shape[a] for a in axes)
            if n % parts:
                sizes = " x ".join(f"{a!r} ({mesh.shape[a]})" for a in axes)
                raise ValueError(f"{self.what}: dimension {d} of {what} (shape {shape}) has "
                                 f"size {n}, which is not divisible by {parts}, the number of "
                                 f"pieces {spec!r} splits it into (mesh axes {sizes})"
                                 f"{where()}")

    def _out_specs(self, mesh: Mesh, manual: tuple[str, ...], out_tree: Any,
                   names: list[str]) -> list[PartitionSpec]:
        skeleton = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        specs = broadcast_prefix(self.out_specs, skeleton, is_leaf=_is_spec,
                                 what=f"{self.what} out_specs")
        return [self._check_spec(s, mesh, manual, f"out_specs for {n}")
                for s, n in zip(specs, names, strict=True)]

    # --- calls -------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            raise TypeError(f"{self.what}: shard_map'd functions take positional arguments "
                            f"only (in_specs lines up with them); got keyword arguments "
                            f"{sorted(kwargs)}{where()}")
        mesh, manual = self._mesh()
        leaves, in_tree = tree_flatten((args, {}))
        paths = [_arg_path(p) for p, _ in tree_flatten_with_path((args, {}))[0]]
        in_specs = self._in_specs(mesh, manual, args, leaves, paths)
        trace = current_trace()
        if trace is not None:
            if any(isinstance(s, DeviceAxis) for s in trace.axis_env.values()):
                return self._emulate(mesh, manual, args, leaves, in_tree, in_specs)
            return self._bind(mesh, manual, args, leaves, in_tree, in_specs)
        types = [type_of(x) for x in leaves]
        key = (in_tree, tuple(types), tuple(in_specs), mesh, manual)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._compile(mesh, manual, args, leaves, in_specs)
        return entry(leaves)

    def _trace(self, mesh: Mesh, manual: tuple[str, ...], args: tuple[Any, ...],
               leaves: list[Any], in_specs: list[PartitionSpec]
               ) -> tuple[Func, list[bool], list[Any], Any, list[PartitionSpec]]:
        """The per-device program on the block types, checked (Note [shard_map])."""
        types = [type_of(x) for x in leaves]
        block_types = [TensorType(_block_shape(t.shape, s, mesh), t.dtype)
                       for (t, _), s in zip(types, in_specs, strict=True)]
        axis_env = {n: DeviceAxis(mesh.shape[n]) for n in manual}
        with shard_map_body():
            func, out_weak, consts, out_tree, _ = trace_pytree(
                self.f, args, {}, self.name, block_types, [w for _, w in types], axis_env)
        observe("traced", func)
        names = out_paths(out_tree)
        out_specs = self._out_specs(mesh, manual, out_tree, names)
        in_varying = [frozenset(s.all_axes()) for s in in_specs] + [frozenset()] * len(consts)
        func = run_pass("collectives", check_collectives, func, mesh.shape_tuple, in_varying,
                        [False] * len(func.outputs), names, self.what)
        if self.check_vma:
            _check_replication(func, in_varying, out_specs, manual, names, self.what)
        for k, (t, s) in enumerate(zip(func.out_types, out_specs, strict=True)):
            if len(s) > t.ndim:
                raise ValueError(f"{self.what}: out_specs for {names[k]} is {s!r}, with "
                                 f"{len(s)} entries, but {names[k]} has only {t.ndim} "
                                 f"dimensions (block shape {t.shape}){where()}")
        return func, out_weak, consts, out_tree, out_specs

    def lower(self, *args: Any) -> ShardMapLowered:
        """The per-device program for these arguments (``.ir()``, the stages ``spmdc
        dump`` shows), its StableHLO for every device (``.as_text()``), ``.compile()``."""
        mesh, manual = self._mesh()
        leaves, _ = tree_flatten((args, {}))
        paths = [_arg_path(p) for p, _ in tree_flatten_with_path((args, {}))[0]]
        in_specs = self._in_specs(mesh, manual, args, leaves, paths)
        with recording() as stages:
            func, out_weak, consts, out_tree, _ = self._trace(mesh, manual, args, leaves,
                                                              in_specs)
            func = run_pass("cleanup", cleanup, func)
        compile_entry = functools.partial(self._compile, mesh, manual, args, leaves, in_specs)
        lowered = ShardMapLowered(func, mesh, consts, out_weak, out_tree, len(leaves), stages,
                                  compile_entry)
        lowered.in_varying = ([frozenset(s.all_axes()) for s in in_specs]
                              + [frozenset()] * len(consts))
        return lowered

    def _compile(self, mesh: Mesh, manual: tuple[str, ...], args: tuple[Any, ...],
                 leaves: list[Any], in_specs: list[PartitionSpec]) -> _Entry:
        func, out_weak, consts, out_tree, out_specs = self._trace(mesh, manual, args, leaves,
                                                                  in_specs)
        layout = mesh.shape_tuple
        func = run_pass("cleanup", cleanup, func)
        executable = compile_func(func, mesh._flat_devices, axis_env=dict(layout),
                                  mesh_axes=list(mesh.axis_names))
        out_types = [TensorType(_global_shape(t.shape, s, mesh), t.dtype)
                     for t, s in zip(func.out_types, out_specs, strict=True)]
        return _Entry(executable, mesh, in_specs, func.in_types[:len(leaves)], consts,
                      func.in_types[len(leaves):], out_types, out_weak, out_tree, out_specs)

    # --- under a trace ------------------------------------------------------------------------
    def _bind(self, mesh: Mesh, manual: tuple[str, ...], args: tuple[Any, ...],
              leaves: list[Any], in_tree: Any, in_specs: list[PartitionSpec]) -> Any:
        """One shard_map equation carrying the per-device program and the global one
        (primitives/shard_map.py; Note [shard_map])."""
        body, out_weak, consts, out_tree, out_specs = self._trace(mesh, manual, args, leaves,
                                                                  in_specs)
        types = [type_of(x) for x in leaves]
        emulated, _, em_consts, _, _ = trace_pytree(
            lambda *a: self._emulate(mesh, manual, a, tree_flatten((a, {}))[0], in_tree,
                                     in_specs, checked=True),
            args, {}, f"{self.name}_global", [t for t, _ in types], [w for _, w in types])
        n, nb = len(leaves), len(consts)
        body = _with_inputs(body, n + nb, [v.type for v in emulated.inputs[n:]])
        emulated = _with_inputs(emulated, n, [v.type for v in body.inputs[n:n + nb]],
                                at=n)
        spec_of = [tuple(s.axes_of(d) for d in range(t.ndim))
                   for s, (t, _) in zip(in_specs, types, strict=True)]
        const_specs = [tuple(() for _ in range(v.type.ndim)) for v in body.inputs[n:]]
        ids = remember_mesh(mesh)
        outs = bind(shard_map_p, *leaves, *consts, *em_consts, body=body, emulated=emulated,
                    mesh=mesh.shape_tuple, device_ids=ids,
                    in_specs=tuple(spec_of + const_specs),
                    out_specs=tuple(tuple(s.axes_of(d) for d in range(t.ndim))
                                    for s, t in zip(out_specs, emulated.out_types,
                                                    strict=True)),
                    manual=manual)
        for o, w in zip(outs, out_weak, strict=True):
            o.weak = w
        return tree_unflatten(out_tree, outs)

    def _emulate(self, mesh: Mesh, manual: tuple[str, ...], args: tuple[Any, ...],
                 leaves: list[Any], in_tree: Any, in_specs: list[PartitionSpec],
                 checked: bool = False) -> Any:
        """The global function on one device (Note [shard_map])."""
        from .vmap import vmap

        if not checked:   # the checks the multi-device run makes (axis names, replication)
            self._trace(mesh, manual, args, leaves, in_specs)
        stacked = [_to_pieces(x, s, mesh, manual) for x, s in zip(leaves, in_specs,
                                                                          strict=True)]
        out_box: list[Any] = []

        def body(*pieces: Any) -> Any:
            a, _ = tree_unflatten(in_tree, list(pieces))
            with shard_map_body():
                out = self.f(*a)
            flat, tree = tree_flatten(out)
            out_box.append(tree)
            return flat

        fun = body
        for name in reversed(manual):
            in_axes = tuple(0 if name in s.all_axes() else None for s in in_specs)
            fun = vmap(fun, in_axes=in_axes, out_axes=0, axis_name=name,
                       axis_size=mesh.shape[name])
        flat = fun(*stacked)
        out_tree = out_box[-1]
        names = out_paths(out_tree)
        out_specs = self._out_specs(mesh, manual, out_tree, names)
        outs = [_from_pieces(y, s, mesh, manual) for y, s in zip(flat, out_specs,
                                                                          strict=True)]
        return tree_unflatten(out_tree, outs)


def _with_inputs(func: Func, keep: int, extra: list[TensorType], at: int | None = None
                 ) -> Func:
    """``func`` taking unused inputs of the ``extra`` types, inserted at ``at`` (default:
    after its first ``keep`` inputs, i.e. at the end of those)."""
    from ..compiler.ir import Var
    at = keep if at is None else at
    new = tuple(Var(t) for t in extra)
    return Func(func.name, func.inputs[:at] + new + func.inputs[at:], func.eqns,
                func.outputs)


def _block_shape(shape: tuple[int, ...], spec: PartitionSpec, mesh: Mesh) -> tuple[int, ...]:
    return tuple(n // math.prod(mesh.shape[a] for a in spec.axes_of(d))
                 for d, n in enumerate(shape))


def _global_shape(shape: tuple[int, ...], spec: PartitionSpec, mesh: Mesh) -> tuple[int, ...]:
    return tuple(n * math.prod(mesh.shape[a] for a in spec.axes_of(d))
                 for d, n in enumerate(shape))


def _to_pieces(x: Any, spec: PartitionSpec, mesh: Mesh, manual: tuple[str, ...]
               ) -> Any:
    """``x`` with one leading axis per mesh axis its spec splits it over (mesh order),
    then the block: piece (i, j, ...) is the block of the device at those coordinates."""
    x = asarray(x)
    split = []                                    # (mesh axis, size) per split axis
    shape: list[int] = []
    for d, n in enumerate(x.shape):
        axes = spec.axes_of(d)
        sizes = [mesh.shape[a] for a in axes]
        shape += sizes + [n // math.prod(sizes)]
        split += [(a, len(shape) - len(sizes) - 1 + k) for k, a in enumerate(axes)]
    x = x.reshape(tuple(shape))
    where_axis = dict(split)
    lead = [where_axis[a] for a in manual if a in where_axis]
    rest = [k for k in range(len(shape)) if k not in lead]
    return x.transpose((*lead, *rest))


def _from_pieces(y: Any, spec: PartitionSpec, mesh: Mesh, manual: tuple[str, ...]
                 ) -> Any:
    """The inverse of _to_pieces for an output whose leading axes are all the manual mesh
    axes (vmap's out_axes=0): axes the spec omits are read at index 0."""
    named = set(spec.all_axes())
    for k, a in reversed(list(enumerate(manual))):
        if a not in named:
            y = y[(slice(None),) * k + (0,)]         # a static slice
    kept = [a for a in manual if a in named]
    block = y.shape[len(kept):]
    # Bring each split axis next to its dimension, then merge.
    order, shape = [], []
    for d, n in enumerate(block):
        axes = spec.axes_of(d)
        order += [kept.index(a) for a in axes] + [len(kept) + d]
        shape.append(n * math.prod(mesh.shape[a] for a in axes))
    return y.transpose(tuple(order)).reshape(tuple(shape))


def _check_replication(func: Func, in_varying: list[frozenset[str]],
                       out_specs: list[PartitionSpec], manual: tuple[str, ...],
                       names: list[str], what: str) -> None:
    # See Note [shard_map] and Note [replication].
    for k, (axes, spec) in enumerate(zip(varying_axes(func, in_varying), out_specs,
                                         strict=True)):
        bad = sorted(a for a in axes if a in manual and a not in spec.all_axes())
        if bad:
            source = next((e.source for e in reversed(func.eqns)
                           if func.outputs[k] in e.outputs and e.source), None)
            at = f" (computed at {source})" if source else ""
            raise ReplicationError(
                f"{what}: {names[k]} has out_specs {spec!r}, which says it is the same on "
                f"every device along mesh axis {bad[0]!r}, but its value may differ along "
                f"it{at}. Name the axis in the out_spec to get every device's block, reduce "
                f"the value over the axis first (e.g. lax.psum / lax.pmean), or pass "
                "check_vma=False to take the first device's block. See Note [shard_map].")


class _Entry:
    """One compiled specialisation: its executable, and the launcher that places the
    blocks, launches and makes the global results (runtime/launcher.py's BlockLauncher)."""

    def __init__(self, executable: Any, mesh: Mesh, in_specs: list[PartitionSpec],
                 in_types: list[TensorType], consts: list[Any], const_types: list[TensorType],
                 out_types: list[TensorType], out_weak: list[bool], out_tree: Any,
                 out_specs: list[PartitionSpec]):
        self.executable, self.out_tree = executable, out_tree
        self.launcher = BlockLauncher(
            executable, mesh, [NamedSharding(mesh, s) for s in in_specs], in_types, consts,
            const_types, out_types, out_weak, [NamedSharding(mesh, s) for s in out_specs])

    def __call__(self, leaves: list[Any]) -> Any:
        return run_launcher(self.launcher, leaves, (), self.out_tree)


class ShardMapLowered(Lowered):
    """``shard_map(f, ...).lower(*args)``: ``ir()``, ``as_text()`` (StableHLO for every
    device of the mesh), the stages, and ``compile()``, which gives a callable taking
    arguments of the lowered types."""

    def __init__(self, func: Func, mesh: Mesh, consts: list[Any], out_weak: list[bool],
                 out_tree: Any, n_args: int, recorded: Any, compile_entry: Any):
        super().__init__(func, list(mesh._flat_devices), consts, out_weak, out_tree, n_args,
                         axis_env=dict(mesh.shape_tuple), mesh_axes=mesh.axis_names,
                         recorded=recorded)
        self._compile_entry = compile_entry

    def compile(self) -> Callable[..., Any]:
        entry = self._compile_entry()
        observe("optimized_hlo", entry.executable.optimized_hlo)

        def call(*args: Any) -> Any:
            return entry(tree_flatten((args, {}))[0])
        call.as_text = entry.executable.optimized_hlo
        return call
