"""spmdc.ffi (``jax.ffi``): calling compiled foreign functions from programs through
XLA's FFI, as JAX 0.10.2 does.

A handler written in C++ against XLA's FFI headers (``include_dir()``: jaxlib ships
them) and built into a shared library is loaded with ctypes, wrapped with
``pycapsule`` and registered under a name with ``register_ffi_target`` (Note [foreign
function targets] in spmdc/runtime/pjrt/custom_calls.py). ``ffi_call(name,
result_shape_dtypes, ...)`` gives a function that calls it: eagerly, under ``jit``, and
under ``vmap`` as its ``vmap_method`` says; its keyword arguments reach the handler as
attributes. The call is the ``ffi_call`` primitive (spmdc/compiler/primitives/ffi.py).
``ffi_lowering`` and ``build_ffi_lowering_function`` make the lowering rule of a
library's own primitive (``jax.interpreters.mlir.register_lowering``) a call of a
target.

``register_ffi_type_id`` is absent: JAX 0.10.2's raises a ValueError on every call
(jaxlib dropped type-id registration; ``register_ffi_type`` replaces it).
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .compiler.ir import TensorType
from .compiler.primitives.ffi import (
    VMAP_METHODS,
    ArrayAttribute,
    FrozenDict,
    custom_call,
    ffi_call_effect_p,
    ffi_call_p,
    row_major,
)
from .core import dtypes, tracing
from .errors import where
from .runtime import pjrt

__all__ = ["build_ffi_lowering_function", "ffi_call", "ffi_lowering", "include_dir",
           "pycapsule", "register_ffi_target", "register_ffi_target_as_batch_partitionable",
           "register_ffi_type"]

Layout = Sequence[int] | None      # major-to-minor for ffi_call, as JAX's


def register_ffi_target(name: str, fn: Any, platform: str = "cpu", api_version: int = 1,
                        *, traits: int = 0) -> None:
    """Register the handler ``fn`` (a ``PyCapsule``, or a dict of them by FFI stage such
    as ``"execute"``) under ``name`` for ``platform``; ``api_version`` 1 is the typed FFI,
    0 the older custom-call API."""
    if not isinstance(name, str) or not name:
        raise TypeError(f"register_ffi_target: name must be a non-empty str, got "
                        f"{name!r}{where()}")
    if api_version not in (0, 1):
        raise ValueError(f"register_ffi_target: api_version must be 1 (the typed FFI) or 0 "
                         f"(the custom-call API), got {api_version!r}{where()}")
    pjrt.register_ffi_target(name, fn, platform, api_version, traits)


def register_ffi_type(name: str, type_registration: Mapping[str, Any],
                      platform: str = "cpu") -> None:
    """Register an FFI type for handlers' state: ``type_registration`` is
    ``{"type_id": capsule, "type_info": capsule}`` (``type_info`` optional)."""
    if not isinstance(type_registration, Mapping) or "type_id" not in type_registration:
        raise TypeError(f"register_ffi_type: type_registration must be a dict with a "
                        f"'type_id' PyCapsule, got {type_registration!r}{where()}")
    pjrt.register_ffi_type(name, dict(type_registration), platform)


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Let XLA's partitioner run the target ``name`` on each shard of its leading
    dimensions."""
    pjrt.register_batch_partitionable(name)


def pycapsule(funcptr: Any) -> Any:
    """A ``PyCapsule`` holding the address of ``funcptr`` (a function of a library loaded
    with ctypes), as ``register_ffi_target`` takes it."""
    address = ctypes.cast(funcptr, ctypes.c_void_p).value
    if not address:
        raise TypeError(f"pycapsule: expected a ctypes function pointer, got {funcptr!r}"
                        f"{where()}")
    destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
    new_capsule = ctypes.pythonapi.PyCapsule_New
    new_capsule.restype = ctypes.py_object
    new_capsule.argtypes = (ctypes.c_void_p, ctypes.c_char_p, destructor)
    return new_capsule(address, None, destructor(0))


def include_dir() -> str:
    """The directory of the XLA FFI headers that jaxlib ships (``xla/ffi/api/ffi.h``)."""
    return pjrt.ffi_include_dir()


# --- ffi_call --------------------------------------------------------------------------------

