"""Calling an Exported: ``call(exp)(*args, **kwargs)`` (``Exported.call``) binds
``call_exported_p``, a primitive defined with JAX's extension API (``jax.extend.core``'s
Primitive, ``jax.interpreters``' tables), as JAX defines it.

Note [calling an export]
~~~~~~~~~~~~~~~~~~~~~~~~
- Abstract evaluation checks each argument's rank, dtype and shape against the export's
  input abstract values (JAX's messages) and gives its output abstract values.
- Lowering deserializes the portable artifact into spmdc's MLIR context, moves its
  functions into the module being built under fresh private names
  (``jax.interpreters.mlir.merge_mlir_modules``), and emits a ``func.call`` of its
  ``@main``: with the platform index first when the export was lowered for several
  platforms (the index of the platform spmdc lowers for, or 0 under
  ``DisabledSafetyCheck.platform()``), then the kept arguments
  (``module_kept_var_idx``). XLA inlines the call and compiles it with the rest.
- Outside any transformation, ``bind`` runs the primitive under a jit kept per Exported.
- Reverse mode: ``call`` is a ``custom_vjp`` whose backward pass calls the export's VJP
  (``Exported.vjp()``, serialized up to ``vjp_order``), as JAX's.
- vmap: JAX has no batching rule for it (shape polymorphism is its way to batch); spmdc
  maps the call over the batch with ``lax.map``, one call per element, which gives the
  vmapped values without a polymorphic export.
- An export that needs more than one device, or has effects, is refused with a
  ValueError naming it.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any

import numpy as np

from ..compiler.stablehlo import func_dialect, hlo, ir
from ..core.tree import SequenceKey, keystr, tree_flatten, tree_flatten_with_path
from ..extend.core import Primitive
from ..interpreters import batching, mlir
from ..lax import control_flow, shape
from ..transforms.custom_derivatives import custom_vjp
from ..transforms.forward import float0
from ..transforms.jit import jit
from .exported import DisabledSafetyCheck, Exported
from .modules import enclosing_module

__all__ = ["call", "call_exported_p"]

call_exported_p = Primitive("call_exported")
call_exported_p.multiple_results = True


def call(exported: Exported) -> Any:
    """The function that calls ``exported`` with arguments of its pytree structure."""
    if not isinstance(exported, Exported):
        raise ValueError(f"The exported argument must be an export.Exported. Found "
                         f"{exported}.")

    @custom_vjp
    def f_flat(*args_flat: Any) -> Any:
        return call_exported_p.bind(*args_flat, exported=exported)

    def f_flat_fwd(*args_flat: Any) -> Any:
        return call_exported_p.bind(*args_flat, exported=exported), args_flat

    def f_flat_bwd(residual: Any, cts: Any) -> Any:
        # See Note [float0 in exports] in spmdc/export/exported.py
        exp_vjp = exported.vjp()
        cts = [np.zeros(a.shape, np.bool_) if _is_float0(a) else ct
               for a, ct in zip(exp_vjp.in_avals[len(residual):], cts, strict=True)]
        in_cts = call(exp_vjp)(*residual, *cts)
        return tuple(np.zeros(a.shape, float0) if _is_float0(a) else ct
                     for a, ct in zip(exp_vjp.out_avals, in_cts, strict=True))
    f_flat.defvjp(f_flat_fwd, f_flat_bwd)

    def f_imported(*args: Any, **kwargs: Any) -> Any:
        args_flat, in_tree = tree_flatten((args, kwargs))
        if in_tree != exported.in_tree:
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as "
                f"when the function '{exported.fun_name}' was exported, but they have "
                f"{in_tree} in the invocation and {exported.in_tree} when exported.")
        return exported.out_tree.unflatten(list(f_flat(*args_flat)))
    return f_imported


def _arg_name(exported: Exported, k: int) -> str:
    paths = [p for p, _ in tree_flatten_with_path(
        exported.in_tree.unflatten(list(range(exported.in_tree.num_leaves))))[0]]
    head, *rest = paths[k]
    where = ("args" if head == SequenceKey(0) else "kwargs") if isinstance(
        head, SequenceKey) else str(head)
    return where + keystr(rest)


def _abstract_eval(*avals: Any, exported: Exported) -> Any:
    if len(avals) != len(exported.in_avals):
        raise ValueError(f"call of the export of '{exported.fun_name}': "
                         f"{len(avals)} arguments for {len(exported.in_avals)} inputs")
    for k, (want, got) in enumerate(zip(exported.in_avals, avals, strict=True)):
        if len(want.shape) != len(got.shape):
            raise ValueError(f"Rank mismatch for {_arg_name(exported, k)}: expected "
                             f"{want.shape} and called with {got.shape}")
        if _ir_dtype(want) != np.dtype(got.dtype):
            raise ValueError(f"Dtype mismatch for {_arg_name(exported, k)}: expected "
                             f"{np.dtype(want.dtype).name} and called with "
                             f"{np.dtype(got.dtype).name}")
        for d, (a, b) in enumerate(zip(want.shape, got.shape, strict=True)):
            if a != b:
                raise ValueError(
                    f"Shape mismatch for {_arg_name(exported, k)}.shape[{d}] (expected "
                    f"same constant): expected {want.shape} and called with {got.shape}")
    return [a.update(dtype=_ir_dtype(a)) for a in exported.out_avals]


def _is_float0(aval: Any) -> bool:
    return np.dtype(aval.dtype) == np.dtype(float0)


def _ir_dtype(aval: Any) -> np.dtype:
    """The dtype of the values the module takes or gives for ``aval``: bool for float0
    (Note [float0 in exports] in spmdc/export/exported.py)."""
    return np.dtype(np.bool_) if _is_float0(aval) else np.dtype(aval.dtype)


call_exported_p.def_abstract_eval(_abstract_eval)

_runners: weakref.WeakKeyDictionary[Exported, Any] = weakref.WeakKeyDictionary()


def _impl(*args: Any, exported: Exported) -> Any:
    runner = _runners.get(exported)
    if runner is None:
        runner = _runners[exported] = jit(
            functools.partial(call_exported_p.bind, exported=exported))
    return runner(*args)


call_exported_p.def_impl(_impl)


def _platform_index(exported: Exported, platform: str) -> int:
    if platform in exported.platforms:
        return exported.platforms.index(platform)
    if DisabledSafetyCheck.platform() in exported.disabled_safety_checks:
        return 0
    raise ValueError(f"Function '{exported.fun_name}' was exported for platforms "
                     f"'{exported.platforms}' but it is used on '{(platform,)}'.")


def _lower(ctx: Any, *args: Any, exported: Exported) -> Any:
    if exported.nr_devices != 1:
        raise ValueError(f"Function {exported.fun_name} was exported for "
                         f"{exported.nr_devices} devices and is called in a context with 1 "
                         "devices, which is not allowed.")
    if exported.ordered_effects or exported.unordered_effects:
        raise ValueError(f"Function {exported.fun_name} has effects; spmdc calls exports "
                         "without effects")
    index = _platform_index(exported, ctx.module_context.platform)
    submodule = hlo.deserialize_portable_artifact(ir.Context.current,
                                                  exported.mlir_module_serialized)
    main = ir.SymbolTable(submodule.operation)["main"]
    callee_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    block = ir.InsertionPoint.current.block
    name = mlir.merge_mlir_modules(enclosing_module(block),
                                   f"call_exported_{exported.fun_name}", submodule)
    operands = []
    if len(exported.platforms) > 1:
        index_type = callee_type.inputs[0]
        operands.append(hlo.ConstantOp(ir.DenseElementsAttr.get(
            np.array(index, np.int32), type=index_type)).result)
    kept = set(exported.module_kept_var_idx)
    operands += [a for k, a in enumerate(args) if k in kept]
    result = func_dialect.CallOp(list(callee_type.results), ir.FlatSymbolRefAttr.get(name),
                                 operands)
    return list(result.results)


mlir.register_lowering(call_exported_p, _lower)


def _batch(args: Any, dims: Any, *, exported: Exported) -> Any:
    """vmap: one call per element of the batch (Note [calling an export])."""
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True)
                if d is not batching.not_mapped)
    moved = [shape.broadcast_in_dim(a, (size, *a.shape), tuple(range(1, a.ndim + 1)))
             if d is batching.not_mapped else
             shape.transpose(a, (d, *(i for i in range(a.ndim) if i != d)))
             for a, d in zip(args, dims, strict=True)]
    outs = control_flow.map_(
        lambda xs: call_exported_p.bind(*xs, exported=exported), moved)
    return list(outs), [0] * len(outs)


batching.primitive_batchers[call_exported_p] = _batch
