"""jaxlib's C++ dispatcher: the callable in front of every jit and pmap, the pytree
registries it flattens with, the config slots in its key, the launches spmdc grants it,
and what its errors mean."""
from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from jaxlib import _jax

from .backend import Device
from .buffers import Aval, Buffer, aval, group_sharding, one_device_sharding
from .compilation import Executable, waiting
from .once import once
from .recursion import restore_recursion_budget

# Note [C++ dispatch]
# ~~~~~~~~~~~~~~~~~~~
# PJRT's Python-level launch (execute_sharded, then disassembling the results) costs about
# 7 us per call, more than a whole jitted call should. jaxlib also has a C++ dispatcher
# (``_jax.pjit``): a callable that flattens its arguments with a C++ pytree registry,
# computes their signature (structure, and per array shape, dtype, weak type and
# sharding), finds a cached executable and launches it, building the output arrays and
# the output pytree in C++. On a signature it has not seen it calls ``cache_miss(*args,
# **kwargs)``, which must return ``(outputs, fast_path_or_None, False)``; with ``None``
# the C++ side simply calls ``cache_miss`` again next time.
#
# spmdc puts one in front of every jit and pmap (transforms/jit.py, transforms/pmap.py):
# ``cache_miss`` is the ordinary Python path, and ``fast_path`` grants the C++ launch
# only when that is exactly what the Python path would have done: every argument leaf is
# a buffer spmdc placed, of the program's parameter type, on the program's devices
# (spmdc.Array is a registered node whose child is its buffer, or for a replicated
# program its group_array; NumPy arrays, Python scalars and Arrays elsewhere keep the
# Python path), and every output leaf is a buffer the C++ side can rebuild. Captured
# constants go with the grant (``const_args``); jaxlib passes them before the arguments,
# so jit compiles its programs with the constants first. (pmap does not grant programs
# with constants.)
# Static arguments are part of the C++ signature by value. The dispatcher needs three
# process-wide config slots (disable_jit, enable_x64, post_hook) that the jax package
# sets when it is imported; without jax spmdc sets them to constant defaults, with jax
# it leaves jax's in place (so jax.disable_jit() would then reach spmdc's dispatchers
# too; spmdc has no disable_jit of its own).

def _new_registry() -> Any:
    return _jax.pytree.PyTreeRegistry(enable_none=True, enable_tuple=True,
                                      enable_namedtuple=True, enable_list=True,
                                      enable_dict=True)


def pytree_registry(*, enable_none: bool, enable_tuple: bool, enable_namedtuple: bool,
                    enable_list: bool, enable_dict: bool) -> Any:
    """A new jaxlib pytree registry with the built-in node types chosen (JAX's
    ``mlir.ir_tree_registry`` is one)."""
    return _jax.pytree.PyTreeRegistry(
        enable_none=enable_none, enable_tuple=enable_tuple,
        enable_namedtuple=enable_namedtuple, enable_list=enable_list,
        enable_dict=enable_dict)


# One registry per kind of launch, because an spmdc.Array flattens differently for each:
# to its one buffer for a single-device program, to one multi-device array holding a
# buffer per replica (group_array) for a replicated one. A single-device launch's
# arguments and results have a registry each ("one", "one results"): the arguments'
# registry reads an Array's children from its attributes in C++, with no Python call
# (register_fields), but rebuilds a node only by calling its type, which would run
# Array.__init__ for every result; the results' registry rebuilds them with a Python
# function (Note [leaves read in C++] in runtime/array.py).
_registries = {"one": _new_registry(), "one results": _new_registry(),
               "replicated": _new_registry()}
_results = {"one": "one results", "partitioned": "one results", "replicated": "replicated"}


def register_node(nodetype: type, flatten: Any, unflatten: Any,
                  kind: str | None = None) -> None:
    """Teach the C++ dispatchers' pytree registries a node type (the protocol of
    spmdc.tree); ``kind`` names one registry ("one", "one results" or "replicated"),
    None all of them."""
    for k, registry in _registries.items():
        if kind is None or k == kind:
            registry.register_node(nodetype, flatten, unflatten)


def register_fields(nodetype: type, children: str, aux: str, kind: str) -> None:
    """Teach registry ``kind`` to flatten a ``nodetype`` in C++: its children are the
    pytree in attribute ``children``, its aux data that in ``aux`` (both read with no
    Python call where they are slots). Unflattening calls ``nodetype(**fields)``, so
    it is for a registry that flattens only (see _registries)."""
    _registries[kind].register_dataclass_node(nodetype, [children], [aux])