def _result_types(results: Sequence[Any]) -> tuple[TensorType, ...]:
    out = []
    for k, r in enumerate(results):
        if not hasattr(r, "shape") or not hasattr(r, "dtype"):
            raise ValueError("All elements of result_shape_dtypes must have 'shape' and "
                             f"'dtype' attributes. Got {r} at position {k}.{where()}")
        out.append(TensorType(tuple(int(n) for n in r.shape), np.dtype(r.dtype)))
    return tuple(out)


def _minor_to_major(layout: Layout, ndim: int, what: str) -> tuple[int, ...]:
    """An ``ffi_call`` layout (major-to-minor, None for row-major) in XLA's order."""
    if layout is None:
        return row_major(ndim)
    order = tuple(int(d) for d in layout)
    if sorted(order) != list(range(ndim)):
        raise ValueError(f"ffi_call: the layout {tuple(layout)} of {what} is not an order "
                         f"of its {ndim} dimensions (a permutation of 0..{ndim - 1}, "
                         f"major to minor){where()}")
    return order[::-1]


def _attribute(name: str, value: Any) -> Any:
    """A keyword argument as an equation parameter (compared by value)."""
    if isinstance(value, np.ndarray):
        return ArrayAttribute(value)
    if isinstance(value, dict):
        return FrozenDict({k: _attribute(k, v) for k, v in value.items()})
    try:
        hash(value)
    except TypeError as e:
        raise TypeError(f"Non-hashable keyword argument to ffi_call {name}: {value}"
                        f"{where()}") from e
    return value


def ffi_call(target_name: str, result_shape_dtypes: Any, *, has_side_effect: bool = False,
             vmap_method: str | None = None, input_layouts: Sequence[Layout] | None = None,
             output_layouts: Layout | Sequence[Layout] | None = None,
             input_output_aliases: dict[int, int] | None = None,
             custom_call_api_version: int = 4,
             legacy_backend_config: str | None = None) -> Callable[..., Any]:
    """A function that calls the FFI target ``target_name`` with its positional arguments
    (arrays) and its keyword arguments as the handler's attributes, returning arrays of
    ``result_shape_dtypes`` (one object with ``shape`` and ``dtype``, or a sequence of
    them: then a tuple or list of results). ``has_side_effect``: keep the call even when
    its results are unused. ``vmap_method``: how ``vmap`` calls it, as for
    ``pure_callback`` (``'sequential'``, ``'sequential_unrolled'``, ``'expand_dims'``,
    ``'broadcast_all'``, ``'legacy_vectorized'``; None: vmap is an error). Layouts are
    major-to-minor dimension orders (None: row-major). ``input_output_aliases``: input
    index -> output index whose buffer it becomes."""
    if vmap_method not in VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods "
                         f"{list(VMAP_METHODS)}, but got: {vmap_method}{where()}")
    multiple = isinstance(result_shape_dtypes, Sequence)
    results = _result_types(result_shape_dtypes if multiple else [result_shape_dtypes])
    out_layouts = output_layouts if multiple else (output_layouts,)
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError("The use of the legacy_backend_config parameter requires "
                         f"custom_call_api_version < 4; got {custom_call_api_version}."
                         f"{where()}")

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        in_types = [tracing.type_of(x)[0] for x in args]
        if input_layouts is not None and len(input_layouts) != len(args):
            raise ValueError(f"The number of input arguments ({len(args)}) must equal the "
                             f"number of input layouts ({len(input_layouts)}).{where()}")
        if out_layouts is not None and len(out_layouts) != len(results):
            raise ValueError(f"The number of outputs ({len(results)}) must equal the "
                             f"number of output layouts ({len(out_layouts)}).{where()}")
        ins = tuple(_minor_to_major(None if input_layouts is None else input_layouts[k],
                                    t.ndim, f"input {k}") for k, t in enumerate(in_types))
        outs = tuple(_minor_to_major(None if out_layouts is None else out_layouts[k],
                                     t.ndim, f"output {k}") for k, t in enumerate(results))
        aliases = []
        for i, o in sorted((input_output_aliases or {}).items()):
            i, o = int(i), int(o)
            for what, index, n in (("input", i, len(args)), ("output", o, len(results))):
                if not 0 <= index < n:
                    raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' "
                                     f"with {what} index {index} outside the range "
                                     f"[0, {n}).{where()}")
            if in_types[i] != results[o]:
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' "
                                 f"referring to an input of type {in_types[i]} and an output "
                                 f"of a different type {results[o]}.{where()}")
            if ins[i] != outs[o]:
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' "
                                 f"referring to an input with layout {ins[i]} and an output "
                                 f"with a different layout {outs[o]}.{where()}")
            aliases.append((i, o))
        attributes = tuple((k, _attribute(k, v)) for k, v in sorted(kwargs.items()))
        for t in results:
            if dtypes.canonicalize(t.dtype) != t.dtype:
                raise ValueError(f"ffi_call: result_shape_dtypes cannot hold 64-bit types "
                                 f"({t.dtype}) when x64 is disabled{where()}")
        prim = ffi_call_effect_p if has_side_effect else ffi_call_p
        values = tracing.bind(
            prim, *args, target_name=target_name, shapes=tuple(t.shape for t in results),
            dtypes=tuple(t.dtype for t in results), has_side_effect=bool(has_side_effect),
            vmap_method=vmap_method, input_layouts=ins, output_layouts=outs,
            input_output_aliases=tuple(aliases),
            custom_call_api_version=int(custom_call_api_version),
            legacy_backend_config=legacy_backend_config, attributes=attributes)
        if not multiple:
            return values[0]
        return tuple(values) if isinstance(result_shape_dtypes, tuple) else list(values)
    return wrapped


