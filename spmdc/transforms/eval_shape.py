"""``eval_shape``: the shapes and dtypes a function would return, found by tracing it
with abstract arguments; nothing is compiled or run."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core import mutable_hi
from ..core.abstract import ShapedArray, ShapeDtypeStruct, struct_values
from ..core.explicit_sharding import output_shardings
from ..core.pytree_tracing import fun_name, trace_pytree
from ..core.tracing import type_of
from ..core.tree import is_array_node, tree_flatten, tree_map, tree_unflatten
from ..tracebacks import api_boundary

__all__ = ["eval_shape"]


def _signature(x: Any) -> tuple[Any, bool]:
    if isinstance(x, (ShapeDtypeStruct, ShapedArray)):
        return ShapeDtypeStruct(x.shape, x.dtype).type, x.weak_type
    return type_of(x)


def _struct_value(x: Any) -> Any:
    rule = struct_values.get(type(x.dtype)) if isinstance(x, ShapeDtypeStruct) else None
    return x if rule is None else rule(x)


@api_boundary  # See Note [library frames] (errors.py)
def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fun(*args, **kwargs)``'s outputs as ShapeDtypeStructs. Arguments may be arrays,
    scalars or anything with ``.shape`` and ``.dtype`` such as ShapeDtypeStruct. An output
    that already is a ShapeDtypeStruct (Lineax's ``eval_shape(lambda: struct)``) is
    returned as it is, as in JAX, where it is an abstract value. A mutable hi value among
    the arguments is traced as jit traces it and keeps its state: nothing runs (Note
    [mutable hi values through jit] in core/mutable_hi.py)."""
    with mutable_hi.allowing_flatten(True):
        # a struct of a key dtype stands for keys: traced as a key array around the struct
        # of its data (Orbax: eval_shape(random.key_data, ShapeDtypeStruct(s, key<fry>)));
        # the tree is rebuilt only then (a mutable hi argument keeps its identity)
        if any(_struct_value(x) is not x for x in tree_flatten((args, kwargs))[0]):
            args, kwargs = tree_map(_struct_value, (args, kwargs))
        leaves, _ = tree_flatten((args, kwargs))
        sigs = [_signature(x) for x in leaves]
        # [the output leaves with None where a traced one was, where those are, treedef]:
        # the traced outputs are not kept here, or the leak check at the trace's end would
        # find them (Flax's module setup checks run under eval_shape with checking on).
        given: list[Any] = []

        def traced(*a: Any, **k: Any) -> Any:
            with mutable_hi.allowing_flatten(False):
                out = fun(*a, **k)
            out_leaves, tree = tree_flatten(out)
            at = [i for i, v in enumerate(out_leaves) if not isinstance(v, ShapeDtypeStruct)]
            given[:] = [[None if i in at else v for i, v in enumerate(out_leaves)], at, tree]
            return [out_leaves[i] for i in at]

        func, out_weak, _, _, _ = trace_pytree(
            traced, args, kwargs, fun_name(fun), in_types=[t for t, _ in sigs],
            in_weak=[w for _, w in sigs], typed=True)
    out_leaves, at, out_tree = given
    out_leaves = list(out_leaves)
    typed = output_shardings(func)      # See Note [shardings in types]
    for i, v, w, s in zip(at, func.outputs, out_weak, typed, strict=True):
        out_leaves[i] = ShapeDtypeStruct(v.type.shape, v.type.dtype, weak_type=w, sharding=s)
    # a typed key array comes back around the struct of its data: as JAX, the key's own
    # struct (its shape and extended dtype). See Note [array nodes] in core/tree.py.
    return tree_map(lambda v: ShapeDtypeStruct(v.shape, v.dtype) if is_array_node(v) else v,
                    tree_unflatten(out_tree, out_leaves), is_leaf=is_array_node)
