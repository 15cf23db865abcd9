"""Putting StableHLO modules together for exports: one module's functions moved into
another under fresh names (``merge_module``: how a call of an Exported splices the
exported program into the program being lowered), and modules lowered for several
platforms joined behind a platform index (``join_platforms``, Note [spmdc's exports] in
spmdc/export/exported.py). Every function here runs in spmdc's MLIR context, under the
lowering lock (compiler/stablehlo.py)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..compiler.stablehlo import func_dialect, hlo, ir

__all__ = ["merge_module", "join_platforms", "enclosing_module"]


def enclosing_module(block: Any) -> Any:
    """The ``builtin.module`` operation that holds ``block``."""
    op = block.owner
    while op.name != "builtin.module":
        op = op.parent
    return op


def merge_module(dst: Any, src: Any, main_name: str) -> str:
    """Move the functions of the module ``src`` into the module operation ``dst``,
    private, renamed where a name is taken (``src``'s ``@main`` becomes ``main_name`` or
    a fresh variant of it); returns the new name of ``src``'s ``@main``. ``src`` is
    emptied."""
    src_table, dst_table = ir.SymbolTable(src.operation), ir.SymbolTable(dst)
    renamed: dict[str, str] = {}
    taken: set[str] = set()
    for op in src.body.operations:
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name == "main" or name in dst_table:
            base = main_name if name == "main" else name
            new, k = base, 0
            while new in src_table or new in dst_table or new in taken:
                new, k = f"{base}_{k}", k + 1
            renamed[name] = new
            taken.add(new)
    private = ir.StringAttr.get("private")
    for op in src.body.operations:
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name in renamed:
            src_table.set_symbol_name(op, renamed[name])
        if op.name == "func.func":
            op.attributes["sym_visibility"] = private
    for old, new in renamed.items():
        for op in src.body.operations:
            src_table.replace_all_symbol_uses(old, new, op)
    body = dst.regions[0].blocks[0]
    for op in list(src.body.operations):
        body.append(op)
        dst_table.insert(op)
    return renamed["main"]


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
    callees = [merge_module(joined.operation, m, f"_platform_{k}_main")
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
