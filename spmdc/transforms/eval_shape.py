"""``eval_shape``: the shapes and dtypes a function would return, found by tracing it
with abstract arguments; nothing is compiled or run."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..core.abstract import ShapedArray, ShapeDtypeStruct
from ..core.pytree_tracing import fun_name, trace_pytree
from ..core.tracing import type_of
from ..core.tree import tree_flatten, tree_unflatten
from ..tracebacks import api_boundary

__all__ = ["eval_shape"]


def _signature(x: Any) -> tuple[Any, bool]:
    if isinstance(x, (ShapeDtypeStruct, ShapedArray)):
        return ShapeDtypeStruct(x.shape, x.dtype).type, x.weak_type
    return type_of(x)


@api_boundary  # See Note [library frames] (errors.py)
def eval_shape(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fun(*args, **kwargs)``'s outputs as ShapeDtypeStructs. Arguments may be arrays,
    scalars or anything with ``.shape`` and ``.dtype`` such as ShapeDtypeStruct."""
    leaves, _ = tree_flatten((args, kwargs))
    sigs = [_signature(x) for x in leaves]
    func, out_weak, _, out_tree, _ = trace_pytree(
        fun, args, kwargs, fun_name(fun), in_types=[t for t, _ in sigs],
        in_weak=[w for _, w in sigs])
    outs = [ShapeDtypeStruct(v.type.shape, v.type.dtype, weak_type=w)
            for v, w in zip(func.outputs, out_weak, strict=True)]
    return tree_unflatten(out_tree, outs)
