"""``jax.experimental.colocated_python.func``: the colocated Python callable, its
specialization (``specialize(in_specs=, out_specs_fn=, devices=)``) and the checks a call
makes on its arguments and results.

Note [colocated Python in this process]
~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
JAX's ``colocated_python`` ships a pickled Python function to the CPU devices that sit
on the same host as the arguments' devices, and runs it there, through an IFRT program.
On a plain PJRT client (JAX on CPU, the setting of its own colocated_python_test.py)
compiling that program fails ("PjRtCompiler requires an HloProgram") and JAX falls back
to calling the function in the calling process on the arguments as they are, whole
``jax.Array``s, not per shard. spmdc runs one process per host, so every CPU device
colocated with this process's devices is this process's, and that fallback is the whole
story: the function is called here, on the arrays themselves, when the wrapper is called.
What JAX checks on that path is checked here, with JAX's messages:

- every argument leaf and, on the first call of a specialization, every result leaf is a
  ``jax.Array`` (``ValueError: colocated_python only supports jax.Array as input and
  output, but got <type>.``);
- the arguments share one device list (``ValueError: All arguments must use the same
  device list ...``), unless ``specialize(devices=...)`` named the devices;
- a call without array arguments needs ``specialize(devices=...)`` first
  (``ValueError: No devices found. ...``);
- ``specialize`` may give each of ``in_specs``, ``out_specs_fn`` and ``devices`` once
  (``ValueError: in_specs already specified`` ...).

Nothing crosses a process boundary, so the function is not pickled (JAX's fallback
pickles and unpickles it, so it also rejects a function cloudpickle cannot write; here
any callable runs), and specs are not needed to run it: ``out_specs_fn`` is called on
the argument specs, as JAX calls it, and its result is not compared with the function's.
A remote host (Pathways' sidecar executors) has no counterpart: spmdc has no IFRT
program to ship, so that part is absent.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from ...core import tree as tree_util
from ...core.abstract import ShapeDtypeStruct
from ...runtime import pjrt
from ...runtime.array import Array

__all__ = ["FunctionInfo", "Specialization", "make_callable"]


@dataclasses.dataclass(frozen=True, slots=True)
class FunctionInfo:
    """The user's function, where it was defined, and its signature."""

    fun: Callable[..., Any]
    fun_sourceinfo: str | None
    fun_signature: inspect.Signature | None


@dataclasses.dataclass(frozen=True, slots=True)
class Specialization:
    """What ``specialize`` fixed so far: input specs (tree and leaves), a function from
    input specs to output specs, output specs, and the devices to run on."""

    in_specs_treedef: Any = None
    in_specs_leaves: tuple[Any, ...] | None = None
    out_specs_fn: Callable[..., Any] | None = None
    out_specs_treedef: Any = None
    out_specs_leaves: tuple[Any, ...] | None = None
    devices: Any = None

    def update(self, *, in_specs_treedef: Any = None,
               in_specs_leaves: tuple[Any, ...] | None = None,
               out_specs_fn: Callable[..., Any] | None = None,
               out_specs_treedef: Any = None,
               out_specs_leaves: tuple[Any, ...] | None = None,
               devices: Any = None) -> Specialization:
        """A new specialization with these fields set; each may be set once."""
        given = {"in_specs": (in_specs_treedef, in_specs_leaves),
                 "out_specs_fn": (out_specs_fn,),
                 "out_specs": (out_specs_treedef, out_specs_leaves), "devices": (devices,)}
        mine = {"in_specs": (self.in_specs_treedef, self.in_specs_leaves),
                "out_specs_fn": (self.out_specs_fn,),
                "out_specs": (self.out_specs_treedef, self.out_specs_leaves),
                "devices": (self.devices,)}
        for name, values in given.items():
            if any(v is not None for v in values) and \
                    any(v is not None for v in mine[name]):
                raise ValueError(f"{name} already specified")
        if devices is not None and not isinstance(devices, pjrt.DeviceList):
            devices = pjrt.DeviceList(tuple(devices))

        def pick(new: Any, old: Any) -> Any:
            return old if new is None else new
        return Specialization(
            pick(in_specs_treedef, self.in_specs_treedef),
            pick(in_specs_leaves, self.in_specs_leaves),
            pick(out_specs_fn, self.out_specs_fn),
            pick(out_specs_treedef, self.out_specs_treedef),
            pick(out_specs_leaves, self.out_specs_leaves),
            pick(devices, self.devices))


