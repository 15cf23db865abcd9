"""More of jax.lax, on existing primitives: ``Precision``, ``axis_size``, ``pbroadcast``,
``pswapaxes``, ``stack``/``unstack``, ``empty``, ``batch_matmul``, ``approx_max_k`` /
``approx_min_k`` (exact on CPU, as JAX's are), ``index_take``, ``reduce_xor``, ``clz``,
``dtype``, ``igamma``/``igammac``/``igamma_grad_a``/``random_gamma_grad``/``betainc``,
``optimization_barrier``."""
from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import numpy as jnp
from ..compiler.primitives.core import registry as _prims
from ..core import dtypes
from ..core.tracing import Tracer, bind, current_trace, where
from ..core.tree import tree_flatten, tree_map, tree_unflatten
from . import core as _core
from .ops import shift_right_logical as _shift_right_logical

__all__ = ["Precision", "PrecisionLike", "axis_size", "pbroadcast", "pswapaxes", "stack",
           "unstack", "empty", "batch_matmul", "approx_max_k", "approx_min_k", "index_take",
           "reduce_xor", "clz", "dtype", "igamma", "igammac", "igamma_grad_a",
           "random_gamma_grad", "betainc", "optimization_barrier", "reduce"]


class Precision(enum.Enum):
    """The precision of a dot or convolution on accelerators. On CPU every precision
    computes at the operands' full precision (what HIGHEST asks for), in JAX and here."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: Any) -> Precision | None:
        names = {"default": cls.DEFAULT, "bfloat16": cls.DEFAULT, "fastest": cls.DEFAULT,
                 "high": cls.HIGH, "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH,
                 "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        return names.get(value.lower()) if isinstance(value, str) else None

    def __str__(self) -> str:
        return self.name


PrecisionLike = None | str | Precision | tuple[str, str] | tuple[Precision, Precision]


def axis_size(axis_name: Any) -> int:
    """The size of the named axis (a tuple of names: the product) of the enclosing pmap,
    vmap or shard_map."""
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    _, sizes = _core._axis_names("axis_size", names)
    return int(np.prod(sizes))


def pbroadcast(x: Any, axis_name: Any, source: int) -> Any:
    """Every member gets member ``source``'s value."""
    source = operator.index(source)
    n = axis_size(axis_name)
    if not 0 <= source < n:
        raise ValueError(f"pbroadcast: source {source} is out of range for an axis of size "
                         f"{n}{where()}")
    mine = _core.axis_index(axis_name) == source

    def one(v: Any) -> Any:
        v = jnp.asarray(v)
        return _core.psum(jnp.where(mine, v, jnp.zeros_like(v)), axis_name)
    return tree_map(one, x)


def pswapaxes(x: Any, axis_name: Any, axis: int, *, axis_index_groups: Any = None) -> Any:
    """Swap the mapped axis ``axis_name`` with the array axis ``axis``: ``all_to_all`` with
    ``split_axis = concat_axis = axis``."""
    return _core.all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """The operands (all of one shape) joined along a new ``axis``."""
    arrays = [jnp.asarray(op) for op in operands]
    if not arrays:
        raise ValueError(f"lax.stack: needs at least one operand{where()}")
    return jnp.stack(arrays, axis=axis)


