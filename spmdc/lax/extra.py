"""More of spmdc.lax: small operations built on existing primitives (so they vmap,
differentiate and lower as those do), the ``clz`` primitive's wrapper, and the
axis-name helpers ``axis_size``, ``pbroadcast`` and ``pswapaxes`` over lax/core.py's
collectives.

On the CPU backend some of JAX's operations are defined by what the CPU computes:
``approx_max_k``/``approx_min_k`` are exact there (a sort), ``empty`` is zeros, and
``platform_dependent`` takes the ``cpu`` branch.
"""
from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..compiler.primitives.core import Primitive
from ..compiler.primitives.misc import clz_p
from ..compiler.primitives.reductions import (
    reduce_and_p,
    reduce_max_p,
    reduce_min_p,
    reduce_or_p,
    reduce_prod_p,
    reduce_sum_p,
)
from ..compiler.primitives.remat import optimization_barrier_p
from ..core import dtypes
from ..core.operands import broadcast_shapes, full, shape_arg
from ..core.tracing import bind
from .core import _arr, _broadcast_to, _concatenate, _reshape, _where
from .ops import _sorted_with_positions, slice_in_dim, transpose

__all__ = ["batch_matmul", "stack", "unstack", "empty", "broadcast_like", "clz", "mulhi",
           "index_take", "dtype", "approx_max_k", "approx_min_k", "platform_dependent",
           "axis_size", "pbroadcast", "pswapaxes", "conv_general_dilated_local",
           "ConvGeneralDilatedDimensionNumbers", "reduce_xor", "optimization_barrier", "reduce"]