def _get_spec(x: Any) -> ShapeDtypeStruct:
    """The spec of ``x``, which must be a ``jax.Array``."""
    if not isinstance(x, Array):
        raise ValueError("colocated_python only supports jax.Array as input and output, "
                         f"but got {type(x)}.")
    return ShapeDtypeStruct(shape=x.shape, dtype=x.dtype, sharding=x.sharding)


def _device_list(x: Array) -> Any:
    sharding = x.sharding
    return pjrt.DeviceList(tuple(sharding._device_assignment))


def _infer_devices_from_args(args: Sequence[Any]) -> Any:
    """The one device list of the arguments (None without array arguments)."""
    found = {_device_list(x) for x in args if isinstance(x, Array)}
    if not found:
        return None
    if len(found) != 1:
        raise ValueError("All arguments must use the same device list, but got multiple "
                         f"device lists: {found}.")
    return found.pop()


def _check_arguments(info: FunctionInfo, spec: Specialization,
                     leaves: Sequence[Any]) -> None:
    if not leaves and spec.devices is None:
        raise ValueError("No devices found. colocated_python function without input "
                         "arguments must be first specialized with devices.")
    for x in leaves:
        _get_spec(x)
    if spec.devices is None:       # devices given: the arguments' orders may differ
        _infer_devices_from_args(leaves)


def _make_callable(info: FunctionInfo, spec: Specialization) -> Callable[..., Any]:
    # The structures (input tree, leaf shapes and dtypes) already run once: the first
    # call of each checks the function's results are jax.Arrays, as JAX's first call
    # of a specialization discovers its output specs. See Note [colocated Python in
    # this process].
    seen: set[Any] = set()

    def specialize(in_specs: Any = None, out_specs_fn: Callable[..., Any] | None = None,
                   devices: Sequence[Any] | None = None) -> Callable[..., Any]:
        """This callable with ``in_specs`` (a tree of ShapeDtypeStructs for ``(args,
        kwargs)``), ``out_specs_fn`` (input specs -> output specs) and ``devices`` (the
        devices to run on; needed when the call has no array arguments) fixed."""
        treedef = leaves = None
        if in_specs is not None:
            flat, treedef = tree_util.tree_flatten(in_specs)
            leaves = tuple(flat)
        return _make_callable(info, spec.update(
            in_specs_treedef=treedef, in_specs_leaves=leaves, out_specs_fn=out_specs_fn,
            devices=devices))

    @functools.wraps(info.fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        leaves, treedef = tree_util.tree_flatten((args, kwargs))
        _check_arguments(info, spec, leaves)
        key = (treedef, tuple((x.shape, x.dtype) for x in leaves))
        if key not in seen and spec.out_specs_fn is not None and \
                spec.out_specs_treedef is None:
            spec_args, spec_kwargs = tree_util.tree_map(_get_spec, (args, kwargs))
            spec.out_specs_fn(*spec_args, **spec_kwargs)
        result = info.fun(*args, **kwargs)
        if key not in seen:
            for x in tree_util.tree_leaves(result):
                _get_spec(x)
            seen.add(key)
        return result

    call.specialize = specialize  # type: ignore[attr-defined]
    return call


def make_callable(fun: Callable[..., Any], fun_sourceinfo: str | None,
                  fun_signature: inspect.Signature | None) -> Callable[..., Any]:
    """A colocated Python callable for ``fun`` with nothing specialized yet."""
    return _make_callable(FunctionInfo(fun, fun_sourceinfo, fun_signature),
                          Specialization())