def unstack(x: Any, axis: int = 0) -> tuple[Any, ...]:
    """``x`` split along ``axis`` into a tuple of its slices."""
    x = jnp.asarray(x)
    axis = operator.index(axis) % max(x.ndim, 1)
    return tuple(jnp.take(x, i, axis=axis) for i in range(x.shape[axis]))


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` whose values are unspecified (zeros here)."""
    out = jnp.zeros(tuple(shape), dtype)
    if out_sharding is None:
        return out
    from ..transforms.partitioned import with_sharding_constraint
    return with_sharding_constraint(out, out_sharding)


def batch_matmul(lhs: Any, rhs: Any, precision: PrecisionLike = None) -> Any:
    """Matrix products over matching leading (batch) dimensions."""
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    if min(lhs.ndim, rhs.ndim) < 2:
        raise ValueError(f"batch_matmul: the arguments must be at least 2-d, got "
                         f"{lhs.ndim} and {rhs.ndim}{where()}")
    if lhs.ndim != rhs.ndim:
        raise ValueError(f"batch_matmul: the arguments must have one rank, got {lhs.ndim} "
                         f"and {rhs.ndim}{where()}")
    batch = tuple(range(lhs.ndim - 2))
    return _core.dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)),
                             precision=precision)


def _approx_k(op: str, operand: Any, k: int, reduction_dimension: int, recall_target: float,
              reduction_input_size_override: int, aggregate_to_topk: bool,
              largest: bool) -> tuple[Any, Any]:
    from .ops import top_k
    x = jnp.asarray(operand)
    if not dtypes.is_float(x.dtype):
        raise TypeError(f"lax.{op}: the operand must be a float array, got {x.dtype}"
                        f"{where()}")
    if not aggregate_to_topk:
        raise ValueError(f"lax.{op}: aggregate_to_topk=False returns TPU-specific partial "
                         f"results; spmdc computes the exact top k only{where()}")
    if not 0 < recall_target <= 1:
        raise ValueError(f"lax.{op}: recall_target must be in (0, 1], got {recall_target}"
                         f"{where()}")
    dim = operator.index(reduction_dimension) % x.ndim
    moved = jnp.moveaxis(x, dim, -1)
    values, indices = top_k(moved if largest else -moved, k)
    values = values if largest else -values
    return jnp.moveaxis(values, -1, dim), jnp.moveaxis(indices, -1, dim)


def approx_max_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """The ``k`` largest values along ``reduction_dimension`` and their indices; on CPU
    exact (as JAX's), so ``recall_target`` is always met."""
    return _approx_k("approx_max_k", operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, True)


def approx_min_k(operand: Any, k: int, reduction_dimension: int = -1,
                 recall_target: float = 0.95, reduction_input_size_override: int = -1,
                 aggregate_to_topk: bool = True) -> tuple[Any, Any]:
    """The ``k`` smallest values along ``reduction_dimension`` and their indices."""
    return _approx_k("approx_min_k", operand, k, reduction_dimension, recall_target,
                     reduction_input_size_override, aggregate_to_topk, False)


def index_take(src: Any, idxs: Sequence[Any], axes: Sequence[int]) -> Any:
    """``src`` indexed along ``axes`` by the index arrays ``idxs`` (wrapped modulo the
    axes' sizes); the indexed axes become one leading axis."""
    src = jnp.asarray(src)
    axes = [operator.index(a) % src.ndim for a in axes]
    idxs = [jnp.asarray(i) % src.shape[a] for i, a in zip(idxs, axes, strict=True)]
    rest = [d for d in range(src.ndim) if d not in axes]
    moved = jnp.transpose(src, axes + rest)
    return moved[tuple(idxs)]


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """The bitwise exclusive or over ``axes`` (booleans: parity)."""
    x = jnp.asarray(operand)
    axes = tuple(operator.index(a) % max(x.ndim, 1) for a in axes)
    if x.dtype == np.bool_:
        return (jnp.sum(x.astype(np.int32), axis=axes) % 2).astype(np.bool_)
    if not dtypes.is_int(x.dtype):
        raise TypeError(f"lax.reduce_xor: takes integer or boolean operands, got {x.dtype}"
                        f"{where()}")
    bits = x.dtype.itemsize * 8
    out = jnp.zeros(tuple(s for d, s in enumerate(x.shape) if d not in axes), x.dtype)
    for b in range(bits):      # each bit of the result: the parity of that bit's ones
        ones = jnp.sum(_shift_right_logical(x, np.asarray(b, x.dtype))
                       & np.asarray(1, x.dtype), axis=axes, dtype=np.int32)
        out = out | ((ones % 2).astype(x.dtype) << np.asarray(b, x.dtype))
    return out


def clz(x: Any) -> Any:
    """The number of leading zero bits of each integer."""
    from .ops import population_count
    x = jnp.asarray(x)
    if not dtypes.is_int(x.dtype):
        raise TypeError(f"lax.clz: takes integers, got {x.dtype}{where()}")
    y, shift = x, 1
    while shift < x.dtype.itemsize * 8:       # smear the highest one bit downwards
        y = y | _shift_right_logical(y, np.asarray(shift, x.dtype))
        shift *= 2
    return np.asarray(x.dtype.itemsize * 8, x.dtype) - population_count(y)


def dtype(x: Any) -> np.dtype:
    """The dtype ``x`` has as a JAX value (canonical: 64-bit types become 32-bit unless
    x64 is on; a Python float is the default float)."""
    if isinstance(x, (np.dtype, type, str)):
        return np.dtype(dtypes.canonicalize(x))
    return np.dtype(dtypes.canonicalize(jnp.asarray(x).dtype))


def _special():
    from ..scipy import _incomplete, special
    return special, _incomplete


def igamma(a: Any, x: Any) -> Any:
    """The regularized lower incomplete gamma function P(a, x)."""
    return _special()[0].gammainc(a, x)


def igammac(a: Any, x: Any) -> Any:
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _special()[0].gammaincc(a, x)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """dP(a, x)/da."""
    a, x = jnp.asarray(a), jnp.asarray(x)
    kind = jnp.result_type(a, x)
    a, x = jnp.broadcast_arrays(a.astype(kind), x.astype(kind))
    return _special()[1]._igamma(a, x, False, True)[1]


def random_gamma_grad(a: Any, x: Any) -> Any:
    """d x / d a for a draw ``x`` of Gamma(a, 1) held at its quantile (implicit
    reparameterisation)."""
    from ..random.gamma import _dx_da
    a, x = jnp.asarray(a), jnp.asarray(x)
    kind = jnp.result_type(a, x)
    a, x = jnp.broadcast_arrays(a.astype(kind), x.astype(kind))
    return _dx_da(a, x, False)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """The regularized incomplete beta function I_x(a, b)."""
    return _special()[0].betainc(a, b, x)


def optimization_barrier(operand: Any) -> Any:
    """``operand`` (a pytree) unchanged, but XLA may not move computations across it."""
    leaves, tree = tree_flatten(operand)
    if not leaves:
        return operand
    arrays = [jnp.asarray(v) for v in leaves]
    if current_trace() is None:
        return tree_unflatten(tree, arrays)      # eager: nothing to reorder
    outs = bind(_prims["optimization_barrier"], *arrays, prevent_cse=True)
    return tree_unflatten(tree, list(outs))


def reduce(operands: Any, init_values: Any, computation: Any, dimensions: Sequence[int]
           ) -> Any:
    """``operands`` (an array or a pytree of arrays of one shape) folded over
    ``dimensions`` with ``computation(accumulators, elements)`` from ``init_values``
    (scalars, the same pytree). ``lax.add``/``mul``/``max``/``min`` (and ``bitwise_and``/
    ``bitwise_or`` on booleans) from their identity are the differentiable reductions;
    any other computation runs as a general reduction (XLA's, through reduce_window over
    the whole extent of ``dimensions``)."""
    from ..compiler.primitives.reductions import identity_of
    from . import core as lax_core
    from .windowed import reduce_window
    leaves, tree = tree_flatten(operands)
    inits, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"lax.reduce: operands and init_values must have the same tree "
                         f"structure, got {tree} and {init_tree}{where()}")
    if not leaves:
        raise ValueError(f"lax.reduce: needs at least one operand{where()}")
    leaves = [jnp.asarray(x) for x in leaves]
    ndim = leaves[0].ndim
    dims = tuple(sorted(operator.index(d) % max(ndim, 1) for d in dimensions))
    if len(set(dims)) != len(dims):
        raise ValueError(f"lax.reduce: dimensions {tuple(dimensions)} repeat a dimension"
                         f"{where()}")
    if len(leaves) == 1:
        x, init = leaves[0], inits[0]
        kinds = {id(lax_core.add): ("sum", jnp.sum), id(lax_core.mul): ("prod", jnp.prod),
                 id(lax_core.max): ("max", jnp.max), id(lax_core.min): ("min", jnp.min)}
        if x.dtype == np.bool_:
            from .ops import bitwise_and, bitwise_or
            kinds.update({id(bitwise_and): ("and", jnp.all), id(bitwise_or): ("or", jnp.any)})
        found = kinds.get(id(computation))
        if found is not None and not isinstance(init, Tracer):
            kind, reducer = found
            value = np.asarray(init)
            if value.shape == () and value == identity_of(kind, x.dtype):
                return tree_unflatten(tree, [reducer(x, axis=dims).astype(x.dtype)])
    shape = leaves[0].shape
    window = tuple(shape[d] if d in dims else 1 for d in range(ndim))
    if any(shape[d] == 0 for d in dims):         # nothing to fold: the initial values
        kept = tuple(s for d, s in enumerate(shape) if d not in dims)
        return tree_unflatten(tree, [jnp.full(kept, i, x.dtype)
                                     for i, x in zip(inits, leaves, strict=True)])
    out = reduce_window(tree_unflatten(tree, leaves), init_values, computation, window)
    kept = tuple(s for d, s in enumerate(shape) if d not in dims)
    return tree_map(lambda o: jnp.reshape(o, kept), out)