# --- lowering rules for libraries' primitives -------------------------------------------------

def build_ffi_lowering_function(call_target_name: str, *,
                                operand_layouts: Sequence[Layout] | None = None,
                                result_layouts: Sequence[Layout] | None = None,
                                backend_config: Mapping[str, Any] | str | None = None,
                                skip_ffi_layout_processing: bool = False,
                                has_side_effect: bool = False, api_version: int = 4,
                                operand_output_aliases: dict[int, int] | None = None
                                ) -> Callable[..., Any]:
    """A function ``(ctx, *operands, **params)`` that emits a custom call of
    ``call_target_name`` (a ``jax.interpreters.mlir`` lowering context ``ctx``: the
    results' types are its ``avals_out``) and returns the op; ``params`` join
    ``backend_config`` as the handler's attributes. Layouts here are XLA's
    minor-to-major orders (None: row-major)."""
    def lower(ctx: Any, *operands: Any, **params: Any) -> Any:
        if api_version >= 4:
            if backend_config is not None and not isinstance(backend_config, Mapping):
                raise ValueError("When api_version > 4, backend_config must be a "
                                 "dictionary.")
            config: Any = {**(backend_config or {}), **params}
        elif params:
            raise ValueError("The use of ffi_call attributes requires a custom call API "
                             f"version of at least 4; got api_version={api_version}.")
        else:
            config = backend_config
        results = [TensorType(tuple(a.shape), np.dtype(a.dtype)) for a in ctx.avals_out]
        laid_out = not skip_ffi_layout_processing
        ins = [row_major(len(a.shape)) if layout is None else tuple(layout)
               for a, layout in zip(ctx.avals_in, operand_layouts or [None] * len(operands),
                                    strict=True)] if laid_out else None
        outs = [row_major(len(a.shape)) if layout is None else tuple(layout)
                for a, layout in zip(ctx.avals_out, result_layouts or [None] * len(results),
                                     strict=True)] if laid_out else None
        return custom_call(call_target_name, operands, results, api_version=api_version,
                           backend_config=config, operand_layouts=ins, result_layouts=outs,
                           has_side_effect=has_side_effect,
                           operand_output_aliases=operand_output_aliases)
    return lower


def ffi_lowering(call_target_name: str, *, operand_layouts: Sequence[Layout] | None = None,
                 result_layouts: Sequence[Layout] | None = None,
                 backend_config: Mapping[str, Any] | str | None = None,
                 skip_ffi_layout_processing: bool = False, has_side_effect: bool = False,
                 api_version: int = 4, operand_output_aliases: dict[int, int] | None = None
                 ) -> Callable[..., Any]:
    """A lowering rule (``jax.interpreters.mlir.register_lowering(prim, rule)``) that calls
    the FFI target ``call_target_name``: ``build_ffi_lowering_function``'s op, its
    results."""
    build = build_ffi_lowering_function(
        call_target_name, operand_layouts=operand_layouts, result_layouts=result_layouts,
        backend_config=backend_config, skip_ffi_layout_processing=skip_ffi_layout_processing,
        has_side_effect=has_side_effect, api_version=api_version,
        operand_output_aliases=operand_output_aliases)

    def rule(ctx: Any, *operands: Any, **params: Any) -> Any:
        return list(build(ctx, *operands, **params).results)
    return rule