def _axis(op: str, axis: int, rank: int) -> int:
    axis = operator.index(axis)
    if not -rank <= axis < rank:
        raise ValueError(f"lax.{op}: axis {axis} is out of bounds for rank {rank}")
    return axis % rank


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Matrix products over the leading (batch) dimensions of two arrays of one rank."""
    from .core import dot_general
    lhs, rhs = _arr(lhs), _arr(rhs)
    if builtins.min(lhs.ndim, rhs.ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs.ndim}, "
                         f"{rhs.ndim}")
    if lhs.ndim != rhs.ndim:
        raise ValueError(f"Arguments to batch_matmul must have the same rank, got {lhs.ndim}, "
                         f"{rhs.ndim}")
    batch = tuple(range(lhs.ndim - 2))
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)),
                       precision=precision)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Arrays of one shape and dtype stacked along a new dimension ``axis``."""
    arrays = [_arr(x) for x in operands]
    if not arrays:
        raise ValueError("lax.stack: needs at least one array")
    for a in arrays[1:]:
        if a.dtype != arrays[0].dtype:
            raise TypeError("lax.stack requires arguments to have the same dtypes, got "
                            f"{', '.join(str(x.dtype) for x in arrays)}")
        if a.shape != arrays[0].shape:
            raise TypeError("lax.stack requires arguments to have the same shapes, got "
                            f"{', '.join(str(x.shape) for x in arrays)}")
    axis = _axis("stack", axis, arrays[0].ndim + 1)
    return _concatenate([_reshape(a, a.shape[:axis] + (1,) + a.shape[axis:]) for a in arrays],
                        axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """The slices of ``x`` along ``axis`` (each without that dimension), as a tuple."""
    from .ops import index_in_dim
    x = _arr(x)
    axis = _axis("unstack", axis, x.ndim)
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array whose values are unspecified (zeros on the CPU backend, as JAX's), laid
    out as ``out_sharding`` if given."""
    out = full(shape_arg(shape), 0, dtypes.canonicalize(dtype))
    if out_sharding is None:
        return out
    from ..transforms.partitioned import with_sharding_constraint
    return with_sharding_constraint(out, out_sharding)


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """``arr`` broadcast (NumPy's rules) to the shape of ``like_arr``."""
    like = like_arr if hasattr(like_arr, "shape") else np.asarray(like_arr)
    return _broadcast_to(arr, tuple(like.shape))


def clz(x: Any) -> Any:
    """Elementwise count of leading zero bits of an integer array."""
    x = _arr(x)
    return bind(clz_p, x, weak=x.weak)


def mulhi(x: Any, y: Any, /) -> Any:
    """Elementwise upper N bits of the 2N-bit product of two N-bit integers (signed or
    unsigned, as the dtype says).

    Computed in N-bit arithmetic from half-width limbs, so no wider type is needed:
    with ``a = a1 2^h + a0`` and ``b = b1 2^h + b0`` (``h = N/2``) the unsigned high part is
    ``a1 b1 + (a1 b0 >> h) + (a0 b1 >> h) + carry``; the signed one subtracts ``b`` where
    ``a < 0`` and ``a`` where ``b < 0`` (mod 2^N)."""
    from .core import add, mul, select, sub
    from .ops import bitcast_convert_type, bitwise_and, lt, shift_right_logical
    x, y = _arr(x), _arr(y)
    if x.dtype != y.dtype or x.dtype.kind not in "iu":
        raise TypeError(f"mulhi: operands must be integers of one dtype, got {x.dtype} and "
                        f"{y.dtype}")
    if x.ndim and y.ndim and x.ndim != y.ndim:
        raise TypeError(f"mulhi: arrays must have the same number of dimensions, got "
                        f"{{{x.ndim}, {y.ndim}}}")
    if x.shape != y.shape:
        shape = broadcast_shapes(x.shape, y.shape)
        x, y = _broadcast_to(x, shape), _broadcast_to(y, shape)
    signed = x.dtype.kind == "i"
    udt = np.dtype(f"u{x.dtype.itemsize}")
    a, b = (bitcast_convert_type(v, udt) if signed else v for v in (x, y))
    h = udt.type(4 * udt.itemsize)
    mask = udt.type((1 << int(h)) - 1)
    a0, a1 = bitwise_and(a, mask), shift_right_logical(a, h)
    b0, b1 = bitwise_and(b, mask), shift_right_logical(b, h)
    p01, p10 = mul(a0, b1), mul(a1, b0)
    mid = add(add(shift_right_logical(mul(a0, b0), h), bitwise_and(p01, mask)),
              bitwise_and(p10, mask))
    hi = add(add(mul(a1, b1), shift_right_logical(p01, h)),
             add(shift_right_logical(p10, h), shift_right_logical(mid, h)))
    if not signed:
        return hi
    zero = np.zeros((), x.dtype)
    hi = sub(hi, select(lt(x, zero), b, np.zeros(b.shape, udt)))
    hi = sub(hi, select(lt(y, zero), a, np.zeros(a.shape, udt)))
    return bitcast_convert_type(hi, x.dtype)


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """``src`` indexed along ``axes`` by the index arrays ``idxs`` (one per axis, taken
    modulo the axis size): shape ``(n, *the other dimensions of src)``."""
    src = _arr(src)
    axes = tuple(_axis("index_take", a, src.ndim) for a in axes)
    idxs = [_arr(i) for i in idxs]
    if len(idxs) != len(axes):
        raise ValueError(f"lax.index_take: {len(idxs)} index arrays for {len(axes)} axes")
    if len(set(axes)) != len(axes):
        raise ValueError(f"lax.index_take: axes {axes} repeat an axis")
    moved = transpose(src, (*axes, *(d for d in range(src.ndim) if d not in axes)))
    return moved[tuple(i % src.shape[a] for i, a in zip(idxs, axes, strict=True))]


def dtype(x: Any, *, canonicalize: bool = False) -> np.dtype:
    """The dtype of a value or of a dtype-like (``lax.dtype``). spmdc's dtypes are always
    canonical (64-bit types only with x64), so ``canonicalize`` changes nothing."""
    if not isinstance(canonicalize, bool):
        raise TypeError(f"lax.dtype: canonicalize must be a bool, got {canonicalize!r}")
    if isinstance(x, (str, np.dtype)) or (isinstance(x, type) and x not in (int, float,
                                                                           complex, bool)):
        return dtypes.canonicalize(x)
    if isinstance(x, type):                  # the Python types name the default dtypes
        return dtypes.dtype_and_weak(x(0))[0]
    return dtypes.dtype_and_weak(x)[0]


def _top_k_along(op: str, operand: Any, k: int, reduction_dimension: int,
                 recall_target: float, reduction_input_size_override: int,
                 aggregate_to_topk: bool, largest: bool) -> list[Any]:
    x = _arr(operand)
    if x.dtype.kind not in "fc" and x.dtype != dtypes.canonicalize("bfloat16"):
        raise TypeError(f"lax.{op}: operand must be a floating type, got {x.dtype}")
    if not aggregate_to_topk:
        raise NotImplementedError(f"lax.{op}: aggregate_to_topk=False (a partial, "
                                  "TPU-oriented result) is not supported; leave it True")
    if not 0 < recall_target <= 1:
        raise ValueError(f"lax.{op}: recall_target must be in (0, 1], got {recall_target}")
    if not isinstance(reduction_input_size_override, (int, np.integer)):
        raise TypeError(f"lax.{op}: reduction_input_size_override must be an int")
    dim = _axis(op, reduction_dimension, x.ndim)
    k = operator.index(k)
    if not 0 <= k <= x.shape[dim]:
        raise ValueError(f"lax.{op}: k={k} must be between 0 and the size {x.shape[dim]} of "
                         f"dimension {dim}")
    last_first = (*(d for d in range(x.ndim) if d != dim), dim)       # dim moved last
    values, order = _sorted_with_positions(transpose(x, last_first), largest)
    values, order = (slice_in_dim(v, 0, k, axis=-1) for v in (values, order))
    back = tuple(last_first.index(d) for d in range(x.ndim))
    return [transpose(values, back), transpose(order, back)]


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Any]:
    """The ``k`` largest values along ``reduction_dimension`` (descending) and their int32
    indices. JAX computes them exactly on CPU, as here: ``recall_target`` and
    ``reduction_input_size_override`` only tune TPU's approximation."""
    return _top_k_along("approx_max_k", operand, k, reduction_dimension, recall_target,
                        reduction_input_size_override, aggregate_to_topk, True)


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> list[Any]:
    """The ``k`` smallest values along ``reduction_dimension`` (ascending) and their int32
    indices, exactly (see approx_max_k)."""
    return _top_k_along("approx_min_k", operand, k, reduction_dimension, recall_target,
                        reduction_input_size_override, aggregate_to_topk, False)


def platform_dependent(*args: Any, default: Callable[..., Any] | None = None,
                       **per_platform: Callable[..., Any]) -> Any:
    """``per_platform['cpu'](*args)``, or ``default(*args)`` without a ``cpu`` branch:
    spmdc compiles for the CPU only, so the choice is made when tracing (JAX makes it when
    lowering, for the platform lowered for). Only the chosen branch is traced."""
    for name, branch in per_platform.items():
        if not callable(branch):
            raise TypeError(f"lax.platform_dependent: the '{name}' branch must be a callable.")
        if name == "gpu":
            raise ValueError("Use 'cuda' or 'rocm' for lax.platform_dependent.")
    if default is not None and not callable(default):
        raise TypeError("lax.platform_dependent: the 'default' branch must be a callable.")
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise ValueError("lax.platform_dependent: no branch for the 'cpu' platform (got "
                         f"{', '.join(sorted(per_platform)) or 'none'}); pass cpu= or "
                         "default=")
    return branch(*args)


def axis_size(axis_name: Any) -> int:
    """The size of the named mapped axis (the product, for a tuple of names): a Python int,
    known when tracing."""
    from .core import _axis_names
    _, sizes = _axis_names("axis_size", axis_name)
    return int(np.prod(sizes, dtype=np.int64))


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every member of the named axis gets member ``source``'s ``x`` (a pytree): the
    psum of ``x`` masked to ``source``, which is also how it batches and differentiates."""
    from ..core.tree import tree_map
    from .core import axis_index, psum
    n = axis_size(axis_name)
    source = operator.index(source)
    if not 0 <= source < n:
        raise ValueError(f"lax.pbroadcast: source {source} is out of range for axis "
                         f"{axis_name!r} of size {n}")
    mine = axis_index(axis_name) == source

    def one(v: Any) -> Any:
        v = _arr(v)
        out = psum(_where(mine, v, full(v.shape, 0, v.dtype)), axis_name)
        return out.astype(v.dtype) if out.dtype != v.dtype else out     # bools are counted
    return tree_map(one, x)


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the mapped axis ``axis_name`` with the array axis ``axis`` (whose size must be
    the axis's, or its groups'): ``all_to_all(x, axis_name, axis, axis)``."""
    from .core import all_to_all
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


# --- unshared convolution --------------------------------------------------------------------

ConvGeneralDilatedDimensionNumbers = Any
"""What ``dimension_numbers=`` of the convolutions accepts: None, a ConvDimensionNumbers,
or three layout strings such as ``('NCHW', 'OIHW', 'NCHW')``."""


def conv_general_dilated_local(lhs: Any, rhs: Any, window_strides: Sequence[int],
                               padding: str | Sequence[tuple[int, int]],
                               filter_shape: Sequence[int],
                               lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None,
                               dimension_numbers: Any = None, precision: Any = None) -> Any:
    """A convolution whose kernel differs at every output position (a locally connected
    layer). ``rhs`` has the kernel layout of ``dimension_numbers``, with input features
    ``C * prod(filter_shape)`` (features major, as conv_general_dilated_patches orders
    them) and the output's spatial sizes as its spatial dimensions.

    Each output position's patch (conv_general_dilated_patches) is contracted with that
    position's kernel: one dot_general batched over the spatial positions."""
    from ..core.precision import Precision, canonicalize_precision
    from .conv import conv_dimension_numbers, conv_general_dilated_patches
    from .core import dot_general
    canonical = canonicalize_precision("conv_general_dilated_local", precision)
    if canonical is not None and not isinstance(canonical[0], str):
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    lhs, rhs = _arr(lhs), _arr(rhs)
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
        dimension_numbers, precision=None if canonical is None else Precision[canonical[0]])
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(
        lhs.shape, (1, 1, *tuple(filter_shape)), dimension_numbers)
    if rhs.ndim != patches.ndim:
        raise TypeError(f"conv_general_dilated_local: rhs has rank {rhs.ndim}, expected "
                        f"{patches.ndim}")
    want = {rhs_spec[1]: patches.shape[out_spec[1]]}
    want.update({r: patches.shape[o] for r, o in zip(rhs_spec[2:], out_spec[2:], strict=True)})
    for d, size in want.items():
        if rhs.shape[d] != size:
            raise TypeError(f"conv_general_dilated_local: rhs dimension {d} has size "
                            f"{rhs.shape[d]}, expected {size} (rhs shape {rhs.shape}, "
                            f"patches shape {patches.shape})")
    # Pair the spatial dimensions in the patches' order, so the batch dimensions of the
    # product come out in the output's spatial order.
    pairs = sorted(zip(out_spec[2:], rhs_spec[2:], strict=True))
    dims = (((out_spec[1],), (rhs_spec[1],)),
            (tuple(p for p, _ in pairs), tuple(r for _, r in pairs)))
    out = dot_general(patches, rhs, dims, precision=precision)
    # out: spatial dims (ascending positions of the output), then N, then O.
    order = [d for d in range(out.ndim - 2)]
    for d, s in sorted(((out_spec[0], out.ndim - 2), (out_spec[1], out.ndim - 1))):
        order.insert(d, s)
    return transpose(out, tuple(order))


# --- reduce_xor, optimization_barrier --------------------------------------------------------

def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """The bitwise exclusive or over ``axes`` (booleans: parity)."""
    from ..core.tracing import where
    from .ops import shift_right_logical
    x = _arr(operand)
    axes = tuple(operator.index(a) % builtins.max(x.ndim, 1) for a in axes)
    if x.dtype == np.bool_:
        return (_fold(reduce_sum_p, x.astype(np.int32), axes) % 2).astype(np.bool_)
    if not dtypes.is_int(x.dtype):
        raise TypeError(f"lax.reduce_xor: takes integer or boolean operands, got {x.dtype}"
                        f"{where()}")
    out = full(tuple(s for d, s in enumerate(x.shape) if d not in axes), 0, x.dtype)
    for b in range(x.dtype.itemsize * 8):   # each bit of the result: the parity of its ones
        ones = _fold(reduce_sum_p, (shift_right_logical(x, np.asarray(b, x.dtype))
                                    & np.asarray(1, x.dtype)).astype(np.int32), axes)
        out = out | ((ones % 2).astype(x.dtype) << np.asarray(b, x.dtype))
    return out


def optimization_barrier(operand: Any) -> Any:
    """``operand`` (a pytree) unchanged, but XLA may not move computations across it."""
    from ..core.tracing import current_trace
    from ..core.tree import tree_flatten, tree_unflatten
    leaves, tree = tree_flatten(operand)
    if not leaves:
        return operand
    arrays = [_arr(v) for v in leaves]
    if current_trace() is None:
        return tree_unflatten(tree, arrays)      # eager: nothing to reorder
    outs = bind(optimization_barrier_p, *arrays, prevent_cse=True)
    return tree_unflatten(tree, list(outs))


# --- reduce ------------------------------------------------------------------------------

def _fold(prim: Primitive, x: Any, dims: tuple[int, ...]) -> Any:
    """``x`` reduced over ``dims`` by ``prim`` and returned in its dtype, as jnp's
    reductions compute it: sums and products of booleans and narrow integers accumulate
    in the default int, of float16 and bfloat16 in float32."""
    wide = x.dtype
    if prim in (reduce_sum_p, reduce_prod_p):
        default = dtypes.default_int()
        if x.dtype in (np.float16, dtypes.bfloat16):
            wide = np.dtype(np.float32)
        elif x.dtype.kind in "bi" and x.dtype.itemsize < default.itemsize:
            wide = default
        elif x.dtype.kind == "u" and x.dtype.itemsize < default.itemsize:
            wide = np.dtype(f"uint{8 * default.itemsize}")
    wide_x = x.astype(wide) if wide != x.dtype else x
    out = bind(prim, wide_x, axes=dims, weak=wide_x.weak)
    return out.astype(x.dtype) if out.dtype != x.dtype else out


def reduce(operands: Any, init_values: Any, computation: Any, dimensions: Sequence[int]
           ) -> Any:
    """``operands`` (an array or a pytree of arrays of one shape) folded over
    ``dimensions`` with ``computation(accumulators, elements)`` from ``init_values``
    (scalars, the same pytree). ``lax.add``/``mul``/``max``/``min`` (and ``bitwise_and``/
    ``bitwise_or`` on booleans) from a concrete scalar are the differentiable reductions;
    any other computation runs as a general reduction (XLA's, through reduce_window over
    the whole extent of ``dimensions``)."""
    from ..compiler.primitives.reductions import identity_of
    from ..core.tracing import Tracer, where
    from ..core.tree import tree_flatten, tree_map, tree_unflatten
    from . import core as lax_core
    from .windowed import reduce_window
    leaves, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"lax.reduce: operands and init_values must have the same tree "
                         f"structure, got {tree} and {init_tree}{where()}")
    if not leaves:
        raise ValueError(f"lax.reduce: needs at least one operand{where()}")
    leaves = [_arr(x) for x in leaves]
    ndim = leaves[0].ndim
    dims = tuple(sorted(operator.index(d) % max(ndim, 1) for d in dimensions))
    if len(set(dims)) != len(dims):
        raise ValueError(f"lax.reduce: dimensions {tuple(dimensions)} repeat a dimension"
                         f"{where()}")
    shape = leaves[0].shape
    if any(shape[d] == 0 for d in dims):         # nothing to fold: the initial values
        kept = tuple(s for d, s in enumerate(shape) if d not in dims)
        return tree_unflatten(tree, [full(kept, i, x.dtype)
                                     for i, x in zip(inits, leaves, strict=True)])
    if len(leaves) == 1:
        x, init = leaves[0], inits[0]
        kinds = {id(lax_core.add): ("sum", reduce_sum_p), id(lax_core.mul): ("prod", reduce_prod_p),
                 id(lax_core.max): ("max", reduce_max_p), id(lax_core.min): ("min", reduce_min_p)}
        if x.dtype == np.bool_:
            from .ops import bitwise_and, bitwise_or
            kinds.update({id(bitwise_and): ("and", reduce_and_p),
                          id(bitwise_or): ("or", reduce_or_p)})
        found = kinds.get(id(computation))
        if found is not None and not isinstance(init, Tracer):
            kind, prim = found
            value = np.asarray(init)
            if value.shape == ():
                out = _fold(prim, x, dims)
                if value != identity_of(kind, x.dtype):
                    # another initial value joins the fold once (the operation is
                    # associative and commutative), so that grad works as in JAX
                    out = computation(full(out.shape, value, x.dtype), out)
                return tree_unflatten(tree, [out])
    window = tuple(shape[d] if d in dims else 1 for d in range(ndim))
    out = reduce_window(tree_unflatten(tree, leaves), init_values, computation, window)
    kept = tuple(s for d, s in enumerate(shape) if d not in dims)
    return tree_map(lambda o: _reshape(o, kept), out)
