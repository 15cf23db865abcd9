"""Putting StableHLO modules together for exports: the module operation that holds a
block (where a call of an Exported splices the exported program, with
``jax.interpreters.mlir.merge_mlir_modules``), and modules lowered for several
platforms joined behind a platform index (``join_platforms``, Note [spmdc's exports] in
spmdc/export/exported.py). Every function here runs in spmdc's MLIR context, under the
lowering lock (compiler/stablehlo.py)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..compiler.stablehlo import func_dialect, hlo, ir
from ..interpreters.mlir import merge_mlir_modules

__all__ = ["join_platforms", "enclosing_module"]


def enclosing_module(block: Any) -> Any:
    """The ``builtin.module`` operation that holds ``block``."""
    op = block.owner
    while op.name != "builtin.module":
        op = op.parent
    return op


def join_platforms(modules: Sequence[Any]) -> Any:
    """One module whose ``@main(%platform_index: tensor<i32>, args...)`` runs the
    ``@main`` of ``modules[i]`` when the index is ``i``. Builds a new module in the
    current context and location."""
    first = modules[0]
    main = ir.SymbolTable(first.operation)["main"]
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    joined = ir.Module.create()
    for name in ("mhlo.num_replicas", "mhlo.num_partitions"):
        if name in first.operation.attributes:
            joined.operation.attributes[name] = first.operation.attributes[name]
    callees = [merge_mlir_modules(joined, f"_platform_{k}_main", m)
               for k, m in enumerate(modules)]
    i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    with ir.InsertionPoint.at_block_begin(joined.body):
        new_main = func_dialect.FuncOp(
            "main", ir.FunctionType.get([i32, *ftype.inputs], list(ftype.results)))
    new_main.attributes["sym_visibility"] = ir.StringAttr.get("public")
    new_main.arg_attrs = ir.ArrayAttr.get(
        [ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get("_platform_index")})]
        + [ir.DictAttr.get({}) for _ in ftype.inputs])
    block = new_main.add_entry_block()
    with ir.InsertionPoint(block):
        index, *args = block.arguments
        case = hlo.CaseOp(list(ftype.results), index, num_branches=len(callees))
        for k, callee in enumerate(callees):
            branch = case.regions[k].blocks.append()
            with ir.InsertionPoint(branch):
                call = func_dialect.CallOp(list(ftype.results),
                                           ir.FlatSymbolRefAttr.get(callee), list(args))
                hlo.ReturnOp(list(call.results))
        func_dialect.ReturnOp(list(case.results))
    if not joined.operation.verify():
        raise ValueError("the module joining the platforms' modules does not verify")
    return joined
