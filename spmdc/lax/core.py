"""spmdc.lax: low-level operations and the collectives (psum, pmean, all_gather ...).

Unlike spmdc.numpy these do not promote dtypes: operands must already agree, as in JAX.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..compiler.primitives.collectives import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_p,
    psum_scatter_p,
)
from ..compiler.primitives.core import Primitive
from ..compiler.primitives.dynamic_slicing import dynamic_slice_p, dynamic_update_slice_p
from ..compiler.primitives.elementwise import (
    add_p,
    cos_p,
    div_p,
    exp_p,
    integer_pow_p,
    log_p,
    max_p,
    min_p,
    mul_p,
    neg_p,
    rsqrt_p,
    sin_p,
    sqrt_p,
    stop_gradient_p,
    sub_p,
    tanh_p,
)
from ..compiler.primitives.logic import clamp_p, select_p
from ..compiler.primitives.reductions import (
    dot_general_p,
    reduce_max_p,
    reduce_min_p,
    reduce_prod_p,
    reduce_sum_p,
)
from ..compiler.primitives.sorting import sort_p
from ..compiler.primitives.structural import (
    broadcast_in_dim_p,
    concatenate_p,
    pad_p,
    reshape_p,
    rev_p,
    slice_p,
)
from ..core import dtypes
from ..core import operands as _operands
from ..core.operands import (
    asarray,
    broadcast_shapes,
    broadcast_to,
    promote,
    shape_arg,
    shape_of,
)
from ..core.precision import check_precision, preferred_operands, preferred_result
from ..core.tracing import bind, user_source

__all__ = ["select", "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_index_in_dim", "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim",
           "sort", "sort_key_val",
           "stop_gradient", "convert_element_type", "broadcast_in_dim", "iota",
           "dot_general", "integer_pow", "slice", "concatenate", "pad", "rev", "clamp",
           "reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "sin", "cos", "tanh",
           "exp", "log", "sqrt", "rsqrt", "neg", "add", "sub", "mul", "div", "max", "min"]


def _arr(x: Any) -> Any:
    return asarray(x)


def _where(pred: Any, x: Any, y: Any) -> Any:
    """``x`` where ``pred`` (a boolean array) else ``y``, promoted and broadcast as
    jnp.where does: NumPy scalars stay literals and rank-0 operands broadcast in the
    select itself."""
    (x, y), _, weak = promote("where", x, y)
    shape = broadcast_shapes(pred.shape, shape_of(x), shape_of(y), op="where")
    return bind(select_p, *(broadcast_to(v, shape) for v in (pred, x, y)), weak=weak)


def select(pred: Any, on_true: Any, on_false: Any) -> Any:
    on_true, on_false = _arr(on_true), _arr(on_false)
    return bind(select_p, _arr(pred), on_true, on_false,
                weak=on_true.weak and on_false.weak)


def _start_indices(op: str, x: Any, starts: Sequence[Any],
                   allow_negative_indices: bool | Sequence[bool]) -> list[Any]:
    """The start indices of a dynamic slice of ``x`` in the default int type, a negative
    start counting from the end of its dimension (``start + size``, once) as in JAX; the
    primitive then clamps the window into the operand (XLA's rule)."""
    starts = list(starts) if not hasattr(starts, "ndim") or starts.ndim == 1 else None
    if starts is None:
        raise ValueError(f"{op}: start_indices must be a 1-d sequence of scalars")
    if len(starts) != x.ndim:
        raise ValueError(f"{op}: {len(starts)} start indices for an operand of rank {x.ndim} "
                         f"(shape {x.shape}); give one per dimension")
    allow = ([bool(allow_negative_indices)] * x.ndim
             if isinstance(allow_negative_indices, (bool, np.bool_))
             else [bool(a) for a in allow_negative_indices])
    if len(allow) != x.ndim:
        raise ValueError(f"{op}: allow_negative_indices has {len(allow)} entries for an "
                         f"operand of rank {x.ndim}")
    int_type = dtypes.default_int()
    out = []
    for i, n, negative_ok in zip(starts, x.shape, allow, strict=True):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            i = int(i)
            if i < 0 and not negative_ok:
                raise ValueError(f"{op}: start index {i} is out of bounds for a dimension "
                                 f"of size {n} when allow_negative_indices=False")
            out.append(np.asarray(i + n if i < 0 else i, int_type))
            continue
        i = _arr(i)
        if i.ndim != 0 or i.dtype.kind not in "iu":
            raise TypeError(f"{op}: start indices must be integer scalars, got {i.dtype} "
                            f"of shape {i.shape}")
        unsigned = i.dtype.kind == "u"
        i = i.astype(int_type) if i.dtype != int_type else i
        if negative_ok and not unsigned:
            i = _where(i < 0, i + np.asarray(n, int_type), i)
        out.append(i)
    return out


def dynamic_slice(operand: Any, start_indices: Sequence[Any], slice_sizes: Sequence[int], *,
                  allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """``operand[start:start + size]`` in every dimension; a negative start counts from
    the end, then the window is clamped to lie inside the operand (as in JAX)."""
    x = _arr(operand)
    starts = _start_indices("dynamic_slice", x, start_indices, allow_negative_indices)
    return bind(dynamic_slice_p, x, *starts,
                slice_sizes=tuple(int(s) for s in slice_sizes), weak=x.weak)


def dynamic_slice_in_dim(operand: Any, start_index: Any, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True) -> Any:
    x = _arr(operand)
    axis = _canonical_axis("dynamic_slice_in_dim", "axis", axis, x.ndim)
    starts: list[Any] = [0] * x.ndim
    starts[axis] = start_index
    sizes = list(x.shape)
    sizes[axis] = slice_size
    allow = [True] * x.ndim
    allow[axis] = allow_negative_indices
    return dynamic_slice(x, starts, sizes, allow_negative_indices=allow)


def dynamic_index_in_dim(operand: Any, index: Any, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True) -> Any:
    x = _arr(operand)
    axis = _canonical_axis("dynamic_index_in_dim", "axis", axis, x.ndim)
    out = dynamic_slice_in_dim(x, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    if keepdims:
        return out
    return _reshape(out, out.shape[:axis] + out.shape[axis + 1:])


def dynamic_update_slice(operand: Any, update: Any, start_indices: Sequence[Any], *,
                         allow_negative_indices: bool | Sequence[bool] = True) -> Any:
    """``operand`` with ``update`` written at ``start_indices`` (negative starts count
    from the end; the window is clamped to lie inside the operand, as in JAX)."""
    x, u = _arr(operand), _arr(update)
    if u.dtype != x.dtype and not u.weak:      # JAX's lax ops do not promote
        raise TypeError(f"lax.dynamic_update_slice requires arguments to have the same "
                        f"dtypes, got {x.dtype}, {u.dtype}; convert the update with "
                        f".astype({x.dtype})" + (f" (at {user_source()})" if user_source()
                                                 else ""))
    starts = _start_indices("dynamic_update_slice", x, start_indices, allow_negative_indices)
    return bind(dynamic_update_slice_p, x, u.astype(x.dtype), *starts, weak=x.weak)


def dynamic_update_slice_in_dim(operand: Any, update: Any, start_index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    x = _arr(operand)
    axis = _canonical_axis("dynamic_update_slice_in_dim", "axis", axis, x.ndim)
    starts: list[Any] = [0] * x.ndim
    starts[axis] = start_index
    allow = [True] * x.ndim
    allow[axis] = allow_negative_indices
    return dynamic_update_slice(x, update, starts, allow_negative_indices=allow)


def dynamic_update_index_in_dim(operand: Any, update: Any, index: Any, axis: int, *,
                                allow_negative_indices: bool = True) -> Any:
    x = _arr(operand)
    axis = _canonical_axis("dynamic_update_index_in_dim", "axis", axis, x.ndim)
    update = _arr(update)
    if update.ndim == x.ndim - 1:
        update = _reshape(update, update.shape[:axis] + (1,) + update.shape[axis:])
    return dynamic_update_slice_in_dim(x, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def sort(operand: Any, dimension: int = -1, is_stable: bool = True,
         num_keys: int = 1) -> Any:
    """Sort ``operand`` (an array, or a sequence of same-shaped arrays sorted together by
    the first ``num_keys`` of them, lexicographically) along ``dimension``. NaNs sort
    last and -0.0 equals 0.0 (Note [sort order] in compiler/primitives/sorting.py)."""
    single = not isinstance(operand, (tuple, list))
    operands = [_arr(operand)] if single else [_arr(x) for x in operand]
    if not operands:
        raise ValueError("sort: needs at least one operand")
    if not 1 <= int(num_keys) <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of "
                         f"operands ({len(operands)})")
    shapes = {x.shape for x in operands}
    if len(shapes) != 1:
        raise TypeError("sort: operands must have one shape, got "
                        + ", ".join(str(x.shape) for x in operands))
    dimension = _canonical_axis("sort", "dimension", dimension, operands[0].ndim)
    outs = bind(sort_p, *operands, dimension=dimension, is_stable=bool(is_stable),
                num_keys=int(num_keys))
    return outs[0] if single else tuple(outs)


def sort_key_val(keys: Any, values: Any, dimension: int = -1,
                 is_stable: bool = True) -> tuple[Any, Any]:
    """``keys`` sorted along ``dimension``, and ``values`` in the same order."""
    return sort((keys, values), dimension, is_stable, num_keys=1)


def stop_gradient(x: Any) -> Any:
    """``x`` (a pytree) as a constant of differentiation."""
    def one(v: Any) -> Any:
        v = _arr(v)
        return bind(stop_gradient_p, v, weak=v.weak)
    return _tree_map(one, x)


def convert_element_type(x: Any, new_dtype: Any) -> Any:
    return _arr(x).astype(new_dtype)


def broadcast_in_dim(x: Any, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Any:
    x = _arr(x)
    return bind(broadcast_in_dim_p, x, shape=shape_arg(shape, "broadcast_in_dim"),
                broadcast_dimensions=tuple(broadcast_dimensions), weak=x.weak)


def iota(dtype: Any, size: int) -> Any:
    return _operands.iota(dtypes.canonicalize(dtype), (size,), 0)


def dot_general(x: Any, y: Any, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Any:
    """Contract ``x`` and ``y`` over the dimensions ``((x_contract, y_contract), (x_batch,
    y_batch))``; ``preferred_element_type`` is the dtype both are converted to first (and
    so the result's), e.g. int8 operands accumulating in int32; floating operands with an
    integer type are contracted as they are and the result converted, as in JAX.
    ``precision`` (a lax.Precision, its string alias, a pair, or a dot algorithm) becomes
    the lowered dot's precision_config (Note [dot precision], Note [dot algorithms])."""
    precision = check_precision("dot_general", precision)
    (xc, yc), (xb, yb) = dimension_numbers
    x, y = preferred_operands("dot_general", _arr(x), _arr(y), preferred_element_type)
    out = _dot_general(x, y, ((tuple(xc), tuple(yc)), (tuple(xb), tuple(yb))), precision)
    return preferred_result(out, preferred_element_type)


def _dot_general(x: Any, y: Any, dimension_numbers: Any, precision: Any) -> Any:
    from ..compiler.primitives.reductions import with_precision
    from ..core.precision import Algorithm, dot_operands
    contract, batch = dimension_numbers
    if isinstance(precision, Algorithm):            # See Note [dot algorithms]
        x, y, out = dot_operands("dot_general", x, y, precision)
        z = bind(dot_general_p, x, y, contract=contract, batch=batch,
                 **with_precision(("DEFAULT", "DEFAULT"), precision.param))
        return z if z.dtype == out else z.astype(out)
    return bind(dot_general_p, x, y, contract=contract, batch=batch,
                **with_precision(precision))


def integer_pow(x: Any, y: int) -> Any:
    x = _arr(x)
    return bind(integer_pow_p, x, y=int(y), weak=x.weak)


def slice(x: Any, start_indices: Sequence[int], limit_indices: Sequence[int],
          strides: Sequence[int] | None = None) -> Any:
    x = _arr(x)
    return bind(slice_p, x, start_indices=tuple(start_indices),
                limit_indices=tuple(limit_indices),
                strides=None if strides is None else tuple(strides), weak=x.weak)


def concatenate(operands: Sequence[Any], dimension: int) -> Any:
    xs = [_arr(x) for x in operands]
    return bind(concatenate_p, *xs, dimension=dimension)


def _broadcast_to(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` broadcast to ``shape`` by NumPy's rules, as jnp.broadcast_to emits it."""
    x = _arr(x)
    broadcast_shapes(x.shape, shape, op="broadcast_to")
    if x.shape == shape:
        return x
    if x.ndim == 0:
        return bind(broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=(), weak=x.weak)
    return broadcast_to(x, shape)


def _concatenate(xs: list[Any], dimension: int) -> Any:
    """Arrays joined along ``dimension``, promoted to one dtype (weak if all are), as
    jnp.concatenate emits them."""
    if len(xs) == 1:
        return xs[0]
    xs, _, weak = promote("concatenate", *xs)
    return bind(concatenate_p, *xs, dimension=dimension, weak=weak)


def pad(x: Any, padding_value: Any, padding_config: Sequence[tuple[int, int, int]]) -> Any:
    x = _arr(x)
    return bind(pad_p, x, _arr(padding_value).astype(x.dtype),
                padding_config=tuple(tuple(c) for c in padding_config), weak=x.weak)


def rev(x: Any, dimensions: Sequence[int]) -> Any:
    x = _arr(x)
    return bind(rev_p, x, dimensions=tuple(dimensions), weak=x.weak)


def clamp(lo: Any, x: Any, hi: Any) -> Any:
    x = _arr(x)
    return bind(clamp_p, _arr(lo).astype(x.dtype), x, _arr(hi).astype(x.dtype),
                weak=x.weak)


def _reshape(x: Any, shape: tuple[int, ...]) -> Any:
    """``x`` with ``shape`` (of as many elements), as jnp.reshape emits it."""
    return x if x.shape == shape else bind(reshape_p, x, new_sizes=shape, weak=x.weak)


def _reducer(prim: Primitive) -> Any:
    def fn(x: Any, axes: Sequence[int]) -> Any:
        x = _arr(x)
        return bind(prim, x, axes=tuple(axes), weak=x.weak)
    fn.__name__ = prim.name
    return fn


reduce_sum, reduce_max, reduce_min, reduce_prod = map(
    _reducer, (reduce_sum_p, reduce_max_p, reduce_min_p, reduce_prod_p))


def _unary(name: str, prim: Primitive) -> Any:
    def fn(x: Any) -> Any:
        x = _arr(x)
        return bind(prim, x, weak=x.weak)
    fn.__name__ = name
    return fn


sin, cos, tanh, exp, log = (_unary("sin", sin_p), _unary("cos", cos_p), _unary("tanh", tanh_p),
                            _unary("exp", exp_p), _unary("log", log_p))
sqrt, rsqrt, neg = _unary("sqrt", sqrt_p), _unary("rsqrt", rsqrt_p), _unary("neg", neg_p)


def _binary(name: str, prim: Primitive) -> Any:
    def fn(x: Any, y: Any) -> Any:
        x, y = _arr(x), _arr(y)
        return bind(prim, x, y, weak=x.weak and y.weak)
    fn.__name__ = name
    return fn


add, sub, mul, div = (_binary("add", add_p), _binary("sub", sub_p), _binary("mul", mul_p),
                      _binary("div", div_p))
max, min = _binary("max", max_p), _binary("min", min_p)


# --- collectives (compiler/primitives/collectives.py) --------------------------------------------
# Each takes an axis name or a tuple of names bound by an enclosing pmap or vmap, and maps
# over pytrees. pmean is psum divided by the group size, so its transpose is right by
# construction (Note [collective transpose]).

__all__ += ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
            "pshuffle", "all_to_all", "axis_index"]


def _axis_names(op: str, axis_name: Any) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """The names as a tuple and their sizes; an unbound name is an error here, at the
    user's line (the collectives pass checks compiled programs again)."""
    from ..compiler.passes.collectives import UnboundAxisError, unbound_axis_message
    from ..core.tracing import current_trace, user_source
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    trace = current_trace()
    bound = trace.axis_env if trace is not None else {}
    for name in names:
        if name not in bound:
            raise UnboundAxisError(unbound_axis_message(op, name, [str(b) for b in bound],
                                                        user_source()))
    return names, tuple(int(bound[n]) for n in names)


def _groups(op: str, axis_name: Any, axis_index_groups: Any) -> Any:
    """``axis_index_groups`` checked against the axis (lax/grouped.py), or None."""
    if axis_index_groups is None:
        return None
    from .grouped import check_groups
    _, sizes = _axis_names(op, axis_name)
    return check_groups(op, axis_index_groups, int(np.prod(sizes)))


def _in_groups(op: str, x: Any, axis_name: Any, groups: Any, **params: Any) -> Any:
    from .grouped import device_grouped, grouped, on_devices
    axes, sizes = _axis_names(op, axis_name)
    if on_devices(axis_name):
        return _tree_map(lambda v: device_grouped(op, _arr(v), axes, sizes, groups, **params),
                         x)
    n = int(np.prod(sizes))
    return _tree_map(lambda v: grouped(op, _arr(v), axis_name, groups, n, **params), x)


def _tree_map(f: Any, x: Any) -> Any:
    from ..core.tree import tree_map
    return tree_map(f, x)


def _collective(prim: Primitive, x: Any, **params: Any) -> Any:
    x = _arr(x)
    return bind(prim, x, weak=x.weak, **params)


def _canonical_axis(op: str, what: str, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"{op}: {what}={axis} is out of range for rank {rank}")
    return axis % rank


def psum(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    """The sum over the devices (or batch elements) of the named axes, on every one."""
    groups = _groups("psum", axis_name, axis_index_groups)
    if groups is not None:
        return _in_groups("psum", _tree_map(_counted, x), axis_name, groups)
    axes, _ = _axis_names("psum", axis_name)

    def one(v: Any) -> Any:
        v = _arr(v)
        if v.dtype == np.bool_:           # psum of booleans counts them
            v = v.astype(np.int32)
        return _collective(psum_p, v, axes=axes)
    return _tree_map(one, x)


def _counted(v: Any) -> Any:
    v = _arr(v)
    return v.astype(np.int32) if v.dtype == np.bool_ else v     # psum of booleans counts


def pmean(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    groups = _groups("pmean", axis_name, axis_index_groups)
    if groups is not None:
        return _in_groups("pmean", x, axis_name, groups)
    _, sizes = _axis_names("pmean", axis_name)
    n = int(np.prod(sizes))
    return _tree_map(lambda v: psum(v, axis_name) / n, x)


def pmax(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    groups = _groups("pmax", axis_name, axis_index_groups)
    if groups is not None:
        return _in_groups("pmax", x, axis_name, groups)
    axes, _ = _axis_names("pmax", axis_name)
    return _tree_map(lambda v: _extremum(pmax_p, v, axes), x)


def pmin(x: Any, axis_name: Any, *, axis_index_groups: Any = None) -> Any:
    groups = _groups("pmin", axis_name, axis_index_groups)
    if groups is not None:
        return _in_groups("pmin", x, axis_name, groups)
    axes, _ = _axis_names("pmin", axis_name)
    return _tree_map(lambda v: _extremum(pmin_p, v, axes), x)


def _extremum(prim: Primitive, v: Any, axes: tuple[str, ...]) -> Any:
    """pmax / pmin; on booleans they are "any" / "all" (as in JAX), computed on int32."""
    v = _arr(v)
    if v.dtype == np.bool_:
        return _collective(prim, v.astype(np.int32), axes=axes).astype(np.bool_)
    return _collective(prim, v, axes=axes)


def all_gather(x: Any, axis_name: Any, *, axis_index_groups: Any = None, axis: int = 0,
               tiled: bool = False) -> Any:
    """Every member's value, stacked along a new ``axis`` (or concatenated if tiled)."""
    groups = _groups("all_gather", axis_name, axis_index_groups)
    if groups is not None:
        return _tree_map(lambda v: _in_groups(
            "all_gather", v, axis_name, groups, tiled=bool(tiled),
            axis=_canonical_axis("all_gather", "axis", axis,
                                 _arr(v).ndim + (0 if tiled else 1))), x)
    axes, sizes = _axis_names("all_gather", axis_name)

    def one(v: Any) -> Any:
        v = _arr(v)
        dim = _canonical_axis("all_gather", "axis", axis, v.ndim + (0 if tiled else 1))
        return _collective(all_gather_p, v, axes=axes, axis_sizes=sizes, dimension=dim,
                           tiled=bool(tiled))
    return _tree_map(one, x)


def psum_scatter(x: Any, axis_name: Any, *, scatter_dimension: int = 0,
                 axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """psum, of which each member keeps its own slice along ``scatter_dimension``."""
    groups = _groups("psum_scatter", axis_name, axis_index_groups)
    if groups is not None:
        return _tree_map(lambda v: _in_groups(
            "psum_scatter", v, axis_name, groups, tiled=bool(tiled),
            scatter_dimension=_canonical_axis("psum_scatter", "scatter_dimension",
                                              scatter_dimension, _arr(v).ndim)), x)
    axes, sizes = _axis_names("psum_scatter", axis_name)

    def one(v: Any) -> Any:
        v = _arr(v)
        dim = _canonical_axis("psum_scatter", "scatter_dimension", scatter_dimension, v.ndim)
        return _collective(psum_scatter_p, v, axes=axes, axis_sizes=sizes,
                           scatter_dimension=dim, tiled=bool(tiled))
    return _tree_map(one, x)


def ppermute(x: Any, axis_name: Any, perm: Sequence[tuple[int, int]]) -> Any:
    """Send each member's value along the (source, destination) pairs of ``perm``; a
    member no pair sends to gets zeros."""
    from ..compiler.primitives.collectives import check_permutation
    from ..compiler.primitives.core import ShapeError
    from ..core.tracing import user_source
    axes, sizes = _axis_names("ppermute", axis_name)
    pairs = _pairs(perm)
    try:
        check_permutation("ppermute", pairs, int(np.prod(sizes)))
    except (ShapeError, TypeError, ValueError) as e:
        source = user_source()
        raise ValueError(f"{e}" + (f" (at {source})" if source else "")) from None
    return _tree_map(lambda v: _collective(ppermute_p, v, axes=axes, axis_sizes=sizes,
                                           perm=pairs), x)


def _pairs(perm: Any) -> tuple[tuple[int, int], ...]:
    """``perm`` as (source, destination) pairs of ints, else a TypeError saying so."""
    import operator

    from ..core.tracing import user_source
    try:
        return tuple((operator.index(s), operator.index(d)) for s, d in perm)
    except (TypeError, ValueError):
        source = user_source()
        raise TypeError(f"ppermute: perm must be a sequence of (source, destination) pairs of "
                        f"ints, e.g. [(0, 1), (1, 0)], got {perm!r}"
                        + (f" (at {source})" if source else "")) from None


def pshuffle(x: Any, axis_name: Any, perm: Sequence[int]) -> Any:
    """ppermute where ``perm[i]`` is the member that member ``i`` receives from."""
    _, sizes = _axis_names("pshuffle", axis_name)
    n = int(np.prod(sizes))
    if sorted(int(p) for p in perm) != list(range(n)):
        raise ValueError(f"pshuffle: perm={list(perm)} is not a permutation of "
                         f"range({n}) (the axis size)")
    return ppermute(x, axis_name, [(int(src), dst) for dst, src in enumerate(perm)])


def all_to_all(x: Any, axis_name: Any, split_axis: int, concat_axis: int, *,
               axis_index_groups: Any = None, tiled: bool = False) -> Any:
    """Member j gets piece j (along ``split_axis``) of every member, stacked (or, tiled,
    concatenated) along ``concat_axis`` in member order."""
    groups = _groups("all_to_all", axis_name, axis_index_groups)
    if groups is not None:
        return _tree_map(lambda v: _in_groups(
            "all_to_all", v, axis_name, groups, tiled=bool(tiled),
            split_axis=_canonical_axis("all_to_all", "split_axis", split_axis, _arr(v).ndim),
            concat_axis=_canonical_axis("all_to_all", "concat_axis", concat_axis,
                                        _arr(v).ndim)), x)
    axes, sizes = _axis_names("all_to_all", axis_name)

    def one(v: Any) -> Any:
        v = _arr(v)
        return _collective(all_to_all_p, v, axes=axes, axis_sizes=sizes,
                           split_axis=_canonical_axis("all_to_all", "split_axis",
                                                      split_axis, v.ndim),
                           concat_axis=_canonical_axis("all_to_all", "concat_axis",
                                                       concat_axis, v.ndim),
                           tiled=bool(tiled))
    return _tree_map(one, x)


def axis_index(axis_name: Any) -> Any:
    """This device's (or batch element's) index along the named axes, an int32."""
    axes, sizes = _axis_names("axis_index", axis_name)
    return bind(axis_index_p, axes=axes, axis_sizes=sizes)