class FastPath(NamedTuple):
    """What jaxlib's C++ dispatcher reads to launch a cached executable."""
    xla_executable: Executable
    out_pytree_def: Any
    in_shardings: list[Any]
    out_shardings: list[Any]
    out_avals: list[Aval]
    out_committed: list[bool]
    kept_var_bitvec: list[bool]
    in_device_local_layouts: list[None]
    const_args: list[Any]


@once
def _dispatch_state() -> None:
    if "jax._src.config" in sys.modules:       # jax has set (and owns) the slots
        return
    config = _jax.config.Config
    _jax.jax_jit.set_disable_jit_state(config("spmdc_disable_jit", False))
    _x64_slot.append(config("spmdc_enable_x64", _x64_state[0], include_in_jit_key=True))
    _jax.jax_jit.set_enable_x64_state(_x64_slot[0])
    _jax.jax_jit.set_post_hook_state(config("spmdc_post_hook", None))


# The x64 setting is part of the C++ dispatcher's signature: a program traced with x64
# on must not be launched for the same call with it off.
_x64_state = [False]
_x64_slot: list[Any] = []


def set_x64_state(enabled: bool) -> None:
    """Tell the C++ dispatchers whether 64-bit types are on (spmdc.core.dtypes calls it
    on every change). With jax imported, jax's slot is in place and stays as jax sets it."""
    _x64_state[0] = enabled
    if _x64_slot:
        _x64_slot[0].set_global(enabled)


# Note [Python-path state in the jit key]
# ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# A call made while this thread traces (where a jit is inlined into the trace) or while a
# runtime check is on (Note [config on the hot path] in core/config.py) must take the
# Python path even when its arguments match a granted launch. Rather than test both in
# Python before every call, spmdc keeps them in two config slots that are part of every
# C++ dispatcher's key, as JAX keeps its trace state: while either is on, no granted
# launch matches, the dispatcher calls ``cache_miss``, and the Python path grants nothing
# then. ``tracing`` is per thread (as the current trace is), ``runtime checks`` global.
_tracing_slot = _jax.config.Config("spmdc_tracing", False, include_in_jit_key=True)
_checks_slot = _jax.config.Config("spmdc_runtime_checks", False, include_in_jit_key=True)


def set_tracing(on: bool) -> None:
    """Tell the C++ dispatchers whether this thread has a current trace."""
    _tracing_slot.set_local(on)


# The mesh in context (set_mesh, use_abstract_mesh) decides where a jit call's results
# are laid out and what their types say (Note [arrays made under a mesh] in
# transforms/partitioned.py): a launch granted under one context must not serve another.
_mesh_slot = _jax.config.Config("spmdc_mesh_context", None, include_in_jit_key=True)


def set_mesh_context(key: Any) -> None:
    """Tell the C++ dispatchers this thread's mesh context (a hashable key, None for no
    mesh)."""
    _mesh_slot.set_local(key)


def set_runtime_checks(on: bool) -> None:
    """Tell the C++ dispatchers whether a runtime check is on."""
    _checks_slot.set_global(on)


def python_path_after(e: Exception, explain: Callable[[Exception, bool], None]) -> bool:
    """The error triage of a dispatcher call (Jitted.__call__, Pmapped.__call__), whose
    handler has just added ROOM to ``recursion_reserve.value``, before any call (Note
    [recursion budget after a failed flatten]). Gives back the recursion levels a failed
    flatten leaked; lets ``explain(e, deleted)`` raise a clearer error about the call's
    arguments (arguments that contain themselves, which make the C++ registry recurse
    until it fails with a RecursionError or a confused SystemError / AttributeError; with
    ``deleted``, a deleted or donated Array among them); then says whether the Python
    path should take the call: True where the dispatcher refused it before running
    anything and the Python path does better (spmdc's pytrees keep a dict whose keys do
    not sort in insertion order; the Python path explains an unhashable static argument
    and an Array donated and passed again, before anything is launched), False where the
    error stands."""
    restore_recursion_budget()
    if not isinstance(e, ValueError):
        explain(e, isinstance(e, RuntimeError))     # a deleted Array (Array._flatten)
        return False
    if isinstance(e.__cause__, RecursionError):     # (keys compared at the limit)
        explain(e, False)
    if is_unsortable_keys_error(e) or is_unhashable_static_error(e):
        return True
    explain(e, is_deleted_buffer_error(e))
    return is_double_donation_error(e)


def is_unsortable_keys_error(e: Exception) -> bool:
    """Whether the C++ registry refused a dict whose keys do not sort."""
    return str(e).startswith("Comparator raised exception while sorting pytree dictionary")


def is_unhashable_static_error(e: Exception) -> bool:
    """Whether the C++ dispatcher refused a static argument it cannot hash."""
    return str(e).startswith("Non-hashable static arguments are not supported")


_granting = threading.local()


def granting() -> bool:
    """Whether ``fast_path`` is flattening a call's arguments after the call (when a
    donated argument is already deleted, and no launch follows)."""
    return getattr(_granting, "on", False)


def is_deleted_buffer_error(e: Exception) -> bool:
    """Whether a launch failed on an argument whose buffer was deleted or donated."""
    return "has been deleted or donated" in str(e)


def is_double_donation_error(e: Exception) -> bool:
    """Whether a launch refused a donated buffer that was also another argument."""
    return "previously donated in the same call" in str(e)


def _no_fallback(x: Any, *rest: Any) -> Any:
    # Only called for an argument whose sharding differs from the program's, which
    # fast_path never grants.
    raise AssertionError(f"spmdc: the C++ dispatcher asked to move {type(x).__name__}")


def dispatcher(name: str, cache_miss: Any, static_argnums: Sequence[int] = (),
               static_argnames: Sequence[str] = (), kind: str = "one") -> Any:
    """A C++ callable that runs granted signatures itself and the rest via ``cache_miss``;
    the static arguments (non-negative positions, keyword names) are part of the
    signature by value; ``kind``: "one" for single-device programs, "replicated" for
    multi-replica ones."""
    _dispatch_state()
    return _jax.pjit(name, None, cache_miss, list(static_argnums), list(static_argnames),
                     (), _registries[kind], _no_fallback)


def _same_objects(xs: Sequence[Any], ys: Sequence[Any]) -> bool:
    return len(xs) == len(ys) and all(x is y for x, y in zip(xs, ys, strict=True))


def fast_path(exe: Executable, devs: tuple[Device, ...],
              in_types: Sequence[tuple[tuple[int, ...], Any]],
              out_types: Sequence[tuple[tuple[int, ...], Any]], args: Any,
              in_buffers: Sequence[Buffer], outs: Any, out_buffers: Sequence[Buffer],
              const_buffers: Sequence[Buffer] = (),
              const_types: Sequence[tuple[tuple[int, ...], Any]] = (),
              kind: str = "one") -> FastPath | None:
    """The C++ launch of ``exe`` (one replica per device of ``devs``) for calls like
    ``args``, or None where it could differ from the Python path. The Python path
    flattened ``args`` to ``in_buffers`` (of per-replica ``in_types``, as (shape, dtype);
    with several replicas each a ``group_array`` over ``devs``) and built ``outs`` from
    ``out_buffers`` (of ``out_types``); the C++ registry must find the same buffers in
    the same order on both sides, and each argument must be a buffer placed by spmdc
    (``put``, ``group_array`` or a fast path) on ``devs``, with that type.
    ``const_buffers`` (of ``const_types``) are the captured constants, which ``exe``
    takes before the arguments. ``kind`` is that of the dispatcher (see ``dispatcher``),
    or "partitioned" for a partitioned program behind a "one" dispatcher, whose arguments
    and results are each one group_array (an Array laid out on a mesh flattens to it)."""
    if id(exe) in waiting:         # the C++ launch would not wait for the effects
        return None
    sharding = one_device_sharding(devs[0]) if kind == "one" else group_sharding(devs)
    registry = _registries["one" if kind == "partitioned" else kind]
    _granting.on = True        # the call has run: a donated argument is gone by now
    try:
        leaves, _ = registry.flatten(args)
    finally:
        _granting.on = False
    if not _same_objects(leaves, in_buffers):
        return None
    for x, (shape, dtype) in zip([*leaves, *const_buffers], [*in_types, *const_types],
                                 strict=True):
        if (type(x) is not _jax.ArrayImpl or x._sharding is not sharding
                or x.aval is None or x.aval.shape != shape or x.aval.dtype != dtype):
            return None
    out_leaves, out_tree = _registries[_results[kind]].flatten(outs)
    if not _same_objects(out_leaves, out_buffers):
        return None
    n, m = len(leaves) + len(const_buffers), len(out_leaves)
    return FastPath(exe, out_tree, [sharding] * n, [sharding] * m,
                    [aval(shape, dtype) for shape, dtype in out_types],
                    [True] * m, [True] * n, [None] * n, list(const_buffers))
